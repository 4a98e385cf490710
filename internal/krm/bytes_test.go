package krm_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/cli"
	"github.com/virtc/virtc/internal/krm"
)

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestFastWritesBuildBytes: the generated items are the bytes `virtc build`
// prints, each document indented into the items sequence, and the input's
// lines come back unchanged around them.
func TestFastWritesBuildBytes(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "kustomize-generator")
	t.Chdir(dir)
	cfg := string(mustRead(t, "compiler.yaml"))
	item := strings.Replace(cfg, "metadata:\n", "metadata:\n  annotations:\n    config.kubernetes.io/local-config: 'true'\n    internal.config.kubernetes.io/index: '0'\n", 1)
	in := resourceList(t, cfg, item)
	var out, stdout, stderr bytes.Buffer
	if diags, err := krm.Run(strings.NewReader(in), &out); err != nil {
		t.Fatalf("%v\n%v", err, diags.Sorted())
	}
	if code := cli.Main([]string{"build", "--catalog", "platform", "intents"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("virtc build: exit %d\n%s", code, stderr.String())
	}
	var gen strings.Builder
	for _, doc := range strings.Split(stdout.String(), "---\n") {
		for i, l := range strings.Split(strings.TrimSuffix(doc, "\n"), "\n") {
			switch {
			case i == 0:
				gen.WriteString("- " + l + "\n")
			case l == "":
				gen.WriteString("\n")
			default:
				gen.WriteString("  " + l + "\n")
			}
		}
	}
	head, tail, _ := strings.Cut(in, "functionConfig:\n")
	want := head + gen.String() + "functionConfig:\n" + tail
	if out.String() != want {
		t.Errorf("output is not the input with build's bytes appended to items:\n%s", cmp.Diff(want, out.String()))
	}
}

// TestWarningsConfigMap: spec.warningsConfigMap appends the warnings
// ConfigMap to the generated items, as `virtc build --warnings-configmap`
// does; a malformed reference is an error at the field.
func TestWarningsConfigMap(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", "golden", "platform-full"))
	cfg := "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: virtc}\nspec:\n  paths: [platform.yaml, catalog, tenants, vms]\n  warningsConfigMap: openshift-cnv/virtc-warnings\n"
	var out, stdout, stderr bytes.Buffer
	if diags, err := krm.Run(strings.NewReader(resourceList(t, cfg)), &out); err != nil {
		t.Fatalf("%v\n%v", err, diags.Sorted())
	}
	args := []string{"build", "--warnings-configmap", "openshift-cnv/virtc-warnings", "platform.yaml", "catalog", "tenants", "vms"}
	if code := cli.Main(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("virtc build: exit %d\n%s", code, stderr.String())
	}
	var got output
	if err := yaml.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(decodeAll(t, stdout.Bytes()), got.Items); diff != "" {
		t.Errorf("the function's items differ from virtc build --warnings-configmap (-build +fn):\n%s", diff)
	}
	n := strings.Count(stderr.String(), ": warning: ")
	if last := got.Items[len(got.Items)-1]; n == 0 || last["kind"] != "ConfigMap" || last["data"].(map[string]any)["count"] != strconv.Itoa(n) {
		t.Errorf("last item %v, want the warnings ConfigMap with the %d warnings of virtc build", last, n)
	}
	bad := strings.Replace(cfg, "openshift-cnv/virtc-warnings", "virtc-warnings", 1)
	res, _, code := run(t, resourceList(t, bad))
	found := false
	for _, r := range res.Results {
		f, _ := r["field"].(map[string]any)
		found = found || r["severity"] == "error" && f["path"] == "spec.warningsConfigMap"
	}
	if code == 0 || !found {
		t.Errorf("a reference without a namespace: exit %d, results %v", code, res.Results)
	}
}
