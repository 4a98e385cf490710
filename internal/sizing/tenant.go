package sizing

import (
	"cmp"
	"maps"
	"slices"

	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/resolve"
)

// Usage is what a tenant's VMs need, in VM terms and in pod terms.
type Usage struct {
	VMs     int64
	VCPUs   int64
	Guest   int64 // guest memory, bytes
	Storage int64 // disk sizes, bytes
	// PVC is the bytes of PVCs CDI creates (disks plus file system overhead).
	PVC int64
	// ByClass is PVC bytes per StorageClass.
	ByClass map[string]int64
	// Pods is the sum of the VMs' virt-launcher requests.
	Pods Pod
	// Migratable is, for each VM that can live-migrate (in the order of the
	// VMs), what a migration of it starts beside it: its target
	// virt-launcher, plus a target attachment pod when the VM has
	// hot-plugged volumes (see Headroom).
	Migratable []Pod
	// Hotplug is the number of VMs with hot-plugged volumes: each runs one
	// attachment pod (Model.Attachment) holding all of them.
	Hotplug int64
	// HotplugMigratable is how many of the migratable VMs have hot-plugged
	// volumes.
	HotplugMigratable int64
	// MaxOverhead is the largest file system overhead of the tenant's
	// storage, used to translate a storage quota into PVC bytes.
	MaxOverhead float64
	// State is the bytes of the backend-storage PVCs KubeVirt creates for
	// VMs with persistent EFI or TPM (in PVC and ByClass too): not disks a
	// quota in VM terms states, so added to it.
	State int64
	// StateHeadroom is the backend-storage PVC a live migration of such a
	// VM creates for its target when the state storage is not shared
	// (ReadWriteOnce), by StorageClass: counted beside the pod headroom,
	// once per concurrent migration (at most StateMigrating of the class).
	StateHeadroom map[string]int64
	// StateMigrating is the number of migratable VMs per StorageClass whose
	// migration creates such a target PVC.
	StateMigrating map[string]int64
	// DeviceOverhead is the launcher memory of the VMs' TPMs and arm64
	// UEFI flash (in Pods too): a quota in VM terms does not state it.
	DeviceOverhead int64
}

// ShapeOf is the launcher shape of a resolved VM: its size, and its
// preference's TPM and architecture (the TPM its firmware states, for a
// VM without a preference).
func ShapeOf(vm *resolve.VM) Shape {
	sz := vm.Size.Spec
	sh := Shape{VCPUs: sz.CPU, Guest: sz.Memory.Value(), DedicatedCPU: sz.DedicatedCPU, Hugepages: sz.Hugepages, OvercommitPercent: sz.MemoryOvercommitPercent}
	if p := vm.Preference; p != nil {
		sh.TPM = p.Spec.TPM != ""
		sh.Arch = p.Spec.Architecture
	}
	if vm.VM.VM != nil && vm.Spec.Preference == "none" {
		sh.TPM = vm.Spec.Firmware.HasTPM()
	}
	return sh
}

// Tenant sums the usage of a resolved tenant's VMs.
func (m Model) Tenant(t *resolve.Tenant) Usage {
	u := Usage{ByClass: map[string]int64{}, StateHeadroom: map[string]int64{}, StateMigrating: map[string]int64{}}
	for _, vm := range t.VMs {
		if vm.Size == nil {
			continue
		}
		vcpus, guest := vm.Size.Spec.CPU, vm.Size.Spec.Memory.Value()
		shape := ShapeOf(vm)
		pod := m.LauncherFor(shape)
		if shape.TPM {
			u.DeviceOverhead += m.TPM
		}
		if shape.Arch == "arm64" {
			u.DeviceOverhead += m.Arm64UEFI
		}
		if st := vm.StateStorage; st != nil && st.StorageProfile != nil {
			class, claim := st.Spec.StorageClass, m.StateClaim(StateOverhead(*st))
			u.State += claim
			u.PVC += claim
			u.ByClass[class] += claim
			if vm.CanMigrate() && !st.StateSharedOnMigration() {
				u.StateHeadroom[class] = claim
				u.StateMigrating[class]++
			}
		}
		u.VMs++
		u.VCPUs += vcpus
		u.Guest += guest
		u.Pods = u.Pods.Add(pod)
		hot := slices.ContainsFunc(vm.Attached(), func(d resolve.Disk) bool { return d.Hotpluggable })
		if hot {
			u.Hotplug++
		}
		if vm.CanMigrate() {
			target := pod
			if hot {
				target = target.Add(m.Attachment)
				u.HotplugMigratable++
			}
			u.Migratable = append(u.Migratable, target)
		}
		u.addDisk(vm.RootDisk.Value(), vm.RootStorage)
		for _, d := range vm.Disks {
			u.addDisk(d.Size.Value(), d.Storage)
		}
	}
	return u
}

func (u *Usage) addDisk(size int64, st resolve.Storage) {
	if st.StorageProfile == nil {
		return
	}
	overhead := FilesystemOverhead(st)
	pvc := PVC(size, overhead)
	u.Storage += size
	u.PVC += pvc
	u.ByClass[st.Spec.StorageClass] += pvc
	u.MaxOverhead = max(u.MaxOverhead, overhead)
}

// DefaultFilesystemOverhead is CDI's global default.
const DefaultFilesystemOverhead = 0.055

// FilesystemOverhead is the share CDI adds to disks on a storage profile.
func FilesystemOverhead(st resolve.Storage) float64 {
	if st.Spec.VolumeMode != "Filesystem" {
		return 0
	}
	if st.Spec.FilesystemOverhead == "" {
		return DefaultFilesystemOverhead
	}
	o, _ := decode.ParseOverhead(st.Spec.FilesystemOverhead)
	return o
}

// Headroom is what `parallel` concurrent live migrations of the tenant's
// VMs start at once: in each resource, the sum of the `parallel` largest
// among the migratable VMs' target pods (target virt-launcher plus, for a
// VM with hot-plugged volumes, its target attachment pod; all of them when
// fewer can migrate). Taken per resource, it holds whichever VMs KubeVirt
// picks (see Migrations).
func (u Usage) Headroom(parallel int64) Pod {
	n := min(max(parallel, 0), int64(len(u.Migratable)))
	largest := func(get func(Pod) int64) int64 {
		vals := make([]int64, len(u.Migratable))
		for i, p := range u.Migratable {
			vals[i] = get(p)
		}
		slices.SortFunc(vals, func(a, b int64) int { return cmp.Compare(b, a) })
		var sum int64
		for _, v := range vals[:n] {
			sum += v
		}
		return sum
	}
	return Pod{
		MilliCPU:     largest(func(p Pod) int64 { return p.MilliCPU }),
		Memory:       largest(func(p Pod) int64 { return p.Memory }),
		Hugepages2Mi: largest(func(p Pod) int64 { return p.Hugepages2Mi }),
		Hugepages1Gi: largest(func(p Pod) int64 { return p.Hugepages1Gi }),
	}
}

// StateOverhead is the file system overhead CDI applies to Filesystem
// claims of a storage profile's class, which VM-state PVCs always are: the
// profile's filesystemOverhead, else CDI's default (for a Block profile too:
// its class's Filesystem claims get the default unless CDI is told
// otherwise).
func StateOverhead(st resolve.Storage) float64 {
	if st.Spec.FilesystemOverhead == "" {
		return DefaultFilesystemOverhead
	}
	o, _ := decode.ParseOverhead(st.Spec.FilesystemOverhead)
	return o
}

// Hard is a ResourceQuota's hard limits, in pod terms.
type Hard struct {
	MilliCPU int64
	Memory   int64
	// Hugepages2Mi and Hugepages1Gi are huge-page bytes (zero: no key).
	Hugepages2Mi, Hugepages1Gi int64
	Storage                    int64
	ByClass                    map[string]int64
	VMs                        int64
}

// Classes lists the storage classes of h in order.
func (h Hard) Classes() []string { return slices.Sorted(maps.Keys(h.ByClass)) }

// Migrations is how many live migrations of the tenant's VMs can run at
// once when KubeVirt allows `parallel` cluster-wide: all may be this
// tenant's, but no more than its migratable VMs (one target per VM at a
// time).
func (u Usage) Migrations(parallel int64) int64 {
	return min(max(parallel, 0), int64(len(u.Migratable)))
}

// AttachmentPods is how many hot-plug attachment pods the quota holds
// beside the migration headroom: one for each VM with hot-plugged volumes,
// and one more while any of them changes its volumes. KubeVirt v1.8.4
// (pkg/virt-controller/watch/vmi/volume-hotplug.go handleHotplugVolumes,
// cleanupAttachmentPods) creates a new attachment pod for the new set of
// ready volumes and deletes the old one only once the new one runs: without
// room for the second pod the change never completes. One spare is enough:
// once a change completes its old pod goes and the next change can start.
func (u Usage) AttachmentPods() int64 {
	if u.Hotplug == 0 {
		return 0
	}
	return u.Hotplug + 1
}

// Quota is the ResourceQuota a tenant gets: translated from its quota in
// VM terms where it states one, derived from its VMs where it does not, plus
// the VMs' hot-plug attachment pods (AttachmentPods), plus the headroom of
// the live migrations that can run at once when KubeVirt allows `parallel`
// cluster-wide (Usage.Headroom, Usage.Migrations). Memory is rounded up to
// whole MiB.
func (m Model) Quota(t *resolve.Tenant, u Usage, parallel int64) Hard {
	migrations := u.Migrations(parallel)
	headroom := u.Headroom(migrations)
	h := Hard{
		MilliCPU:     u.Pods.MilliCPU,
		Memory:       u.Pods.Memory,
		Hugepages2Mi: u.Pods.Hugepages2Mi + headroom.Hugepages2Mi,
		Hugepages1Gi: u.Pods.Hugepages1Gi + headroom.Hugepages1Gi,
		Storage:      u.PVC,
		ByClass:      maps.Clone(u.ByClass),
		VMs:          u.VMs,
	}
	q := t.Spec.Quota
	if q != nil {
		vms, vcpus := u.VMs, u.VCPUs
		if q.VMs != nil {
			vms = *q.VMs
			h.VMs = vms
		}
		if q.CPU != nil {
			vcpus = *q.CPU
		}
		if q.CPU != nil || q.VMs != nil {
			h.MilliCPU = vcpus*1000/m.CPUAllocationRatio + vms*m.ConsoleLog.MilliCPU
		}
		if q.Memory != nil || q.CPU != nil || q.VMs != nil {
			guest := u.Guest
			if q.Memory != nil {
				guest = q.Memory.Value()
			}
			// The overhead is linear in VMs, vCPUs and guest memory, so the
			// sum over VMs equals the formula over the totals, but for the
			// page-table rounding: allow 2 bytes per VM for it.
			perVM := m.Static + m.IOThread + m.VideoRAM + m.ConsoleLog.Memory + 2
			kilo := (guest + 999) / 1000
			h.Memory = guest + kilo*1000/m.PagetableDivisor + vcpus*m.PerVCPU + vms*perVM + u.DeviceOverhead
		}
		if q.Storage != nil {
			h.Storage = PVC(q.Storage.Value(), u.MaxOverhead) + u.State
			for c := range h.ByClass {
				h.ByClass[c] = h.Storage
			}
		}
	}
	// Each of the concurrent migrations may be one of a VM whose state
	// claim needs a target twin.
	for _, c := range slices.Sorted(maps.Keys(u.StateHeadroom)) {
		twins := u.StateHeadroom[c] * min(migrations, u.StateMigrating[c])
		h.Storage += twins
		h.ByClass[c] += twins
	}
	attach := u.AttachmentPods()
	h.MilliCPU += headroom.MilliCPU + attach*m.Attachment.MilliCPU
	h.Memory += headroom.Memory + attach*m.Attachment.Memory
	h.Memory = (h.Memory + mi - 1) / mi * mi
	return h
}
