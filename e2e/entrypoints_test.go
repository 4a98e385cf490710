package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/examples"
)

// TestEveryEntryPointBuildsTheSame holds the four ways into virtc to one
// build of a directory (issue #47): `virtc build DIR` from the
// repository's top, `virtc build .` in DIR, the Argo CD plugin's generate
// in DIR (plugin.yaml's command, no parameters), the kustomize generator
// whose paths name DIR and the transformer run in DIR with DIR's files as
// resources. Each reads the catalog DIR's virtc.yaml names. The plugin and
// both builds give the same bytes; kustomize re-encodes what a function
// returns, so its objects are compared (without the annotations kustomize
// adds).
//
// The directories: the cluster directory of a repository `virtc init`
// wrote, its catalog's storage class renamed as a platform team does
// (the embedded catalog's default would differ: what the generator used
// to build, silently), and every example folder that is built as `virtc
// build .` or holds a virtc.yaml.
func TestEveryEntryPointBuildsTheSame(t *testing.T) {
	kustomizeBin(t)
	// A target is a directory of a repository and the build flags its
	// Argo CD Application passes (examples/builds.txt), without the path.
	type target struct {
		repo, dir string
		args      []string
	}
	var targets []target

	initRepo := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command(virtcBin(), "init", "--cluster", "east", "--tenant", "shop", initRepo).CombinedOutput(); err != nil {
		t.Fatalf("virtc init: %v\n%s", err, out)
	}
	storage := filepath.Join(initRepo, "platform", "storage.yaml")
	data, err := os.ReadFile(storage)
	if err != nil {
		t.Fatal(err)
	}
	const embedded, renamed = "ocs-external-storagecluster-ceph-rbd", "my-ceph-rbd"
	if !strings.Contains(string(data), embedded) {
		t.Fatalf("platform/storage.yaml does not name %s", embedded)
	}
	if err := os.WriteFile(storage, []byte(strings.ReplaceAll(string(data), embedded, renamed)), 0o644); err != nil {
		t.Fatal(err)
	}
	targets = append(targets, target{initRepo, "clusters/east", nil})

	exRepo := repoCopy(t)
	builds, err := examples.Builds(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range builds {
		// A kustomization's own folder is TestKustomizeExamples'.
		if _, err := os.Stat(filepath.Join(root, "examples", filepath.FromSlash(b.Dir), "kustomization.yaml")); err == nil || b.Args == nil {
			continue
		}
		if b.Args[len(b.Args)-1] != "." {
			t.Fatalf("examples/builds.txt: %s %v does not build its folder (.)", b.Dir, b.Args)
		}
		targets = append(targets, target{exRepo, "examples/" + b.Dir, b.Args[:len(b.Args)-1]})
	}

	for _, tg := range targets {
		name := strings.Join(append([]string{tg.dir}, tg.args...), " ")
		if tg.repo == initRepo {
			name = "init/" + name
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(tg.repo, filepath.FromSlash(tg.dir))
			// Files are named from the repository's top by every entry
			// point, kustomize's exec function included.
			t.Setenv("VIRTC_SOURCE_BASE", tg.repo)
			want := checkoutBuild(t, tg.repo, dir, append(slices.Clone(tg.args), ".")...)
			if tg.repo == initRepo && !strings.Contains(want, "storageClassName: "+renamed) {
				t.Errorf("virtc build in %s does not use the catalog its virtc.yaml names (no %s)", tg.dir, renamed)
			}
			// With no flags: the same build from the repository's top, and
			// by the plugin as Argo CD runs it for an Application of DIR
			// without parameters (TestCMPContract runs the examples'
			// Applications with theirs).
			if tg.args == nil {
				if got := checkoutBuild(t, tg.repo, tg.repo, tg.dir); got != want {
					t.Errorf("virtc build %s at the top differs from virtc build . in it:\n%s", tg.dir, gocmp.Diff(want, got))
				}
				p := readPlugin(t)
				var app application
				if err := yaml.Unmarshal([]byte("metadata: {name: same}\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/vms.git\n    path: "+tg.dir+"\n    plugin: {name: "+p.Metadata.Name+"-"+p.Spec.Version+"}\n"), &app); err != nil {
					t.Fatal(err)
				}
				code, got, stderr := generate(t, p, app, tg.repo)
				if code != 0 {
					t.Fatalf("plugin generate in %s: exit %d\n%s", tg.dir, code, stderr)
				}
				if got != want {
					t.Errorf("the plugin's output in %s differs from virtc build:\n%s", tg.dir, gocmp.Diff(want, got))
				}
			}

			wantObjs := sortObjects(decodeAll(t, want))
			for _, form := range []string{"generator", "transformer"} {
				written := kustomizeForm(t, dir, form, compilerSpec(t, tg.args))
				if written == nil {
					continue
				}
				code, out, stderr := kustomize(t, dir)
				for _, f := range written {
					os.Remove(f)
				}
				if code != 0 {
					t.Errorf("kustomize build (%s) of %s: exit %d\n%s", form, tg.dir, code, stderr)
					continue
				}
				got := sortObjects(withoutKustomizeAnnotations(decodeAll(t, out)))
				if diff := gocmp.Diff(wantObjs, got); diff != "" {
					t.Errorf("the kustomize %s in %s differs from virtc build %s (-build +kustomize):\n%s", form, tg.dir, tg.dir, diff)
				}
			}
		})
	}
}

// kustomizeForm writes a kustomization into dir that runs virtc as a
// kustomize generator (spec.paths: [.]) or as a transformer of dir's
// files, listed as resources and marked local-config (each YAML file in
// dir and below but virtc.yaml, which a build skips); it returns the files
// it wrote, none for a transformer of a directory with inputs kustomize
// cannot list (Jsonnet). The Compiler names no catalog: the one dir's virtc.yaml names
// must be read.
func kustomizeForm(t *testing.T, dir, form string, spec map[string]any) []string {
	t.Helper()
	var kust string
	switch form {
	case "generator":
		spec["paths"] = []string{"."}
		kust = "generators: [zz-virtc-compiler.yaml]\n"
	case "transformer":
		var resources, others []string
		var err error
		err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			switch {
			case rel == "virtc.yaml":
			case strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml"):
				resources = append(resources, filepath.ToSlash(rel))
			default:
				others = append(others, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(others) > 0 {
			t.Logf("no transformer form: kustomize cannot list %v as resources", others)
			return nil
		}
		kust = "resources: [" + strings.Join(resources, ", ") + "]\n" +
			"commonAnnotations:\n  config.kubernetes.io/local-config: \"true\"\n" +
			"transformers: [zz-virtc-compiler.yaml]\nbuildMetadata: [originAnnotations]\n"
	}
	compiler, err := yaml.Marshal(map[string]any{
		"apiVersion": "virtc.dev/v1alpha1",
		"kind":       "Compiler",
		"metadata": map[string]any{
			"name":        "same",
			"annotations": map[string]string{"config.kubernetes.io/function": "exec: {path: virtc}\n"},
		},
		"spec": spec,
	})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"zz-virtc-compiler.yaml": string(compiler), "kustomization.yaml": kust}
	var out []string
	for name, body := range files {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s exists", p)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// compilerSpec is the spec of a Compiler with the options of `virtc
// build` flags (examples/builds.txt); catalogs stay relative to the
// directory, where kustomize runs the function.
func compilerSpec(t *testing.T, args []string) map[string]any {
	t.Helper()
	spec := map[string]any{}
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			t.Fatalf("flag %s without a value", args[i])
		}
		v := args[i+1]
		switch args[i] {
		case "--catalog":
			c, _ := spec["catalogDirs"].([]string)
			spec["catalogDirs"] = append(c, v)
		case "--scope":
			spec["scope"] = v
		case "--tenant":
			spec["tenant"] = v
		case "--warnings-configmap":
			spec["warningsConfigMap"] = v
		default:
			t.Fatalf("flag %s has no Compiler field here", args[i])
		}
	}
	return spec
}
