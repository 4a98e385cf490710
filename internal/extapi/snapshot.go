package extapi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VirtualMachineSnapshot is snapshot.kubevirt.io/v1beta1
// VirtualMachineSnapshot (KubeVirt v1.8.4
// staging/src/kubevirt.io/api/snapshot/v1beta1/types.go).
type VirtualMachineSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              VirtualMachineSnapshotSpec `json:"spec"`
}

// VirtualMachineSnapshotSpec names the VM to snapshot.
type VirtualMachineSnapshotSpec struct {
	Source corev1.TypedLocalObjectReference `json:"source"`
}

// VirtualMachineRestore is snapshot.kubevirt.io/v1beta1
// VirtualMachineRestore.
type VirtualMachineRestore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              VirtualMachineRestoreSpec `json:"spec"`
}

// VirtualMachineRestoreSpec restores a VM from one of its snapshots.
type VirtualMachineRestoreSpec struct {
	Target                     corev1.TypedLocalObjectReference `json:"target"`
	VirtualMachineSnapshotName string                           `json:"virtualMachineSnapshotName"`
	TargetReadinessPolicy      string                           `json:"targetReadinessPolicy,omitempty"`
	VolumeRestorePolicy        string                           `json:"volumeRestorePolicy,omitempty"`
	// VolumeOwnershipPolicy is served from OpenShift Virtualization 4.21.
	VolumeOwnershipPolicy string `json:"volumeOwnershipPolicy,omitempty" since:"4.21"`
}
