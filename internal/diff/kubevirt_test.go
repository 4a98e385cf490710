package diff

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/api"
)

func size(cpu int64, mem string) *api.Size {
	return &api.Size{Spec: api.SizeSpec{CPU: cpu, Memory: resource.MustParse(mem)}}
}

func hp(s *api.Size) *api.Size {
	s.Spec.Hugepages = "1Gi"
	return s
}

func TestSizeChange(t *testing.T) {
	stage := DefaultCluster
	stage.LiveUpdate = false
	for _, tc := range []struct {
		name       string
		cluster    Cluster
		from, to   *api.Size
		topology   string
		migratable bool
		effect     string
		mentions   string
	}{
		{"u1.medium to u1.large", DefaultCluster, size(1, "4Gi"), size(2, "8Gi"), "", true, EffectLive, "CPU sockets and memory"},
		{"memory only", DefaultCluster, size(2, "4Gi"), size(2, "8Gi"), "", true, EffectLive, "the memory"},
		{"up to the ratio", DefaultCluster, size(2, "4Gi"), size(8, "16Gi"), "", true, EffectLive, "CPU sockets and memory"},
		{"beyond the socket ratio", DefaultCluster, size(1, "4Gi"), size(8, "4Gi"), "", true, EffectRestart, "exceed the 4 CPU sockets"},
		{"beyond the memory ratio", DefaultCluster, size(1, "2Gi"), size(1, "16Gi"), "", true, EffectRestart, "exceeds the 8Gi"},
		{"fewer vCPUs", DefaultCluster, size(2, "8Gi"), size(1, "8Gi"), "", true, EffectRestart, "hot-unplug CPU sockets"},
		{"less memory", DefaultCluster, size(2, "8Gi"), size(2, "4Gi"), "", true, EffectRestart, "hot-unplug memory"},
		{"booted under 1Gi", DefaultCluster, size(1, "512Mi"), size(1, "1Gi"), "", true, EffectRestart, "less than 1Gi"},
		{"3000Mi is 2Mi aligned", DefaultCluster, size(1, "2Gi"), size(1, "3000Mi"), "", true, EffectLive, "memory"},
		{"unaligned", DefaultCluster, size(1, "2Gi"), size(1, "3001Mi"), "", true, EffectRestart, "multiples of 2Mi"},
		{"cannot migrate", DefaultCluster, size(1, "4Gi"), size(2, "8Gi"), "", false, EffectRestart, "cannot live-migrate"},
		{"stage rollout", stage, size(1, "4Gi"), size(2, "8Gi"), "", true, EffectRestart, "Stage"},
		{"cores topology", DefaultCluster, size(1, "4Gi"), size(2, "4Gi"), "cores", true, EffectRestart, "spreads vCPUs as cores"},
		{"sockets topology", DefaultCluster, size(1, "4Gi"), size(2, "4Gi"), "sockets", true, EffectLive, "CPU sockets"},
		{"cores topology, memory only", DefaultCluster, size(1, "4Gi"), size(1, "8Gi"), "cores", true, EffectLive, "memory"},
		{"dedicated CPUs added", DefaultCluster, size(2, "4Gi"), func() *api.Size { s := size(2, "8Gi"); s.Spec.DedicatedCPU = true; return s }(), "", true, EffectRestart, "dedicated CPUs"},
		{"1Gi huge pages, 1Gi steps", DefaultCluster, hp(size(2, "4Gi")), hp(size(2, "6Gi")), "", true, EffectLive, "memory"},
		{"1Gi huge pages, 512Mi step", DefaultCluster, hp(size(2, "4Gi")), hp(size(2, "4608Mi")), "", true, EffectRestart, "multiples of 1Gi"},
		{"same shape", DefaultCluster, size(2, "8Gi"), size(2, "8Gi"), "", true, EffectNone, "nothing changes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			effect, detail := sizeChange(tc.cluster, tc.from, tc.to, tc.topology, tc.migratable)
			if effect != tc.effect || !strings.Contains(detail, tc.mentions) {
				t.Errorf("got %s %q, want %s mentioning %q", effect, detail, tc.effect, tc.mentions)
			}
		})
	}
}
