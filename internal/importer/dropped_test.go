package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/live"
	"github.com/virtc/virtc/internal/source"
)

// Never a live field dropped silently (issue 25): for every VM that an
// import golden adopts, each leaf of the live VM's spec, labels and
// annotations is either written by the compiled VirtualMachine, or listed
// in the report as not carried (or set by the cluster). An empty map
// (bootloader.bios: {}) counts as a leaf. Values are not compared here:
// golden/import_test.go holds them equal through virtc diff --live.
func TestNothingDroppedSilently(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dirs, _ := filepath.Glob(filepath.Join(filepath.Dir(file), "..", "..", "golden", "import", "*"))
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			objs := goldenExport(t, name)
			args, _ := os.ReadFile(filepath.Join(dir, "args"))
			// The golden's own catalog entries (an approved container disk,
			// an image), as golden/import_test.go passes them.
			cat := goldenCatalog(t, name)
			res := Import(objs, cat, catalog.Options{}, Options{DeferChanges: strings.Contains(string(args), "--defer-changes")})
			diags := &diag.List{}
			docs := slices.Clone(cat)
			for _, f := range res.Files {
				docs = append(docs, source.Parse(f.Path, f.Path, f.Data, diags)...)
			}
			// The eligibility gate's evidence, as golden/import_test.go adds it.
			if ev, err := os.ReadFile(filepath.Join(dir, "evidence.yaml")); err == nil {
				docs = append(docs, source.Parse("evidence.yaml", "evidence.yaml", ev, diags)...)
			}
			out := compile.Compile(docs, compile.Options{}, diags)
			if diags.HasErrors() {
				t.Fatalf("the import does not compile: %v", diags.Errors())
			}
			checked := 0
			for _, ref := range res.Imported {
				ns, vmName, _ := strings.Cut(ref, "/")
				var desired map[string]any
				for _, o := range out.Objects {
					if o.Kind == "VirtualMachine" && o.Namespace == ns && o.Name == vmName {
						desired, _ = emit.Generic(o.Body)
					}
				}
				var liveVM map[string]any
				for _, o := range objs {
					if o.Kind == "VirtualMachine" && o.Namespace == ns && o.Name == vmName {
						liveVM = o.Body
					}
				}
				if desired == nil || liveVM == nil {
					t.Fatalf("%s: no compiled or no live VM", ref)
				}
				have := map[string]bool{}
				var all []string
				leaves("", desired, &all)
				for _, p := range all {
					have[p] = true
				}
				var liveLeaves []leaf
				meta, _ := liveVM["metadata"].(map[string]any)
				namedLeaves("metadata.labels", "metadata.labels", meta["labels"], &liveLeaves)
				namedLeaves("metadata.annotations", "metadata.annotations", meta["annotations"], &liveLeaves)
				namedLeaves("spec", "spec", liveVM["spec"], &liveLeaves)
				for _, l := range liveLeaves {
					checked++
					p := l.path
					// An empty resources states no requests or limits.
					if have[p] || under(p, setByCluster) || p == `metadata.annotations["`+live.LastAppliedAnnotation+`"]` || p == "spec.template.spec.domain.resources" {
						continue
					}
					var reported []string
					for _, it := range res.NotCarried {
						if it.VM == ref {
							reported = append(reported, it.Path)
						}
					}
					if !under(p, reported) && !under(l.named, reported) {
						t.Errorf("%s: %s is neither written nor reported as not carried", ref, p)
					}
				}
			}
			if len(res.Imported) > 0 && checked == 0 {
				t.Fatal("checked no live field")
			}
		})
	}
}

// leaves appends the paths of every node of v; list elements are [i].
func leaves(path string, v any, out *[]string) {
	*out = append(*out, path)
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			leaves(live.JoinPath(path, k), t[k], out)
		}
	case []any:
		for i, x := range t {
			leaves(fmt.Sprintf("%s[%d]", path, i), x, out)
		}
	}
}

// leaf is a live leaf's path, with list elements as [i] and as [name]
// (for elements with a name, as the report names volumes).
type leaf struct{ path, named string }

func namedLeaves(path, named string, v any, out *[]leaf) {
	switch t := v.(type) {
	case nil:
	case map[string]any:
		if len(t) == 0 {
			*out = append(*out, leaf{path, named})
		}
		for _, k := range sortedKeys(t) {
			namedLeaves(live.JoinPath(path, k), live.JoinPath(named, k), t[k], out)
		}
	case []any:
		if len(t) == 0 {
			*out = append(*out, leaf{path, named})
		}
		for i, x := range t {
			n := fmt.Sprintf("%s[%d]", named, i)
			if m, ok := x.(map[string]any); ok {
				if s, ok := m["name"].(string); ok {
					n = named + "[" + s + "]"
				}
			}
			namedLeaves(fmt.Sprintf("%s[%d]", path, i), n, x, out)
		}
	default:
		*out = append(*out, leaf{path, named})
	}
}

// under reports whether p is one of paths or below one.
func under(p string, paths []string) bool {
	return slices.ContainsFunc(paths, func(q string) bool {
		return p == q || strings.HasPrefix(p, q+".") || strings.HasPrefix(p, q+"[")
	})
}
