package emit_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/virtc/virtc/internal/bench"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/fleet"
	"github.com/virtc/virtc/internal/render"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/rules"
	"github.com/virtc/virtc/internal/source"
)

// BenchmarkSecondPath is what the direct encoder (yaml.go) still saves
// over the writer it replaced, through encoding/json's generic maps
// (ReferenceWrite, which the encoder's tests hold it to byte for byte):
// the objects of make bench's fleet, written each way on one CPU.
// BENCHMARKS.md "Second paths" records it.
func BenchmarkSecondPath(b *testing.B) {
	for _, vms := range []int{100, 1000} {
		dir := b.TempDir()
		if _, err := fleet.Write(dir, bench.FleetOptions(vms)); err != nil {
			b.Fatal(err)
		}
		diags := &diag.List{}
		set := decode.Decode(source.Read([]string{dir}, source.Options{}, diags), false, diags)
		cat := catalog.Build(set, catalog.Options{}, diags)
		model := resolve.Resolve(set, cat, diags)
		rules.Check(model, diags)
		if diags.HasErrors() {
			b.Fatal(diag.Format(diags.Errors()))
		}
		objs := render.All(model, render.Options{})
		b.Run(fmt.Sprintf("vms=%d/encoder", vms), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := emit.Write(objs); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("vms=%d/json", vms), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := emit.ReferenceWrite(objs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
