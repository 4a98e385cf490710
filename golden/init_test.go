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
	"github.com/virtc/virtc/internal/initrepo"
	"github.com/virtc/virtc/test/conform"
)

// initDir holds the `virtc init` scenarios: each folder has args (the
// init flags, one line), expected/ the files init writes from its
// templates, copied.txt the files it writes equal to a repository file
// (path, then that file: the embedded catalog's, and examples/argocd's
// plugin and argocd-cm patch, which init's templates hold a copy of), errors.txt what the
// build of the new repository prints while the approver image is the
// placeholder, and build.yaml what it prints once the image is set
// (validated with kubeconform).
const initDir = "init"

// approverImage replaces the placeholder, as the platform team does.
const approverImage = "quay.io/virtc/virtc@sha256:5f0c3a4e8d9b1c2a7e6f4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19087"

// initRepo runs virtc init with the scenario's flags into a new directory.
func initRepo(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "repo")
	args := []string{"init"}
	if data, err := os.ReadFile(filepath.Join(dir, "args")); err == nil {
		args = append(args, strings.Fields(string(data))...)
	}
	var stdout, stderr bytes.Buffer
	if code := cli.Main(append(args, out), nil, &stdout, &stderr); code != 0 {
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
			code, stdout, stderr := build(repo, rel)
			if code != cli.ExitFailed || stdout != "" {
				t.Errorf("build with the placeholder: exit %d, %d bytes on stdout; want 1 and nothing", code, len(stdout))
			}
			golden(t, filepath.Join(dir, errorsFile), stderr)

			platform := filepath.Join(cluster, "platform.yaml")
			data, err := os.ReadFile(platform)
			if err != nil {
				t.Fatal(err)
			}
			set := bytes.Replace(data, []byte(`"`+initrepo.ApproverPlaceholder+`"`), []byte(approverImage), 1)
			if bytes.Equal(set, data) {
				t.Fatal("platform.yaml has no approver placeholder")
			}
			if err := os.WriteFile(platform, set, 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr = build(repo, rel)
			if code != 0 || stderr != "" {
				t.Fatalf("build exits %d:\n%s", code, stderr)
			}
			golden(t, filepath.Join(dir, "build.yaml"), stdout)
			builds = append(builds, filepath.Join(dir, "build.yaml"))
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
