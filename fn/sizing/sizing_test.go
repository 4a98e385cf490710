package sizing

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
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

func TestPVCFilesystemOverhead(t *testing.T) {
	if got := PVC(10<<30, 0); got != 10<<30 {
		t.Errorf("block PVC = %d", got)
	}
	// 10Gi / 0.945 = 11362347344.3 -> 10836Mi (rounded up to MiB).
	if got := PVC(10<<30, 0.055); got != 10836*mi {
		t.Errorf("filesystem PVC = %d (%dMi), want 10836Mi", got, got/mi)
	}
}

// The device and architecture terms of KubeVirt v1.8.4's kvm backend
// (pkg/hypervisor/kvm/hypervisorbackend.go, GetMemoryOverhead): a TPM
// device (tpm.HasDevice: transient or persistent) adds 53Mi for swtpm, an
// arm64 guest 128Mi for its two 64Mi UEFI flash devices. v1.6.2 has the
// same terms (pkg/virt-controller/services/renderresources.go).
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

// memory.overcommitPercent (the o1 series, 50): KubeVirt v1.8.4
// pkg/instancetype/apply/memory.go sets the pod's memory request to
// int64(float32(guest) * (1 - float32(percent)/100)), and the page-table
// term of the overhead follows the request, not the guest memory.
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
