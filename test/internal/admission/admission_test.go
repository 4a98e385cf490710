package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if os.Getenv("VIRTC_ADMISSION_LOG") == "" {
		quiet()
	}
	os.Exit(m.Run())
}

// repoRoot is the virtc checkout whose goldens and examples are checked:
// the one this module lives in, or $VIRTC_ADMISSION_REPO (to check another
// branch's checkout with this checker before merging).
var repoRoot = func() string {
	if r := os.Getenv("VIRTC_ADMISSION_REPO"); r != "" {
		return r
	}
	return "../../.."
}()

// Fleets checked: `virtc gen-fleet` with these seeds, fleetVMs VMs over
// fleetTenants tenants each.
var fleetSeeds = []int{1, 2, 3}

const (
	fleetVMs     = 200
	fleetTenants = 12
)

// input is one manifest stream to check.
type input struct {
	name string
	yaml []byte
	// context is the rest of the output a scoped stream is part of (see
	// CheckWithContext).
	context []byte
}

// Files of a golden scenario that are not inputs (golden/golden_test.go).
var goldenControlFiles = map[string]bool{
	"expected.yaml": true, "errors.txt": true, "warnings.txt": true, "flags": true,
	"command": true, "expected.txt": true, "exit": true, "README": true,
}

// scopeContext is, for a golden built with --scope or --tenant, the whole
// output of the same inputs (`virtc build` without either): a scoped part is
// applied to a cluster that holds the other parts.
func scopeContext(t *testing.T, bin, dir string) []byte {
	flags, ok := readOptional(t, filepath.Join(dir, "flags"))
	if !ok {
		return nil
	}
	fields := strings.Fields(string(flags))
	var args []string
	scoped := false
	for i := 0; i < len(fields); i++ {
		switch {
		case fields[i] == "--scope" || fields[i] == "-scope" || fields[i] == "--tenant" || fields[i] == "-tenant":
			scoped = true
			i++
		case strings.HasPrefix(fields[i], "--scope=") || strings.HasPrefix(fields[i], "-scope="),
			strings.HasPrefix(fields[i], "--tenant=") || strings.HasPrefix(fields[i], "-tenant="):
			scoped = true
		default:
			args = append(args, fields[i])
		}
	}
	if !scoped {
		return nil
	}
	args = append(args, goldenFiles(t, dir)...)
	stdout, stderr, err := run(t, dir, bin, append([]string{"build"}, args...)...)
	if err != nil {
		t.Fatalf("%s: virtc build without --scope and --tenant: %v\n%s", dir, err, stderr)
	}
	return stdout
}

// goldenFiles are a golden scenario's input files.
func goldenFiles(t *testing.T, dir string) []string {
	var out []string
	for _, e := range readDir(t, dir) {
		if !goldenControlFiles[e.Name()] {
			out = append(out, e.Name())
		}
	}
	return out
}

// planContext is `virtc build` of a restore-plan scenario's inputs.
func planContext(t *testing.T, bin, dir string) []byte {
	args := append([]string{"build"}, goldenFiles(t, dir)...)
	stdout, stderr, err := run(t, dir, bin, args...)
	if err != nil {
		t.Fatalf("%s: virtc build: %v\n%s", dir, err, stderr)
	}
	return stdout
}

// virtcBinary is VirtcBinary for this module.
func virtcBinary(t *testing.T) string {
	return VirtcBinary(t, repoRoot)
}

// readDir is os.ReadDir of dir; t fails when dir cannot be read.
func readDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return entries
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
// objects (--objects), which test/conformance applies as well.
func restoreObjects(t *testing.T, dir string, command []byte) bool {
	if strings.TrimSpace(string(command)) != "restore-plan" {
		return false
	}
	flags, _ := readOptional(t, filepath.Join(dir, "flags"))
	return slices.Contains(strings.Fields(string(flags)), "--objects")
}

// goldenInputs are the expected.yaml of every golden build scenario and
// of restore-plan --objects scenarios (as test/conformance selects them:
// no other `command`, no errors.txt).
func goldenInputs(t *testing.T, bin string) []input {
	root := filepath.Join(repoRoot, "golden")
	var out []input
	for _, e := range readDir(t, root) {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" {
			continue
		}
		dir := filepath.Join(root, e.Name())
		command, isCommand := readOptional(t, filepath.Join(dir, "command"))
		if isCommand && !restoreObjects(t, dir, command) {
			continue
		}
		if _, ok := readOptional(t, filepath.Join(dir, "errors.txt")); ok {
			continue
		}
		data, ok := readOptional(t, filepath.Join(dir, "expected.yaml"))
		if !ok || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		var ctx []byte
		if isCommand {
			// A plan's objects act on what the build of the same inputs
			// makes (a VirtualMachineRestore's VM and snapshot).
			ctx = append(planContext(t, bin, dir), declaredDataSources(t, bin, dir, goldenFiles(t, dir)...)...)
		} else {
			ctx = append(scopeContext(t, bin, dir), declaredDataSources(t, bin, dir, goldenArgs(t, dir)...)...)
		}
		out = append(out, input{name: "golden/" + e.Name(), yaml: data, context: ctx})
	}
	return out
}

// goldenArgs are the `virtc build` arguments of a golden scenario: its
// flags file, then its input files.
func goldenArgs(t *testing.T, dir string) []string {
	var args []string
	if flags, ok := readOptional(t, filepath.Join(dir, "flags")); ok {
		args = strings.Fields(string(flags))
	}
	return append(args, goldenFiles(t, dir)...)
}

// declaredDataSources are the DataSources the catalog of a build says the
// cluster has: an Image with spec.dataSource names a golden image the
// platform team imports outside virtc (a Red Hat boot source, a Windows
// image it uploads). virtc cannot create them, so they are part of the
// cluster the stream is admitted into, like HCO's boot sources; `virtc
// catalog --format json` of the same inputs lists them (source "DataSource
// ns/name"). args are build arguments; --scope and --tenant are left out.
func declaredDataSources(t *testing.T, bin, dir string, args ...string) []byte {
	cat := []string{"catalog", "--format", "json"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--no-default-catalog" || a == "-no-default-catalog":
			cat = append(cat, a)
		case a == "--catalog" || a == "-catalog":
			// virtc catalog takes the catalog folders as PATHs
			if i+1 < len(args) {
				cat = append(cat, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "--catalog=") || strings.HasPrefix(a, "-catalog="):
			cat = append(cat, a[strings.Index(a, "=")+1:])
		case a == "--scope" || a == "-scope" || a == "--warnings-configmap" || a == "-warnings-configmap",
			a == "--tenant" || a == "-tenant": // build's output filter, not catalog's allow-list view
			i++ // build-only
		case strings.HasPrefix(a, "--scope=") || strings.HasPrefix(a, "-scope="),
			strings.HasPrefix(a, "--warnings-configmap=") || strings.HasPrefix(a, "-warnings-configmap="),
			strings.HasPrefix(a, "--tenant=") || strings.HasPrefix(a, "-tenant="):
		case strings.HasPrefix(a, "-"):
			// --cluster x, --ext-str k=v: Jsonnet variables, the catalog's too
			cat = append(cat, a)
			if !strings.Contains(a, "=") && i+1 < len(args) {
				cat = append(cat, args[i+1])
				i++
			}
		default:
			cat = append(cat, a)
		}
	}
	stdout, stderr, err := run(t, dir, bin, cat...)
	if err != nil {
		t.Fatalf("%s: virtc %s: %v\n%s", dir, strings.Join(cat, " "), err, stderr)
	}
	var c struct {
		Images []struct {
			Name   string `json:"name"`
			Source string `json:"source"`
		} `json:"images"`
	}
	if err := json.Unmarshal(stdout, &c); err != nil {
		t.Fatalf("%s: virtc catalog --format json: %v", dir, err)
	}
	var b bytes.Buffer
	for _, img := range c.Images {
		ref, ok := strings.CutPrefix(img.Source, "DataSource ")
		if !ok {
			continue
		}
		ns, name, ok := strings.Cut(ref, "/")
		if !ok {
			t.Fatalf("%s: image %s: source %q is not DataSource ns/name", dir, img.Name, img.Source)
		}
		fmt.Fprintf(&b, "---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: DataSource\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  source:\n    pvc:\n      name: %s-declared\n      namespace: %s\n", name, ns, name, ns)
	}
	return b.Bytes()
}

// importInputs are the outputs of the golden `virtc import` scenarios
// (golden/import/*/build.yaml): each is admitted into a cluster that holds
// the live objects it adopts (live.yaml, the export it was imported from).
func importInputs(t *testing.T) []input {
	dirs, err := filepath.Glob(filepath.Join(repoRoot, "golden", "import", "*", "build.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []input
	for _, f := range dirs {
		dir := filepath.Dir(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		live, _ := readOptional(t, filepath.Join(dir, "live.yaml"))
		out = append(out, input{name: "golden/import/" + filepath.Base(dir), yaml: data, context: live})
	}
	return out
}

func run(t *testing.T, dir string, bin string, args ...string) ([]byte, string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.String(), err
}

// exampleInputs are the builds of examples/builds.txt: each example built
// the way it is deployed (the Argo CD examples with their plugin's catalog
// parameter, the kustomizations with the build kustomize runs), in its
// folder. A build that fails fails the test, as does a folder of examples/
// the file does not cover (test/conformance reads the same file through
// examples.Builds; this module parses it itself, see exampleBuilds).
func exampleInputs(t *testing.T, bin string) []input {
	var out []input
	for _, b := range exampleBuilds(t) {
		if b.args == nil {
			t.Logf("examples/%s is not a virtc build (%s)", b.dir, b.notBuilt)
			continue
		}
		dir := filepath.Join(repoRoot, "examples", filepath.FromSlash(b.dir))
		stdout, stderr, err := run(t, dir, bin, append([]string{"build"}, b.args...)...)
		if err != nil {
			t.Errorf("examples/%s: virtc build %s: %v\n%s", b.dir, strings.Join(b.args, " "), err, stderr)
			continue
		}
		out = append(out, input{
			name:    "examples/" + b.dir + " (virtc build " + strings.Join(b.args, " ") + ")",
			yaml:    stdout,
			context: declaredDataSources(t, bin, dir, b.args...),
		})
	}
	return out
}

type exampleBuild struct {
	dir      string
	args     []string
	notBuilt string
}

// exampleBuilds reads examples/builds.txt as examples.Builds of the root
// module does (this module does not depend on it): a folder, then the
// build arguments or "-" and why it is not built; every folder of
// examples/ but testdata must be covered.
func exampleBuilds(t *testing.T) []exampleBuild {
	file := filepath.Join(repoRoot, "examples", "builds.txt")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []exampleBuild
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || (f[1] == "-" && len(f) < 3) {
			t.Fatalf("%s:%d: a folder and its build arguments (or - and a reason) expected", file, n+1)
		}
		b := exampleBuild{dir: f[0]}
		if f[1] == "-" {
			b.notBuilt = strings.Join(f[2:], " ")
		} else {
			b.args = f[1:]
		}
		if st, err := os.Stat(filepath.Join(repoRoot, "examples", filepath.FromSlash(b.dir))); err != nil || !st.IsDir() {
			t.Fatalf("%s:%d: examples/%s is not a folder", file, n+1, b.dir)
		}
		out = append(out, b)
	}
	for _, e := range readDir(t, filepath.Join(repoRoot, "examples")) {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" {
			continue
		}
		covered := false
		for _, b := range out {
			if b.dir == e.Name() || strings.HasPrefix(b.dir, e.Name()+"/") {
				covered = true
			}
		}
		if !covered {
			t.Errorf("%s: examples/%s has no line: say how it is built (or why it is not); it is not checked", file, e.Name())
		}
	}
	return out
}

// fleetInputs are `virtc build` of `virtc gen-fleet` fleets.
func fleetInputs(t *testing.T, bin string) []input {
	var out []input
	for _, seed := range fleetSeeds {
		dir := filepath.Join(t.TempDir(), "fleet")
		if _, stderr, err := run(t, repoRoot, bin, "gen-fleet", "-seed", fmt.Sprint(seed),
			"-vms", fmt.Sprint(fleetVMs), "-tenants", fmt.Sprint(fleetTenants), "-out", dir); err != nil {
			t.Fatalf("gen-fleet seed %d: %v\n%s", seed, err, stderr)
		}
		stdout, stderr, err := run(t, dir, bin, "build", ".")
		if err != nil {
			t.Fatalf("virtc build of gen-fleet seed %d: %v\n%s", seed, err, stderr)
		}
		out = append(out, input{
			name: fmt.Sprintf("fleet seed=%d (virtc gen-fleet -seed %d -vms %d -tenants %d)", seed, seed, fleetVMs, fleetTenants),
			yaml: stdout,
			// the fleet's pinned images, DataSources its platform team
			// keeps (internal/fleet pinnedImagesYAML)
			context: declaredDataSources(t, bin, dir, "."),
		})
	}
	return out
}

// TestUpstreamAdmission admits every golden output, every example output
// and generated fleets with KubeVirt's and CDI's own webhook code; any
// denial or unresolved reference fails it. VIRTC_ADMISSION_REPORT names a
// file to write every finding into, grouped by message.
func TestUpstreamAdmission(t *testing.T) {
	bin := virtcBinary(t)
	var inputs []input
	inputs = append(inputs, goldenInputs(t, bin)...)
	inputs = append(inputs, exampleInputs(t, bin)...)
	inputs = append(inputs, fleetInputs(t, bin)...)
	inputs = append(inputs, importInputs(t)...)
	if len(inputs) == 0 {
		t.Fatal("nothing to check")
	}

	changes := changeInputs(t, bin)

	start := time.Now()
	var all []Finding
	objects, reviews := 0, 0
	byCheck := map[string]int{}
	add := func(rep *Report, err error) {
		if err != nil {
			t.Errorf("%v", err)
			return
		}
		objects += rep.Objects
		reviews += rep.Reviews
		for k, v := range rep.ByCheck {
			byCheck[genericCheck(k)] += v
		}
		all = append(all, rep.Findings...)
	}
	for _, in := range inputs {
		add(CheckWithContext(in.name, in.yaml, in.context))
	}
	for _, ch := range changes {
		add(CheckUpdate(ch.name, ch.old, ch.new))
	}
	elapsed := time.Since(start)
	t.Logf("checked %d streams and %d changes, %d objects, %d admission reviews in %s", len(inputs), len(changes), objects, reviews, elapsed.Round(time.Millisecond))
	for _, k := range sortedKeys(byCheck) {
		t.Logf("  %6d  %s", byCheck[k], k)
	}
	if path := os.Getenv("VIRTC_ADMISSION_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(groupReport(all, len(inputs)+len(changes), objects, reviews)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range all {
		if f.Unresolved {
			t.Errorf("unresolved reference: %s", f)
		} else {
			t.Errorf("denied: %s", f)
		}
	}
}

// genericCheck drops the per-object part of a check name (the template or
// entry it was about) for the summary.
func genericCheck(check string) string {
	if i := strings.Index(check, " ("); i >= 0 {
		rest := check[i:]
		switch {
		case strings.HasPrefix(rest, " (dataVolumeTemplate"), strings.HasPrefix(rest, " (DataVolume of"), strings.HasPrefix(rest, " (spec.dataImportCronTemplates"):
			check = check[:i] + " (per template)"
			if strings.Contains(rest, "exists") {
				check += ", claim exists"
			}
		}
	} else if strings.HasSuffix(check, " exists") {
		check = check[:strings.Index(check, ", claim")] + ", claim exists"
	}
	return check
}

// groupReport renders findings grouped by message (with the names of the
// objects that have it).
func groupReport(fs []Finding, streams, objects, reviews int) string {
	type group struct {
		key  string
		list []Finding
	}
	groups := map[string]*group{}
	for _, f := range fs {
		kind := "DENIED"
		if f.Unresolved {
			kind = "UNRESOLVED"
		}
		key := kind + " [" + genericCheck(f.Check) + "] " + normalize(f.Message)
		g := groups[key]
		if g == nil {
			g = &group{key: key}
			groups[key] = g
		}
		g.list = append(g.list, f)
	}
	keys := sortedKeys(groups)
	sort.SliceStable(keys, func(i, j int) bool { return len(groups[keys[i]].list) > len(groups[keys[j]].list) })
	var b strings.Builder
	fmt.Fprintf(&b, "virtc upstream admission (KubeVirt v1.8.4, CDI v1.65.0, cluster config of HCO v1.18.1)\n")
	fmt.Fprintf(&b, "%d streams and changes, %d objects, %d admission reviews: %d findings in %d groups\n\n", streams, objects, reviews, len(fs), len(groups))
	for _, k := range keys {
		g := groups[k]
		fmt.Fprintf(&b, "== %d x %s\n", len(g.list), g.key)
		for _, f := range g.list {
			about := ""
			if f.About != "" {
				about = " [" + f.About + "]"
			}
			fmt.Fprintf(&b, "   %s: %s%s: %s\n", f.Input, f.Object(), about, f.Message)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// normalize makes messages that differ only in object names and numbers
// group together.
func normalize(msg string) string {
	return quantity.ReplaceAllString(msg, "${1}N")
}

// quantity matches a number with an optional unit, not inside a name.
var quantity = regexp.MustCompile(`(^|[^A-Za-z0-9-])[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|m|k|M|G)?\b`)

// change is one allowed change between two outputs.
type change struct {
	name     string
	old, new []byte
}

// buildFlags keeps the flags of a golden's flags file that `virtc build`
// takes too (the diff-only ones, --diff, --format, --base, --color, go).
func buildFlags(flags []string) []string {
	var out []string
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		name := strings.TrimLeft(f, "-")
		if j := strings.Index(name, "="); j >= 0 {
			name = name[:j]
		}
		switch name {
		case "ext-str", "catalog", "scope", "cluster":
			out = append(out, f)
			if !strings.Contains(f, "=") && i+1 < len(flags) {
				i++
				out = append(out, flags[i])
			}
		case "no-default-catalog":
			out = append(out, f)
		default:
			if !strings.Contains(f, "=") && i+1 < len(flags) && !strings.HasPrefix(flags[i+1], "-") && name != "diff" {
				i++ // the value of a diff-only flag
			}
		}
	}
	return out
}

// changeInputs are the golden `virtc diff` scenarios whose change virtc
// allows (exit file 0): `virtc build` of old/ and of new/, the change
// Argo CD would apply.
func changeInputs(t *testing.T, bin string) []change {
	root := filepath.Join(repoRoot, "golden")
	var out []change
	for _, e := range readDir(t, root) {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		cmd, ok := readOptional(t, filepath.Join(dir, "command"))
		if !ok || strings.TrimSpace(string(cmd)) != "diff" {
			continue
		}
		if code, ok := readOptional(t, filepath.Join(dir, "exit")); ok && strings.TrimSpace(string(code)) != "0" {
			continue // a refused change is never applied
		}
		if _, err := os.Stat(filepath.Join(dir, "old")); err != nil {
			continue
		}
		flags, _ := readOptional(t, filepath.Join(dir, "flags"))
		args := append([]string{"build"}, buildFlags(strings.Fields(string(flags)))...)
		oldOut, stderr, err := run(t, dir, bin, append(args, "old")...)
		if err != nil {
			t.Logf("golden/%s: old/ does not build (%v), change not checked:\n%s", e.Name(), err, stderr)
			continue
		}
		newOut, stderr, err := run(t, dir, bin, append(args, "new")...)
		if err != nil {
			t.Logf("golden/%s: new/ does not build (%v), change not checked:\n%s", e.Name(), err, stderr)
			continue
		}
		out = append(out, change{name: "golden/" + e.Name() + " (old -> new)", old: oldOut, new: newOut})
	}
	return out
}

// TestBundle: the common-instancetypes bundle KubeVirt v1.8.4 deploys.
func TestBundle(t *testing.T) {
	its, prefs, err := Bundle()
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 65 || len(prefs) != 54 {
		t.Errorf("bundle has %d cluster instancetypes and %d cluster preferences, want 65 and 54", len(its), len(prefs))
	}
}
