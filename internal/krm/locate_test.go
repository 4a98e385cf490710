package krm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kustomize without `buildMetadata: [originAnnotations]` tells an exec
// function nothing about where a resource came from, and runs it in the
// directory of the kustomization that declares it (kustomize api v0.21
// internal/plugins/execplugin). virtc finds each item among the files that
// kustomization lists, following directory resources (a base), so its
// results and messages name the file and line.
func TestItemsLocatedWithoutAnnotations(t *testing.T) {
	top := t.TempDir()
	tenant := "apiVersion: virtc.dev/v1alpha1\nkind: Tenant\nmetadata:\n  name: shop\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"
	vm := func(name, size string) string {
		return "apiVersion: virtc.dev/v1alpha1\nkind: VM\nmetadata:\n  name: " + name + "\n  namespace: shop\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nspec:\n  size: " + size + "\n  image: rhel9\n"
	}
	files := map[string]string{
		"base/kustomization.yaml":    "resources: [tenant.yaml, vms.yaml]\n",
		"base/tenant.yaml":           tenant,
		"base/vms.yaml":              vm("web01", "u1.medium") + "---\n" + vm("web02", "u1.meduim"),
		"overlay/kustomization.yaml": "resources: [../base, https://example.com/remote.yaml]\ntransformers: [compiler.yaml]\n",
	}
	for name, data := range files {
		p := filepath.Join(top, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join(top, "overlay"))
	out, stderr, code := run(t, resourceList(t, "", tenant, vm("web01", "u1.medium"), vm("web02", "u1.meduim")))
	if code == 0 {
		t.Fatalf("exit 0, want the unknown size refused")
	}
	want := "../base/vms.yaml:20:9: spec.size: unknown size \"u1.meduim\""
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if len(out.Results) != 1 {
		t.Fatalf("results: %v", out.Results)
	}
	r := out.Results[0]
	if f, _ := r["file"].(map[string]any); f == nil || f["path"] != "../base/vms.yaml" {
		t.Errorf("result file %v, want ../base/vms.yaml", r["file"])
	}
	if ref, _ := r["resourceRef"].(map[string]any); ref == nil || ref["name"] != "web02" {
		t.Errorf("result resourceRef %v, want VM web02 (the second document of the file)", r["resourceRef"])
	}
}
