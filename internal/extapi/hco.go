package extapi

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// HyperConverged is hco.kubevirt.io/v1beta1 HyperConverged.
type HyperConverged struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              HyperConvergedSpec `json:"spec"`
}

// HyperConvergedSpec is the part of the spec virtc sets.
type HyperConvergedSpec struct {
	Infra                    *HyperConvergedConfig    `json:"infra,omitempty"`
	Workloads                *HyperConvergedConfig    `json:"workloads,omitempty"`
	LiveMigrationConfig      *LiveMigrationConfig     `json:"liveMigrationConfig,omitempty"`
	EvictionStrategy         string                   `json:"evictionStrategy,omitempty"`
	HigherWorkloadDensity    *HigherWorkloadDensity   `json:"higherWorkloadDensity,omitempty"`
	CommonBootImageNamespace string                   `json:"commonBootImageNamespace,omitempty"`
	DataImportCronTemplates  []DataImportCronTemplate `json:"dataImportCronTemplates,omitempty"`
	FeatureGates             map[string]bool          `json:"featureGates,omitempty"`
	VMStateStorageClass      string                   `json:"vmStateStorageClass,omitempty"`
	UninstallStrategy        string                   `json:"uninstallStrategy"`
	WorkloadUpdateStrategy   *WorkloadUpdateStrategy  `json:"workloadUpdateStrategy,omitempty"`
	// PermittedHostDevices and MediatedDevicesConfiguration: HCO v1.18.1
	// copies them into the KubeVirt CR (controllers/handlers/kubevirt.go,
	// toKvPermittedHostDevices, toKvMediatedDevicesConfiguration).
	PermittedHostDevices         *PermittedHostDevices         `json:"permittedHostDevices,omitempty"`
	MediatedDevicesConfiguration *MediatedDevicesConfiguration `json:"mediatedDevicesConfiguration,omitempty"`
}

// PermittedHostDevices is HCO's permittedHostDevices (api/v1
// hyperconverged_types.go): the devices KubeVirt may pass through.
type PermittedHostDevices struct {
	PciHostDevices  []PciHostDevice      `json:"pciHostDevices,omitempty"`
	MediatedDevices []MediatedHostDevice `json:"mediatedDevices,omitempty"`
}

// PciHostDevice is a PCI device permitted for passthrough.
type PciHostDevice struct {
	PCIDeviceSelector        string `json:"pciDeviceSelector"`
	ResourceName             string `json:"resourceName"`
	ExternalResourceProvider bool   `json:"externalResourceProvider,omitempty"`
}

// MediatedHostDevice is a mediated device type permitted for passthrough.
type MediatedHostDevice struct {
	MDEVNameSelector         string `json:"mdevNameSelector"`
	ResourceName             string `json:"resourceName"`
	ExternalResourceProvider bool   `json:"externalResourceProvider,omitempty"`
}

// MediatedDevicesConfiguration is the mediated device types KubeVirt
// creates on the nodes.
type MediatedDevicesConfiguration struct {
	MediatedDeviceTypes []string `json:"mediatedDeviceTypes"`
}

// WorkloadUpdateStrategy is HCO's workloadUpdateStrategy: how KubeVirt
// moves running VMs to a new virt-launcher after an upgrade.
type WorkloadUpdateStrategy struct {
	WorkloadUpdateMethods []string `json:"workloadUpdateMethods"`
	BatchEvictionSize     *int64   `json:"batchEvictionSize,omitempty"`
	BatchEvictionInterval string   `json:"batchEvictionInterval,omitempty"`
}

// HyperConvergedConfig places a group of components.
type HyperConvergedConfig struct {
	NodePlacement *NodePlacement `json:"nodePlacement,omitempty"`
}

// NodePlacement is HCO's node selector and tolerations.
type NodePlacement struct {
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
}

// LiveMigrationConfig is HCO's live migration settings.
type LiveMigrationConfig struct {
	ParallelMigrationsPerCluster      *int64             `json:"parallelMigrationsPerCluster,omitempty"`
	ParallelOutboundMigrationsPerNode *int64             `json:"parallelOutboundMigrationsPerNode,omitempty"`
	BandwidthPerMigration             *resource.Quantity `json:"bandwidthPerMigration,omitempty"`
	CompletionTimeoutPerGiB           *int64             `json:"completionTimeoutPerGiB,omitempty"`
	ProgressTimeout                   *int64             `json:"progressTimeout,omitempty"`
	Network                           *string            `json:"network,omitempty"`
}

// HigherWorkloadDensity holds memory overcommit.
type HigherWorkloadDensity struct {
	MemoryOvercommitPercentage int64 `json:"memoryOvercommitPercentage"`
}

// DataImportCronTemplate is one golden-image import the HyperConverged
// manages: CDI's DataImportCron spec with its metadata. virtc emits none:
// a DataImportCron follows a moving tag, and virtc imports only pinned
// images (render.GoldenImages).
type DataImportCronTemplate struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              *cdiv1.DataImportCronSpec `json:"spec"`
}
