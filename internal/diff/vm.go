package diff

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

type vmKey struct{ namespace, name string }

func (c *comparison) vms(base, head []*resolve.VM) {
	baseBy := map[vmKey]*resolve.VM{}
	for _, v := range base {
		baseBy[vmKey{v.Namespace, v.Name}] = v
	}
	headBy := map[vmKey]*resolve.VM{}
	for _, v := range head {
		headBy[vmKey{v.Namespace, v.Name}] = v
	}
	keys := slices.Collect(maps.Keys(baseBy))
	for k := range headBy {
		if _, ok := baseBy[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b vmKey) int {
		if a.namespace != b.namespace {
			return strings.Compare(a.namespace, b.namespace)
		}
		return strings.Compare(a.name, b.name)
	})
	for _, k := range keys {
		old, new := baseBy[k], headBy[k]
		var s Subject
		switch {
		case old == nil:
			s = c.addedVM(new)
		case new == nil:
			s = c.removedVM(old)
		default:
			s = c.changedVM(old, new)
		}
		if len(s.Changes) > 0 {
			c.report.VMs = append(c.report.VMs, s)
		}
	}
}

func vmRef(v *resolve.VM) string { return ref("VirtualMachine", v.Namespace, v.Name) }

// diskRef is the object of a data disk: its PersistentVolumeClaim.
func diskRef(v *resolve.VM, disk string) string {
	return ref("PersistentVolumeClaim", v.Namespace, model.DiskName(v.Name, disk))
}

func (c *comparison) addedVM(v *resolve.VM) Subject {
	s := Subject{Namespace: v.Namespace, Name: v.Name, Status: Added}
	var disks []string
	for _, d := range v.Disks {
		disks = append(disks, fmt.Sprintf("%s %s", d.Name, d.Size.String()))
	}
	detail := fmt.Sprintf("new VM: size %s (%s), image %s, root disk %s", v.SizeName, sizeTerms(v.Size), v.ImageName, v.RootDisk.String())
	if len(disks) > 0 {
		detail += ", data disks " + strings.Join(disks, ", ")
	}
	detail += "; " + startsOrNot(v.RunStrategy)
	if e := eligibility.Classify(v); len(e.Evidence) > 0 {
		detail += fmt.Sprintf("; eligibility %s %s, evidence required: %s", classWord(e), strings.Join(e.Names(), ", "), strings.Join(e.Evidence, "; "))
	} else {
		detail += fmt.Sprintf("; eligibility %s %s", classWord(e), strings.Join(e.Names(), ", "))
	}
	s.Changes = append(s.Changes, Change{Field: "vm", To: v.SizeName, Effect: EffectCreated, Detail: detail})
	return s
}

func startsOrNot(run string) string {
	switch run {
	case api.RunHalted:
		return "runStrategy Halted: created stopped"
	case api.RunManual:
		return "runStrategy Manual: created stopped, started by hand"
	}
	return "runStrategy " + run + ": starts once its disks are ready"
}

func sizeTerms(s *api.Size) string {
	if s == nil {
		return "unknown"
	}
	return fmt.Sprintf("%d %s, %s", s.Spec.CPU, plural(int(s.Spec.CPU), "vCPU", "vCPUs"), s.Spec.Memory.String())
}

// removedVM allows only the removal of a VM that was retired on the base
// branch: retiring first halts the VM and keeps its disks and backups, so
// that nothing is deleted by a change that merely lost a file.
func (c *comparison) removedVM(v *resolve.VM) Subject {
	s := Subject{Namespace: v.Namespace, Name: v.Name, Status: Removed}
	deleted := []string{"the VirtualMachine", "its root disk " + model.RootDiskName(v.Name)}
	for _, d := range v.Disks {
		deleted = append(deleted, "data disk "+model.DiskName(v.Name, d.Name))
	}
	what := andList(deleted)
	if !v.Spec.Retired {
		c.refuse("vm-removed", vmRef(v),
			fmt.Sprintf("VM %s/%s is removed without being retired: %s", v.Namespace, v.Name, c.deletes(what)),
			"decommission it deliberately: set spec.retired: true (the VM is halted, its disks and backups are kept), merge, let Argo CD sync, and remove it in a later change")
		s.Changes = append(s.Changes, Change{Field: "vm", Effect: EffectRefused, Detail: "removed without being retired: refused"})
		return s
	}
	objs := []string{"virtualmachine/" + v.Name}
	for _, d := range v.Disks {
		objs = append(objs, "persistentvolumeclaim/"+model.DiskName(v.Name, d.Name))
	}
	c.warn("retired-vm-removed", vmRef(v),
		fmt.Sprintf("VM %s/%s (retired) is removed: %s", v.Namespace, v.Name, leaves(what, "oc delete -n "+v.Namespace+" "+strings.Join(objs, " "))),
		"the retired VM must have been synced by Argo CD before this change lands (its live objects then carry Prune=false); make sure no one needs its data any more; backups already taken are kept until their retention expires")
	s.Changes = append(s.Changes, Change{Field: "vm", Effect: EffectDeleted, Detail: "removed (it was retired): left in the cluster with its disks for a person to delete"})
	return s
}

// vmChange collects the changes of one VM.
type vmChange struct {
	*comparison
	old, new *resolve.VM
	subject  Subject
	// running: the VM runs on the base side; stopping: the head halts it.
	running, stopping bool
}

func (v *vmChange) add(ch Change) { v.subject.Changes = append(v.subject.Changes, ch) }

// templateEffect is the effect of a change to the VM's template (the VMI
// spec) that KubeVirt cannot hot-plug.
func (v *vmChange) templateEffect() (string, string) {
	switch {
	case v.stopping:
		return EffectNextStart, "applies when the VM is started again"
	case !v.running:
		return EffectNextStart, "the VM is halted: applies when it starts"
	}
	return EffectRestart, "restart required"
}

func (c *comparison) changedVM(old, new *resolve.VM) Subject {
	v := &vmChange{
		comparison: c, old: old, new: new,
		subject:  Subject{Namespace: new.Namespace, Name: new.Name, Status: Changed},
		running:  old.RunStrategy != api.RunHalted,
		stopping: new.RunStrategy == api.RunHalted && old.RunStrategy != api.RunHalted,
	}
	v.retired()
	v.runStrategy()
	v.size()
	v.image()
	v.rootDisk()
	v.dataDisks()
	v.networks()
	v.migration()
	v.backup()
	v.guestConfig()
	v.placement()
	v.health()
	v.eligibility()
	v.labels()
	v.restartWins()
	v.safetyPoints()
	if len(v.subject.Changes) == 0 {
		if st, ok := c.status("VirtualMachine", new.Namespace, new.Name); ok && st == Changed {
			v.add(Change{Field: "other", Effect: EffectNone, Detail: "the VirtualMachine manifest changes (see the manifest diff)"})
		}
	}
	return v.subject
}

// A safety point (spec.snapshotBefore's VirtualMachineSnapshot,
// spec.backupBefore's Velero Backup) is rendered at sync wave 3, after the
// VirtualMachine and its disks at wave 2 (render/meta.go syncWaves: Argo
// CD applies a wave only once the previous one is healthy): added in the
// same change as the VM change it should protect, it is taken after that
// change, and a VirtualMachineSnapshot also records the changed VM spec
// (KubeVirt v1.8.4 pkg/storage/snapshot/snapshot.go createContent stores
// source.Spec(), the VirtualMachine, beside the volume snapshots; a restore
// brings that spec back). Merged first, it is taken before.
const RuleSafetyPointSameChange = "safety-point-same-change"

// safetyPoints reports a new snapshotBefore or backupBefore label, and
// refuses it when the same change also touches what it should protect:
// the VM's size, image or disks, or anything that restarts, starts, stops
// or live-updates it.
func (v *vmChange) safetyPoints() {
	var risky []string
	for _, c := range v.subject.Changes {
		switch {
		case c.Field == "size" || c.Field == "image" || c.Field == "rootDisk" || c.Field == "disk",
			c.Effect == EffectRestart || c.Effect == EffectLive || c.Effect == EffectStarts || c.Effect == EffectStops || c.Effect == EffectOnline:
			what := c.Field
			if c.Name != "" {
				what += " " + c.Name
			}
			if !slices.Contains(risky, what) {
				risky = append(risky, what)
			}
		}
	}
	vm := v.new
	point := func(field, old, new, kind, object, takes, done string) {
		if new == "" || new == old {
			return
		}
		detail := fmt.Sprintf("%s %s: %s %s is created at sync wave 3, after the VM (wave 2)", field, new, kind, object)
		effect := EffectNone
		if len(risky) > 0 {
			effect = EffectRefused
			detail += fmt.Sprintf(": refused, this change also changes the VM (%s), so %s would be taken after that change", strings.Join(risky, ", "), takes)
			v.refuse(RuleSafetyPointSameChange, vmRef(vm),
				fmt.Sprintf("VM %s/%s gets %s %s in the same change as changes to its %s: Argo CD syncs the VM (wave 2) before the %s (wave 3), so %s would record the VM after the change, not before", vm.Namespace, vm.Name, field, new, strings.Join(risky, ", "), kind, takes),
				fmt.Sprintf("merge the %s first (a change that only sets spec.%s: %s), let Argo CD sync it and check that %s %s %s, then make the VM change in a second commit", field, field, new, kind, object, done))
		}
		v.add(Change{Field: field, From: old, To: new, Effect: effect, Detail: detail})
	}
	// A VirtualMachineSnapshot is readyToUse even when KubeVirt left a disk
	// out (v1.8.4 pkg/storage/snapshot/snapshot.go getSnapshotPVC: no
	// VolumeSnapshotClass for its storage class; the disk is then in
	// status.snapshotVolumes.excludedVolumes), and Argo CD has no health
	// check for one: it does not wait for it.
	point("snapshotBefore", v.old.Spec.SnapshotBefore, vm.Spec.SnapshotBefore, "VirtualMachineSnapshot", vm.Namespace+"/"+model.SnapshotName(vm.Name, vm.Spec.SnapshotBefore), "the snapshot",
		"is readyToUse with every disk in status.snapshotVolumes.includedVolumes")
	point("backupBefore", v.old.Spec.BackupBefore, vm.Spec.BackupBefore, "Velero Backup", model.OADPNamespace+"/"+model.OnDemandBackupName(vm.Namespace, vm.Name, vm.Spec.BackupBefore), "the backup", "completed")
}

// restartWins turns live updates into restarts when another change of the
// same VM needs a restart: KubeVirt then sets RestartRequired and, while
// it is set, propagates nothing live (vm.go sync: the hot-plug handlers run
// only when !restartRequired; the user guide: "Once the RestartRequired
// condition is set on a VM object, no further changes can be propagated").
func (v *vmChange) restartWins() {
	var because []string
	for _, c := range v.subject.Changes {
		if c.Effect == EffectRestart && !slices.Contains(because, c.Field) {
			because = append(because, c.Field)
		}
	}
	if len(because) == 0 {
		return
	}
	for i, c := range v.subject.Changes {
		if c.Effect == EffectLive {
			v.subject.Changes[i].Effect = EffectRestart
			v.subject.Changes[i].Detail = fmt.Sprintf("%s: restart required (the %s change needs a restart, and KubeVirt hot-plugs nothing while a VM waits for one)", c.what, strings.Join(because, " and "))
		}
	}
}

func (v *vmChange) retired() {
	switch {
	case !v.old.Spec.Retired && v.new.Spec.Retired:
		v.add(Change{Field: "retired", From: "false", To: "true", Effect: EffectStops,
			Detail: "retired: the VM is halted and labelled virtc.dev/retired; its disks and backups are kept. Once it has synced, a later change may remove it"})
	case v.old.Spec.Retired && !v.new.Spec.Retired:
		v.add(Change{Field: "retired", From: "true", To: "false", Effect: EffectNone,
			Detail: "no longer retired: the VM returns to its run strategy"})
	}
}

// runStrategy explains a run strategy change as KubeVirt applies it
// (virt-controller syncRunStrategy): Always and RerunOnFailure start a
// stopped VM, Halted stops it, Manual and Once leave a running VM alone.
func (v *vmChange) runStrategy() {
	from, to := v.old.RunStrategy, v.new.RunStrategy
	if from == to || v.new.Spec.Retired && !v.old.Spec.Retired {
		return
	}
	ch := Change{Field: "runStrategy", From: from, To: to}
	switch {
	case to == api.RunHalted:
		ch.Effect, ch.Detail = EffectStops, fmt.Sprintf("run strategy %s → Halted: stops the VM", from)
	case from == api.RunHalted && (to == api.RunAlways || to == api.RunRerunOnFailure || to == api.RunOnce):
		ch.Effect, ch.Detail = EffectStarts, fmt.Sprintf("run strategy Halted → %s: starts the VM", to)
	case from == api.RunHalted && to == api.RunManual:
		ch.Effect, ch.Detail = EffectNone, "run strategy Halted → Manual: the VM stays stopped until someone starts it"
	case to == api.RunAlways:
		ch.Effect, ch.Detail = EffectStarts, fmt.Sprintf("run strategy %s → Always: starts the VM if it is stopped, and restarts it whenever it stops", from)
	default:
		ch.Effect, ch.Detail = EffectNone, fmt.Sprintf("run strategy %s → %s: a running VM keeps running; what happens when it stops changes", from, to)
	}
	v.add(ch)
}

func (v *vmChange) size() {
	if v.old.SizeName == v.new.SizeName && sameSize(v.old.Size, v.new.Size) {
		return
	}
	ch := Change{Field: "size", From: v.old.SizeName, To: v.new.SizeName}
	terms := fmt.Sprintf("%s → %s", sizeTerms(v.old.Size), sizeTerms(v.new.Size))
	if v.old.SizeName == v.new.SizeName {
		// KubeVirt keeps the VM on the ControllerRevision of the instance
		// type it was created with; the edit itself is refused (published)
		// or is not virtc's to make (builtin).
		ch.Effect = EffectNone
		ch.Detail = fmt.Sprintf("size %s is redefined in the catalog (%s): the VM keeps the instance type revision it was created with", v.new.SizeName, terms)
		if !v.new.Size.Spec.Builtin {
			ch.Effect = EffectRefused
		}
		v.add(ch)
		return
	}
	if !v.running || v.stopping {
		ch.Effect, _ = v.templateEffect()
		_, why := v.templateEffect()
		ch.Detail = fmt.Sprintf("size %s → %s (%s): %s", v.old.SizeName, v.new.SizeName, terms, why)
		v.add(ch)
		return
	}
	effect, detail := sizeChange(v.cluster, v.old.Size, v.new.Size, v.topology(), v.old.CanMigrate())
	ch.Effect = effect
	ch.what = fmt.Sprintf("size %s → %s (%s)", v.old.SizeName, v.new.SizeName, terms)
	ch.Detail = ch.what + ": " + detail
	v.add(ch)
}

// topology is how the VM's preference spreads vCPUs ("" when it says
// nothing: KubeVirt's default, sockets). Builtin preferences carry theirs
// from the common-instancetypes bundle (sockets for Windows, spread for the
// dpdk and realtime ones).
func (v *vmChange) topology() string { return topologyOf(v.newCatalog, v.new) }

func topologyOf(cat *catalog.Catalog, vm *resolve.VM) string {
	name := preference(vm)
	if cat == nil || cat.Preferences == nil || name == "" {
		return ""
	}
	if p, ok := cat.Preferences.Get(name); ok {
		return p.Spec.CPUTopology
	}
	return ""
}

func sameSize(a, b *api.Size) bool {
	return a.Spec.CPU == b.Spec.CPU && a.Spec.Memory.Cmp(b.Spec.Memory) == 0
}

// image reports a new image. The root disk is a dataVolumeTemplate, and
// KubeVirt only creates missing DataVolumes from dataVolumeTemplates
// (virt-controller handleDataVolumes), never updates an existing one: the
// root disk keeps the old image.
func (v *vmChange) image() {
	oldDS, newDS := v.old.DataSource, v.new.DataSource
	if v.old.ImageName == v.new.ImageName && oldDS == newDS {
		return
	}
	source := func(ds api.DataSourceRef) string { return ds.Namespace + "/" + ds.Name }
	detail := fmt.Sprintf("image %s → %s: the root disk is NOT re-imaged (it stays the clone of %s it was created as; only a VM created anew would be cloned from %s)",
		v.old.ImageName, v.new.ImageName, v.old.ImageName, v.new.ImageName)
	if v.old.ImageName == v.new.ImageName {
		detail = fmt.Sprintf("image %s now clones from DataSource %s instead of %s: the root disk is NOT re-imaged", v.new.ImageName, source(newDS), source(oldDS))
	}
	effect := EffectNone
	if op, np := preference(v.old), preference(v.new); op != np {
		e, why := v.templateEffect()
		effect = e
		detail += fmt.Sprintf("; preference %s → %s: %s", op, np, why)
	}
	v.add(Change{Field: "image", From: v.old.ImageName, To: v.new.ImageName, Effect: effect, Detail: detail})
	v.warn("image-changed", vmRef(v.new),
		fmt.Sprintf("image %s → %s: the root disk %s is not re-imaged; the guest keeps its %s installation", v.old.ImageName, v.new.ImageName, model.RootDiskName(v.new.Name), v.old.ImageName),
		fmt.Sprintf("to run %s, create a new VM from it, move the workload, and retire this one", v.new.ImageName))
}

func preference(v *resolve.VM) string {
	if v.Image == nil {
		return ""
	}
	return v.Image.Spec.Preference
}

// storageTerms is what a disk's storage profile puts in its DataVolume.
func storageTerms(st resolve.Storage) string {
	if st.StorageProfile == nil {
		return st.Name
	}
	return fmt.Sprintf("%s (%s, %s, %s)", st.Name, st.Spec.StorageClass, st.Spec.VolumeMode, st.Spec.AccessMode)
}

func sameStorage(a, b resolve.Storage) bool {
	if a.StorageProfile == nil || b.StorageProfile == nil {
		return a.Name == b.Name
	}
	return a.Spec.StorageClass == b.Spec.StorageClass && a.Spec.VolumeMode == b.Spec.VolumeMode && a.Spec.AccessMode == b.Spec.AccessMode
}

func (v *vmChange) rootDisk() {
	old, new := v.old, v.new
	obj := vmRef(new)
	pvc := new.Namespace + "/" + model.RootDiskName(new.Name)
	switch old.RootDisk.Cmp(new.RootDisk) {
	case 1:
		v.add(Change{Field: "rootDisk", From: old.RootDisk.String(), To: new.RootDisk.String(), Effect: EffectRefused,
			Detail: fmt.Sprintf("root disk %s → %s: refused, a disk cannot shrink", old.RootDisk.String(), new.RootDisk.String())})
		v.refuse("disk-shrink", obj,
			fmt.Sprintf("the root disk of VM %s/%s shrinks %s → %s: a PersistentVolumeClaim cannot shrink", new.Namespace, new.Name, old.RootDisk.String(), new.RootDisk.String()),
			fmt.Sprintf("keep spec.rootDisk at %s or more", old.RootDisk.String()))
	case -1:
		v.add(Change{Field: "rootDisk", From: old.RootDisk.String(), To: new.RootDisk.String(), Effect: EffectManual,
			Detail: fmt.Sprintf("root disk %s → %s: online expansion once PVC %s is expanded (KubeVirt does not resize an existing disk from the VM's dataVolumeTemplates)", old.RootDisk.String(), new.RootDisk.String(), pvc)})
		v.warn("root-disk-grow", obj,
			fmt.Sprintf("the root disk of VM %s/%s grows %s → %s in the manifest only: KubeVirt creates a root disk from dataVolumeTemplates once and never resizes it", new.Namespace, new.Name, old.RootDisk.String(), new.RootDisk.String()),
			fmt.Sprintf("expand PVC %s to %s (its StorageClass must allow volume expansion); the running guest then sees the larger disk (KubeVirt's ExpandDisks, on in OpenShift Virtualization)", pvc, new.RootDisk.String()))
	}
	if !sameStorage(old.RootStorage, new.RootStorage) {
		v.add(Change{Field: "rootDisk", From: storageTerms(old.RootStorage), To: storageTerms(new.RootStorage), Effect: EffectRefused,
			Detail: "root disk storage changes in place: refused"})
		v.refuse("disk-storage-changed", obj,
			fmt.Sprintf("the root disk of VM %s/%s moves from storage %s to %s in place: KubeVirt never changes an existing disk created from dataVolumeTemplates, so the disk would stay where it is while the manifest claims otherwise", new.Namespace, new.Name, storageTerms(old.RootStorage), storageTerms(new.RootStorage)),
			"keep the root disk's storage; to move the VM to other storage, create a new VM there, move the workload, and retire this one")
	}
}

func (v *vmChange) dataDisks() {
	diskName := func(d resolve.Disk) string { return d.Name }
	oldBy, newBy := byName(v.old.Disks, diskName), byName(v.new.Disks, diskName)
	for _, od := range v.old.Disks {
		nd, ok := newBy[od.Name]
		if !ok {
			v.diskRemoved(od)
			continue
		}
		v.diskChanged(od, nd)
	}
	for _, nd := range v.new.Disks {
		if _, ok := oldBy[nd.Name]; ok {
			continue
		}
		effect, why := v.templateEffect()
		detail := fmt.Sprintf("disk %s added (%s on %s): a new blank PersistentVolumeClaim; attached to the VM (%s)", nd.Name, nd.Size.String(), nd.Storage.Name, why)
		if nd.Retired {
			effect, detail = EffectCreated, fmt.Sprintf("disk %s added retired (%s on %s): a new blank PersistentVolumeClaim, not attached", nd.Name, nd.Size.String(), nd.Storage.Name)
		}
		v.add(Change{Field: "disk", Name: nd.Name, To: nd.Size.String(), Effect: effect, Detail: detail})
	}
}

// diskRemoved allows a data disk to go only once it was retired: retiring
// detaches it from the VM and keeps its PersistentVolumeClaim, so its
// removal is a deliberate second step.
func (v *vmChange) diskRemoved(d resolve.Disk) {
	obj := diskRef(v.old, d.Name)
	if !d.Retired {
		v.add(Change{Field: "disk", Name: d.Name, From: d.Size.String(), Effect: EffectRefused,
			Detail: fmt.Sprintf("disk %s removed without being retired: refused", d.Name)})
		v.refuse("disk-removed", obj,
			fmt.Sprintf("data disk %s of VM %s/%s disappears while the VM stays: %s", d.Name, v.new.Namespace, v.new.Name, v.deletes("its volume "+model.DiskName(v.old.Name, d.Name))),
			"to detach it deliberately, set retired: true on the disk in spec.disks (the VM stops using it at its next restart and its volume is kept), merge and sync, and remove it in a later change")
		return
	}
	v.add(Change{Field: "disk", Name: d.Name, From: d.Size.String(), Effect: EffectDeleted,
		Detail: fmt.Sprintf("disk %s (retired) removed: its volume is left in the cluster for a person to delete", d.Name)})
	pvc := model.DiskName(v.old.Name, d.Name)
	v.warn("retired-disk-removed", obj,
		fmt.Sprintf("data disk %s of VM %s/%s (retired) is removed: %s", d.Name, v.new.Namespace, v.new.Name, leaves("its volume "+pvc, "oc delete -n "+v.new.Namespace+" persistentvolumeclaim/"+pvc)),
		"the retired disk must have been synced by Argo CD before this change lands; make sure no one needs its data any more")
}

func (v *vmChange) diskChanged(od, nd resolve.Disk) {
	obj := diskRef(v.new, nd.Name)
	pvc := v.new.Namespace + "/" + model.DiskName(v.new.Name, nd.Name)
	switch {
	case !od.Retired && nd.Retired:
		effect, why := v.templateEffect()
		v.add(Change{Field: "disk", Name: nd.Name, From: "attached", To: "retired", Effect: effect,
			Detail: fmt.Sprintf("disk %s retired: detached from the VM (%s); its volume and data are kept", nd.Name, why)})
	case od.Retired && !nd.Retired:
		effect, why := v.templateEffect()
		v.add(Change{Field: "disk", Name: nd.Name, From: "retired", To: "attached", Effect: effect,
			Detail: fmt.Sprintf("disk %s attached again (%s)", nd.Name, why)})
	}
	switch od.Size.Cmp(nd.Size) {
	case 1:
		v.add(Change{Field: "disk", Name: nd.Name, From: od.Size.String(), To: nd.Size.String(), Effect: EffectRefused,
			Detail: fmt.Sprintf("disk %s %s → %s: refused, a disk cannot shrink", nd.Name, od.Size.String(), nd.Size.String())})
		v.refuse("disk-shrink", obj,
			fmt.Sprintf("data disk %s of VM %s/%s shrinks %s → %s: a PersistentVolumeClaim cannot shrink", nd.Name, v.new.Namespace, v.new.Name, od.Size.String(), nd.Size.String()),
			fmt.Sprintf("keep it at %s or more; for a smaller disk, add a new disk under another name, copy the data, and retire this one", od.Size.String()))
	case -1:
		detail := fmt.Sprintf("disk %s %s → %s: online expansion (the running guest sees the larger disk once PVC %s has grown)", nd.Name, od.Size.String(), nd.Size.String(), pvc)
		if st, ok := v.status("PersistentVolumeClaim", v.new.Namespace, model.DiskName(v.new.Name, nd.Name)); ok && st == Changed {
			detail = fmt.Sprintf("disk %s %s → %s: online expansion (its PersistentVolumeClaim grows, if its StorageClass allows volume expansion, and KubeVirt shows the running guest the larger disk)", nd.Name, od.Size.String(), nd.Size.String())
		}
		v.add(Change{Field: "disk", Name: nd.Name, From: od.Size.String(), To: nd.Size.String(), Effect: EffectOnline, Detail: detail})
	}
	if !sameStorage(od.Storage, nd.Storage) {
		v.add(Change{Field: "disk", Name: nd.Name, From: storageTerms(od.Storage), To: storageTerms(nd.Storage), Effect: EffectRefused,
			Detail: fmt.Sprintf("disk %s storage changes in place: refused", nd.Name)})
		v.refuse("disk-storage-changed", obj,
			fmt.Sprintf("data disk %s of VM %s/%s moves from storage %s to %s in place: a bound PersistentVolumeClaim's class, volume mode and access modes cannot change (the API server rejects the update) and the volume would stay where it is", nd.Name, v.new.Namespace, v.new.Name, storageTerms(od.Storage), storageTerms(nd.Storage)),
			"keep the disk's storage profile; to move the data, add a new disk under another name on the new storage, copy the data, and retire this one")
	} else if od.Storage.Name != nd.Storage.Name {
		v.add(Change{Field: "disk", Name: nd.Name, From: od.Storage.Name, To: nd.Storage.Name, Effect: EffectNone,
			Detail: fmt.Sprintf("disk %s storage profile %s → %s: same class and modes, nothing changes for the disk", nd.Name, od.Storage.Name, nd.Storage.Name)})
	}
}

// networks follows KubeVirt's network live-update rules
// (pkg/network/vmliveupdate IsRestartRequired): an interface removed from
// the VM (rather than marked state: absent) or a pod network added needs a
// restart; a secondary interface added is hot-plugged.
func (v *vmChange) networks() {
	netName := func(n resolve.Network) string { return n.Name }
	oldBy, newBy := byName(v.old.Networks, netName), byName(v.new.Networks, netName)
	for _, n := range v.new.Networks {
		if _, ok := oldBy[n.Name]; ok {
			continue
		}
		effect, why := v.templateEffect()
		if effect == EffectRestart && n.Spec.Type != api.NetworkPod {
			effect, why = EffectLive, "live update possible: KubeVirt hot-plugs the secondary interface into the running VM"
		}
		what := fmt.Sprintf("network %s added", n.Name)
		v.add(Change{Field: "network", Name: n.Name, To: n.Name, Effect: effect, Detail: what + ": " + why, what: what})
	}
	for _, n := range v.old.Networks {
		if _, ok := newBy[n.Name]; ok {
			continue
		}
		effect, why := v.templateEffect()
		v.add(Change{Field: "network", Name: n.Name, From: n.Name, Effect: effect, Detail: fmt.Sprintf("network %s removed: %s", n.Name, why)})
	}
	if names(v.old.Networks) != names(v.new.Networks) && len(v.old.Networks) > 0 && len(v.new.Networks) > 0 &&
		v.old.Networks[0].Name != v.new.Networks[0].Name {
		if _, kept := newBy[v.old.Networks[0].Name]; kept {
			effect, why := v.templateEffect()
			v.add(Change{Field: "network", Name: v.new.Networks[0].Name, From: v.old.Networks[0].Name, To: v.new.Networks[0].Name, Effect: effect,
				Detail: fmt.Sprintf("primary network %s → %s: %s", v.old.Networks[0].Name, v.new.Networks[0].Name, why)})
		}
	}
}

// andList joins items as a sentence does: "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func names(ns []resolve.Network) string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return strings.Join(out, ",")
}

// migration reports a change of the evictionStrategy virtc renders: what
// happens to the VM when its node is drained. evictionStrategy is part of
// the VMI spec and not among the fields KubeVirt live-updates
// (addRestartRequiredIfNeeded), so it applies at the next restart.
func (v *vmChange) migration() {
	from, to := model.EvictionStrategy(v.old), model.EvictionStrategy(v.new)
	if from == to {
		return
	}
	meaning := func(s string) string {
		switch s {
		case "LiveMigrate":
			return "a drain waits until the VM is live-migrated"
		case "LiveMigrateIfPossible":
			return "the VM is live-migrated when it can be, shut down otherwise"
		}
		return "the VM is shut down"
	}
	effect, why := v.templateEffect()
	v.add(Change{Field: "migration", From: string(from), To: string(to), Effect: effect,
		Detail: fmt.Sprintf("migration eligibility %s → %s: during node maintenance %s (was: %s); %s", from, to, meaning(string(to)), meaning(string(from)), why)})
}

func (v *vmChange) backup() {
	if v.old.Backup.Name == v.new.Backup.Name {
		return
	}
	v.add(Change{Field: "backup", From: v.old.Backup.Name, To: v.new.Backup.Name, Effect: EffectNone,
		Detail: fmt.Sprintf("backup policy %s → %s (%s): the VM's label changes, so future backups follow the new policy; backups already taken are kept until their retention expires", v.old.Backup.Name, v.new.Backup.Name, backupTerms(v.new.Backup))})
}

func backupTerms(b resolve.Backup) string {
	if b.BackupPolicy == nil || b.Spec.Schedule == "" {
		return "no backups"
	}
	return fmt.Sprintf("schedule %q, kept %s", b.Spec.Schedule, b.Spec.Retention)
}

// guestConfig reports changes to what the guest reads at boot: cloud-init
// and SSH keys propagated through cloud-init.
func (v *vmChange) guestConfig() {
	ci := func(vm *resolve.VM) string {
		c := vm.Spec.CloudInit
		if c == nil {
			return ""
		}
		return c.UserDataSecret + "/" + c.NetworkDataSecret
	}
	if ci(v.old) != ci(v.new) {
		effect, why := v.templateEffect()
		v.add(Change{Field: "cloudInit", Effect: effect, Detail: fmt.Sprintf("cloud-init Secrets change (%s; cloud-init's per-instance steps do not run again on an existing guest)", why)})
	}
	if strings.Join(v.old.Spec.SSHKeySecrets, ",") != strings.Join(v.new.Spec.SSHKeySecrets, ",") {
		effect, why := v.templateEffect()
		v.add(Change{Field: "sshKeys", From: strings.Join(v.old.Spec.SSHKeySecrets, ", "), To: strings.Join(v.new.Spec.SSHKeySecrets, ", "), Effect: effect,
			Detail: fmt.Sprintf("SSH key Secrets change (injected through cloud-init: %s)", why)})
	}
}

// eligibility reports a move in the workload eligibility matrix (the
// VM's virtc.dev/eligibility label) and the evidence it newly requires
// before the VM may run in production.
func (v *vmChange) eligibility() {
	old, new := eligibility.Classify(v.old), eligibility.Classify(v.new)
	var added []string
	for _, e := range new.Evidence {
		if !slices.Contains(old.Evidence, e) {
			added = append(added, e)
		}
	}
	oldNames, newNames := strings.Join(old.Names(), ", "), strings.Join(new.Names(), ", ")
	if oldNames == newNames && len(added) == 0 {
		return
	}
	detail := fmt.Sprintf("eligibility %s %s → %s (%s)", classWord(new), oldNames, newNames, new.Class.Status)
	if oldNames == newNames {
		detail = fmt.Sprintf("eligibility %s %s (%s) unchanged", classWord(new), newNames, new.Class.Status)
	}
	if len(added) > 0 {
		detail += "; evidence now required: " + strings.Join(added, "; ")
		// Which of them the head's Evidence already accepts (the build of
		// the head holds the gate; a lab tenant's or a standard VM's
		// profile checks may still be missing).
		var accepted, missing []string
		for _, j := range eligibility.Accept(v.new, new, v.headEvidence).Judged {
			if !slices.Contains(added, j.Description) {
				continue
			}
			if j.Evidence != "" {
				accepted = append(accepted, j.Description+" (accepted by "+j.Evidence+")")
			} else {
				missing = append(missing, j.Description)
			}
		}
		if len(accepted) > 0 {
			detail += "; accepted: " + strings.Join(accepted, "; ")
		}
		if len(missing) > 0 {
			when := "before it runs in production"
			if len(new.Conditional()) > 0 {
				when = "before onboarding, in every tier"
			}
			v.warn("evidence-required", vmRef(v.new),
				fmt.Sprintf("VM %s/%s needs new evidence %s (eligibility %s %s): %s", v.new.Namespace, v.new.Name, when, classWord(new), newNames, strings.Join(missing, "; ")),
				"record an Evidence for each check (virtc report lists what each VM still needs)")
		}
	}
	v.add(Change{Field: "class", From: oldNames, To: newNames, Effect: EffectNone, Detail: detail})
}

// classWord is "class", or "classes" for a VM in several rows.
func classWord(r eligibility.Result) string {
	if len(r.Rows) > 1 {
		return "classes"
	}
	return "class"
}

func (v *vmChange) labels() {
	if maps.Equal(v.old.Metadata.Labels, v.new.Metadata.Labels) && maps.Equal(v.old.Metadata.Annotations, v.new.Metadata.Annotations) {
		return
	}
	v.add(Change{Field: "labels", Effect: EffectNone, Detail: "labels or annotations change (no effect on the running VM)"})
}

// immutableDataVolumes refuses a DataVolume whose spec changes in place (a
// change not already refused): CDI's admission webhook rejects every update
// of a DataVolume's spec (containerized-data-importer v1.65.0
// pkg/apiserver/webhooks/datavolume-validate.go: "Cannot update DataVolume
// Spec"; kept immutable on purpose, kubevirt/containerized-data-importer
// PR 1974), so Argo CD's sync of it would fail on every attempt. virtc's
// own output never does this (a data disk is a PersistentVolumeClaim, a
// golden image's DataVolume is renamed with its spec); the rule keeps it so.
func (c *comparison) immutableDataVolumes() {
	for _, o := range c.objects {
		if o.Kind != "DataVolume" || o.Status != Changed || !o.specChanged() {
			continue
		}
		if slices.ContainsFunc(c.report.Refusals, func(f Finding) bool { return f.Object == o.Ref() }) {
			continue
		}
		c.refuse("datavolume-spec-changed", o.Ref(),
			fmt.Sprintf("the spec of %s changes in place: CDI rejects every update of a DataVolume's spec, so Argo CD's sync of it would fail on every attempt", o.Ref()),
			"a DataVolume's spec is fixed at creation: a different import is a new DataVolume under another name")
	}
}

// byName indexes items by their names.
func byName[T any](items []T, name func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		m[name(it)] = it
	}
	return m
}
