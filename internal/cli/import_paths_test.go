package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/importer"
)

// An export is input like any other: a VM in namespace .. named ../../x
// must not make import write outside --out. The VM is refused, by name,
// and nothing is written but under --out.
func TestImportWritesOnlyUnderOut(t *testing.T) {
	data, err := os.ReadFile("../../golden/import/virtctl/live.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var export map[string]any
	if err := yaml.Unmarshal(data, &export); err != nil {
		t.Fatal(err)
	}
	vms := 0
	for _, it := range export["items"].([]any) {
		o := it.(map[string]any)
		meta := o["metadata"].(map[string]any)
		if ns, ok := meta["namespace"]; ok && ns == "shop" {
			meta["namespace"] = ".."
		}
		if o["kind"] == "VirtualMachine" {
			meta["name"] = "../../x"
			vms++
		}
	}
	if vms != 1 {
		t.Fatalf("the export has %d VMs, want 1", vms)
	}
	hostile, err := yaml.Marshal(export)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	file := filepath.Join(root, "export.yaml")
	if err := os.WriteFile(file, hostile, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "a", "b", "out")
	code, stdout, stderr := run("import", "--out", out, file)
	if code == ExitOK {
		t.Errorf("import: exit 0, want the VM refused\n%s%s", stdout, stderr)
	}
	if !strings.Contains(stdout, "refused ../../../x") || !strings.Contains(stdout, `metadata.namespace "..": not a Kubernetes namespace name`) {
		t.Errorf("the report does not name the VM and why:\n%s%s", stdout, stderr)
	}
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || p == file {
			return err
		}
		if rel, _ := filepath.Rel(out, p); !filepath.IsLocal(rel) {
			t.Errorf("import wrote %s, outside --out %s", p, out)
		}
		return nil
	})
	if entries, _ := os.ReadDir(out); len(entries) != 1 || entries[0].Name() != reportFile {
		t.Errorf("import wrote %v under --out, want only %s", entries, reportFile)
	}
}

// A file path that leaves the output directory refuses the whole import:
// outsideOut names the first.
func TestOutsideOut(t *testing.T) {
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{[]string{"shop/web01.yaml", "shop/tenant.yaml", "catalog/image-imported-rhel9.yaml"}, ""},
		{[]string{"shop/web01.yaml", "../tenant.yaml"}, "../tenant.yaml"},
		{[]string{"shop/../../x.yaml"}, "shop/../../x.yaml"},
		{[]string{"/etc/x.yaml"}, "/etc/x.yaml"},
		{[]string{""}, ""},
	} {
		var files []importer.File
		for _, p := range c.paths {
			files = append(files, importer.File{Path: p})
		}
		got, bad := outsideOut(files)
		if want := c.want != "" || c.paths[0] == ""; bad != want || got != c.want {
			t.Errorf("outsideOut(%q) = %q, %v; want %q, %v", c.paths, got, bad, c.want, want)
		}
	}
}
