package sizing

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/resolve"
)

// The expected figures were computed with KubeVirt's own arithmetic
// (resource.Quantity ScaledValue(Kilo), then /512) for these shapes.
func TestMemoryOverheadMatchesKubeVirt(t *testing.T) {
	for _, tc := range []struct {
		guest string
		vcpus int64
		want  int64
	}{
		{"2Gi", 1, 285212672},
		{"4Gi", 2, 297795585},
		{"8Gi", 4, 322961408},
		{"16Gi", 8, 373293057},
		{"4G", 2, 297219476},
	} {
		g := resource.MustParse(tc.guest)
		if got := KubeVirt.MemoryOverhead(tc.vcpus, g.Value()); got != tc.want {
			t.Errorf("overhead(%s, %d vCPU) = %d, want %d", tc.guest, tc.vcpus, got, tc.want)
		}
	}
}

func TestLauncherAddsConsoleLogAndCPUShare(t *testing.T) {
	g := resource.MustParse("2Gi")
	p := KubeVirt.Launcher(1, g.Value())
	if p.MilliCPU != 105 {
		t.Errorf("cpu = %dm, want 105m (100m for 1 vCPU + 5m console log)", p.MilliCPU)
	}
	if want := int64(2432696320 + 35_000_000); p.Memory != want {
		t.Errorf("memory = %d, want %d", p.Memory, want)
	}
}

// CDI's one worker pod in a tenant's namespace, the upload server of a
// host-assisted clone of a VM's root disk (CDI v1.65.0
// pkg/controller/upload-controller.go createUploadPod), requests
// CDIConfig's default pod resources: 100m CPU and 60M memory
// (pkg/controller/config-controller.go; HCO v1.18.1 changes them only
// from spec.resourceRequirements.storageWorkloads, controllers/handlers/
// cdi.go, which virtc does not set). It runs before the VM's launcher pod
// (virt-controller starts a VM once its DataVolumes are ready), in the
// room the quota holds for that pod, so virtc's quota has no headroom of
// its own for CDI as long as the smallest launcher pod requests at least
// as much (test/controllers TestQuotaAdmitsCDIClonePods shows the API
// server's decision with CDI's real controller).
func TestSmallestLauncherHoldsCDIUploadPod(t *testing.T) {
	upload := Pod{MilliCPU: 100, Memory: 60_000_000}
	p := KubeVirt.Launcher(1, 0)
	if p.MilliCPU < upload.MilliCPU || p.Memory < upload.Memory {
		t.Errorf("a 1-vCPU launcher pod requests %dm CPU and %d bytes, less than CDI's upload pod (%dm, %d bytes): the quota needs headroom for CDI",
			p.MilliCPU, p.Memory, upload.MilliCPU, upload.Memory)
	}
}

func TestPVCFilesystemOverhead(t *testing.T) {
	if got := PVC(10<<30, 0); got != 10<<30 {
		t.Errorf("block PVC = %d", got)
	}
	// 10Gi / 0.945 = 11362347344.3 -> 10836Mi (rounded up to MiB).
	if got := PVC(10<<30, 0.055); got != 10836*mi {
		t.Errorf("filesystem PVC = %d (%dMi), want 10836Mi", got, got/mi)
	}
}

// KubeVirt runs up to parallelMigrationsPerCluster live migrations at once
// (HCO v1.18.1 default 5, api/v1beta1/hyperconverged_types.go; enforced by
// KubeVirt v1.8.4 pkg/virt-controller/watch/migration/migration.go before
// it creates each target pod), and all may be one tenant's, so the quota
// must hold that many target pods beside the VMs: the largest ones, in
// each resource.
func TestHeadroomCoversConcurrentMigrations(t *testing.T) {
	big := KubeVirt.Launcher(2, 16<<30)  // most memory
	wide := KubeVirt.Launcher(16, 4<<30) // most CPU
	mid := KubeVirt.Launcher(4, 8<<30)
	small := KubeVirt.Launcher(1, 2<<30)
	u := Usage{Migratable: []Pod{small, big, mid, wide}}
	for _, tc := range []struct {
		parallel      int64
		milli, memory int64
	}{
		{0, 0, 0},
		{1, wide.MilliCPU, big.Memory},
		{2, wide.MilliCPU + mid.MilliCPU, big.Memory + mid.Memory},
		{4, wide.MilliCPU + mid.MilliCPU + big.MilliCPU + small.MilliCPU, big.Memory + mid.Memory + wide.Memory + small.Memory},
		{5, wide.MilliCPU + mid.MilliCPU + big.MilliCPU + small.MilliCPU, big.Memory + mid.Memory + wide.Memory + small.Memory}, // only 4 can migrate
	} {
		h := u.Headroom(tc.parallel)
		if h.MilliCPU != tc.milli || h.Memory != tc.memory {
			t.Errorf("Headroom(%d) = %dm, %d bytes; want %dm, %d bytes", tc.parallel, h.MilliCPU, h.Memory, tc.milli, tc.memory)
		}
	}
	// By hand, so that the sums above are not only Launcher against itself:
	// a 1 vCPU, 2Gi launcher is 105m and 2467696320 bytes (see
	// TestLauncherAddsConsoleLogAndCPUShare).
	if h := (Usage{Migratable: []Pod{small, small, small}}).Headroom(2); h.MilliCPU != 210 || h.Memory != 2*2467696320 {
		t.Errorf("two 1 vCPU/2Gi VMs: headroom %dm %d bytes, want 210m and %d bytes", h.MilliCPU, h.Memory, 2*2467696320)
	}
	// No migratable VM: no headroom, whatever the parallelism.
	if h := (Usage{}).Headroom(2); h != (Pod{}) {
		t.Errorf("no migratable VM: headroom %+v", h)
	}
}

// Quota adds the headroom of the concurrent migrations to the VMs' pods:
// with two migrations allowed, two target pods fit beside the VMs.
func TestQuotaHeadroomForTwoMigrations(t *testing.T) {
	a, b := KubeVirt.Launcher(1, 2<<30), KubeVirt.Launcher(2, 4<<30)
	u := Usage{VMs: 2, Pods: a.Add(b), Migratable: []Pod{a, b}}
	tenant := &resolve.Tenant{Tenant: decode.Tenant{Tenant: &api.Tenant{}}}
	h := KubeVirt.Quota(tenant, u, 2)
	// 2 × (105m + 205m) = 620m; memory 2 × (a + b) rounded up to MiB.
	if h.MilliCPU != 620 {
		t.Errorf("cpu = %dm, want 620m", h.MilliCPU)
	}
	if want := (2*(a.Memory+b.Memory) + mi - 1) / mi * mi; h.Memory != want {
		t.Errorf("memory = %d, want %d", h.Memory, want)
	}
	one := KubeVirt.Quota(tenant, u, 1)
	if one.MilliCPU != 105+205+205 {
		t.Errorf("one migration: cpu = %dm, want 515m", one.MilliCPU)
	}
}

func TestLauncherTPMAndArm64(t *testing.T) {
	g := resource.MustParse("2Gi")
	base := KubeVirt.LauncherFor(Shape{VCPUs: 1, Guest: g.Value()})
	tpm := KubeVirt.LauncherFor(Shape{VCPUs: 1, Guest: g.Value(), TPM: true})
	arm := KubeVirt.LauncherFor(Shape{VCPUs: 1, Guest: g.Value(), Arch: "arm64"})
	if d := tpm.Memory - base.Memory; d != 53*mi {
		t.Errorf("TPM adds %d bytes, want 53Mi", d)
	}
	if d := arm.Memory - base.Memory; d != 128*mi {
		t.Errorf("arm64 adds %d bytes, want 128Mi", d)
	}
	if tpm.MilliCPU != base.MilliCPU || arm.MilliCPU != base.MilliCPU {
		t.Error("a TPM or arm64 changed the CPU request")
	}
}

func TestLauncherMemoryOvercommit(t *testing.T) {
	g := resource.MustParse("4Gi")
	s := Shape{VCPUs: 1, Guest: g.Value(), OvercommitPercent: 50}
	if r := s.Request(); r != 2<<30 {
		t.Fatalf("request %d, want 2Gi", r)
	}
	p := KubeVirt.LauncherFor(s)
	// 2Gi request + the overhead of a 2Gi, 1-vCPU VM (285212672, see
	// TestMemoryOverheadMatchesKubeVirt) + 35MB console log.
	if want := int64(2<<30 + 285212672 + 35_000_000); p.Memory != want {
		t.Errorf("memory = %d, want %d", p.Memory, want)
	}
	// float32 rounding as KubeVirt's: 3000000001 bytes at 50%.
	odd := Shape{Guest: 3_000_000_001, OvercommitPercent: 50}
	if want := int64(float32(3_000_000_001) * 0.5); odd.Request() != want || want != 1_500_000_000 {
		t.Errorf("request %d, want %d", odd.Request(), want)
	}
}
