package render

import (
	"cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/virtc/virtc/fn/catalog"
	"github.com/virtc/virtc/fn/emit"
	"github.com/virtc/virtc/fn/extapi"
	"github.com/virtc/virtc/fn/resolve"
)

// defaultImportSchedule checks registry images for a new digest daily; a
// digest-pinned URL never changes, so this imports once and then idles.
const defaultImportSchedule = "0 3 * * *"

// HyperConverged renders the HCO custom resource.
func HyperConverged(m *resolve.Model, p *resolve.Platform) emit.Object {
	spec := p.Obj.Spec
	hs := extapi.HyperConvergedSpec{
		Infra:                    placement(spec.Infra),
		Workloads:                placement(spec.Workloads),
		EvictionStrategy:         spec.EvictionStrategy,
		CommonBootImageNamespace: m.Catalog.GoldenImageNamespace,
		DataImportCronTemplates:  dataImportCronTemplates(m.Catalog),
		// Refuse to uninstall while VMs exist: removing the HyperConverged
		// from Git must not take every VM with it.
		UninstallStrategy: "BlockUninstallIfWorkloadsExist",
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
	if len(p.FeatureGates) > 0 {
		hs.FeatureGates = map[string]bool{}
		for _, g := range p.FeatureGates {
			hs.FeatureGates[g] = true
		}
	}
	hco := &extapi.HyperConverged{
		TypeMeta:   typeMeta("hco.kubevirt.io/v1beta1", "HyperConverged"),
		ObjectMeta: objectMeta("HyperConverged", CNVNamespace, HCOName, p.Doc.Rel, map[string]string{LabelPlatform: p.Name}, nil),
		Spec:       hs,
	}
	return emit.Object{APIVersion: "hco.kubevirt.io/v1beta1", Kind: "HyperConverged", Namespace: CNVNamespace, Name: HCOName, Scope: emit.Cluster, Body: hco}
}

// dataImportCronTemplates imports every registry image of the catalog into
// a DataSource named like the image.
func dataImportCronTemplates(cat *catalog.Catalog) []extapi.DataImportCronTemplate {
	var out []extapi.DataImportCronTemplate
	for _, name := range cat.Images.Names() {
		img, _ := cat.Images.Get(name)
		reg := img.Spec.Registry
		if reg == nil {
			continue
		}
		url := reg.URL
		size := img.Spec.MinRootDisk
		keep := int32(1)
		gc := cdiv1.DataImportCronGarbageCollectOutdated
		out = append(out, extapi.DataImportCronTemplate{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{AnnotationBindImmediate: "true"},
			},
			Spec: &cdiv1.DataImportCronSpec{
				Schedule:          cmp.Or(reg.Schedule, defaultImportSchedule),
				ManagedDataSource: name,
				GarbageCollect:    &gc,
				ImportsToKeep:     &keep,
				Template: cdiv1.DataVolume{
					Spec: cdiv1.DataVolumeSpec{
						Source: &cdiv1.DataVolumeSource{Registry: &cdiv1.DataVolumeSourceRegistry{URL: &url}},
						Storage: &cdiv1.StorageSpec{
							Resources: storageRequest(size),
						},
					},
				},
			},
		})
	}
	return out
}
