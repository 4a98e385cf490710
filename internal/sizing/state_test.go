package sizing

import (
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/resolve"
)

func profile(class, mode, access string) *resolve.Storage {
	return &resolve.Storage{Name: class, StorageProfile: &api.StorageProfile{Spec: api.StorageProfileSpec{StorageClass: class, VolumeMode: mode, AccessMode: access}}}
}

// windowsVM is a migratable 2-vCPU/8Gi VM with windows.2k22's persistent
// EFI and TPM, its 60Gi root disk on rbd (Block, RWX), its state on state.
func windowsVM(state *resolve.Storage) *resolve.VM {
	return &resolve.VM{
		Size:         &api.Size{Spec: api.SizeSpec{CPU: 2, Memory: resource.MustParse("8Gi")}},
		Preference:   &api.Preference{Spec: api.PreferenceSpec{Firmware: "efi-secureboot", PersistentEFI: true, TPM: api.TPMPersistent}},
		RootDisk:     resource.MustParse("60Gi"),
		RootStorage:  *profile("rbd", api.VolumeModeBlock, api.AccessRWX),
		Networks:     []resolve.Network{{Name: "default", NetworkProfile: &api.NetworkProfile{Spec: api.NetworkProfileSpec{Type: api.NetworkPod, Migratable: true}}}},
		Migration:    api.MigrationIfPossible,
		StateStorage: state,
	}
}

func tenant(vms ...*resolve.VM) *resolve.Tenant {
	return &resolve.Tenant{Tenant: decode.Tenant{Tenant: &api.Tenant{}}, VMs: vms}
}

// A VM with persistent EFI or TPM gets a 10Mi Filesystem PVC from KubeVirt
// (kubevirt.io/kubevirt v1.8.4 pkg/storage/backend-storage/backend-storage.go:
// PVCSize, createPVC) in the VM-state class, which CDI renders to 10.55Mi
// (11Mi in the quota; see TestStateClaim). When that PVC is not shared
// (ReadWriteOnce, or unknown for a Block profile), a live migration creates
// a second one for the target (CreatePVCForMigrationTarget) and deletes the
// source's after the handoff (MigrationHandoff): the quota holds both.
func TestStatePVCInQuota(t *testing.T) {
	const gi = 1 << 30
	for _, tc := range []struct {
		name      string
		state     *resolve.Storage
		wantState map[string]int64 // requests.storage per class
	}{
		{"block state storage: a second PVC while migrating", profile("rbd", api.VolumeModeBlock, api.AccessRWX),
			map[string]int64{"rbd": 60*gi + 22*mi}},
		{"filesystem RWX state storage: shared with the target", profile("cephfs", api.VolumeModeFilesystem, api.AccessRWX),
			map[string]int64{"rbd": 60 * gi, "cephfs": 11 * mi}},
		{"filesystem RWO state storage", profile("lvms", api.VolumeModeFilesystem, api.AccessRWO),
			map[string]int64{"rbd": 60 * gi, "lvms": 22 * mi}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn := tenant(windowsVM(tc.state))
			u := KubeVirt.Tenant(tn)
			h := KubeVirt.Quota(tn, u, 5) // HCO's default parallelMigrationsPerCluster
			var total int64
			for c, want := range tc.wantState {
				total += want
				if h.ByClass[c] != want {
					t.Errorf("class %s: %d, want %d", c, h.ByClass[c], want)
				}
			}
			if len(h.ByClass) != len(tc.wantState) {
				t.Errorf("classes %v, want %v", h.Classes(), tc.wantState)
			}
			if h.Storage != total {
				t.Errorf("requests.storage %d, want %d", h.Storage, total)
			}
			if u.Storage != 60*gi {
				t.Errorf("disk usage %d: the state PVC is no disk of the VM's", u.Storage)
			}
		})
	}
}

// The launcher of a VM with a TPM requests 53Mi more, and so does the
// migration headroom of the tenant it is the largest VM of.
func TestStateMemoryInQuota(t *testing.T) {
	plain := windowsVM(nil)
	plain.Preference = &api.Preference{}
	hp := KubeVirt.Quota(tenant(plain), KubeVirt.Tenant(tenant(plain)), 2)
	win := windowsVM(profile("rbd", api.VolumeModeBlock, api.AccessRWX))
	hw := KubeVirt.Quota(tenant(win), KubeVirt.Tenant(tenant(win)), 2)
	if d := hw.Memory - hp.Memory; d != 2*53*mi {
		t.Errorf("requests.memory grows by %d, want 106Mi (the TPM in the pod and in the migration headroom)", d)
	}
}

// A quota stated in VM terms (spec.quota) counts the state PVCs and the
// TPMs on top: they are not disks or guest memory the tenant states.
func TestStateOnTopOfStatedQuota(t *testing.T) {
	win := windowsVM(profile("cephfs", api.VolumeModeFilesystem, api.AccessRWX))
	mem, st, vms, cpu := resource.MustParse("16Gi"), resource.MustParse("100Gi"), int64(2), int64(4)
	tn := tenant(win)
	tn.Spec.Quota = &api.TenantQuota{Memory: &mem, Storage: &st, VMs: &vms, CPU: &cpu}
	plain := windowsVM(nil)
	plain.Preference = &api.Preference{}
	tp := tenant(plain)
	tp.Spec.Quota = tn.Spec.Quota
	hw, hp := KubeVirt.Quota(tn, KubeVirt.Tenant(tn), 2), KubeVirt.Quota(tp, KubeVirt.Tenant(tp), 2)
	if hw.Storage != 100<<30+11*mi || hw.ByClass["cephfs"] != hw.Storage {
		t.Errorf("storage %d (cephfs %d), want 100Gi+11Mi", hw.Storage, hw.ByClass["cephfs"])
	}
	if d := hw.Memory - hp.Memory; d != 2*53*mi {
		t.Errorf("requests.memory grows by %d, want 106Mi", d)
	}
}

// CDI v1.65.0's PVC rendering (pkg/util/util.go GetRequiredSpace, applied
// by pkg/apiserver/webhooks/pvc-mutate.go to claims KubeVirt labels
// cdi.kubevirt.io/applyStorageProfile): RoundUp(10Mi, 1Mi) = 10485760,
// ceil(10485760 × 1.055) = 11062477 bytes with the default overhead, which
// the quota rounds up to 11Mi; with 10%: 11534336 exactly, 11Mi; with 0: 10Mi.
func TestStateClaim(t *testing.T) {
	for _, tc := range []struct {
		overhead float64
		want     int64
	}{{0.055, 11 * mi}, {0.1, 11 * mi}, {0, 10 * mi}, {0.2, 12 * mi}} {
		if got := KubeVirt.StateClaim(tc.overhead); got != tc.want {
			t.Errorf("overhead %v: %d, want %d", tc.overhead, got, tc.want)
		}
	}
	if got := int64(math.Ceil(float64(10*mi) * 1.055)); got != 11062477 {
		t.Errorf("CDI's inflated size %d, want 11062477", got)
	}
	if o := StateOverhead(*profile("rbd", api.VolumeModeBlock, api.AccessRWX)); o != DefaultFilesystemOverhead {
		t.Errorf("overhead of a Block profile's Filesystem claims %v, want CDI's default", o)
	}
}

// Each concurrent migration of a VM whose state claim is not shared needs
// its own target claim: with two migrations allowed at once, two of three
// such VMs migrate at once, so two twins are counted, not three; with HCO's
// default parallelMigrationsPerCluster of 5, all three.
func TestStateTwinsPerConcurrentMigration(t *testing.T) {
	rwo := profile("lvms", api.VolumeModeFilesystem, api.AccessRWO)
	tn := tenant(windowsVM(rwo), windowsVM(rwo), windowsVM(rwo))
	u := KubeVirt.Tenant(tn)
	for _, tc := range []struct{ migrations, claims int64 }{{1, 3 + 1}, {2, 3 + 2}, {5, 3 + 3}} {
		if got := KubeVirt.Quota(tn, u, tc.migrations).ByClass["lvms"]; got != tc.claims*11*mi {
			t.Errorf("%d concurrent migrations: lvms %d bytes, want %d claims of 11Mi", tc.migrations, got, tc.claims)
		}
	}
}
