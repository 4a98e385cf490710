package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestImportAdoption adopts every golden/import scenario's imported VMs on
// a real API server, as Argo CD does: the live export (live.yaml, without
// status and server metadata) is created first, as the console, MTV or
// virtctl created it; then the scenario's build (build.yaml) is applied
// over it with kubectl's client-side apply, which is what Argo CD v3.6.1
// runs by default (examples/argocd sets no ServerSideApply sync option;
// gitops-engine pkg/sync/sync_context.go applies client-side unless it is
// set). The test holds, field by field, that no adopted VirtualMachine's
// spec changed beyond virtc's own template labels (KubeVirt v1.8.4 marks
// a VM RestartRequired on any change of spec.template.spec:
// pkg/virt-controller/watch/vm/vm.go), except the fields the report lists
// as deferred changes (--defer-changes), and that no exported DataVolume
// or claim changed its spec. With the guardrails in force, a
// dataVolumeTemplate without a storage class and a containerDisk of an
// unapproved image are still refused on an adopted VM.
func TestImportAdoption(t *testing.T) {
	bins := binaries(t)
	dirs, err := filepath.Glob(filepath.Join(repoRoot, "golden", "import", "*", "build.yaml"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden/import scenario with a build: %v", err)
	}
	t.Parallel() // beside the other tests, on a server of its own
	c := startControlPlane(t, bins, platformVersions[0])
	adopted := 0
	for _, f := range dirs {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) { adopted += checkAdoption(t, c, dir) })
	}
	t.Logf("%d adopted VMs applied over their live exports with no change to what runs", adopted)
}

// ownTemplateLabel reports a template label virtc adds to an adopted VM:
// the next VM instance carries it, no restart is needed (metadata).
func ownTemplateLabel(key string) bool {
	return key == "app.kubernetes.io/managed-by" || strings.HasPrefix(key, "virtc.dev/")
}

// checkAdoption runs one scenario and returns the number of adopted VMs
// it checked.
func checkAdoption(t *testing.T, c *Cluster, dir string) int {
	ctx := t.Context()
	exported := liveExport(t, dir)
	build, err := os.ReadFile(filepath.Join(dir, "build.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	built, err := ParseObjects(build)
	if err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(dir, "expected", "IMPORT-REPORT.txt"))
	if err != nil {
		t.Fatal(err)
	}
	imported, deferred := reportVMs(string(report))
	var tenants []string
	for _, o := range built {
		if o.Kind == "Namespace" {
			tenants = append(tenants, o.Name)
		}
	}
	var guardrails []Object
	for _, o := range built {
		if o.Kind == "ValidatingAdmissionPolicy" || o.Kind == "ValidatingAdmissionPolicyBinding" {
			guardrails = append(guardrails, o)
		}
	}
	t.Cleanup(func() {
		ctx := context.WithoutCancel(ctx)
		// The guardrails go first: clean-up writes (finalizers) are no
		// tenant's.
		if err := c.Delete(ctx, guardrails); err != nil {
			t.Errorf("clean up: %v", err)
		}
		for _, tenant := range tenants {
			if err := waitLifted(ctx, c, tenant); err != nil {
				t.Error(err)
			}
		}
		if err := c.Delete(ctx, union(built, exported)); err != nil {
			t.Errorf("clean up: %v", err)
		}
	})
	prepare(t, c, union(built, exported))
	// The tenants' namespaces exist before the adoption (the live VMs
	// run in them); the build then labels them.
	for _, tenant := range tenants {
		ns := Object{APIVersion: "v1", Kind: "Namespace", Name: tenant, Doc: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": tenant}}}
		if err := c.create(ctx, ns, false, nil); err != nil { // kubectl create namespace
			t.Fatal(err)
		}
		// A previous scenario's guardrails of the same tenant must be
		// lifted first: the live objects may hold what they refuse.
		if err := waitLifted(ctx, c, tenant); err != nil {
			t.Fatal(err)
		}
	}
	file, err := c.objectsFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	// Created as their tools create them: no kubectl last-applied
	// configuration (the report's action removes one before the first sync).
	if _, err := c.CP.MustKubectl(ctx, nil, "create", "-f", file); err != nil {
		t.Fatalf("create the live export: %v", err)
	}
	before := liveOrFail(t, c, exported)

	// Argo CD applies the tenant's Namespace (its labels select the
	// guardrails' binding) and guardrails in earlier sync waves than its
	// VMs: they are in force when the VMs are adopted.
	var first []Object
	for _, o := range built {
		if o.Kind == "Namespace" {
			first = append(first, o)
		}
	}
	if file, err = c.objectsFile(append(first, guardrails...)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CP.MustKubectl(ctx, nil, "apply", "-f", file); err != nil {
		t.Fatal(err)
	}
	for _, tenant := range tenants {
		waitEnforced(t, c, tenant)
	}
	buildFile, err := c.file(build)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CP.MustKubectl(ctx, nil, "apply", "--validate=strict", "-f", buildFile); err != nil {
		t.Fatalf("client-side apply of the build over the live export: %v", err)
	}
	after := liveOrFail(t, c, exported)

	checked := 0
	for _, o := range exported {
		b, a := before[o.Key()].Doc["spec"], after[o.Key()].Doc["spec"]
		switch o.Kind {
		case "DataVolume", "PersistentVolumeClaim":
			if !reflect.DeepEqual(b, a) {
				t.Errorf("%s: the apply changed its spec:\n  %s", o, strings.Join(specDiff("spec", b, a), "\n  "))
			}
		case "VirtualMachine":
			ref := o.Namespace + "/" + o.Name
			if !imported[ref] {
				continue
			}
			checked++
			for _, d := range specDiff("spec", b, a) {
				path, _, _ := strings.Cut(d, ": ")
				switch {
				case strings.HasPrefix(path, "spec.template.metadata.labels.") && ownTemplateLabel(strings.TrimPrefix(path, "spec.template.metadata.labels.")) && strings.Contains(d, "(absent) →"):
				case slices.ContainsFunc(deferred[ref], func(p string) bool { return path == p || strings.HasPrefix(path, p+".") }):
				default:
					t.Errorf("%s: the apply changed what runs: %s", o, d)
				}
			}
		}
	}
	if vm := firstImported(exported, imported); vm != nil && len(guardrails) > 0 {
		checkStillJudged(t, c, *vm, after[vm.Key()])
	}
	if checked != len(imported) {
		t.Errorf("%d VMs imported, %d found in the export", len(imported), checked)
	}
	return checked
}

// checkStillJudged: the guardrails still judge what an adoption would not
// keep on the adopted VM vm (live as after): a dataVolumeTemplate added
// without a storage class is refused (only the templates a VM already has
// are not judged again), and so is a container disk the catalog does not
// approve.
func checkStillJudged(t *testing.T, c *Cluster, vm, after Object) {
	t.Helper()
	ctx := t.Context()
	op := `[{"op":"add","path":"/spec/dataVolumeTemplates/-","value":{"metadata":{"name":"extra"},"spec":{"source":{"blank":{}},"storage":{"resources":{"requests":{"storage":"1Gi"}}}}}}]`
	if _, ok := after.Doc["spec"].(map[string]any)["dataVolumeTemplates"]; !ok {
		op = `[{"op":"add","path":"/spec/dataVolumeTemplates","value":[{"metadata":{"name":"extra"},"spec":{"source":{"blank":{}},"storage":{"resources":{"requests":{"storage":"1Gi"}}}}}]}]`
	}
	res, err := c.CP.Kubectl(ctx, nil, "patch", "virtualmachine", vm.Name, "-n", vm.Namespace, "--type=json", "-p", op, "--dry-run=server")
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "virtc guardrail storage-class") {
		t.Errorf("%s: a new dataVolumeTemplate without a storage class is not refused by the guardrails: %s", vm, res)
	}
	// Nor may a tenant mount a container disk the catalog does not
	// approve (an adopted VM's approved drivers CD passed above).
	cd := `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"tools","containerDisk":{"image":"quay.io/example/tools@sha256:0000000000000000000000000000000000000000000000000000000000000000"}}}]`
	res, err = c.CP.Kubectl(ctx, nil, "patch", "virtualmachine", vm.Name, "-n", vm.Namespace, "--type=json", "-p", cd, "--dry-run=server")
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "virtc guardrail container-disks") {
		t.Errorf("%s: a containerDisk of an unapproved image is not refused by the guardrails: %s", vm, res)
	}
}

// liveExport reads a scenario's live.yaml as objects to create: status and
// the metadata the server sets (uid, resourceVersion, managedFields,
// creationTimestamp, generation, owner references to objects of other
// uids, finalizers of controllers that do not run here) removed, and
// kubectl's last-applied configuration removed and spec.running replaced
// as the report asks.
func liveExport(t *testing.T, dir string) []Object {
	data, err := os.ReadFile(filepath.Join(dir, "live.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// An export is a List (oc get -o yaml) or a stream of objects.
	var items []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil || m == nil {
			continue
		}
		if m["kind"] != "List" {
			items = append(items, m)
			continue
		}
		l, _ := m["items"].([]any)
		for _, x := range l {
			if o, ok := x.(map[string]any); ok {
				items = append(items, o)
			}
		}
	}
	var out []Object
	for _, item := range items {
		delete(item, "status")
		meta, _ := item["metadata"].(map[string]any)
		for _, k := range []string{"uid", "resourceVersion", "managedFields", "creationTimestamp", "generation", "ownerReferences", "finalizers"} {
			delete(meta, k)
		}
		if a, ok := meta["annotations"].(map[string]any); ok {
			delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		}
		// A VM in the form before runStrategy: the report's JSON patch
		// replaces spec.running by the run strategy KubeVirt reads from
		// it before the first sync (importer.runningForm).
		if spec, ok := item["spec"].(map[string]any); ok && item["kind"] == "VirtualMachine" {
			if running, ok := spec["running"].(bool); ok {
				delete(spec, "running")
				spec["runStrategy"] = map[bool]string{true: "Always", false: "Halted"}[running]
			}
		}
		o, err := objectOf(item)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// reportVMs reads an import report: the imported VMs, and the paths of
// each one's deferred changes.
func reportVMs(report string) (map[string]bool, map[string][]string) {
	imported, deferred := map[string]bool{}, map[string][]string{}
	vm := ""
	for _, line := range strings.Split(report, "\n") {
		if ref, ok := strings.CutPrefix(line, "imported "); ok {
			vm = ref
			imported[vm] = true
			continue
		}
		if !strings.HasPrefix(line, "  ") {
			vm = ""
		}
		if rest, ok := strings.CutPrefix(line, "  deferred change: "); ok && vm != "" {
			path, _, _ := strings.Cut(rest, ": ")
			deferred[vm] = append(deferred[vm], path)
		}
	}
	return imported, deferred
}

// specDiff lists the differences of two decoded values, each as
// "path: before → after"; list elements with a name are addressed by it
// (volumes[rootdisk]), as virtc's reports address them.
func specDiff(path string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	// An absent map is an empty one: its entries are compared one by one.
	if aok && b == nil || bok && a == nil {
		aok, bok = true, true
	}
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		var out []string
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range keys {
				if !yield(k) {
					return
				}
			}
		}) {
			out = append(out, specDiff(path+"."+k, am[k], bm[k])...)
		}
		return out
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		var out []string
		for i := range al {
			out = append(out, specDiff(fmt.Sprintf("%s[%s]", path, elementName(al[i], i)), al[i], bl[i])...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []string{fmt.Sprintf("%s: %s → %s", path, shown(a), shown(b))}
}

func elementName(v any, i int) string {
	if m, ok := v.(map[string]any); ok {
		if n, ok := m["name"].(string); ok {
			return n
		}
	}
	return fmt.Sprint(i)
}

func shown(v any) string {
	if v == nil {
		return "(absent)"
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// firstImported is the first exported VM that was imported (nil if none).
func firstImported(exported []Object, imported map[string]bool) *Object {
	for i, o := range exported {
		if o.Kind == "VirtualMachine" && imported[o.Namespace+"/"+o.Name] {
			return &exported[i]
		}
	}
	return nil
}
