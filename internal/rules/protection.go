package rules

import (
	"fmt"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/resolve"
)

// backupField is where a VM's backup policy is chosen: the VM's
// spec.backup, else its tenant's, else (the catalog's default) the VM.
func backupField(vm *resolve.VM) (*diag.Pos, string) {
	switch {
	case vm.Spec.Backup != "":
		p := vm.Doc.Pos("spec.backup")
		return &p, "spec.backup"
	case vm.Tenant.Spec.Backup != "":
		p := vm.Tenant.Doc.Pos("spec.backup")
		return &p, "spec.backup"
	}
	p := vm.Doc.Pos("spec")
	return &p, "spec"
}

// snapshotOnlyBackup refuses a production VM whose backup policy only
// takes CSI snapshots that stay on the storage system (method Snapshot:
// the Velero Backup has snapshotMoveData false, so only the objects reach
// the object store and the disks' data stays where it was). Snapshots on
// the same storage are lost with it: doc 003 "Data protection" (snapshots
// "are not a backup strategy. They live in the same cluster as the VMs
// they protect") and doc 001 "Recovery" (cluster state and guest data need
// their own protection; "restoring a YAML file without the corresponding
// disks does not restore the application"); doc 000 makes protection
// selection mandatory before production onboarding ("Applicable
// Principles", Data Protection).
func snapshotOnlyBackup(vm *resolve.VM, diags *diag.List) {
	if vm.Tier != resolve.TierProduction || !vm.TakesBackups() || vm.Backup.Spec.Method != api.BackupSnapshot || vm.Doc.Shadows("spec.tier") {
		return
	}
	pos, field := backupField(vm)
	diags.Errorf(*pos, field, "VM %s/%s is production tier but its backup policy %q only takes snapshots (method Snapshot): they stay on the storage system the disks are on and are lost with it, so they are not a backup (use a policy with method DataMover, which copies the snapshot's data to the backup storage location, or use tier standard)",
		vm.Namespace, vm.Name, vm.Backup.Name)
}

// uncapturedDisks finds the VM's volumes that its backup policy cannot
// capture: every method virtc renders starts from a CSI snapshot
// (SnapshotVolumes true, DefaultVolumesToFsBackup false; DataMover then
// copies the snapshot), and Velero v1.18.1's CSI PVC action fails a volume
// whose StorageClass has no VolumeSnapshotClass ("failed to get
// VolumeSnapshotClass for StorageClass", pkg/backup/actions/csi/
// pvc_action.go createVolumeSnapshot): the backup ends PartiallyFailed
// without that disk. A production VM is refused (doc 000 "Applicable
// Principles": protection selection is mandatory before production
// onboarding; "Control and data flows": CSI snapshot capability must be
// selected per VM profile), any other tier is warned.
func uncapturedDisks(vm *resolve.VM, diags *diag.List) {
	onDemand := vm.Spec.BackupBefore != ""
	if (!vm.TakesBackups() && !onDemand) || vm.Doc.Shadows("spec.tier") {
		return
	}
	without := withoutSnapshots(vm, "%s (storage profile %s)")
	if len(without) == 0 {
		return
	}
	method := api.BackupDataMover
	if vm.Backup.BackupPolicy != nil && vm.Backup.Spec.Method != "" {
		method = vm.Backup.Spec.Method
	}
	pos, field := backupField(vm)
	what := fmt.Sprintf("backup policy %q captures", vm.Backup.Name)
	if !vm.TakesBackups() {
		// Only the one-off backup of spec.backupBefore (render
		// OnDemandBackups: the same Velero backup spec).
		p := vm.Doc.Pos("spec.backupBefore")
		pos, field = &p, "spec.backupBefore"
		what = "the backup of spec.backupBefore captures"
	}
	msg := fmt.Sprintf("VM %s/%s: %s disks by CSI snapshot (method %s), but %s %s no snapshot support (storage profile spec.snapshots is false): Velero fails %s and the backup is PartiallyFailed without %s",
		vm.Namespace, vm.Name, what, method, strings.Join(without, ", "), verb(len(without)), them(len(without)), them(len(without)))
	if vm.Tier == resolve.TierProduction {
		diags.Errorf(*pos, field, "%s (move %s to a storage profile with snapshots; a production VM's disks must all be captured)", msg, them(len(without)))
		return
	}
	diags.Warnf(*pos, field, "%s (move %s to a storage profile with snapshots, or accept that %s not backed up)", msg, them(len(without)), isAre(len(without)))
}

func verb(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func isAre(n int) string {
	if n == 1 {
		return "it is"
	}
	return "they are"
}
