package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/virtc/virtc/internal/cli"
	"github.com/virtc/virtc/test/conform"
)

// initDir holds the `virtc init` scenarios: each folder has args (the
// init flags, one line), expected/ the files init writes from its
// templates, copied.txt the files it writes equal to a repository file
// (path, then that file: the embedded catalog's, and examples/argocd's
// plugin and argocd-cm patch, which init's templates hold a copy of), and what the
// build of the new repository, as init wrote it, prints: build.yaml
// (validated with kubeconform) and warnings.txt (the warning that
// InstallPlans wait for a person, unless --approver-image was given).
const initDir = "init"

// args are the init flags of a scenario.
func args(dir string) string {
	data, _ := os.ReadFile(filepath.Join(dir, "args"))
	return string(data)
}

// initRepo runs virtc init with the scenario's flags into a new directory.
func initRepo(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "repo")
	// The virtc version that writes it, when the scenario names one (a
	// release build); else this test binary's, a development build.
	if data, err := os.ReadFile(filepath.Join(dir, "version")); err == nil {
		defer func(v string) { cli.Version = v }(cli.Version)
		cli.Version = strings.TrimSpace(string(data))
	}
	var stdout, stderr bytes.Buffer
	if code := cli.Main(append(append([]string{"init"}, strings.Fields(args(dir))...), out), nil, &stdout, &stderr); code != 0 {
		t.Fatalf("virtc init exits %d:\n%s", code, stderr.String())
	}
	return out
}

func TestInit(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	entries, err := os.ReadDir(initDir)
	if err != nil {
		t.Fatal(err)
	}
	var builds []string
	for _, e := range entries {
		dir := filepath.Join(initDir, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			repo := initRepo(t, dir)
			got := readTree(t, repo)
			// deterministic: a second run writes the same bytes
			if again := readTree(t, initRepo(t, dir)); !cmp.Equal(got, again) {
				t.Errorf("two runs of init differ:\n%s", cmp.Diff(got, again))
			}
			copied := map[string]string{}
			var copiedText strings.Builder
			for _, c := range copiedFiles() {
				copied[c[0]] = got[c[0]]
				delete(got, c[0])
				copiedText.WriteString(c[0] + " " + c[1] + "\n")
				src, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(c[1])))
				if err != nil {
					t.Fatal(err)
				}
				if copied[c[0]] != string(src) {
					t.Errorf("%s differs from %s", c[0], c[1])
				}
			}
			golden(t, filepath.Join(dir, "copied.txt"), copiedText.String())
			expected := filepath.Join(dir, "expected")
			if *update {
				os.RemoveAll(expected)
				for name, data := range got {
					p := filepath.Join(expected, filepath.FromSlash(name))
					os.MkdirAll(filepath.Dir(p), 0o755)
					if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			} else if d := cmp.Diff(readTree(t, expected), got); d != "" {
				t.Errorf("init output (-want +got):\n%s", d)
			}

			// The layout the docs describe (docs/argocd.md, "Start a
			// repository"): from the repository's top, `virtc build
			// clusters/NAME` compiles the cluster with the catalog its
			// virtc.yaml names (platform/), as the plugin does in the
			// cluster's directory. Until the approver image is set, the
			// build refuses it, naming the line; nothing on stdout.
			cluster := clusterDir(t, repo)
			rel, err := filepath.Rel(repo, cluster)
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv("VIRTC_SOURCE_BASE", repo)
			build := func(dir string, args ...string) (int, string, string) {
				var stdout, stderr bytes.Buffer
				wd, _ := os.Getwd()
				defer os.Chdir(wd)
				if err := os.Chdir(dir); err != nil {
					t.Fatal(err)
				}
				code := cli.Main(append([]string{"build"}, args...), nil, &stdout, &stderr)
				return code, stdout.String(), stderr.String()
			}
			// The first commit compiles as init wrote it: without
			// --approver-image the Platform has no approver, and the build
			// warns that InstallPlans wait for a person (warnings.txt).
			code, stdout, stderr := build(repo, rel)
			if code != 0 {
				t.Fatalf("build of the repository init wrote exits %d:\n%s", code, stderr)
			}
			golden(t, filepath.Join(dir, warningsFile), stderr)
			platform := filepath.Join(cluster, "platform.yaml")
			set, err := os.ReadFile(platform)
			if err != nil {
				t.Fatal(err)
			}
			withApprover := bytes.Contains(set, []byte("\n  approver:\n"))
			if withApprover != strings.Contains(args(dir), "--approver-image") {
				t.Errorf("platform.yaml has an approver: %v; init's flags: %s", withApprover, args(dir))
			}
			if withApprover != (stderr == "") {
				t.Errorf("with an approver %v, the build warns %q", withApprover, stderr)
			}
			golden(t, filepath.Join(dir, "build.yaml"), stdout)
			// The OpenShift GitOps form of the wiring, against
			// argocd-operator's ArgoCD CRD (test/schemas/argocd-operator).
			builds = append(builds, filepath.Join(dir, "build.yaml"), filepath.Join(expected, "argocd", "openshift-gitops.yaml"))
			// The same bytes from the cluster's directory, and with the
			// catalog also named on the command line (read once).
			for _, args := range [][]string{{"."}, {"--catalog", "../../platform", "."}} {
				if code, out, errOut := build(cluster, args...); code != 0 || out != stdout {
					t.Errorf("build %v in %s: exit %d, output differs from the build at the top: %v\n%s", args, rel, code, out != stdout, errOut)
				}
			}
			// The build reads platform/: a broken catalog file fails it.
			broken := filepath.Join(repo, "platform", "zz-broken.yaml")
			if err := os.WriteFile(broken, []byte("apiVersion: virtc.dev/v1alpha1\nkind: Image\nmetadata:\n  name: broken\nspec:\n  nosuchfield: 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, _, errOut := build(repo, rel); code != cli.ExitFailed || !strings.Contains(errOut, "platform/zz-broken.yaml:6:3: ") {
				t.Errorf("build with a broken platform/ file: exit %d, want 1 and an error at platform/zz-broken.yaml:6:3:\n%s", code, errOut)
			}
			if err := os.Remove(broken); err != nil {
				t.Fatal(err)
			}

			// init never overwrites: a second run into the repository
			// names its first file and writes nothing
			var out, errOut bytes.Buffer
			if code := cli.Main([]string{"init", repo}, nil, &out, &errOut); code != cli.ExitUsage || out.Len() > 0 ||
				!strings.Contains(errOut.String(), filepath.Join(repo, ".github", "workflows", "virtc-diff.yaml")+": already exists") {
				t.Errorf("init into the repository: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
			}
			if after, _ := os.ReadFile(platform); !bytes.Equal(after, set) {
				t.Error("init into an existing repository changed platform.yaml")
			}
		})
	}
	if len(builds) > 0 {
		builds = append(builds, filepath.Join("..", "examples", "argocd", "openshift-gitops.yaml"))
		t.Run("kubeconform", func(t *testing.T) { conform.RunKubeconform(t, "4.22", builds...) })
	}
}

// copiedFiles are the files init writes equal to a repository file, each
// with that file: a change to examples/argocd's plugin.yaml or
// argocd-cm-patch.yaml must be made in internal/initrepo/templates/argocd
// too, and this test says so.
func copiedFiles() [][2]string {
	var out [][2]string
	for _, f := range []string{"argocd-cm-patch.yaml", "plugin.yaml"} {
		out = append(out, [2]string{"argocd/" + f, "examples/argocd/" + f})
	}
	for _, f := range []string{"backup.yaml", "images.yaml", "networks.yaml", "storage.yaml"} {
		out = append(out, [2]string{"platform/" + f, "catalog/" + f})
	}
	return out
}

// clusterDir is the one directory under the repository's clusters/.
func clusterDir(t *testing.T, repo string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(repo, "clusters", "*"))
	if len(m) != 1 {
		t.Fatalf("clusters/ holds %d directories, want 1", len(m))
	}
	return m[0]
}

// TestInitRefuses: the command line errors of virtc init.
func TestInitRefuses(t *testing.T) {
	nonEmpty := t.TempDir()
	if err := os.MkdirAll(filepath.Join(nonEmpty, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nonEmpty, "b", "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{nonEmpty}, "virtc init: " + filepath.Join(nonEmpty, "b", "notes.txt") + ": already exists; init writes only into a new or empty directory and never overwrites\n"},
		{[]string{"--tenant", "Shop", t.TempDir()}, `virtc init: --tenant "Shop": not a valid namespace name`},
		{[]string{"--tenant", "a", "--tenant", "a", t.TempDir()}, `virtc init: --tenant "a" given twice`},
		{[]string{"--cluster", "east_1", t.TempDir()}, `virtc init: --cluster "east_1": not a valid name`},
		{[]string{"--argocd-namespace", "OpenShift-GitOps", t.TempDir()}, `virtc init: --argocd-namespace "OpenShift-GitOps": not a valid namespace name`},
		{[]string{"--approver-image", "quay.io/virtc/virtc:v1", t.TempDir()}, `virtc init: --approver-image "quay.io/virtc/virtc:v1": not an image pinned by digest, host/path@sha256:<64 hex digits>`},
		{nil, "virtc init: name one directory to write the repository into (DIR)"},
	} {
		var stdout, stderr bytes.Buffer
		code := cli.Main(append([]string{"init"}, c.args...), nil, &stdout, &stderr)
		if code != cli.ExitUsage || stdout.Len() > 0 || !strings.HasPrefix(stderr.String(), c.want) {
			t.Errorf("init %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout.String(), stderr.String(), c.want)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(nonEmpty, "b", "notes.txt")); string(data) != "mine\n" {
		t.Error("init changed a file it refused to overwrite")
	}
	if entries, _ := os.ReadDir(nonEmpty); !slices.EqualFunc(entries, []string{"b"}, func(e os.DirEntry, n string) bool { return e.Name() == n }) {
		t.Error("init wrote into a directory it refused")
	}
}

// TestInitSidecarPatchIsTheExample holds init's repo-server patch to
// examples/argocd/repo-server-patch.yaml, which the e2e suites run: the
// same Deployment patch but for the image, which a new repository must set
// (the example's is the digest of this tree's own image, make image-pin,
// so it cannot be embedded in the binary that image holds).
func TestInitSidecarPatchIsTheExample(t *testing.T) {
	image := regexp.MustCompile(`(?m)^(\s+image: ).*$`)
	body := func(path string) string {
		b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(path)))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i := strings.Index(s, "apiVersion:")
		if i < 0 {
			t.Fatalf("%s: no apiVersion", path)
		}
		return s[i:]
	}
	tmpl := body("internal/initrepo/templates/argocd/repo-server-patch.yaml")
	if !strings.Contains(tmpl, "image: REGISTRY/virtc@sha256:SET-ME") {
		t.Errorf("init's repo-server patch does not ask for the image to be set")
	}
	if got, want := image.ReplaceAllString(tmpl, "${1}IMAGE"), image.ReplaceAllString(body("examples/argocd/repo-server-patch.yaml"), "${1}IMAGE"); got != want {
		t.Errorf("init's repo-server patch differs from the example's beyond the image:\n%s", cmp.Diff(want, got))
	}
}
