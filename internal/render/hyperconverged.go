package render

import (
	"slices"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// HyperConverged renders the HCO custom resource.
func HyperConverged(m *resolve.Model, p *resolve.Platform) emit.Object {
	spec := p.Obj.Spec
	// No dataImportCronTemplates: virtc's images are pinned and imported
	// once by a DataVolume in the golden-image namespace (GoldenImages).
	// enableCommonBootImageImport stays at HCO's default (on): HCO owns
	// its boot sources (rhel9, fedora, ...) and virtc never writes a
	// DataSource of theirs (policy bootImageOwners refuses the name).
	hs := extapi.HyperConvergedSpec{
		Infra:                    placement(spec.Infra),
		Workloads:                placement(spec.Workloads),
		EvictionStrategy:         spec.EvictionStrategy,
		CommonBootImageNamespace: m.Catalog.GoldenImageNamespace,
		// Refuse to uninstall while VMs exist: removing the HyperConverged
		// from Git must not take every VM with it.
		UninstallStrategy: "BlockUninstallIfWorkloadsExist",
		// Written out even at HCO's defaults: what an upgrade does to the
		// running VMs is in Git, not in the operator's defaults.
		WorkloadUpdateStrategy: &extapi.WorkloadUpdateStrategy{
			WorkloadUpdateMethods: nonNil(p.WorkloadUpdate.Methods),
			BatchEvictionSize:     &p.WorkloadUpdate.BatchEvictionSize,
			BatchEvictionInterval: p.WorkloadUpdate.BatchEvictionInterval,
		},
	}
	// VM state (persistent EFI and TPM) goes to the class the tenants'
	// quotas count it in; without it KubeVirt picks the cluster's default
	// virt or Kubernetes class (kubevirt.io/kubevirt v1.8.4
	// pkg/storage/backend-storage/backend-storage.go, getStorageClass).
	if st, ok := resolve.StateStorage(m.Catalog); ok {
		hs.VMStateStorageClass = st.Spec.StorageClass
	}
	if lm := spec.LiveMigration; lm != nil {
		hs.LiveMigrationConfig = &extapi.LiveMigrationConfig{
			ParallelMigrationsPerCluster:      lm.ParallelMigrationsPerCluster,
			ParallelOutboundMigrationsPerNode: lm.ParallelOutboundMigrationsPerNode,
			BandwidthPerMigration:             lm.BandwidthPerMigration,
			CompletionTimeoutPerGiB:           lm.CompletionTimeoutPerGiB,
			ProgressTimeout:                   lm.ProgressTimeout,
		}
		if lm.Network != "" {
			hs.LiveMigrationConfig.Network = &lm.Network
		}
	}
	if o := spec.MemoryOvercommitPercentage; o != nil {
		hs.HigherWorkloadDensity = &extapi.HigherWorkloadDensity{MemoryOvercommitPercentage: *o}
	}
	if len(p.FeatureGates)+len(p.DisabledGates) > 0 {
		hs.FeatureGates = map[string]bool{}
		for _, g := range p.FeatureGates {
			hs.FeatureGates[g] = true
		}
		// Beta gates are on unless set false (the CRD's default): off
		// without the Platform's opt-in.
		for _, g := range p.DisabledGates {
			hs.FeatureGates[g] = false
		}
	}
	hs.PermittedHostDevices, hs.MediatedDevicesConfiguration = permittedDevices(spec.HostDevices)
	hco := &extapi.HyperConverged{
		TypeMeta:   typeMeta("hco.kubevirt.io/v1beta1", "HyperConverged"),
		ObjectMeta: objectMeta("HyperConverged", model.CNVNamespace, model.HCOName, p.Doc.Rel, map[string]string{model.LabelPlatform: p.Name}, nil),
		Spec:       hs,
	}
	return emit.Object{APIVersion: "hco.kubevirt.io/v1beta1", Kind: "HyperConverged", Namespace: model.CNVNamespace, Name: model.HCOName, Scope: emit.Cluster, Body: hco}
}

// nonNil keeps an empty list a list ([] turns automated updates off; an
// absent field would take HCO's default, LiveMigrate).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// permittedDevices are the HyperConverged's permittedHostDevices and
// mediatedDevicesConfiguration for the Platform's host devices, in the
// Platform's order. HCO v1.18.1 copies both into the KubeVirt CR
// (controllers/handlers/kubevirt.go); KubeVirt v1.8.4's virt-handler
// starts a device plugin per permitted device found on its node, unless an
// external provider advertises it
// (pkg/virt-handler/device-manager/device_controller.go,
// updatePermittedHostDevicePlugins), and creates the listed mediated
// device types (pkg/virt-handler/device-manager/mediated_devices_types.go).
func permittedDevices(ds []api.HostDevice) (*extapi.PermittedHostDevices, *extapi.MediatedDevicesConfiguration) {
	if len(ds) == 0 {
		return nil, nil
	}
	p := &extapi.PermittedHostDevices{}
	var types []string
	for _, d := range ds {
		switch {
		case d.PCIDeviceSelector != "":
			p.PciHostDevices = append(p.PciHostDevices, extapi.PciHostDevice{PCIDeviceSelector: d.PCIDeviceSelector, ResourceName: d.ResourceName, ExternalResourceProvider: d.ExternalResourceProvider})
		case d.MdevNameSelector != "":
			p.MediatedDevices = append(p.MediatedDevices, extapi.MediatedHostDevice{MDEVNameSelector: d.MdevNameSelector, ResourceName: d.ResourceName, ExternalResourceProvider: d.ExternalResourceProvider})
			if d.MdevType != "" {
				types = append(types, d.MdevType)
			}
		}
	}
	if len(types) == 0 {
		return p, nil
	}
	slices.Sort(types)
	return p, &extapi.MediatedDevicesConfiguration{MediatedDeviceTypes: slices.Compact(types)}
}
