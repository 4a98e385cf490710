package e2e

import (
	"bytes"
	"cmp"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/test/conform"
)

func kustomizeBin(t *testing.T) string {
	t.Helper()
	bin, err := conform.Tool("kustomize", "KUSTOMIZE_BIN")
	if err != nil {
		conform.Skip(t, err)
	}
	return bin
}

// kustomize runs `kustomize build` with exec functions enabled (both flags
// are needed) and virtc's bin/ on PATH, for kustomizations that name the
// function as `exec: {path: virtc}`.
func kustomize(t *testing.T, dir string, flags ...string) (int, string, string) {
	t.Helper()
	if flags == nil {
		flags = []string{"--enable-alpha-plugins", "--enable-exec"}
	}
	cmd := exec.Command(kustomizeBin(t), append([]string{"build"}, append(flags, dir)...)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(root, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("kustomize: %v", err)
	}
	return code, stdout.String(), stderr.String()
}

// kustomizations lists the directories under dir that hold a
// kustomization, relative to dir.
func kustomizations(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "kustomization.yaml" {
			rel, err := filepath.Rel(dir, filepath.Dir(p))
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestKustomizeExamples builds every example with a kustomization with the
// real kustomize, compares with the golden output, and checks that the
// VMs are there and no input leaked.
func TestKustomizeExamples(t *testing.T) {
	kustomizeBin(t)
	examples := filepath.Join(root, "examples")
	dirs := kustomizations(t, examples)
	// The `virtc build` arguments, run in the example's folder, that must
	// print the same objects as kustomize: examples/builds.txt, which
	// test/internal/admission and test/conformance check too. A folder the file
	// marks as not a virtc build (an overlay patching its base's objects)
	// has its golden output only.
	equivalentBuilds := map[string][]string{}
	for _, rel := range dirs {
		equivalentBuilds[rel] = deployedBuild(t, rel)
	}
	for _, rel := range dirs {
		t.Run(rel, func(t *testing.T) {
			dir := filepath.Join(examples, filepath.FromSlash(rel))
			code, stdout, stderr := kustomize(t, dir)
			if code != 0 {
				t.Fatalf("kustomize build exit %d\n%s", code, stderr)
			}
			objs := decodeAll(t, stdout)
			checkOutput(t, objs)
			golden(t, strings.ReplaceAll(rel, "/", "_")+".yaml", stdout)
			if args := equivalentBuilds[rel]; args != nil {
				want := decodeAll(t, runBuild(t, dir, args...))
				if diff := gocmp.Diff(sortObjects(want), sortObjects(withoutKustomizeAnnotations(objs))); diff != "" {
					t.Errorf("kustomize output differs from virtc build %s (-build +kustomize):\n%s", strings.Join(args, " "), diff)
				}
			}
		})
	}
}

// checkOutput asserts what every kustomize build of virtc must give: the
// generated VirtualMachines, and none of the inputs.
func checkOutput(t *testing.T, objs []map[string]any) {
	t.Helper()
	vms := 0
	for _, o := range objs {
		av, _ := o["apiVersion"].(string)
		if strings.HasPrefix(av, "virtc.dev/") {
			t.Errorf("an input leaked into the output: %s %v", o["kind"], name(o))
		}
		if _, ok := annotations(o)["config.kubernetes.io/local-config"]; ok {
			t.Errorf("%s %s carries config.kubernetes.io/local-config", o["kind"], name(o))
		}
		if o["kind"] == "VirtualMachine" {
			vms++
		}
	}
	if vms == 0 {
		t.Error("no VirtualMachine in the output (did kustomize run the exec function?)")
	}
}

// TestAlphaPluginsOnly shows why every build asserts the VMs: without
// --enable-exec, kustomize skips exec functions and still exits 0.
func TestAlphaPluginsOnly(t *testing.T) {
	code, stdout, stderr := kustomize(t, filepath.Join(root, "examples", "kustomize-transformer"), "--enable-alpha-plugins")
	if code != 0 {
		t.Fatalf("exit %d (kustomize's behaviour changed; update the docs)\n%s", code, stderr)
	}
	for _, o := range decodeAll(t, stdout) {
		if o["kind"] == "VirtualMachine" {
			t.Fatal("kustomize ran the exec function without --enable-exec; update the docs")
		}
	}
}

// TestKustomizeFailures: a refused input fails `kustomize build` with
// virtc's message on stderr and nothing on stdout.
func TestKustomizeFailures(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		// With buildMetadata: [originAnnotations] kustomize names the file;
		// virtc finds the line in it.
		{"bad-intent", `web01.yaml:11:9: spec.size: unknown size "u1.meduim"; did you mean "u1.medium"?`},
		// Without, virtc finds the resource among the files the
		// kustomization lists: the second document of intents.yaml.
		{"bad-intent-no-origin", "\nintents.yaml:30:9: spec.size: unknown size \"u1.meduim\"; did you mean \"u1.medium\"?"},
		{"not-local-config", `tenant.yaml: metadata.annotations: not marked config.kubernetes.io/local-config: "true"`},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			code, stdout, stderr := kustomize(t, filepath.Join(root, "e2e", "testdata", "kustomize", tc.dir))
			if code == 0 {
				t.Fatalf("kustomize build succeeded; output:\n%s", stdout)
			}
			if stdout != "" {
				t.Errorf("a failed build printed %d bytes on stdout", len(stdout))
			}
			if !strings.Contains("\n"+stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr)
			}
		})
	}
}

func runBuild(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return runBuildEnv(t, dir, nil, args...)
}

// runBuildEnv is runBuild with more environment variables.
func runBuildEnv(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(virtcBin(), append([]string{"build"}, args...)...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("virtc build %v in %s: %v\n%s", args, dir, err, stderr.String())
	}
	return stdout.String()
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join(sourceDir(t), "testdata", "golden", file)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./e2e -update)", err)
	}
	if diff := gocmp.Diff(string(want), got); diff != "" {
		t.Errorf("output differs from testdata/golden/%s (-want +got):\n%s", file, diff)
	}
}

func decodeAll(t *testing.T, data string) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := yaml.NewDecoder(strings.NewReader(data))
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if err != nil {
			if err.Error() == "EOF" {
				return out
			}
			t.Fatalf("output is not YAML: %v", err)
		}
		if m != nil {
			out = append(out, m)
		}
	}
}

func metadata(o map[string]any) map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

func annotations(o map[string]any) map[string]any {
	a, _ := metadata(o)["annotations"].(map[string]any)
	return a
}

func name(o map[string]any) string {
	m := metadata(o)
	n, _ := m["name"].(string)
	if ns, _ := m["namespace"].(string); ns != "" {
		return ns + "/" + n
	}
	return n
}

// kustomizeAnnotations are the annotations kustomize itself adds to its
// output (buildMetadata: [originAnnotations] and transformer tracking).
var kustomizeAnnotations = []string{"config.kubernetes.io/origin", "alpha.config.kubernetes.io/transformations"}

func withoutKustomizeAnnotations(objs []map[string]any) []map[string]any {
	for _, o := range objs {
		a := annotations(o)
		for _, k := range kustomizeAnnotations {
			delete(a, k)
		}
		if a != nil && len(a) == 0 {
			delete(metadata(o), "annotations")
		}
	}
	return objs
}

func sortObjects(objs []map[string]any) []map[string]any {
	key := func(o map[string]any) string {
		return o["apiVersion"].(string) + "|" + o["kind"].(string) + "|" + name(o)
	}
	slices.SortFunc(objs, func(a, b map[string]any) int { return cmp.Compare(key(a), key(b)) })
	return objs
}
