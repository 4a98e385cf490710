package krm

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/virtc/virtc/internal/bench"
	"github.com/virtc/virtc/internal/fleet"
)

// BenchmarkSecondPath is what the protocol's fast path (fast.go) still
// saves over kyaml's framework.Execute, which every list it does not lay
// out safely goes through: the ResourceList kustomize hands the function
// for make bench's fleet (internal/bench KRMGenerator), run each way
// (TestFastEqualsFramework holds the outputs equal). Both compile the
// fleet; the difference is the protocol. BENCHMARKS.md "Second paths"
// records it.
func BenchmarkSecondPath(b *testing.B) {
	for _, vms := range []int{100, 1000} {
		root := b.TempDir()
		fleetDir := filepath.Join(root, "fleet")
		if _, err := fleet.Write(fleetDir, bench.FleetOptions(vms)); err != nil {
			b.Fatal(err)
		}
		dir, listFile, err := bench.KRMGenerator("virtc", fleetDir, filepath.Join(root, "kustomize"))
		if err != nil {
			b.Fatal(err)
		}
		list, err := os.ReadFile(listFile)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("vms=%d/fast", vms), func(b *testing.B) {
			b.Chdir(dir)
			b.ReportAllocs()
			for b.Loop() {
				l, fast, err := parseLayout(list)
				if err != nil || !fast {
					b.Fatalf("the fast path does not take the list (error %v)", err)
				}
				if diags, err := runFast(l, io.Discard); err != nil {
					b.Fatalf("%v %v", err, diags.Errors())
				}
			}
		})
		b.Run(fmt.Sprintf("vms=%d/framework", vms), func(b *testing.B) {
			b.Chdir(dir)
			b.ReportAllocs()
			for b.Loop() {
				if diags, err := runFramework(list, io.Discard); err != nil {
					b.Fatalf("%v %v", err, diags.Errors())
				}
			}
		})
	}
}
