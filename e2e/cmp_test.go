package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/examples"
)

// plugin is the part of a ConfigManagementPlugin (plugin.yaml) Argo CD's
// cmp-server reads.
type plugin struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Version  string  `yaml:"version"`
		Init     *action `yaml:"init"`
		Generate action  `yaml:"generate"`
		Discover struct {
			FileName string `yaml:"fileName"`
		} `yaml:"discover"`
		Parameters struct {
			Static []struct {
				Name           string `yaml:"name"`
				CollectionType string `yaml:"collectionType"`
			} `yaml:"static"`
		} `yaml:"parameters"`
	} `yaml:"spec"`
}

type action struct {
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
}

// parameter is an Application's plugin parameter, as Argo CD marshals it
// into ARGOCD_APP_PARAMETERS.
type parameter struct {
	Name   string            `yaml:"name" json:"name"`
	String *string           `yaml:"string,omitempty" json:"string,omitempty"`
	Array  []string          `yaml:"array,omitempty" json:"array,omitempty"`
	Map    map[string]string `yaml:"map,omitempty" json:"map,omitempty"`
}

type source struct {
	RepoURL        string `yaml:"repoURL"`
	TargetRevision string `yaml:"targetRevision"`
	Path           string `yaml:"path"`
	Plugin         *struct {
		Name string `yaml:"name"`
		Env  []struct {
			Name  string `yaml:"name"`
			Value string `yaml:"value"`
		} `yaml:"env"`
		Parameters []parameter `yaml:"parameters"`
	} `yaml:"plugin"`
}

type appSpec struct {
	Project     string `yaml:"project"`
	Source      source `yaml:"source"`
	Destination struct {
		Server    string `yaml:"server"`
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"destination"`
}

type application struct {
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec appSpec `yaml:"spec"`
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func readPlugin(t *testing.T) plugin {
	t.Helper()
	return readPluginFile(t, filepath.Join(root, "examples", "argocd", "plugin.yaml"))
}

// readPluginFile reads a plugin.yaml.
func readPluginFile(t *testing.T, file string) plugin {
	t.Helper()
	var p plugin
	readYAML(t, file, &p)
	if p.APIVersion != "argoproj.io/v1alpha1" || p.Kind != "ConfigManagementPlugin" || p.Metadata.Name != "virtc" {
		t.Fatalf("plugin.yaml is %s %s %q, want argoproj.io/v1alpha1 ConfigManagementPlugin virtc", p.APIVersion, p.Kind, p.Metadata.Name)
	}
	return p
}

// generator is the part of an ApplicationSet generator this test renders:
// git directories or files (with a template of its own, or not), a list,
// or a matrix of those.
type generator struct {
	Git *struct {
		Directories []struct {
			Path string `yaml:"path"`
		} `yaml:"directories"`
		Files []struct {
			Path string `yaml:"path"`
		} `yaml:"files"`
		Template map[string]any `yaml:"template"`
	} `yaml:"git"`
	List *struct {
		Elements []map[string]string `yaml:"elements"`
	} `yaml:"list"`
	Matrix *struct {
		Generators []generator `yaml:"generators"`
	} `yaml:"matrix"`
}

// flatten writes a YAML value's scalars under dotted keys, as go templates
// reach them (.metadata.name).
func flatten(prefix string, v any, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			flatten(prefix+"."+k, x, out)
		}
	case []any:
		// lists are not rendered by this test
	default:
		out[strings.TrimPrefix(prefix, ".")] = fmt.Sprint(v)
	}
}

// yamlDocs are the documents of a YAML file.
func yamlDocs(t *testing.T, file string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, string(data))
}

// params are the parameter sets a generator makes, as the ApplicationSet
// controller's go templates see them (argo-cd v3.6.1
// applicationset/generators/repo_path_utils.go: path.path and
// path.basename of a git directory; of a git file, its directory's and the
// file's own fields; the element's keys for a list; for a matrix, one set
// of each child merged).
func (g generator) params(t *testing.T, top string) []map[string]string {
	t.Helper()
	switch {
	case g.Git != nil:
		var out []map[string]string
		glob := func(pattern string) []string {
			matches, err := filepath.Glob(filepath.Join(top, filepath.FromSlash(pattern)))
			if err != nil || len(matches) == 0 {
				t.Fatalf("the ApplicationSet's git pattern %s matches nothing", pattern)
			}
			return matches
		}
		for _, d := range g.Git.Directories {
			for _, m := range glob(d.Path) {
				rel, _ := filepath.Rel(top, m)
				rel = filepath.ToSlash(rel)
				out = append(out, map[string]string{"path.path": rel, "path.basename": filepath.Base(rel)})
			}
		}
		for _, f := range g.Git.Files {
			for _, m := range glob(f.Path) {
				// the files generator reads one YAML object a file
				// (parseFileParams): a second document would be lost
				docs := yamlDocs(t, m)
				if len(docs) != 1 {
					t.Fatalf("%s: %d YAML documents; the ApplicationSet's files generator reads one object a file", m, len(docs))
				}
				doc := docs[0]
				p := map[string]string{}
				flatten("", doc, p)
				rel, _ := filepath.Rel(top, filepath.Dir(m))
				rel = filepath.ToSlash(rel)
				p["path.path"], p["path.basename"], p["path.filename"] = rel, filepath.Base(rel), filepath.Base(m)
				out = append(out, p)
			}
		}
		return out
	case g.List != nil:
		return g.List.Elements
	case g.Matrix != nil && len(g.Matrix.Generators) == 2:
		var out []map[string]string
		for _, a := range g.Matrix.Generators[0].params(t, top) {
			for _, b := range g.Matrix.Generators[1].params(t, top) {
				m := maps.Clone(a)
				maps.Copy(m, b)
				out = append(out, m)
			}
		}
		return out
	}
	t.Fatal("the ApplicationSet has a generator this test does not render")
	return nil
}

// mergeUnder fills what dst lacks from base, maps recursively, the way the
// ApplicationSet controller puts spec.template under a generator's own
// template (argo-cd v3.6.1 applicationset/generators/generator_spec_processor.go
// mergeGeneratorTemplate: mergo.Merge without override).
func mergeUnder(dst, base map[string]any) map[string]any {
	out := maps.Clone(dst)
	if out == nil {
		out = map[string]any{}
	}
	for k, b := range base {
		d, ok := out[k]
		dm, dIsMap := d.(map[string]any)
		bm, bIsMap := b.(map[string]any)
		switch {
		case !ok || d == nil || d == "":
			out[k] = b
		case dIsMap && bIsMap:
			out[k] = mergeUnder(dm, bm)
		}
	}
	return out
}

// applications returns the example Applications that use the plugin: the
// Application itself and those the ApplicationSet's generators make,
// rendered as Argo CD would for this repository.
func applications(t *testing.T) []application {
	t.Helper()
	dir := filepath.Join(root, "examples", "argocd")
	var app application
	readYAML(t, filepath.Join(dir, "application.yaml"), &app)
	return append([]application{app}, applicationSet(t, root, filepath.Join(dir, "applicationset.yaml"))...)
}

// applicationSet renders the Applications an ApplicationSet file makes
// for the repository whose top is top.
func applicationSet(t *testing.T, top, file string) []application {
	t.Helper()
	var apps []application
	var set struct {
		Spec struct {
			Generators []generator    `yaml:"generators"`
			Template   map[string]any `yaml:"template"`
		} `yaml:"spec"`
	}
	readYAML(t, file, &set)
	for _, g := range set.Spec.Generators {
		template := set.Spec.Template
		if g.Git != nil && g.Git.Template != nil {
			template = mergeUnder(g.Git.Template, set.Spec.Template)
		}
		tmpl, err := yaml.Marshal(template)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range g.params(t, top) {
			var pairs []string
			for _, k := range slices.Sorted(maps.Keys(p)) {
				pairs = append(pairs, "{{."+k+"}}", p[k])
			}
			rendered := strings.NewReplacer(pairs...).Replace(string(tmpl))
			if strings.Contains(rendered, "{{") {
				t.Fatalf("template has a field this test does not render:\n%s", rendered)
			}
			var a application
			if err := yaml.Unmarshal([]byte(rendered), &a); err != nil {
				t.Fatal(err)
			}
			apps = append(apps, a)
		}
	}
	return apps
}

// cmpEnv is the environment Argo CD's cmp-server gives generate: the
// sidecar's own variables (PATH) and the build environment of the
// Application.
func cmpEnv(t *testing.T, app application) []string {
	t.Helper()
	src := app.Spec.Source
	revision := "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b"
	env := []string{
		"PATH=" + filepath.Join(root, "bin") + ":/usr/bin:/bin",
		"HOME=/home/argocd",
		"ARGOCD_APP_NAME=" + app.Metadata.Name,
		"ARGOCD_APP_NAMESPACE=" + app.Spec.Destination.Namespace,
		"ARGOCD_APP_PROJECT_NAME=" + app.Spec.Project,
		"ARGOCD_APP_REVISION=" + revision,
		"ARGOCD_APP_REVISION_SHORT=" + revision[:7],
		"ARGOCD_APP_REVISION_SHORT_8=" + revision[:8],
		"ARGOCD_APP_SOURCE_PATH=" + src.Path,
		"ARGOCD_APP_SOURCE_REPO_URL=" + src.RepoURL,
		"ARGOCD_APP_SOURCE_TARGET_REVISION=" + src.TargetRevision,
		"KUBE_VERSION=1.35.8",
		"KUBE_API_VERSIONS=v1,apps/v1,rbac.authorization.k8s.io/v1,kubevirt.io/v1,cdi.kubevirt.io/v1beta1,argoproj.io/v1alpha1",
	}
	if src.Plugin == nil {
		return env
	}
	for _, e := range src.Plugin.Env {
		env = append(env, "ARGOCD_ENV_"+e.Name+"="+e.Value)
	}
	if len(src.Plugin.Parameters) > 0 {
		data, err := json.Marshal(src.Plugin.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, "ARGOCD_APP_PARAMETERS="+string(data))
	}
	escape := func(s string) string {
		return regexp.MustCompile(`[^A-Z0-9_]`).ReplaceAllString(strings.ToUpper(s), "_")
	}
	for _, p := range src.Plugin.Parameters {
		base := "PARAM_" + escape(p.Name)
		switch {
		case p.String != nil:
			env = append(env, base+"="+*p.String)
		case p.Map != nil:
			for k, v := range p.Map {
				env = append(env, base+"_"+escape(k)+"="+v)
			}
		default:
			for i, v := range p.Array {
				env = append(env, base+"_"+strconv.Itoa(i)+"="+v)
			}
		}
	}
	return env
}

// lookPath finds a command in a PATH value: Argo CD execs generate's
// command without a shell, looked up on the sidecar's PATH.
func lookPath(t *testing.T, name string, env []string) string {
	t.Helper()
	if strings.Contains(name, "/") {
		return name
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(v) {
				p := filepath.Join(dir, name)
				if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
					return p
				}
			}
		}
	}
	t.Fatalf("%s is not on the sidecar's PATH", name)
	return ""
}

// repoCopy gives each run its own copy of the repository, as the
// cmp-server does (it receives the repository as a tarball).
func repoCopy(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	if err := copyTree(filepath.Join(root, "examples"), filepath.Join(dst, "examples")); err != nil {
		t.Fatal(err)
	}
	return dst
}

// generate runs the plugin's generate command for an Application the way
// Argo CD does: no shell, in the app path of a copy of the repository,
// with the CMP environment.
func generate(t *testing.T, p plugin, app application, repo string) (int, string, string) {
	t.Helper()
	if p.Spec.Init != nil {
		t.Fatal("plugin.yaml has an init command this test does not run")
	}
	dir := filepath.Join(repo, filepath.FromSlash(app.Spec.Source.Path))
	env := cmpEnv(t, app)
	argv := append(append([]string{}, p.Spec.Generate.Command...), p.Spec.Generate.Args...)
	cmd := exec.Command(lookPath(t, argv[0], env), argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("generate: %v", err)
	}
	return code, stdout.String(), stderr.String()
}

// deployedBuilds are the lines of examples/builds.txt for dir (a folder
// under examples/, slashes): the `virtc build` arguments, run in dir, whose
// output the example deploys, one per Application that deploys it; nil
// for a folder that is not a virtc build. The same list selects what
// test/internal/admission and test/conformance check.
func deployedBuilds(t *testing.T, dir string) [][]string {
	t.Helper()
	builds, err := examples.Builds(root)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	found := false
	for _, b := range builds {
		if b.Dir == dir {
			found = true
			if b.Args != nil {
				out = append(out, b.Args)
			}
		}
	}
	if !found {
		t.Fatalf("examples/%s has no line in examples/builds.txt", dir)
	}
	return out
}

// deployedBuild is the one line of examples/builds.txt for dir.
func deployedBuild(t *testing.T, dir string) []string {
	t.Helper()
	builds := deployedBuilds(t, dir)
	if len(builds) > 1 {
		t.Fatalf("examples/builds.txt has %d builds of %s, want one", len(builds), dir)
	}
	if len(builds) == 0 {
		return nil
	}
	return builds[0]
}

// checkoutBuild is `virtc build` in dir of a repository copy at repo, as it
// runs in a checkout of that repository: sources from the repository's top.
func checkoutBuild(t *testing.T, repo, dir string, args ...string) string {
	t.Helper()
	return runBuildEnv(t, dir, []string{"VIRTC_SOURCE_BASE=" + repo}, args...)
}

// generateOK checks that an Application names the plugin as Argo CD knows
// it and that its directory is discovered, runs the plugin's generate for
// it in repo and requires success: the app's directory and the manifests.
func generateOK(t *testing.T, p plugin, app application, repo string) (string, string) {
	t.Helper()
	pl := app.Spec.Source.Plugin
	if pl == nil {
		t.Fatal("the Application does not use a plugin")
	}
	if want := p.Metadata.Name + "-" + p.Spec.Version; pl.Name != want {
		t.Errorf("plugin name %q; with spec.version set, Argo CD knows the plugin as %q", pl.Name, want)
	}
	appDir := filepath.Join(repo, filepath.FromSlash(app.Spec.Source.Path))
	if m, _ := filepath.Glob(filepath.Join(appDir, p.Spec.Discover.FileName)); len(m) == 0 {
		t.Errorf("discover.fileName %q does not match in %s", p.Spec.Discover.FileName, app.Spec.Source.Path)
	}
	code, stdout, stderr := generate(t, p, app, repo)
	if code != 0 {
		t.Fatalf("generate exit %d\n%s", code, stderr)
	}
	return appDir, stdout
}

// TestCMPContract runs plugin.yaml's generate for every example
// Application as Argo CD would, and compares the manifests with virtc
// build: each Application's with one of the builds examples/builds.txt
// names for its path, and every build named there for an Application's
// path with some Application's.
func TestCMPContract(t *testing.T) {
	p := readPlugin(t)
	var names []string
	deployed := map[string]bool{} // dir and arguments of each builds.txt line an Application deploys
	apps := applications(t)
	for _, app := range apps {
		names = append(names, app.Metadata.Name)
		dir := strings.TrimPrefix(app.Spec.Source.Path, "examples/")
		builds := deployedBuilds(t, dir)
		t.Run(app.Metadata.Name, func(t *testing.T) {
			repo := repoCopy(t)
			appDir, stdout := generateOK(t, p, app, repo)
			pl := app.Spec.Source.Plugin
			if len(builds) == 0 {
				t.Fatalf("examples/builds.txt says %s is not a virtc build", app.Spec.Source.Path)
			}
			// The copy has no .git, as when the repo server leaves it out
			// (ARGOCD_REPO_SERVER_PLUGIN_TAR_EXCLUSIONS); the plugin still
			// records the sources a build in a checkout records, from the
			// repository's top (ARGOCD_APP_SOURCE_PATH tells where that is).
			var tried []string
			matched := false
			for _, args := range builds {
				want := checkoutBuild(t, repo, appDir, args...)
				if stdout == want {
					matched = true
					deployed[dir+" "+strings.Join(args, " ")] = true
					break
				}
				tried = append(tried, "virtc build "+strings.Join(args, " ")+":\n"+gocmp.Diff(want, stdout))
			}
			if !matched {
				t.Errorf("generate output is none of the builds examples/builds.txt names for %s:\n%s", dir, strings.Join(tried, "\n"))
			}
			var scope, warnings string
			for _, prm := range pl.Parameters {
				if prm.String != nil && prm.Name == "scope" {
					scope = *prm.String
				}
				if prm.String != nil && prm.Name == "warnings-configmap" {
					warnings = *prm.String
				}
			}
			vms := scope == "" || strings.Contains(scope, "vms") || strings.Contains(scope, "all")
			if got := strings.Contains(stdout, "kind: VirtualMachine\n"); got != vms {
				t.Errorf("a VirtualMachine in the manifests: %t, want %t (scope %q)", got, vms, scope)
			}
			cm := strings.Contains(stdout, "kind: ConfigMap\nmetadata:\n  labels:\n    app.kubernetes.io/component: warnings\n")
			if cm != (warnings != "") {
				t.Errorf("a warnings ConfigMap in the manifests: %t, want %t (warnings-configmap %q)", cm, warnings != "", warnings)
			}
		})
	}
	slices.Sort(names)
	if want := []string{"virtc-east-platform", "virtc-east-tenant-analytics", "virtc-east-tenant-shop", "virtc-in-cluster",
		"virtc-west-platform", "virtc-west-tenant-shop"}; !slices.Equal(names, want) {
		t.Errorf("example Applications %q, want %q", names, want)
	}
	// every Tenant of a directory the Applications deploy has its own
	// Application (a Tenant without one would get a namespace and no VMs)
	tenantApps := map[string]bool{} // path and tenant
	paths := map[string]bool{}
	for _, app := range apps {
		paths[app.Spec.Source.Path] = true
		for _, prm := range app.Spec.Source.Plugin.Parameters {
			if prm.Name == "tenant" && prm.String != nil {
				tenantApps[app.Spec.Source.Path+" "+*prm.String] = true
			}
		}
	}
	for p := range paths {
		files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(p), "*.yaml"))
		for _, f := range files {
			for _, doc := range yamlDocs(t, f) {
				md, _ := doc["metadata"].(map[string]any)
				if name, _ := md["name"].(string); doc["kind"] == "Tenant" && !tenantApps[p+" "+name] {
					t.Errorf("%s: Tenant %s has no Application of its own", f, name)
				}
			}
		}
	}
	builds, err := examples.Builds(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range builds {
		if strings.HasPrefix(b.Dir, "argocd/clusters/") && !deployed[b.Dir+" "+strings.Join(b.Args, " ")] {
			t.Errorf("examples/builds.txt: %s %s is no example Application's build", b.Dir, strings.Join(b.Args, " "))
		}
	}
}

// TestCMPOptions covers the other ways options reach the plugin: the
// Application's plugin env, the directory's virtc.yaml, and a parameter
// virtc build does not know.
func TestCMPOptions(t *testing.T) {
	p := readPlugin(t)
	base := applications(t)[0]
	withPlugin := func(f func(a *application)) application {
		a := base
		pl := *base.Spec.Source.Plugin
		a.Spec.Source.Plugin = &pl
		a.Spec.Source.Plugin.Parameters = nil
		f(&a)
		return a
	}
	t.Run("env", func(t *testing.T) {
		app := withPlugin(func(a *application) {
			a.Spec.Source.Plugin.Env = append(a.Spec.Source.Plugin.Env, struct {
				Name  string `yaml:"name"`
				Value string `yaml:"value"`
			}{"CATALOG", "../../platform"})
		})
		repo := repoCopy(t)
		code, stdout, stderr := generate(t, p, app, repo)
		want := checkoutBuild(t, repo, filepath.Join(repo, app.Spec.Source.Path), "--catalog", "../../platform", ".")
		if code != 0 || stdout != want {
			t.Errorf("exit %d, stdout equal to build: %v\n%s", code, stdout == want, stderr)
		}
	})
	t.Run("virtc.yaml", func(t *testing.T) {
		app := withPlugin(func(*application) {})
		repo := repoCopy(t)
		dir := filepath.Join(repo, app.Spec.Source.Path)
		marker := "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: east}\nspec:\n  catalogDirs: [../../platform]\n"
		if err := os.WriteFile(filepath.Join(dir, "virtc.yaml"), []byte(marker), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := generate(t, p, app, repo)
		want := checkoutBuild(t, repo, dir, "--catalog", "../../platform", ".")
		if code != 0 || stdout != want {
			t.Errorf("exit %d, stdout equal to build: %v\n%s", code, stdout == want, stderr)
		}
	})
	t.Run("scope", func(t *testing.T) {
		vms := "vms"
		app := withPlugin(func(a *application) {
			a.Spec.Source.Plugin.Parameters = []parameter{{Name: "catalog", Array: []string{"../../platform"}}, {Name: "scope", String: &vms}}
		})
		repo := repoCopy(t)
		code, stdout, stderr := generate(t, p, app, repo)
		want := checkoutBuild(t, repo, filepath.Join(repo, app.Spec.Source.Path), "--catalog", "../../platform", "--scope", "vms", ".")
		if code != 0 || stdout != want {
			t.Errorf("exit %d, stdout equal to build: %v\n%s", code, stdout == want, stderr)
		}
		if strings.Contains(stdout, "kind: Namespace\n") || !strings.Contains(stdout, "kind: VirtualMachine\n") {
			t.Errorf("scope vms must give the VMs and no Namespace:\n%s", stdout)
		}
	})
	t.Run("unknown parameter", func(t *testing.T) {
		vms := "vms"
		app := withPlugin(func(a *application) {
			a.Spec.Source.Plugin.Parameters = []parameter{{Name: "catalog", Array: []string{"../../platform"}}, {Name: "colour", String: &vms}}
		})
		code, stdout, stderr := generate(t, p, app, repoCopy(t))
		if code == 0 || stdout != "" || !strings.Contains(stderr, `plugin parameter "colour" is not an option the plugin takes`) {
			t.Errorf("exit %d, stdout %d bytes, stderr:\n%s", code, len(stdout), stderr)
		}
	})
}

// TestCMPFailure: a refused intent makes generate exit non-zero with the
// message on stderr and nothing on stdout, which Argo CD shows as the
// Application's ComparisonError.
func TestCMPFailure(t *testing.T) {
	p := readPlugin(t)
	app := applications(t)[0]
	repo := repoCopy(t)
	vm := filepath.Join(repo, app.Spec.Source.Path, "web01.yaml")
	data, err := os.ReadFile(vm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vm, bytes.Replace(data, []byte("image: ubuntu-24.04"), []byte("image: ubuntu-2404"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := generate(t, p, app, repo)
	if code == 0 || stdout != "" {
		t.Fatalf("exit %d with %d bytes on stdout, want a failure and nothing", code, len(stdout))
	}
	// Argo CD shows this message in the Application: it names the file from
	// the repository's top, as the reviewer of the commit sees it.
	if want := "\n" + app.Spec.Source.Path + `/web01.yaml:9:10: spec.image: unknown image "ubuntu-2404"; did you mean "ubuntu-24.04"?`; !strings.Contains("\n"+stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}
