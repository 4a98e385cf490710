package render

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtc/virtc/fn/emit"
	"github.com/virtc/virtc/fn/extapi"
	"github.com/virtc/virtc/fn/resolve"
)

// Labels of the KubeVirt Velero plugin on a Restore.
const (
	LabelClearMAC        = "velero.kubevirt.io/clear-mac-address"
	LabelNewFirmwareUUID = "velero.kubevirt.io/generate-new-firmware-uuid"
)

// RestorePlan says how to restore one VM.
type RestorePlan struct {
	VM *resolve.VM
	// Backup is a Velero Backup name; empty: the latest backup of the VM's
	// Schedule.
	Backup string
	// TargetNamespace is where a copy goes; empty: restore in place.
	TargetNamespace string
}

// Restore renders a Velero Restore of one VM. In place, the VM keeps its
// MAC addresses and firmware UUID: it is the same machine coming back. A
// copy beside the original gets new ones, so the two never clash on the
// network or in licensing.
func Restore(p RestorePlan) emit.Object {
	vm := p.VM
	yes := true
	spec := extapi.RestoreSpec{
		BackupName:         p.Backup,
		IncludedNamespaces: []string{vm.Namespace},
		LabelSelector:      &metav1.LabelSelector{MatchLabels: map[string]string{LabelVM: vm.Name}},
		RestorePVs:         &yes,
		// Never overwrite what exists: an in-place restore needs the VM and
		// its disks gone first, so a restore cannot clobber live data.
		ExistingResourcePolicy: "none",
	}
	if p.Backup == "" {
		spec.ScheduleName = ScheduleName(vm.Namespace, vm.Backup.Name)
	}
	labels := map[string]string{LabelTenant: vm.Namespace, LabelVM: vm.Name}
	name := limitName("restore-" + vm.Namespace + "-" + vm.Name)
	if p.TargetNamespace != "" && p.TargetNamespace != vm.Namespace {
		spec.NamespaceMapping = map[string]string{vm.Namespace: p.TargetNamespace}
		labels[LabelClearMAC] = "true"
		labels[LabelNewFirmwareUUID] = "true"
		name = limitName("restore-" + vm.Namespace + "-" + vm.Name + "-to-" + p.TargetNamespace)
	}
	r := &extapi.Restore{
		TypeMeta:   typeMeta("velero.io/v1", "Restore"),
		ObjectMeta: objectMeta("Restore", OADPNamespace, name, vm.Doc.Rel, labels, nil),
		Spec:       spec,
	}
	return emit.Object{APIVersion: "velero.io/v1", Kind: "Restore", Namespace: OADPNamespace, Name: name, Body: r}
}
