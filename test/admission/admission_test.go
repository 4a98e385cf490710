package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	return "../.."
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

// scopeContext is, for a golden built with --scope, the whole output of
// the same inputs (`virtc build` without --scope): a scoped part is applied
// to a cluster that holds the other parts.
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
		case fields[i] == "--scope" || fields[i] == "-scope":
			scoped = true
			i++
		case strings.HasPrefix(fields[i], "--scope=") || strings.HasPrefix(fields[i], "-scope="):
			scoped = true
		default:
			args = append(args, fields[i])
		}
	}
	if !scoped {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !goldenControlFiles[e.Name()] {
			args = append(args, e.Name())
		}
	}
	stdout, stderr, err := run(t, dir, bin, append([]string{"build"}, args...)...)
	if err != nil {
		t.Fatalf("%s: virtc build without --scope: %v\n%s", dir, err, stderr)
	}
	return stdout
}

// virtcBinary is $VIRTC_BIN (the Makefile passes bin/virtc), or virtc built
// from the root module into a temporary directory.
func virtcBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("VIRTC_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	bin, err := filepath.Abs(filepath.Join(t.TempDir(), "virtc"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/virtc")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building virtc: %v\n%s", err, out)
	}
	return bin
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

// goldenInputs are the expected.yaml of every golden build scenario (as
// test/conformance selects them: no `command` file, no errors.txt).
func goldenInputs(t *testing.T, bin string) []input {
	root := filepath.Join(repoRoot, "golden")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []input
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, ok := readOptional(t, filepath.Join(dir, "command")); ok {
			continue
		}
		if _, ok := readOptional(t, filepath.Join(dir, "errors.txt")); ok {
			continue
		}
		data, ok := readOptional(t, filepath.Join(dir, "expected.yaml"))
		if !ok || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		ctx := append(scopeContext(t, bin, dir), declaredDataSources(t, bin, dir, goldenArgs(t, dir)...)...)
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
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !goldenControlFiles[e.Name()] {
			args = append(args, e.Name())
		}
	}
	return args
}

// declaredDataSources are the DataSources the catalog of a build says the
// cluster has: an Image with spec.dataSource names a golden image the
// platform team imports outside virtc (a Red Hat boot source, a Windows
// image it uploads). virtc cannot create them, so they are part of the
// cluster the stream is admitted into, like HCO's boot sources; `virtc
// catalog --format json` of the same inputs lists them (source "DataSource
// ns/name"). args are build arguments; --scope is left out.
func declaredDataSources(t *testing.T, bin, dir string, args ...string) []byte {
	cat := []string{"catalog", "--format", "json"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--no-default-catalog" || a == "-no-default-catalog":
			cat = append(cat, a)
		case a == "--catalog" || a == "-catalog":
			if i+1 < len(args) {
				cat = append(cat, a, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "--catalog=") || strings.HasPrefix(a, "-catalog="):
			cat = append(cat, a)
		case a == "--scope" || a == "-scope":
			i++ // build-only
		case strings.HasPrefix(a, "--scope=") || strings.HasPrefix(a, "-scope="):
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

// exampleInputs are `virtc build examples/<x>` for every example folder
// that builds (as test/conformance selects them).
func exampleInputs(t *testing.T, bin string) []input {
	entries, err := os.ReadDir(filepath.Join(repoRoot, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var out []input
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" {
			continue
		}
		stdout, stderr, err := run(t, repoRoot, bin, "build", "examples/"+e.Name())
		if err != nil {
			t.Logf("examples/%s does not build (%v), not checked:\n%s", e.Name(), err, stderr)
			continue
		}
		out = append(out, input{name: "examples/" + e.Name(), yaml: stdout, context: declaredDataSources(t, bin, repoRoot, "examples/"+e.Name())})
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
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []change
	for _, e := range entries {
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
