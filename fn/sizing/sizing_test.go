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
