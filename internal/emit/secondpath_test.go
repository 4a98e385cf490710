package emit_test

import (
	"runtime"
	"testing"

	"github.com/virtc/virtc/internal/bench/benchtest"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/fleet"
	"github.com/virtc/virtc/internal/source"
)

// BenchmarkSecondPath is what the direct encoder (yaml.go) still saves
// over the writer it replaced, through encoding/json's generic maps
// (ReferenceWrite, which the encoder's tests hold it to byte for byte):
// the objects of make bench's fleet, written each way on one CPU.
// BENCHMARKS.md "Second paths" records it.
func BenchmarkSecondPath(b *testing.B) {
	prepare := func(b *testing.B, _ int, dir string, _ []fleet.File) []emit.Object {
		diags := &diag.List{}
		res := compile.Compile(source.Read([]string{dir}, source.Options{}, diags), compile.Options{ObjectsOnly: true}, diags)
		if diags.HasErrors() {
			b.Fatal(diag.Format(diags.Errors()))
		}
		return res.Objects
	}
	benchtest.Compare(b, prepare,
		benchtest.Path[[]emit.Object]{Name: "encoder", Run: func(b *testing.B, objs []emit.Object) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			for b.Loop() {
				if _, err := emit.Write(objs); err != nil {
					b.Fatal(err)
				}
			}
		}},
		benchtest.Path[[]emit.Object]{Name: "json", Run: func(b *testing.B, objs []emit.Object) {
			for b.Loop() {
				if _, err := emit.ReferenceWrite(objs); err != nil {
					b.Fatal(err)
				}
			}
		}})
}
