package krm

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/virtc/virtc/internal/bench"
	"github.com/virtc/virtc/internal/bench/benchtest"
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
	type input struct {
		dir  string // the kustomization's, where kustomize runs the function
		list []byte
	}
	prepare := func(b *testing.B, _ int, fleetDir string, _ []fleet.File) input {
		dir, listFile, err := bench.KRMGenerator("virtc", fleetDir, filepath.Join(filepath.Dir(fleetDir), "kustomize"))
		if err != nil {
			b.Fatal(err)
		}
		list, err := os.ReadFile(listFile)
		if err != nil {
			b.Fatal(err)
		}
		return input{dir, list}
	}
	benchtest.Compare(b, prepare,
		benchtest.Path[input]{Name: "fast", Run: func(b *testing.B, in input) {
			b.Chdir(in.dir)
			for b.Loop() {
				l, fast, err := parseLayout(in.list)
				if err != nil || !fast {
					b.Fatalf("the fast path does not take the list (error %v)", err)
				}
				if diags, err := runFast(l, io.Discard); err != nil {
					b.Fatalf("%v %v", err, diags.Errors())
				}
			}
		}},
		benchtest.Path[input]{Name: "framework", Run: func(b *testing.B, in input) {
			b.Chdir(in.dir)
			for b.Loop() {
				if diags, err := runFramework(in.list, io.Discard); err != nil {
					b.Fatalf("%v %v", err, diags.Errors())
				}
			}
		}})
}
