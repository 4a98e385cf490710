package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/virtc/virtc/examples"
	"github.com/virtc/virtc/internal/cli"
	"github.com/virtc/virtc/test/conform"
)

// GateEnv must be 1 for the conformance tests to run: they start a
// control plane, which plain `go test ./...` should not.
const GateEnv = "VIRTC_CONFORMANCE"

// platformVersions are the supported platform versions, each checked
// against its own CRDs in a fresh API server.
var platformVersions = []string{"4.22", "4.21", "4.20"}

const repoRoot = "../.."

// output is one compiled manifest stream to check.
type output struct {
	name string
	yaml []byte
	// byPerson: the stream is a restore plan's objects, which a person
	// applies; every other output is a build, which Argo CD applies.
	byPerson bool
}

// argoCDController is the user Argo CD's application controller syncs
// builds as: upstream Argo CD's ServiceAccount in namespace argocd, bound
// to nothing but examples/argocd/controller-rbac.yaml (virtc init's
// argocd/controller-rbac.yaml, render.ArgoCDController). Every build is
// applied, re-applied, diffed and pruned (a dry run) as this user.
const argoCDController = "system:serviceaccount:argocd:argocd-application-controller"

// syncer is who applies o: the Argo CD controller, or the admin for a
// person's restore objects.
func (o output) syncer() string {
	if o.byPerson {
		return ""
	}
	return argoCDController
}

// hcoCSV prefixes the OLM CSV of OpenShift Virtualization, which a
// platform output subscribes to at its exact version.
const hcoCSV = "kubevirt-hyperconverged-operator.v"

// platform is the platform version ("4.22") an output installs, or "" when
// it holds no Platform objects and fits every version.
func (o output) platform() (string, error) {
	objs, err := ParseObjects(o.yaml)
	if err != nil {
		return "", err
	}
	for _, obj := range objs {
		if obj.Group() != "operators.coreos.com" || obj.Kind != "Subscription" {
			continue
		}
		spec, _ := obj.Doc["spec"].(map[string]any)
		csv, _ := spec["startingCSV"].(string)
		if v, ok := strings.CutPrefix(csv, hcoCSV); ok {
			parts := strings.Split(v, ".")
			if len(parts) < 2 {
				return "", fmt.Errorf("%s: startingCSV %q has no minor version", obj, csv)
			}
			return parts[0] + "." + parts[1], nil
		}
	}
	return "", nil
}

// forVersion selects the outputs to check against a platform version:
// those installing that version and those fitting every version.
func forVersion(t *testing.T, outputs []output, version string) []output {
	return selectOutputs(t, outputs, version, true)
}

// selectOutputs selects the outputs installing version and, with
// fitting, those fitting every version.
func selectOutputs(t *testing.T, outputs []output, version string, fitting bool) []output {
	var out []output
	for _, o := range outputs {
		p, err := o.platform()
		if err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		if p != "" && !slices.Contains(platformVersions, p) {
			t.Errorf("%s installs platform %s, which has no CRD set here (have %v)", o.name, p, platformVersions)
		}
		if p == version || p == "" && fitting {
			out = append(out, o)
		}
	}
	return out
}

// binaries skips the test unless the gate is set, and finds the control
// plane (skipping when it is missing, failing in CI).
func binaries(t *testing.T) Binaries {
	t.Helper()
	Gate(t, GateEnv, "conformance tests start a local kube-apiserver; run `make conformance`")
	return Need(t, FindBinaries)
}

func readOptional(t *testing.T, path string) ([]byte, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return data, true
}

// restoreObjects reports a restore-plan scenario that prints the plan's
// objects (--objects): Velero Restores and VirtualMachineRestores, which the
// API server must accept as well.
func restoreObjects(t *testing.T, dir string, command []byte) bool {
	if strings.TrimSpace(string(command)) != "restore-plan" {
		return false
	}
	flags, _ := readOptional(t, filepath.Join(dir, "flags"))
	return slices.Contains(strings.Fields(string(flags)), "--objects")
}

// goldenOutputs are the expected.yaml of every golden build scenario and
// of restore-plan --objects scenarios (scenarios of another command or with
// errors are left out).
func goldenOutputs(t *testing.T) []output {
	root := filepath.Join(repoRoot, "golden")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []output
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" {
			continue
		}
		dir := filepath.Join(root, e.Name())
		c, hasCommand := readOptional(t, filepath.Join(dir, "command"))
		byPerson := hasCommand && restoreObjects(t, dir, c)
		if hasCommand && !byPerson {
			continue
		}
		if _, ok := readOptional(t, filepath.Join(dir, "errors.txt")); ok {
			continue
		}
		data, ok := readOptional(t, filepath.Join(dir, "expected.yaml"))
		if !ok || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		out = append(out, output{name: "golden/" + e.Name(), yaml: data, byPerson: byPerson})
	}
	// The compiled imports of golden/import (virtc import, then build).
	imports, _ := filepath.Glob(filepath.Join(root, "import", "*", "build.yaml"))
	for _, f := range imports {
		data, ok := readOptional(t, f)
		if !ok || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		rel, _ := filepath.Rel(repoRoot, filepath.Dir(f))
		out = append(out, output{name: filepath.ToSlash(rel), yaml: data})
	}
	return out
}

// exampleOutputs are the builds of examples/builds.txt: each example built
// the way it is deployed (the Argo CD examples with their plugin's catalog
// parameter, the kustomizations with the build kustomize runs), in its
// folder. A build that fails fails the test; examples.Builds fails it for a
// folder of examples/ the file does not cover.
func exampleOutputs(t *testing.T) []output {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	builds, err := examples.Builds(root)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, b := range builds {
		lines[b.Dir]++
	}
	var out []output
	for _, b := range builds {
		if b.Args == nil {
			t.Logf("examples/%s is not a virtc build (%s)", b.Dir, b.NotBuilt)
			continue
		}
		dir := filepath.Join(root, "examples", filepath.FromSlash(b.Dir))
		code, stdout, stderr := buildIn(t, dir, b.Args)
		if code != cli.ExitOK {
			t.Errorf("examples/%s: virtc build %s: exit %d\n%s", b.Dir, strings.Join(b.Args, " "), code, stderr)
			continue
		}
		name := "examples/" + b.Dir
		if lines[b.Dir] > 1 {
			// a folder several Applications deploy: which build
			name += " " + strings.Join(b.Args, " ")
		}
		out = append(out, output{name: name, yaml: stdout})
	}
	return out
}

// buildIn runs `virtc build args` in dir (the arguments are relative to
// it), then returns to the test's folder.
func buildIn(t *testing.T, dir string, args []string) (int, []byte, string) {
	t.Helper()
	back, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.Chdir(back); err != nil {
			t.Fatal(err)
		}
	}()
	var stdout, stderr bytes.Buffer
	code := cli.Main(append([]string{"build"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.Bytes(), stderr.String()
}

// startControlPlane starts a fresh control plane with the CRDs of a
// platform version installed, stopped at the end of the test.
func startControlPlane(t *testing.T, bins Binaries, version string, apiserverArgs ...string) *Cluster {
	t.Helper()
	schemas, err := conform.Schemas(version)
	if err != nil {
		conform.Skip(t, err)
	}
	crds := filepath.Join(schemas, "crd-yaml")
	if _, err := os.Stat(crds); err != nil {
		conform.Skip(t, fmt.Errorf("CRD YAMLs not found: %v", err))
	}
	dir := t.TempDir()
	cp := StartForTest(t, t.Context(), bins, filepath.Join(dir, "control-plane"), apiserverArgs...)
	began := time.Now()
	n, err := cp.InstallCRDs(t.Context(), crds)
	if err != nil {
		t.Fatalf("install CRDs from %s: %v", crds, err)
	}
	// CRDs the shared folder lacks (KubeVirt's MigrationPolicy), kept in
	// the repository: test/schemas/README.md.
	if extra := filepath.Join(repoRoot, "test", "schemas", version, "crd-yaml"); dirExists(extra) {
		m, err := cp.InstallCRDs(t.Context(), extra)
		if err != nil {
			t.Fatalf("install CRDs from %s: %v", extra, err)
		}
		n += m
	}
	// prometheus-operator's CRDs (PrometheusRule, AlertmanagerConfig),
	// vendored from its Go module by cmd/promcrdgen: OpenShift's
	// monitoring stack installs them on every cluster.
	m, err := cp.InstallCRDs(t.Context(), filepath.Join(repoRoot, "test", "schemas", "prometheus-operator", "crd-yaml"))
	if err != nil {
		t.Fatalf("install prometheus-operator CRDs: %v", err)
	}
	n += m
	t.Logf("platform %s: etcd and kube-apiserver ready in %v at %s; %d CRDs established in %v",
		version, cp.Startup.Round(time.Millisecond), cp.URL, n, time.Since(began).Round(time.Millisecond))
	manifests := filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o700); err != nil {
		t.Fatal(err)
	}
	c := NewCluster(cp, manifests)
	// The test server has no CDI: a policy enforces CDI's rule that a
	// DataVolume's spec never changes (see immutability.go).
	if err := c.InstallDataVolumeImmutability(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Argo CD's controller holds virtc's ClusterRole only (argoCDController).
	rbac, err := os.ReadFile(filepath.Join(repoRoot, "examples", "argocd", "controller-rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(t.Context(), rbac); err != nil {
		t.Fatalf("examples/argocd/controller-rbac.yaml: %v", err)
	}
	return c
}

// TestConformance applies every golden output and example output to a real
// API server per platform version: a server-side dry run, a real apply,
// a re-apply that must change nothing, and a comparison of the live
// objects with the output. Then it applies changed intents over
// previous ones.
func TestConformance(t *testing.T) {
	bins := binaries(t)
	outputs := append(goldenOutputs(t), exampleOutputs(t)...)
	if len(outputs) == 0 {
		t.Fatal("no golden expected.yaml and no buildable example found")
	}
	steps := changeSteps(t)
	upgrades := upgradeBuilds(t)
	// Beside the other tests, once the outputs are built (exampleOutputs
	// changes the working directory), and each version on a server of its
	// own, in parallel.
	t.Parallel()
	for _, version := range platformVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			c := startControlPlane(t, bins, version)
			applied := 0
			selected := forVersion(t, outputs, version)
			for _, o := range selected {
				t.Run(o.name, func(t *testing.T) {
					applied += checkOutput(t, c, o)
				})
			}
			changed := 0
			t.Run("changed-intents", func(t *testing.T) {
				changed = checkChanges(t, c, steps)
			})
			t.Run("server-rejects", func(t *testing.T) {
				checkRejections(t, c, version)
			})
			upgraded := 0
			if u, ok := upgrades[version]; ok { // none into the oldest minor
				t.Run("platform-upgrade", func(t *testing.T) {
					upgraded = checkUpgrade(t, c, u)
				})
			}
			t.Logf("platform %s: %d objects of %d outputs applied and re-applied; %d objects applied in %d change steps; %d in the platform upgrade",
				version, applied, len(selected), changed, len(steps)-1, upgraded)
		})
	}
}

// checkOutput applies one output into a fresh set of namespaces, checks it,
// and removes it again. It returns the number of objects applied.
func checkOutput(t *testing.T, c *Cluster, o output) int {
	ctx := t.Context()
	objs, err := ParseObjects(o.yaml)
	if err != nil {
		t.Fatalf("%s: %v", o.name, err)
	}
	if left, err := c.Live(ctx, objs); err != nil {
		t.Fatal(err)
	} else if len(left) > 0 {
		t.Fatalf("objects exist before the apply; a previous check did not clean up: %v", keys(left))
	}
	var env []Object
	deleteWhenDone(t, c, &objs, &env)
	env = prepare(t, c, objs)
	user := o.syncer()
	applyAs(t, c, user, "apply", o.yaml)
	first, owners := liveOwnedOrFail(t, c, objs)
	checkEqual(t, objs, first)

	// Re-applying the same output must be a no-op, as Argo CD's
	// server-side diff and apply expect: no difference, no conflict,
	// nothing written.
	diff, err := c.DiffAs(ctx, user, objs)
	if err != nil {
		t.Fatal(err)
	}
	if diff != "" {
		t.Errorf("re-applying the output would change objects:\n%s", diff)
	}
	if err := c.ReapplyAs(ctx, user, objs); err != nil {
		t.Fatal(err)
	}
	second, ownersAfter := liveOwnedOrFail(t, c, objs)
	for _, obj := range objs {
		if d := cmp.Diff(Comparable(first[obj.Key()]), Comparable(second[obj.Key()])); d != "" {
			t.Errorf("%s: re-applying the same output changed it (-before +after):\n%s", obj, d)
		}
	}
	// Nor does it move a field to another owner (a field manager or an
	// operation of its own): Argo CD's server-side apply would then fight
	// over it.
	for _, obj := range objs {
		// not vacuous: each object's fields are the apply's manager's
		applied := false
		for _, e := range ownersAfter[obj.Key()] {
			m, _ := e.(map[string]any)
			applied = applied || m["manager"] == FieldManager && m["operation"] == "Apply"
		}
		if !applied {
			t.Errorf("%s: no field owned by %s's server-side apply: %v", obj, FieldManager, ownersAfter[obj.Key()])
		}
		if d := cmp.Diff(owners[obj.Key()], ownersAfter[obj.Key()]); d != "" {
			t.Errorf("%s: re-applying the same output changed its field ownership (-before +after):\n%s", obj, d)
		}
	}
	// The server rewrites a PersistentVolumeClaim once, on its first
	// update after creation, without any visible change (kube-apiserver
	// v1.37.2, every PVC, even a minimal one). So resourceVersions are
	// compared from the second re-apply on; the comparison above covers
	// the first.
	if err := c.ReapplyAs(ctx, user, objs); err != nil {
		t.Fatal(err)
	}
	third := liveOrFail(t, c, objs)
	for _, obj := range objs {
		before, after := resourceVersion(second[obj.Key()]), resourceVersion(third[obj.Key()])
		if before != after {
			t.Errorf("%s: re-applying the same output writes it every time (resourceVersion %s -> %s)", obj, before, after)
		}
	}
	// Argo CD may prune each object (when it leaves Git).
	mayPrune(t, c, user, objs)
	return len(objs)
}

// mayPrune asks the server to delete each of objs as user, as a dry run:
// Argo CD's prune of an object that left Git, authorised and admitted.
func mayPrune(t *testing.T, c *Cluster, user string, objs []Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.DeleteDryRunAs(t.Context(), user, o); err != nil {
			t.Errorf("prune %s as %q: %v", o, user, err)
		}
	}
}

// apply applies a stream (Cluster.Apply) and, as the cluster's
// controllers would, binds its claims.
func apply(t *testing.T, c *Cluster, what string, stream []byte) {
	t.Helper()
	applyAs(t, c, "", what, stream)
}

// applyAs is apply as user (impersonated; "" is the admin). The claims
// are bound as the admin: that is the volume controller's write.
func applyAs(t *testing.T, c *Cluster, user, what string, stream []byte) {
	t.Helper()
	objs, err := c.ApplyAs(t.Context(), user, stream)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := c.BindClaims(t.Context(), objs); err != nil {
		t.Fatal(err)
	}
}

// prepare provides what objs need from the cluster without creating it
// (see Cluster.EnsureNamespaces and Cluster.EnsureStorageClasses), and
// returns the namespaces it created.
func prepare(t *testing.T, c *Cluster, objs []Object) []Object {
	t.Helper()
	classes, err := c.EnsureStorageClasses(t.Context(), objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(classes) > 0 {
		t.Logf("storage classes the claims name, created: %s", strings.Join(classes, ", "))
	}
	env, err := c.EnsureNamespaces(t.Context(), objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(env) > 0 {
		var names []string
		for _, ns := range env {
			names = append(names, ns.Name)
		}
		t.Logf("namespaces used but not created by the output, created beforehand: %s", strings.Join(names, ", "))
	}
	return env
}

// liveOrFail fetches objs and fails unless every one of them exists.
func liveOrFail(t *testing.T, c *Cluster, objs []Object) map[string]Object {
	t.Helper()
	live, _ := liveOwnedOrFail(t, c, objs)
	return live
}

// liveOwnedOrFail is liveOrFail with each object's field ownership
// (Cluster.LiveOwned).
func liveOwnedOrFail(t *testing.T, c *Cluster, objs []Object) (map[string]Object, map[string][]any) {
	t.Helper()
	live, owned, err := c.LiveOwned(t.Context(), objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if _, ok := live[o.Key()]; !ok {
			t.Fatalf("%s: applied but not found on the server", o)
		}
	}
	return live, owned
}

// checkEqual checks that each live object holds exactly the output's
// fields and values (plus what the server adds).
func checkEqual(t *testing.T, objs []Object, live map[string]Object) {
	t.Helper()
	for _, o := range objs {
		if diffs := Contains(o.Doc, live[o.Key()].Doc); len(diffs) > 0 {
			t.Errorf("%s: the live object differs from the output:\n  %s", o, strings.Join(diffs, "\n  "))
		}
	}
}

func resourceVersion(o Object) string {
	meta, _ := o.Doc["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}

func keys(m map[string]Object) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// vmIntent is one VM of the change fixture.
type vmIntent struct {
	name, size, image, rootDisk string
	disks                       []string // name=size
}

const changeTenant = "conformance-changes"

// intents renders the change fixture as intent files.
func intents(vms []vmIntent) map[string]string {
	files := map[string]string{"tenant.yaml": fmt.Sprintf(`apiVersion: virtc.dev/v1alpha1
kind: Tenant
metadata:
  name: %s
spec:
  access:
    admin: [conformance-admins]
    view: [conformance-viewers]
`, changeTenant)}
	for _, vm := range vms {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: virtc.dev/v1alpha1\nkind: VM\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  size: %s\n  image: %s\n  rootDisk: %s\n",
			vm.name, changeTenant, vm.size, vm.image, vm.rootDisk)
		if len(vm.disks) > 0 {
			b.WriteString("  disks:\n")
			for _, d := range vm.disks {
				name, size, _ := strings.Cut(d, "=")
				fmt.Fprintf(&b, "    - name: %s\n      size: %s\n", name, size)
			}
		}
		files["vm-"+vm.name+".yaml"] = b.String()
	}
	return files
}

// changeStep is one state of the change fixture and its compiled output.
type changeStep struct {
	name string
	yaml []byte
}

// changeSteps compiles the change fixture: a base state, then a disk
// grown, a size changed, a VM added and a VM removed, each step applied
// over the previous one. The disk-grown step grows a data disk and a root
// disk: applied over the base, it must pass the DataVolume immutability
// policy (no DataVolume spec may change: CDI would refuse it), which it
// failed when a data disk was a DataVolume carrying its size.
func changeSteps(t *testing.T) []changeStep {
	web := vmIntent{name: "web", size: "u1.small", image: "fedora", rootDisk: "30Gi", disks: []string{"data=10Gi"}}
	db := vmIntent{name: "db", size: "u1.medium", image: "rhel9", rootDisk: "30Gi", disks: []string{"pgdata=20Gi"}}
	cache := vmIntent{name: "cache", size: "u1.small", image: "centos-stream9", rootDisk: "30Gi"}

	grown := web
	grown.rootDisk, grown.disks = "40Gi", []string{"data=25Gi"}
	resized := grown
	resized.size = "u1.large"

	states := []struct {
		name string
		vms  []vmIntent
	}{
		{"base", []vmIntent{web, db}},
		{"disk-grown", []vmIntent{grown, db}},
		{"size-changed", []vmIntent{resized, db}},
		{"vm-added", []vmIntent{resized, db, cache}},
		{"vm-removed", []vmIntent{resized, cache}},
	}
	var steps []changeStep
	for _, s := range states {
		dir := filepath.Join(t.TempDir(), s.name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, content := range intents(s.vms) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var stdout, stderr bytes.Buffer
		if code := cli.Main([]string{"build", dir}, strings.NewReader(""), &stdout, &stderr); code != cli.ExitOK {
			t.Fatalf("change fixture %s does not build (exit %d):\n%s", s.name, code, stderr.String())
		}
		if n := len(steps); n > 0 && bytes.Equal(steps[n-1].yaml, stdout.Bytes()) {
			t.Fatalf("change fixture %s compiles to the same output as %s: the step changes nothing", s.name, steps[n-1].name)
		}
		steps = append(steps, changeStep{name: s.name, yaml: stdout.Bytes()})
	}
	return steps
}

// checkChanges applies each change step over the previous one, prunes the
// objects the new output no longer has (as Argo CD's prune does), and
// checks that the result equals the new output and the state a fresh apply
// of the new output gives (no field left over from the previous output).
func checkChanges(t *testing.T, c *Cluster, steps []changeStep) int {
	applied := 0
	for i := 1; i < len(steps); i++ {
		prev, cur := steps[i-1], steps[i]
		t.Run(cur.name, func(t *testing.T) {
			ctx := t.Context()
			prevObjs, curObjs := twoStates(t, c, prev.yaml, cur.yaml)
			applyAs(t, c, argoCDController, "apply "+prev.name, prev.yaml)
			applyAs(t, c, argoCDController, "apply "+cur.name+" over "+prev.name, cur.yaml)
			mayPrune(t, c, argoCDController, minus(prevObjs, curObjs))
			if err := c.Delete(ctx, minus(prevObjs, curObjs)); err != nil {
				t.Fatalf("prune: %v", err)
			}
			updated := liveOrFail(t, c, curObjs)
			checkEqual(t, curObjs, updated)
			applied += len(prevObjs) + len(curObjs)

			if err := c.Delete(ctx, union(prevObjs, curObjs)); err != nil {
				t.Fatal(err)
			}
			applyAs(t, c, argoCDController, "fresh apply "+cur.name, cur.yaml)
			fresh := liveOrFail(t, c, curObjs)
			applied += len(curObjs)
			for _, o := range curObjs {
				if diff := cmp.Diff(Comparable(fresh[o.Key()]), Comparable(updated[o.Key()])); diff != "" {
					t.Errorf("%s: applied over %s it differs from a fresh apply (-fresh +updated):\n%s", o, prev.name, diff)
				}
			}
		})
	}
	return applied
}

func union(a, b []Object) []Object {
	seen := map[string]bool{}
	var out []Object
	for _, o := range append(append([]Object{}, a...), b...) {
		if !seen[o.Key()] {
			seen[o.Key()] = true
			out = append(out, o)
		}
	}
	return out
}

// minus is the objects of a whose identity is not in b.
func minus(a, b []Object) []Object {
	in := map[string]bool{}
	for _, o := range b {
		in[o.Key()] = true
	}
	var out []Object
	for _, o := range a {
		if !in[o.Key()] {
			out = append(out, o)
		}
	}
	return out
}

// rejections are manifests the server must refuse: they show that a
// rejection reaches the test with the server's message, so that the checks
// above cannot pass by not looking.
var rejections = []struct {
	name, yaml, message string
	// setup is applied first and must be accepted (for an update the
	// server must refuse).
	setup    string
	versions []string // only these platform versions; all when empty
}{
	{name: "unknown field", message: ".spec.bogus: field not declared in schema", yaml: `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: dv, namespace: conformance-rejects}
spec:
  bogus: true
  source: {blank: {}}
  storage: {resources: {requests: {storage: 1Gi}}}
`},
	{name: "name too long", message: "must be no more than 63 characters", yaml: `apiVersion: v1
kind: Namespace
metadata: {name: conformance-rejects-a-namespace-name-longer-than-sixty-three-chars}
`},
	{name: "CEL rule", message: "path must be absolute", versions: []string{"4.22"}, yaml: `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm, namespace: conformance-rejects}
spec:
  runStrategy: Halted
  template:
    spec:
      domain: {devices: {}}
      volumes:
      - name: shared
        containerPath: {path: relative/path}
`},
	{name: "DataVolume spec changed", message: DataVolumeSpecMessage, setup: `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: dv-grows, namespace: conformance-rejects}
spec:
  source: {blank: {}}
  storage: {resources: {requests: {storage: 1Gi}}}
`, yaml: `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: dv-grows, namespace: conformance-rejects}
spec:
  source: {blank: {}}
  storage: {resources: {requests: {storage: 2Gi}}}
`},
	{name: "kind not served", message: "not served", yaml: `apiVersion: kubevirt.io/v9
kind: VirtualMachine
metadata: {name: vm, namespace: conformance-rejects}
`},
}

func checkRejections(t *testing.T, c *Cluster, version string) {
	ns := []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: conformance-rejects}\n")
	nsObjs, err := ParseObjects(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), nsObjs); err != nil {
			t.Errorf("clean up: %v", err)
		}
	})
	if _, err := c.Apply(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	for _, r := range rejections {
		if len(r.versions) > 0 && !slices.Contains(r.versions, version) {
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			if r.setup != "" {
				objs, err := c.Apply(t.Context(), []byte(r.setup))
				if err != nil {
					t.Fatalf("setup: %v", err)
				}
				t.Cleanup(func() {
					if err := c.Delete(context.Background(), objs); err != nil {
						t.Errorf("clean up: %v", err)
					}
				})
			}
			objs, err := c.Apply(t.Context(), []byte(r.yaml))
			if err == nil {
				t.Cleanup(func() { _ = c.Delete(context.Background(), objs) })
				t.Fatalf("the server accepted:\n%s", r.yaml)
			}
			if !strings.Contains(err.Error(), r.message) {
				t.Errorf("rejected, but without %q:\n%v", r.message, err)
			}
		})
	}
}

func dirExists(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}

// twoStates parses the outputs of two states applied one over the other,
// provides what they need from the cluster (prepare) and removes both, and
// what was provided, when the test ends.
func twoStates(t *testing.T, c *Cluster, prev, cur []byte) (prevObjs, curObjs []Object) {
	t.Helper()
	prevObjs, err := ParseObjects(prev)
	if err != nil {
		t.Fatal(err)
	}
	curObjs, err = ParseObjects(cur)
	if err != nil {
		t.Fatal(err)
	}
	all := union(prevObjs, curObjs)
	var env []Object
	deleteWhenDone(t, c, &all, &env)
	env = prepare(t, c, all)
	return prevObjs, curObjs
}

// deleteWhenDone deletes, when t ends, the objects of each set in turn,
// each set as it is then (it may be filled after the call), and reports
// what it cannot delete as an error of t.
func deleteWhenDone(t *testing.T, c *Cluster, sets ...*[]Object) {
	ctx := t.Context()
	t.Cleanup(func() {
		// t.Context() is cancelled before cleanups run.
		ctx := context.WithoutCancel(ctx)
		for _, objs := range sets {
			if err := c.Delete(ctx, *objs); err != nil {
				t.Errorf("clean up: %v", err)
			}
		}
	})
}
