package compile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
)

func TestWithMarkers(t *testing.T) {
	top := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(top, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("clusters/east/virtc.yaml", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: east}\nspec:\n  catalogDirs: [../../platform]\n  noDefaultCatalog: true\n  scope: vms\n")
	write("clusters/west/virtc.yaml", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: west}\nspec: {}\n")
	write("clusters/bad/virtc.yaml", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: bad}\nspec:\n  catalogs: [x]\n")
	write("platform/images.yaml", "")
	east, west := filepath.Join(top, "clusters", "east"), filepath.Join(top, "clusters", "west")
	platform := filepath.Join(east, "..", "..", "platform")

	diags := &diag.List{}
	// The catalog a flag also names is read once; a file among the paths
	// adds no marker; the marker's scope is the plugin's, not the build's.
	r := Request{CompilerSpec: api.CompilerSpec{CatalogDirs: []string{filepath.Join(top, "platform")}, Paths: []string{east, west, filepath.Join(east, "virtc.yaml")}}}.WithMarkers([]string{east, west, filepath.Join(east, "virtc.yaml")}, diags)
	if diags.HasErrors() {
		t.Fatal(diags.Sorted())
	}
	if want := []string{filepath.Join(top, "platform")}; !slices.Equal(r.CatalogDirs, want) {
		t.Errorf("catalogs %q, want %q", r.CatalogDirs, want)
	}
	if !r.NoDefaultCatalog || r.Scope != "" {
		t.Errorf("noDefaultCatalog %v, scope %q; want true and none", r.NoDefaultCatalog, r.Scope)
	}
	r = Request{CompilerSpec: api.CompilerSpec{Paths: []string{east}}}.WithMarkers([]string{east}, diags)
	if want := []string{platform}; !slices.Equal(r.CatalogDirs, want) || !slices.Equal(r.Paths, []string{east}) {
		t.Errorf("catalogs %q and paths %q, want %q and %q", r.CatalogDirs, r.Paths, want, []string{east})
	}
	r = Request{}.WithMarkers([]string{west}, diags)
	if len(r.CatalogDirs) != 0 || r.NoDefaultCatalog {
		t.Errorf("a marker naming no catalog gave catalogs %q, noDefaultCatalog %v", r.CatalogDirs, r.NoDefaultCatalog)
	}

	Request{}.WithMarkers([]string{filepath.Join(top, "clusters", "bad")}, diags)
	if got := diags.Sorted(); len(got) != 1 || !strings.Contains(got[0].String(), "spec.catalogs") {
		t.Errorf("a marker with an unknown field: %v", got)
	}
}
