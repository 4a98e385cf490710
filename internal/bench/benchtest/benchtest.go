// Package benchtest runs BenchmarkSecondPath's comparisons: a faster
// second path of virtc's beside the library path it stands in for, on
// make bench's fleet (BENCHMARKS.md "Second paths"). Only tests import it.
package benchtest

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/virtc/virtc/internal/bench"
	"github.com/virtc/virtc/internal/fleet"
)

// Sizes are the fleet sizes, in VMs, each comparison runs at.
var Sizes = []int{100, 1000}

// Path is one way of doing the compared work on the prepared input: Run
// loops over b.Loop itself, after any setup of its own.
type Path[T any] struct {
	Name string
	Run  func(b *testing.B, in T)
}

// Compare writes make bench's fleet of each size into a directory of its
// own (dir, its files), prepares the paths' input from it, and runs each
// path as the sub-benchmark vms=N/NAME, allocations reported.
func Compare[T any](b *testing.B, prepare func(b *testing.B, vms int, dir string, files []fleet.File) T, paths ...Path[T]) {
	for _, vms := range Sizes {
		dir := filepath.Join(b.TempDir(), "fleet")
		files, err := fleet.Write(dir, bench.FleetOptions(vms))
		if err != nil {
			b.Fatal(err)
		}
		in := prepare(b, vms, dir, files)
		for _, p := range paths {
			b.Run(fmt.Sprintf("vms=%d/%s", vms, p.Name), func(b *testing.B) {
				b.ReportAllocs()
				p.Run(b, in)
			})
		}
	}
}
