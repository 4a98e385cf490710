package admission

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.io/api/core/v1"
)

// The cluster configuration is the KubeVirt CR that HCO v1.18.1 writes
// (github.com/kubevirt/hyperconverged-cluster-operator, tag v1.18.1,
// controllers/handlers/kubevirt.go: getKVConfig, getKVDevConfig,
// getFeatureGateChecks, getMandatoryKvFeatureGates, getNetworkBindings,
// hcLiveMigrationToKv), computed from the HyperConverged of the stream when
// there is one and from an HyperConverged with the CRD's defaults when not.
// Only the parts of the KubeVirt configuration that admission reads are
// rebuilt; node-dependent parts (architecture list, S390X secure execution,
// KVM emulation) take the values of an amd64 cluster with hardware
// virtualization, where SSP is deployed.

// hcoHardCodedKvFeatureGates: hardCodeKvFgs plus sspConditionKvFgs
// (KVM_EMULATION unset).
var hcoHardCodedKvFeatureGates = []string{
	"CPUManager",
	"Snapshot",
	"ExpandDisks",
	"HostDevices",
	"VMExport",
	"KubevirtSeccompProfile",
	"LiveUpdateNADRef",
	"WithHostModelCPU",
	"HypervStrictCheck",
}

// hcoCDIFeatureGates: controllers/handlers/cdi.go getDefaultFeatureGates
// at v1.18.1, the CDIConfig feature gates HCO sets.
var hcoCDIFeatureGates = []string{"HonorWaitForFirstConsumer", "DataVolumeClaimAdoption", "WebhookPvcRendering"}

// HCO annotations that add feature gates or bindings (pkg/.../passt and aie
// packages at v1.18.1).
const (
	hcoDeployPasstAnnotation = "hco.kubevirt.io/deployPasstNetworkBinding"
	hcoDeployAIEAnnotation   = "hco.kubevirt.io/deployAIE"
)

// hyperConverged is the part of an HCO v1beta1 HyperConverged spec that
// reaches the KubeVirt CR admission reads, plus the golden-image settings.
type hyperConverged struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		FeatureGates struct {
			DownwardMetrics            *bool `json:"downwardMetrics"`
			PersistentReservation      *bool `json:"persistentReservation"`
			AlignCPUs                  *bool `json:"alignCPUs"`
			VideoConfig                *bool `json:"videoConfig"`
			ObjectGraph                *bool `json:"objectGraph"`
			DecentralizedLiveMigration *bool `json:"decentralizedLiveMigration"`
			DeclarativeHotplugVolumes  *bool `json:"declarativeHotplugVolumes"`
			IncrementalBackup          *bool `json:"incrementalBackup"`
			ContainerPathVolumes       *bool `json:"containerPathVolumes"`
		} `json:"featureGates"`
		LiveMigrationConfig struct {
			BandwidthPerMigration             *string `json:"bandwidthPerMigration"`
			CompletionTimeoutPerGiB           *int64  `json:"completionTimeoutPerGiB"`
			ParallelOutboundMigrationsPerNode *uint32 `json:"parallelOutboundMigrationsPerNode"`
			ParallelMigrationsPerCluster      *uint32 `json:"parallelMigrationsPerCluster"`
			ProgressTimeout                   *int64  `json:"progressTimeout"`
			Network                           *string `json:"network"`
			AllowAutoConverge                 *bool   `json:"allowAutoConverge"`
			AllowPostCopy                     *bool   `json:"allowPostCopy"`
		} `json:"liveMigrationConfig"`
		EvictionStrategy              *virtv1.EvictionStrategy                 `json:"evictionStrategy"`
		LiveUpdateConfiguration       *virtv1.LiveUpdateConfiguration          `json:"liveUpdateConfiguration"`
		NetworkBinding                map[string]virtv1.InterfaceBindingPlugin `json:"networkBinding"`
		DefaultCPUModel               *string                                  `json:"defaultCPUModel"`
		VMStateStorageClass           *string                                  `json:"vmStateStorageClass"`
		InstancetypeConfig            *virtv1.InstancetypeConfiguration        `json:"instancetypeConfig"`
		CommonInstancetypesDeployment *virtv1.CommonInstancetypesDeployment    `json:"commonInstancetypesDeployment"`
		Hypervisors                   []virtv1.HypervisorConfiguration         `json:"hypervisors"`
		RoleAggregationStrategy       *virtv1.RoleAggregationStrategy          `json:"roleAggregationStrategy"`
		HigherWorkloadDensity         *struct {
			MemoryOvercommitPercentage int `json:"memoryOvercommitPercentage"`
		} `json:"higherWorkloadDensity"`
		ResourceRequirements *struct {
			VmiCPUAllocationRatio *int `json:"vmiCPUAllocationRatio"`
		} `json:"resourceRequirements"`
		EnableCommonBootImageImport *bool             `json:"enableCommonBootImageImport"`
		CommonBootImageNamespace    *string           `json:"commonBootImageNamespace"`
		DataImportCronTemplates     []json.RawMessage `json:"dataImportCronTemplates"`
	} `json:"spec"`
}

// goldenImageNamespace is HCO's default commonBootImageNamespace on
// OpenShift (the namespace the boot-source DataSources live in).
const goldenImageNamespace = "openshift-virtualization-os-images"

func (hc *hyperConverged) bootImageNamespace() string {
	if hc.Spec.CommonBootImageNamespace != nil && *hc.Spec.CommonBootImageNamespace != "" {
		return *hc.Spec.CommonBootImageNamespace
	}
	return goldenImageNamespace
}

// kvFeatureGates follows getKvFeatureGateList: the mandatory gates, then
// getFeatureGateChecks with the HCO API's defaults (videoConfig and
// decentralizedLiveMigration on, the others off).
func (hc *hyperConverged) kvFeatureGates() []string {
	fg := hc.Spec.FeatureGates
	out := append([]string{}, hcoHardCodedKvFeatureGates...)
	if ptr.Deref(fg.DownwardMetrics, false) {
		out = append(out, "DownwardMetrics")
	}
	if ptr.Deref(fg.PersistentReservation, false) {
		out = append(out, "PersistentReservation")
	}
	if ptr.Deref(fg.AlignCPUs, false) {
		out = append(out, "AlignCPUs")
	}
	if ptr.Deref(fg.VideoConfig, true) {
		out = append(out, "VideoConfig")
	}
	if ptr.Deref(fg.ObjectGraph, false) {
		out = append(out, "ObjectGraph")
	}
	if ptr.Deref(fg.DecentralizedLiveMigration, true) {
		out = append(out, "DecentralizedLiveMigration")
	}
	if ptr.Deref(fg.DeclarativeHotplugVolumes, false) {
		out = append(out, "DeclarativeHotplugVolumes")
	} else {
		out = append(out, "HotplugVolumes")
	}
	if hc.Metadata.Annotations[hcoDeployPasstAnnotation] == "true" {
		out = append(out, "PasstBinding")
	}
	if hc.Metadata.Annotations[hcoDeployAIEAnnotation] == "true" {
		out = append(out, "PCINUMAAwareTopology")
	}
	if ptr.Deref(fg.IncrementalBackup, false) {
		out = append(out, "IncrementalBackup", "UtilityVolumes")
	}
	if len(hc.Spec.Hypervisors) > 0 {
		out = append(out, "ConfigurableHypervisor")
	}
	if hc.Spec.RoleAggregationStrategy != nil {
		out = append(out, "OptOutRoleAggregation")
	}
	if ptr.Deref(fg.ContainerPathVolumes, false) {
		out = append(out, "ContainerPathVolumes")
	}
	return out
}

// applyCRDDefaults sets what the HyperConverged CRD of HCO v1.18.1
// (deploy/crds/hco00.crd.yaml, v1beta1 schema defaults) defaults and
// reaches the KubeVirt configuration; the feature gates' defaults are those
// of kvFeatureGates.
func (hc *hyperConverged) applyCRDDefaults() {
	lm := &hc.Spec.LiveMigrationConfig
	orDefault(&lm.CompletionTimeoutPerGiB, 150)
	orDefault(&lm.ParallelMigrationsPerCluster, 5)
	orDefault(&lm.ParallelOutboundMigrationsPerNode, 2)
	orDefault(&lm.ProgressTimeout, 150)
	orDefault(&lm.AllowAutoConverge, false)
	orDefault(&lm.AllowPostCopy, false)
	if hc.Spec.ResourceRequirements == nil {
		hc.Spec.ResourceRequirements = &struct {
			VmiCPUAllocationRatio *int `json:"vmiCPUAllocationRatio"`
		}{}
	}
	orDefault(&hc.Spec.ResourceRequirements.VmiCPUAllocationRatio, 10)
	orDefault(&hc.Spec.EnableCommonBootImageImport, true)
}

// orDefault gives an unset field (nil) the value def: a CRD schema
// default.
func orDefault[T any](field **T, def T) {
	if *field == nil {
		*field = ptr.To(def)
	}
}

// kubeVirtConfig follows getKVConfig.
func (hc *hyperConverged) kubeVirtConfig() (*virtv1.KubeVirtConfiguration, error) {
	hc.applyCRDDefaults()
	memLimit := resource.MustParse("2G")
	dev := &virtv1.DeveloperConfiguration{
		DiskVerification: &virtv1.DiskVerification{MemoryLimit: &memLimit},
		FeatureGates:     hc.kvFeatureGates(),
	}
	if hc.Spec.HigherWorkloadDensity != nil {
		dev.MemoryOvercommit = hc.Spec.HigherWorkloadDensity.MemoryOvercommitPercentage
	}
	if rr := hc.Spec.ResourceRequirements; rr != nil && rr.VmiCPUAllocationRatio != nil {
		dev.CPUAllocationRatio = *rr.VmiCPUAllocationRatio
	}

	bindings := map[string]virtv1.InterfaceBindingPlugin{}
	for k, v := range hc.Spec.NetworkBinding {
		bindings[k] = v
	}
	bindings["l2bridge"] = virtv1.InterfaceBindingPlugin{
		DomainAttachmentType: virtv1.ManagedTap,
		Migration:            &virtv1.InterfaceBindingMigration{},
	}
	if hc.Metadata.Annotations[hcoDeployPasstAnnotation] == "true" {
		// controllers/handlers/passt/passt.go NetworkBinding() at v1.18.1
		// (SidecarImage comes from the operator's environment).
		bindings["passt"] = virtv1.InterfaceBindingPlugin{
			NetworkAttachmentDefinition: "default/primary-udn-kubevirt-binding",
			SidecarImage:                "passt-sidecar",
			Migration:                   &virtv1.InterfaceBindingMigration{},
			ComputeResourceOverhead: &virtv1.ResourceRequirementsWithoutClaims{
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("250Mi")},
			},
		}
	}

	lm := hc.Spec.LiveMigrationConfig
	mig := &virtv1.MigrationConfiguration{
		CompletionTimeoutPerGiB:           lm.CompletionTimeoutPerGiB,
		ParallelOutboundMigrationsPerNode: lm.ParallelOutboundMigrationsPerNode,
		ParallelMigrationsPerCluster:      lm.ParallelMigrationsPerCluster,
		ProgressTimeout:                   lm.ProgressTimeout,
		Network:                           lm.Network,
		AllowAutoConverge:                 lm.AllowAutoConverge,
		AllowPostCopy:                     lm.AllowPostCopy,
	}
	if lm.BandwidthPerMigration != nil {
		q, err := resource.ParseQuantity(*lm.BandwidthPerMigration)
		if err != nil {
			return nil, fmt.Errorf("HyperConverged spec.liveMigrationConfig.bandwidthPerMigration: %v", err)
		}
		mig.BandwidthPerMigration = &q
	}

	cfg := &virtv1.KubeVirtConfiguration{
		DeveloperConfiguration: dev,
		NetworkConfiguration: &virtv1.NetworkConfiguration{
			NetworkInterface: string(virtv1.MasqueradeInterface),
			Binding:          bindings,
		},
		MigrationConfiguration: mig,
		SeccompConfiguration: &virtv1.SeccompConfiguration{
			VirtualMachineInstanceProfile: &virtv1.VirtualMachineInstanceProfile{
				CustomProfile: &virtv1.CustomProfile{LocalhostProfile: ptr.To("kubevirt/kubevirt.json")},
			},
		},
		EvictionStrategy:              hc.Spec.EvictionStrategy,
		VMRolloutStrategy:             ptr.To(virtv1.VMRolloutStrategyLiveUpdate),
		LiveUpdateConfiguration:       hc.Spec.LiveUpdateConfiguration,
		Instancetype:                  hc.Spec.InstancetypeConfig,
		CommonInstancetypesDeployment: hc.Spec.CommonInstancetypesDeployment,
		Hypervisors:                   hc.Spec.Hypervisors,
		RoleAggregationStrategy:       hc.Spec.RoleAggregationStrategy,
	}
	if hc.Spec.DefaultCPUModel != nil {
		cfg.CPUModel = *hc.Spec.DefaultCPUModel
	}
	if hc.Spec.VMStateStorageClass != nil {
		cfg.VMStateStorageClass = *hc.Spec.VMStateStorageClass
	}
	return cfg, nil
}

// clusterBootSources are the DataSources the cluster provides in the
// golden-image namespace when spec.enableCommonBootImageImport is not
// false: HCO v1.18.1 assets/dataImportCronTemplates/dataImportCronTemplates.yaml
// (centos-stream9, centos-stream10, fedora) and the Red Hat boot sources
// OpenShift Virtualization adds downstream (rhel8, rhel9, rhel10).
var clusterBootSources = []string{"centos-stream10", "centos-stream9", "fedora", "rhel10", "rhel8", "rhel9"}
