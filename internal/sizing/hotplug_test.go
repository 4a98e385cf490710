package sizing

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/resolve"
)

// linuxVM is a 1-vCPU/2Gi VM with its 30Gi root disk on rbd (Block, RWX)
// and a pod network: it can live-migrate. hot adds a hot-plugged 20Gi
// existing DataVolume (virtctl addvolume) on the same storage.
func linuxVM(migration string, hot bool) *resolve.VM {
	vm := &resolve.VM{
		Size:        &api.Size{Spec: api.SizeSpec{CPU: 1, Memory: resource.MustParse("2Gi")}},
		RootDisk:    resource.MustParse("30Gi"),
		RootStorage: *profile("rbd", api.VolumeModeBlock, api.AccessRWX),
		Networks:    []resolve.Network{{Name: "default", NetworkProfile: &api.NetworkProfile{Spec: api.NetworkProfileSpec{Type: api.NetworkPod, Migratable: true}}}},
		Migration:   migration,
	}
	if hot {
		vm.Disks = []resolve.Disk{{Disk: api.Disk{Name: "scratch", Size: resource.MustParse("20Gi"), ExistingDataVolume: "scratch", Hotpluggable: true, Bus: "scsi"}, Storage: *profile("rbd", api.VolumeModeBlock, api.AccessRWX)}}
	}
	return vm
}

// The hot-plug attachment pod requests 10m CPU and 2M (decimal) memory:
// kubevirt.io/kubevirt v1.8.4 pkg/virt-controller/services/
// renderresources.go hotplugContainerRequests (limits 100m and 80M,
// hotplugContainerLimits), unless the KubeVirt CR's
// supportContainerResources says otherwise, which HCO v1.18.1 never sets.
func TestAttachmentPodRequest(t *testing.T) {
	if want := (Pod{MilliCPU: 10, Memory: 2_000_000}); KubeVirt.Attachment != want {
		t.Errorf("attachment pod %+v, want %+v", KubeVirt.Attachment, want)
	}
}

// A VM with hot-plugged volumes runs one attachment pod holding all of
// them beside its virt-launcher (v1.8.4 pkg/virt-controller/watch/vmi/
// volume-hotplug.go: one pod for the ready hot-plug volumes, the template
// services/template.go RenderHotplugAttachmentPodTemplate); a change of the
// volumes starts a second one before the first goes (cleanupAttachmentPods);
// a migration starts one more for the target once the target
// virt-launcher is ready (watch/migration/migration.go createAttachmentPod).
// With one such VM and parallelMigrationsPerCluster 5 the quota holds: two
// virt-launchers of 105m and 2467696320 bytes (see
// TestHeadroomCoversConcurrentMigrations), and three attachment pods
// (running, volume change, migration target) of 10m and 2000000 bytes:
// 240m, and 4941392640 bytes, 4713Mi rounded up.
func TestQuotaCountsAttachmentPods(t *testing.T) {
	tn := tenant(linuxVM(api.MigrationIfPossible, true))
	u := KubeVirt.Tenant(tn)
	if u.Hotplug != 1 || u.HotplugMigratable != 1 || u.AttachmentPods() != 2 {
		t.Errorf("hotplug %d, migratable %d, attachment pods %d; want 1, 1, 2", u.Hotplug, u.HotplugMigratable, u.AttachmentPods())
	}
	h := KubeVirt.Quota(tn, u, 5)
	if h.MilliCPU != 240 {
		t.Errorf("requests.cpu %dm, want 240m", h.MilliCPU)
	}
	if want := int64(4713 * mi); h.Memory != want || 2*2467696320+3*2_000_000 > want {
		t.Errorf("requests.memory %d, want %d", h.Memory, want)
	}
	// The same VM without the hot-plugged disk: no attachment pod.
	plain := tenant(linuxVM(api.MigrationIfPossible, false))
	pu := KubeVirt.Tenant(plain)
	if pu.Hotplug != 0 || pu.AttachmentPods() != 0 {
		t.Errorf("no hot-plugged disk: hotplug %d, attachment pods %d", pu.Hotplug, pu.AttachmentPods())
	}
	if ph := KubeVirt.Quota(plain, pu, 5); ph.MilliCPU != 210 || ph.Memory != (2*2467696320+mi-1)/mi*mi {
		t.Errorf("no hot-plugged disk: %dm, %d bytes; want 210m, %d", ph.MilliCPU, ph.Memory, (2*2467696320+mi-1)/mi*mi)
	}
}

// A tenant that states its quota in VM terms still gets the attachment
// pods on top: VM terms do not state them.
func TestStatedQuotaAddsAttachmentPods(t *testing.T) {
	vms, cpu := int64(1), int64(1)
	mem := resource.MustParse("2Gi")
	withQuota := func(vm *resolve.VM) *resolve.Tenant {
		tn := tenant(vm)
		tn.Spec.Quota = &api.TenantQuota{VMs: &vms, CPU: &cpu, Memory: &mem}
		return tn
	}
	hot, plain := withQuota(linuxVM(api.MigrationIfPossible, true)), withQuota(linuxVM(api.MigrationIfPossible, false))
	hh, hp := KubeVirt.Quota(hot, KubeVirt.Tenant(hot), 5), KubeVirt.Quota(plain, KubeVirt.Tenant(plain), 5)
	if d := hh.MilliCPU - hp.MilliCPU; d != 30 {
		t.Errorf("attachment pods add %dm, want 30m (running, volume change, migration target)", d)
	}
	if hh.Memory < hp.Memory+3*2_000_000 {
		t.Errorf("attachment pods add %d bytes, want at least 6000000", hh.Memory-hp.Memory)
	}
}

// The workload updater live-migrates every outdated VMI whose
// LiveMigratable condition is true, whatever its eviction strategy
// (v1.8.4 pkg/virt-controller/watch/workload-updater/workload-updater.go
// getUpdateData: vmi.IsMigratable()), up to parallelMigrationsPerCluster at
// once anywhere in the cluster (sync: maxParallelMigrations less the
// running ones). So the headroom counts VMs with migration: Never that can
// migrate, and as many as parallelMigrationsPerCluster of them: with 5 and
// three such VMs, all three target pods.
func TestHeadroomForWorkloadUpdate(t *testing.T) {
	tn := tenant(linuxVM(api.MigrationNever, false), linuxVM(api.MigrationIfPossible, false), linuxVM(api.MigrationRequired, true))
	u := KubeVirt.Tenant(tn)
	if len(u.Migratable) != 3 {
		t.Fatalf("%d migratable VMs, want 3 (migration: Never does not keep the workload update from migrating a VM)", len(u.Migratable))
	}
	for _, tc := range []struct {
		parallel, migrations, milli int64
	}{
		// Three launchers of 105m (315m), the hot-plugging VM's
		// attachment pod and the spare one for a volume change (20m), and
		// the targets of the migrations: 105m each, plus 10m for the
		// target attachment pod of the hot-plugging VM, the largest
		// target (115m).
		{1, 1, 315 + 20 + 115},
		{2, 2, 315 + 20 + 115 + 105},
		{5, 3, 315 + 20 + 115 + 2*105},
		{0, 0, 315 + 20},
	} {
		if n := u.Migrations(tc.parallel); n != tc.migrations {
			t.Errorf("parallelMigrationsPerCluster %d: %d migrations, want %d", tc.parallel, n, tc.migrations)
		}
		if h := KubeVirt.Quota(tn, u, tc.parallel); h.MilliCPU != tc.milli {
			t.Errorf("parallelMigrationsPerCluster %d: requests.cpu %dm, want %dm", tc.parallel, h.MilliCPU, tc.milli)
		}
	}
	// A VM on ReadWriteOnce storage cannot migrate: no target, but its
	// attachment pod runs.
	rwo := linuxVM(api.MigrationIfPossible, true)
	rwo.RootStorage = *profile("lvms", api.VolumeModeBlock, api.AccessRWO)
	ru := KubeVirt.Tenant(tenant(rwo))
	if len(ru.Migratable) != 0 || ru.HotplugMigratable != 0 || ru.AttachmentPods() != 2 {
		t.Errorf("RWO VM: %d migratable, %d hot-plug migratable, %d attachment pods; want 0, 0, 2", len(ru.Migratable), ru.HotplugMigratable, ru.AttachmentPods())
	}
}
