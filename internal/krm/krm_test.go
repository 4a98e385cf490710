package krm_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/virtc/virtc/internal/cli"
	"github.com/virtc/virtc/internal/krm"
	"github.com/virtc/virtc/internal/source"
)

// resourceList builds a ResourceList from documents, each given as YAML.
func resourceList(t *testing.T, config string, items ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, it := range items {
		b.WriteString(indentItem(it))
	}
	if config != "" {
		b.WriteString("functionConfig:\n")
		for _, l := range strings.Split(strings.TrimRight(config, "\n"), "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	return b.String()
}

func indentItem(doc string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		if i == 0 {
			b.WriteString("- " + l + "\n")
		} else {
			b.WriteString("  " + l + "\n")
		}
	}
	return b.String()
}

// withAnnotations reads a file and adds annotations to its metadata, as an
// orchestrator would.
func withAnnotations(t *testing.T, file string, ann map[string]string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	meta := obj["metadata"].(map[string]any)
	a, _ := meta["annotations"].(map[string]any)
	if a == nil {
		a = map[string]any{}
	}
	for k, v := range ann {
		a[k] = v
	}
	meta["annotations"] = a
	out, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// decodeAll parses a YAML stream into generic objects.
func decodeAll(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if err.Error() == "EOF" {
				return out
			}
			t.Fatal(err)
		}
		if m != nil {
			out = append(out, m)
		}
	}
}

type output struct {
	Items   []map[string]any `yaml:"items"`
	Results []map[string]any `yaml:"results"`
}

func run(t *testing.T, input string) (output, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"fn"}, strings.NewReader(input), &stdout, &stderr)
	var out output
	if stdout.Len() > 0 {
		if err := yaml.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("output is not YAML: %v\n%s", err, stdout.String())
		}
	}
	return out, stderr.String(), code
}

func build(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Main(append([]string{"build"}, args...), strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("virtc build %v: exit %d\n%s", args, code, stderr.String())
	}
	return decodeAll(t, stdout.Bytes())
}

func isVirtc(o map[string]any) bool {
	av, _ := o["apiVersion"].(string)
	return strings.HasPrefix(av, "virtc.dev/")
}

const passThrough = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: payments
  annotations:
    internal.config.kubernetes.io/path: settings.yaml
    note: keep me
data:
  key: value
`

// TestTransformerEqualsBuild runs the function on the transformer example
// as kpt would hand it over (path annotations on every item), in the
// example's directory as orchestrators run functions, and compares the
// generated objects with `virtc build` of the same directory: the same
// bytes, virtc.dev/source included (from the top of the repository).
func TestTransformerEqualsBuild(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", "examples", "kustomize-transformer"))
	dir := "."
	var items []string
	for _, f := range []string{"tenant.yaml", "web01.yaml", "db01.yaml"} {
		items = append(items, withAnnotations(t, filepath.Join(dir, f), map[string]string{
			"internal.config.kubernetes.io/path":  f,
			"internal.config.kubernetes.io/index": "0",
		}))
	}
	items = append(items, passThrough)
	out, stderr, code := run(t, resourceList(t, "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: virtc}\n", items...))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var inputs, generated []map[string]any
	for _, it := range out.Items {
		if isVirtc(it) || it["kind"] == "ConfigMap" {
			inputs = append(inputs, it)
		} else {
			generated = append(generated, it)
		}
	}
	if len(inputs) != 4 {
		t.Errorf("got %d input items back, want the 4 given", len(inputs))
	}
	var cm map[string]any
	if err := yaml.Unmarshal([]byte(passThrough), &cm); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cm, inputs[len(inputs)-1]); diff != "" {
		t.Errorf("the pass-through item changed (-want +got):\n%s", diff)
	}
	want := build(t, dir)
	if diff := cmp.Diff(want, generated); diff != "" {
		t.Errorf("KRM output differs from virtc build (-build +fn):\n%s", diff)
	}
	for _, o := range generated {
		if o["kind"] != "VirtualMachine" && o["kind"] != "Namespace" {
			continue // Schedules name the embedded catalog's backup policies
		}
		if src := o["metadata"].(map[string]any)["annotations"].(map[string]any)["virtc.dev/source"]; !strings.HasPrefix(src.(string), "examples/kustomize-transformer/") {
			t.Errorf("%s %v: virtc.dev/source %q is not the file's path in the repository", o["kind"], o["metadata"].(map[string]any)["name"], src)
		}
	}
	if !slices.ContainsFunc(generated, func(o map[string]any) bool { return o["kind"] == "VirtualMachine" }) {
		t.Error("no VirtualMachine generated")
	}
}

// TestScopeEqualsBuild: spec.scope and spec.tenant select objects like
// virtc build --scope and --tenant, one scope or a list.
func TestScopeEqualsBuild(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", "examples", "kustomize-transformer"))
	dir := "."
	var items []string
	for _, f := range []string{"tenant.yaml", "web01.yaml", "db01.yaml"} {
		items = append(items, withAnnotations(t, filepath.Join(dir, f), map[string]string{"internal.config.kubernetes.io/path": f}))
	}
	for _, tc := range []struct{ scope, tenant, has, hasNot string }{
		{"vms", "", "VirtualMachine", "Namespace"},
		{"tenants,platform", "", "Namespace", "VirtualMachine"},
		{"all", "payments", "VirtualMachine", ""},
	} {
		out, stderr, code := run(t, resourceList(t, "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: virtc}\nspec: {scope: \""+tc.scope+"\", tenant: \""+tc.tenant+"\"}\n", items...))
		if code != 0 {
			t.Fatalf("scope %s: exit %d\n%s", tc.scope, code, stderr)
		}
		want := build(t, "--scope", tc.scope, "--tenant", tc.tenant, dir)
		if !slices.ContainsFunc(want, func(o map[string]any) bool { return o["kind"] == tc.has }) {
			t.Fatalf("virtc build --scope %s printed no %s", tc.scope, tc.has)
		}
		if diff := cmp.Diff(want, out.Items[3:]); diff != "" {
			t.Errorf("KRM output differs from virtc build --scope %s (-build +fn):\n%s", tc.scope, diff)
		}
		for _, o := range out.Items[3:] {
			if tc.hasNot != "" && o["kind"] == tc.hasNot {
				t.Errorf("scope %s emitted a %s", tc.scope, o["kind"])
			}
		}
	}
}

// TestGeneratorEqualsBuild compares the generator form, which reads
// directories relative to the working directory, with virtc build.
func TestGeneratorEqualsBuild(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "kustomize-generator")
	t.Chdir(dir)
	cfg, err := os.ReadFile("compiler.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// kustomize passes a generator its own config as the only item.
	cfgItem := withAnnotations(t, "compiler.yaml", map[string]string{krm.AnnotationLocalConfig: "true"})
	out, stderr, code := run(t, resourceList(t, string(cfg), cfgItem))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if len(out.Items) == 0 || out.Items[0]["kind"] != krm.Kind {
		t.Fatalf("the config item was not passed through: %v", out.Items)
	}
	want := build(t, "--catalog", "platform", "intents")
	if diff := cmp.Diff(want, out.Items[1:]); diff != "" {
		t.Errorf("KRM output differs from virtc build (-build +fn):\n%s", diff)
	}
}

const badVM = `apiVersion: virtc.dev/v1alpha1
kind: VM
metadata:
  name: web01
  namespace: payments
  annotations:
    config.kubernetes.io/local-config: "true"
    internal.config.kubernetes.io/path: vms.yaml
    internal.config.kubernetes.io/index: "1"
spec:
  size: u1.meduim
  image: rhel9
`

const tenant = `apiVersion: virtc.dev/v1alpha1
kind: Tenant
metadata:
  name: payments
  annotations:
    config.kubernetes.io/local-config: "true"
    internal.config.kubernetes.io/path: vms.yaml
    internal.config.kubernetes.io/index: "0"
spec:
  quota: {cpu: 8, memory: 32Gi, storage: 1Ti, vms: 4}
`

// TestErrorsBecomeResults checks a refused intent: exit 1, the message on
// stderr, and a result naming resource, file, index and field.
func TestErrorsBecomeResults(t *testing.T) {
	out, stderr, code := run(t, resourceList(t, "", tenant, badVM, passThrough))
	if code != cli.ExitFailed {
		t.Fatalf("exit %d, want %d", code, cli.ExitFailed)
	}
	if !strings.Contains(stderr, `vms.yaml (document 2): spec.size: unknown size "u1.meduim"; did you mean "u1.medium"?`) {
		t.Errorf("stderr lacks the located message:\n%s", stderr)
	}
	if len(out.Items) != 3 {
		t.Errorf("a failed run must write back exactly the %d input items, got %d", 3, len(out.Items))
	}
	want := []map[string]any{{
		"message":     `unknown size "u1.meduim"; did you mean "u1.medium"?`,
		"severity":    "error",
		"resourceRef": map[string]any{"apiVersion": "virtc.dev/v1alpha1", "kind": "VM", "name": "web01", "namespace": "payments"},
		"file":        map[string]any{"path": "vms.yaml", "index": 1},
		"field":       map[string]any{"path": "spec.size"},
	}}
	if diff := cmp.Diff(want, out.Results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// TestRunReturnsResultsAsError pins the trap of kyaml's framework: results
// alone do not fail a function; Run must return them as its error.
func TestRunReturnsResultsAsError(t *testing.T) {
	var out bytes.Buffer
	diags, err := krm.Run(strings.NewReader(resourceList(t, "", tenant, badVM)), &out)
	var results framework.Results
	if !errors.As(err, &results) || results.ExitCode() != 1 {
		t.Fatalf("Run returned %v, want framework.Results with exit code 1", err)
	}
	if !diags.HasErrors() {
		t.Error("diagnostics lack the error")
	}
}

func TestInputMustBeLocalConfig(t *testing.T) {
	vm := strings.Replace(tenant, "    config.kubernetes.io/local-config: \"true\"\n", "", 1)
	_, stderr, code := run(t, resourceList(t, "", vm))
	if code != cli.ExitFailed || !strings.Contains(stderr, `vms.yaml: metadata.annotations: not marked config.kubernetes.io/local-config: "true"`) {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, config, want string }{
		{"misspelt option", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: x}\nspec:\n  catalogDir: [x]\n",
			"functionConfig: spec.catalogDir: unknown field \"catalogDir\" (`virtc schema Compiler` lists the fields); did you mean \"catalogDirs\"?"},
		{"wrong type", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: x}\nspec:\n  noDefaultCatalog: yes please\n",
			"functionConfig: spec.noDefaultCatalog: must be true or false"},
		{"unknown scope", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: x}\nspec:\n  scope: vm\n",
			`functionConfig: spec.scope: invalid value "vm": all, platform, tenants or vms, or several of them separated by commas (platform,tenants)`},
		{"unknown scope in a list", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: x}\nspec:\n  scope: platform,vm\n",
			`functionConfig: spec.scope: invalid value "platform,vm": all, platform, tenants or vms, or several of them separated by commas (platform,tenants)`},
		{"unknown tenant", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: x}\nspec:\n  tenant: paymnets\n",
			`--tenant (spec.tenant): unknown tenant "paymnets"; did you mean "payments"?`},
		{"other kind", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			`functionConfig: kind: expected apiVersion virtc.dev/v1alpha1, kind Compiler (got apiVersion "v1", kind "ConfigMap")`},
		{"missing path", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: x}\nspec:\n  paths: [does-not-exist]\n",
			"does-not-exist: cannot read: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, resourceList(t, tc.config, tenant))
			if code != cli.ExitFailed || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 1 and %q in stderr:\n%s", code, tc.want, stderr)
			}
		})
	}
}

// TestOriginIsRelativeToConfig uses kustomize's origin annotations: paths
// are relative to the kustomization being built, and virtc records them
// relative to the Compiler's own file, so an overlay does not change the
// virtc.dev/source of its base's objects.
func TestOriginIsRelativeToConfig(t *testing.T) {
	origin := func(p string) string {
		return strings.Replace(tenant, "    internal.config.kubernetes.io/path: vms.yaml\n    internal.config.kubernetes.io/index: \"0\"\n",
			"    config.kubernetes.io/origin: |\n      path: "+p+"\n", 1)
	}
	cfg := "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/origin: |\n      path: ../base/compiler.yaml\nspec: {}\n"
	out, stderr, code := run(t, resourceList(t, cfg, origin("../base/tenants/payments.yaml")))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	ns := out.Items[1]
	ann := ns["metadata"].(map[string]any)["annotations"].(map[string]any)
	if ns["kind"] != "Namespace" || ann["virtc.dev/source"] != "tenants/payments.yaml" {
		t.Errorf("got %v %v, want Namespace with virtc.dev/source tenants/payments.yaml", ns["kind"], ann)
	}
	for k := range ann {
		if strings.Contains(k, "config.k") {
			t.Errorf("generated Namespace carries the input's annotation %s", k)
		}
	}
}

// TestNoPathNamesTheResource: kustomize without origin annotations says
// nothing about files; messages then name the resource.
func TestNoPathNamesTheResource(t *testing.T) {
	vm := strings.Replace(badVM, "    internal.config.kubernetes.io/path: vms.yaml\n    internal.config.kubernetes.io/index: \"1\"\n", "", 1)
	_, stderr, code := run(t, resourceList(t, "", tenant, vm))
	if code != cli.ExitFailed || !strings.Contains(stderr, "VM payments/web01: spec.size: unknown size") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestConflictWithPassThrough(t *testing.T) {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: payments\n  annotations:\n    internal.config.kubernetes.io/path: ns.yaml\n"
	_, stderr, code := run(t, resourceList(t, "", tenant, ns))
	if code != cli.ExitFailed || !strings.Contains(stderr, "ns.yaml: Namespace payments is also generated by virtc") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestNotAResourceList(t *testing.T) {
	for _, in := range []string{"", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"} {
		var stdout, stderr bytes.Buffer
		code := cli.Main(nil, strings.NewReader(in), &stdout, &stderr)
		if code != cli.ExitUsage || stdout.Len() != 0 || !strings.Contains(stderr.String(), "expected a ResourceList") {
			t.Errorf("input %q: exit %d, stdout %q, stderr:\n%s", in, code, stdout.String(), stderr.String())
		}
	}
}

// TestNoArgumentsMeansFunction: kustomize execs the function without
// arguments and with the ResourceList on a pipe.
func TestNoArgumentsMeansFunction(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := cli.Main(nil, strings.NewReader(resourceList(t, "", tenant)), &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "kind: ResourceList") || !strings.Contains(stdout.String(), "kind: ResourceQuota") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	stdout.Reset()
	stderr.Reset()
	if code := cli.Main(nil, devnull, &stdout, &stderr); code != cli.ExitUsage || !strings.Contains(stderr.String(), "Usage:") {
		t.Errorf("a terminal-like stdin must print the usage: exit %d, stderr:\n%s", code, stderr.String())
	}
}

// A generator's extStr reaches its Jsonnet inputs, as --ext-str does for
// virtc build.
func TestGeneratorExtStr(t *testing.T) {
	dir := t.TempDir()
	src := `local env = std.extVar('env');
[
  {apiVersion: 'virtc.dev/v1alpha1', kind: 'Tenant', metadata: {name: 'team-' + env}},
  {apiVersion: 'virtc.dev/v1alpha1', kind: 'VM', metadata: {name: 'vm', namespace: 'team-' + env}, spec: {size: 'u1.small', image: 'fedora'}},
]
`
	if err := os.WriteFile(filepath.Join(dir, "fleet.jsonnet"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	cfg := "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: virtc}\nspec:\n  paths: [fleet.jsonnet]\n  extStr: {env: prod}\n"
	out, stderr, code := run(t, resourceList(t, cfg))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	want := build(t, "--ext-str", "env=prod", "fleet.jsonnet")
	if diff := cmp.Diff(want, out.Items); diff != "" {
		t.Errorf("KRM output differs from virtc build --ext-str (-build +fn):\n%s", diff)
	}
	found := false
	for _, o := range out.Items {
		if o["kind"] == "Namespace" && o["metadata"].(map[string]any)["name"] == "team-prod" {
			found = true
		}
	}
	if !found {
		t.Errorf("no Namespace team-prod in %v", out.Items)
	}
}

// TestSourceIsTheRepositoryPath: in a kustomize build, the function runs
// in the directory of the kustomization that declares it (kyaml v0.21.2
// fn/runtime/exec/exec.go sets cmd.Dir to the plugin loader's working
// directory, kustomize api v0.21.2 internal/target/kusttarget.go: the
// kustomization's root), and kustomize v5.8.2 tells a transformer where a
// resource came from only through config.kubernetes.io/origin (with
// buildMetadata: [originAnnotations]; api resource/resource.go strips the
// kioutil path annotations, it never sets them), relative to the
// kustomization being built. The base's objects must carry the same
// virtc.dev/source built alone, through an overlay, or by virtc build from
// anywhere: the file's path from the top of the repository.
func TestSourceIsTheRepositoryPath(t *testing.T) {
	t.Setenv(source.BaseEnv, "")
	top := t.TempDir()
	for _, d := range []string{".git", "base/tenants", "staging"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	plain := strings.Replace(tenant, "    internal.config.kubernetes.io/path: vms.yaml\n    internal.config.kubernetes.io/index: \"0\"\n", "", 1)
	for f, content := range map[string]string{
		"base/compiler.yaml":         "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: x}\nspec: {}\n",
		"base/tenants/payments.yaml": plain,
	} {
		if err := os.WriteFile(filepath.Join(top, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const want = "base/tenants/payments.yaml"
	sourceOf := func(out output) any {
		for _, o := range out.Items {
			if o["kind"] == "Namespace" {
				return o["metadata"].(map[string]any)["annotations"].(map[string]any)["virtc.dev/source"]
			}
		}
		return nil
	}
	origin := func(p string) string {
		return strings.Replace(plain, "    config.kubernetes.io/local-config: \"true\"\n", "    config.kubernetes.io/local-config: \"true\"\n    config.kubernetes.io/origin: |\n      path: "+p+"\n", 1)
	}
	cfg := func(p string) string {
		return "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/origin: |\n      path: " + p + "\nspec: {}\n"
	}
	t.Chdir(filepath.Join(top, "base"))
	for _, c := range []struct{ name, cfg, item string }{
		{"base built alone", "compiler.yaml", "tenants/payments.yaml"},
		{"through the staging overlay", "../base/compiler.yaml", "../base/tenants/payments.yaml"},
	} {
		out, stderr, code := run(t, resourceList(t, cfg(c.cfg), origin(c.item)))
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", c.name, code, stderr)
		}
		if got := sourceOf(out); got != want {
			t.Errorf("%s: virtc.dev/source %v, want %s", c.name, got, want)
		}
	}
	// Messages name the file like the annotation; the result's file stays
	// the path kustomize gave, which is what it can map back.
	noLocal := strings.Replace(origin("../base/tenants/payments.yaml"), "    config.kubernetes.io/local-config: \"true\"\n", "", 1)
	out, stderr, code := run(t, resourceList(t, cfg("../base/compiler.yaml"), noLocal))
	if code == 0 || !strings.Contains(stderr, want+": metadata.annotations: not marked") {
		t.Errorf("exit %d; the message does not name %s:\n%s", code, want, stderr)
	}
	if len(out.Results) == 0 || out.Results[0]["file"].(map[string]any)["path"] != "../base/tenants/payments.yaml" {
		t.Errorf("results: %v", out.Results)
	}
	// kpt-style path annotation, relative to the working directory.
	pathItem := strings.Replace(plain, "    config.kubernetes.io/local-config: \"true\"\n", "    config.kubernetes.io/local-config: \"true\"\n    internal.config.kubernetes.io/path: tenants/payments.yaml\n", 1)
	if out, stderr, code := run(t, resourceList(t, "", pathItem)); code != 0 {
		t.Fatalf("path annotation: exit %d\n%s", code, stderr)
	} else if got := sourceOf(out); got != want {
		t.Errorf("path annotation: virtc.dev/source %v, want %s", got, want)
	}
	// virtc build, however the file is named and wherever it runs.
	for _, c := range []struct{ dir, arg string }{
		{"base", "."}, {"base", "tenants/payments.yaml"}, {"base/tenants", "payments.yaml"}, {".", "base"}, {"staging", "../base/tenants"},
	} {
		t.Chdir(filepath.Join(top, c.dir))
		for _, o := range build(t, c.arg) {
			if o["kind"] == "Namespace" {
				if got := o["metadata"].(map[string]any)["annotations"].(map[string]any)["virtc.dev/source"]; got != want {
					t.Errorf("cd %s && virtc build %s: virtc.dev/source %v, want %s", c.dir, c.arg, got, want)
				}
			}
		}
	}
}
