package importer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/live"
)

// replaceValues replaces, anywhere in v, every string value old by new.
func replaceValues(v any, old, new string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = replaceValues(e, old, new)
		}
	case []any:
		for i, e := range x {
			x[i] = replaceValues(e, old, new)
		}
	case string:
		if x == old {
			return new
		}
	}
	return v
}

// noPathLeaves fails when a file of res would be written outside the
// output directory.
func noPathLeaves(t *testing.T, res Result) {
	t.Helper()
	for _, f := range res.Files {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			t.Errorf("file %s: outside the output directory", f.Path)
		}
	}
}

// refusedFor is the reasons the VM ref is refused for.
func refusedFor(res Result, ref string) string {
	for _, rf := range res.Refused {
		if rf.VM == ref {
			return strings.Join(rf.Reasons, "\n")
		}
	}
	return ""
}

// The namespace and name of a live VM become file paths: one that would
// leave the output directory refuses the VM, with no file for it nor a
// Tenant for its namespace.
func TestImportRefusesNamesThatAreNotPaths(t *testing.T) {
	for _, c := range []struct{ ns, name, want string }{
		{"..", "../../x", `metadata.namespace "..": not a Kubernetes namespace name`},
		{"shop", "../../x", `metadata.name "../../x": not a VirtualMachine name`},
		{"shop", "/etc/x", `metadata.name "/etc/x": not a VirtualMachine name`},
		{"/abs", "web01", `metadata.namespace "/abs": not a Kubernetes namespace name`},
		{"a/b", "web01", `metadata.namespace "a/b"`},
		{"", "web01", `metadata.namespace ""`},
	} {
		objs := goldenExport(t, "virtctl")
		for i := range objs {
			if objs[i].Namespace == "shop" {
				objs[i].Namespace = c.ns
			}
			if objs[i].Kind == "VirtualMachine" {
				objs[i].Name = c.name
			}
		}
		res := Import(objs, nil, catalog.Options{}, Options{})
		noPathLeaves(t, res)
		ref := c.ns + "/" + c.name
		if why := refusedFor(res, ref); !strings.Contains(why, c.want) {
			t.Errorf("VM %q: refused for %q, want %q (refused: %v)", ref, why, c.want, res.Refused)
		}
		if len(res.Files) > 0 {
			t.Errorf("VM %q: files %v, want none", ref, res.Files)
		}
	}
}

// The names of the catalog entries an import writes come from the export
// too: a DataSource or a NetworkAttachmentDefinition whose name would
// leave catalog/ refuses its VM.
func TestImportRefusesCatalogNamesThatAreNotPaths(t *testing.T) {
	objs := goldenExport(t, "virtctl")
	for _, o := range objs {
		if o.Kind == "VirtualMachine" {
			replaceValues(o.Body, "rhel9", "../../x")
		}
	}
	res := Import(objs, nil, catalog.Options{}, Options{})
	noPathLeaves(t, res)
	if why := refusedFor(res, "shop/web01"); !strings.Contains(why, `sourceRef.name "../../x": not a DataSource name`) {
		t.Errorf("a DataSource ../../x: refused for %q (refused: %v)", why, res.Refused)
	}

	objs = goldenExport(t, "bridge-mac")
	for i, o := range objs {
		switch o.Kind {
		case "VirtualMachine":
			replaceValues(o.Body, "vlan10", "erp/../../x")
		case "NetworkAttachmentDefinition":
			objs[i] = live.Object{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: "../../x", Body: o.Body}
		}
	}
	res = Import(objs, nil, catalog.Options{}, Options{})
	noPathLeaves(t, res)
	if why := refusedFor(res, "erp/db01"); !strings.Contains(why, `"erp/../../x": not a NetworkAttachmentDefinition name`) {
		t.Errorf("a NetworkAttachmentDefinition ../../x: refused for %q (refused: %v)", why, res.Refused)
	}
}
