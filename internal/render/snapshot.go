package render

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// Snapshots renders the VirtualMachineSnapshot a VM asks for with
// spec.snapshotBefore. KubeVirt (v1.8.4 pkg/storage/snapshot/snapshot.go)
// freezes the guest's file systems through the QEMU guest agent while the
// CSI snapshots are taken, and records NoGuestAgent when there is none.
// Like a Backup, the snapshot is a record Argo CD must keep: it carries
// Prune=false and IgnoreExtraneous, so removing the field from Git keeps it.
// It comes in the wave after its VM: KubeVirt snapshots an existing VM.
func Snapshots(vm *resolve.VM) []emit.Object {
	label := vm.Spec.SnapshotBefore
	if label == "" {
		return nil
	}
	name := model.SnapshotName(vm.Name, label)
	apiGroup := "kubevirt.io"
	s := &extapi.VirtualMachineSnapshot{
		TypeMeta: typeMeta("snapshot.kubevirt.io/v1beta1", "VirtualMachineSnapshot"),
		ObjectMeta: keepOnPrune(objectMeta("VirtualMachineSnapshot", vm.Namespace, name, vm.Doc.Rel,
			map[string]string{model.LabelVM: vm.Name}, map[string]string{"virtc.dev/snapshot-before": label})),
		Spec: extapi.VirtualMachineSnapshotSpec{
			Source: corev1.TypedLocalObjectReference{APIGroup: &apiGroup, Kind: "VirtualMachine", Name: vm.Name},
		},
	}
	return []emit.Object{{APIVersion: "snapshot.kubevirt.io/v1beta1", Kind: "VirtualMachineSnapshot", Namespace: vm.Namespace, Name: name, Scope: emit.VMScope, Body: s}}
}
