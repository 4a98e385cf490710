// Package bench holds the stage benchmarks (make bench-stages): one fleet
// carried through every stage of the compile, each benchmark timing its own
// stage on the previous stage's real output. The driver behind make bench
// is internal/bench.
package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	harness "github.com/virtc/virtc/internal/bench"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/fleet"
	"github.com/virtc/virtc/internal/render"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/rules"
	"github.com/virtc/virtc/internal/source"
)

// benchSizes are the fleet sizes of the stage benchmarks, in VMs.
var benchSizes = []int{100, 1000, 10000}

// stages holds one fleet carried through every stage once, so that each
// benchmark measures its own stage on the previous stage's real output.
type stages struct {
	dir     string
	files   []fleet.File
	docs    []*source.Doc
	set     *decode.Set
	cat     *catalog.Catalog
	model   *resolve.Model
	objects []emit.Object
}

var (
	fleetsMu sync.Mutex
	fleets   = map[int]*stages{}
	tmpRoot  string
)

// TestMain removes the fleets written for the source benchmarks.
func TestMain(m *testing.M) {
	code := m.Run()
	if tmpRoot != "" {
		os.RemoveAll(tmpRoot)
	}
	os.Exit(code)
}

func prepare(b *testing.B, vms int) *stages {
	b.Helper()
	fleetsMu.Lock()
	defer fleetsMu.Unlock()
	if s, ok := fleets[vms]; ok {
		return s
	}
	if tmpRoot == "" {
		var err error
		if tmpRoot, err = os.MkdirTemp("", "virtc-bench-"); err != nil {
			b.Fatal(err)
		}
	}
	s := &stages{dir: filepath.Join(tmpRoot, fmt.Sprint(vms))}
	files, err := fleet.Write(s.dir, harness.FleetOptions(vms))
	if err != nil {
		b.Fatal(err)
	}
	s.files = files
	diags := &diag.List{}
	s.docs = source.Read([]string{s.dir}, source.Options{}, diags)
	s.set = decode.Decode(s.docs, false, diags)
	s.cat = catalog.Build(s.set, catalog.Options{}, diags)
	s.model = resolve.Resolve(s.set, s.cat, diags)
	rules.Check(s.model, diags)
	if diags.HasErrors() {
		b.Fatalf("fleet of %d VMs does not compile:\n%s", vms, diag.Format(diags.Errors()))
	}
	s.objects = render.All(s.model, render.Options{})
	fleets[vms] = s
	return s
}

// eachSize runs fn as a sub-benchmark per fleet size.
func eachSize(b *testing.B, fn func(b *testing.B, s *stages)) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("vms=%d", n), func(b *testing.B) {
			s := prepare(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			fn(b, s)
		})
	}
}

// eachSizeStage runs stage as a sub-benchmark per fleet size, each time
// with diagnostics of its own that must hold no error.
func eachSizeStage(b *testing.B, stage func(s *stages, diags *diag.List)) {
	eachSize(b, func(b *testing.B, s *stages) {
		for b.Loop() {
			diags := &diag.List{}
			stage(s, diags)
			if diags.HasErrors() {
				b.Fatal(diag.Format(diags.Errors()))
			}
		}
	})
}

// BenchmarkSource reads the fleet's files and parses them into YAML nodes.
func BenchmarkSource(b *testing.B) {
	eachSizeStage(b, func(s *stages, diags *diag.List) { source.Read([]string{s.dir}, source.Options{}, diags) })
}

// BenchmarkDecode decodes and validates the parsed documents.
func BenchmarkDecode(b *testing.B) {
	eachSizeStage(b, func(s *stages, diags *diag.List) { decode.Decode(s.docs, false, diags) })
}

// BenchmarkResolve merges the catalog (decoding the embedded default) and
// binds the intents to it.
func BenchmarkResolve(b *testing.B) {
	eachSizeStage(b, func(s *stages, diags *diag.List) {
		cat := catalog.Build(s.set, catalog.Options{}, diags)
		resolve.Resolve(s.set, cat, diags)
	})
}

// BenchmarkPolicy runs the policy rules over the resolved model.
func BenchmarkPolicy(b *testing.B) {
	eachSizeStage(b, func(s *stages, diags *diag.List) { rules.Check(s.model, diags) })
}

// BenchmarkRender renders the resolved model into API objects.
func BenchmarkRender(b *testing.B) {
	eachSize(b, func(b *testing.B, s *stages) {
		for b.Loop() {
			render.All(s.model, render.Options{})
		}
	})
}

// BenchmarkEmit sorts the rendered objects and writes them as YAML.
func BenchmarkEmit(b *testing.B) {
	eachSize(b, func(b *testing.B, s *stages) {
		var out []byte
		for b.Loop() {
			objs := slices.Clone(s.objects)
			emit.Sort(objs)
			var err error
			if out, err = emit.Write(objs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(out)), "bytes/op-out")
	})
}

// BenchmarkCompile runs the whole pipeline after reading, for profiles
// that show the stages side by side.
func BenchmarkCompile(b *testing.B) {
	eachSizeStage(b, func(s *stages, diags *diag.List) { compile.Compile(s.docs, compile.Options{}, diags) })
}
