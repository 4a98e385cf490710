package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtc/virtc/test/conform"
)

const tenantYAML = `apiVersion: virtc.dev/v1alpha1
kind: Tenant
metadata:
  name: shop
`

func vmYAML(name, size string) string {
	return fmt.Sprintf(`apiVersion: virtc.dev/v1alpha1
kind: VM
metadata:
  name: %s
  namespace: shop
spec:
  size: %s
  image: rhel9
`, name, size)
}

// gitRepo makes a repository in a temporary directory, isolated from the
// user's git configuration, and changes into it.
func gitRepo(t *testing.T) func(args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		conform.Skip(t, fmt.Errorf("git not installed: %v", err))
	}
	dir := t.TempDir()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig"))
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
	t.Chdir(dir)
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("init", "--quiet", "--initial-branch=main")
	return run
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runMain(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// assertClean checks that the diff left no worktree behind and did not
// touch the working tree.
func assertClean(t *testing.T, git func(...string) string, status string) {
	t.Helper()
	if list := git("worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("a worktree is left behind:\n%s", list)
	}
	if got := git("status", "--porcelain"); got != status {
		t.Errorf("the working tree changed: git status was\n%s\nnow\n%s", status, got)
	}
}

func TestDiffBaseAgainstGitRepository(t *testing.T) {
	git := gitRepo(t)
	write(t, "intents/tenant.yaml", tenantYAML)
	write(t, "intents/web01.yaml", vmYAML("web01", "u1.medium"))
	write(t, "intents/web02.yaml", vmYAML("web02", "u1.medium"))
	git("add", ".")
	git("commit", "--quiet", "-m", "base")

	// An uncommitted change: the working tree is the head.
	write(t, "intents/web01.yaml", vmYAML("web01", "u1.large"))
	write(t, "intents/web03.yaml", vmYAML("web03", "u1.small"))
	status := git("status", "--porcelain")

	code, stdout, stderr := runMain("diff", "--base", "main", "--diff=false", "intents")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	for _, want := range []string{
		"virtc diff main → working tree: allowed",
		"size u1.medium → u1.large (1 vCPU, 4Gi → 2 vCPUs, 8Gi): live update possible",
		"+ shop/web03 (added)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	assertClean(t, git, status)

	// Removing a VM that is not retired is refused.
	if err := os.Remove("intents/web02.yaml"); err != nil {
		t.Fatal(err)
	}
	status = git("status", "--porcelain")
	code, stdout, stderr = runMain("diff", "--base", "main", "--format", "json", "intents")
	if code != ExitRefused {
		t.Fatalf("exit %d, want %d; stderr:\n%s\nstdout:\n%s", code, ExitRefused, stderr, stdout)
	}
	if !strings.Contains(stdout, `"rule": "vm-removed"`) {
		t.Errorf("no vm-removed refusal:\n%s", stdout)
	}
	assertClean(t, git, status)
}

func TestDiffBaseNewDirectory(t *testing.T) {
	git := gitRepo(t)
	write(t, "README", "base\n")
	git("add", ".")
	git("commit", "--quiet", "-m", "base")
	// The whole directory is new: the base has nothing there.
	write(t, "tenants/shop/tenant.yaml", tenantYAML)
	write(t, "tenants/shop/web01.yaml", vmYAML("web01", "u1.medium"))
	t.Chdir("tenants")
	code, stdout, stderr := runMain("diff", "--base", "HEAD", "--diff=false")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, " added, 0 removed, 0 changed, 0 unchanged") || !strings.Contains(stdout, "+ shop/web01 (added)") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

func TestDiffBaseErrors(t *testing.T) {
	git := gitRepo(t)
	write(t, "intents/tenant.yaml", tenantYAML)
	write(t, "intents/web01.yaml", vmYAML("web01", "u1.meduim"))
	git("add", ".")
	git("commit", "--quiet", "-m", "broken base")
	write(t, "intents/web01.yaml", vmYAML("web01", "u1.medium"))
	status := git("status", "--porcelain")

	// A base that does not compile: exit 2, errors located in REF:path.
	code, _, stderr := runMain("diff", "--base", "main", "intents")
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitUsage, stderr)
	}
	if want := `main:intents/web01.yaml:7:9: spec.size: unknown size "u1.meduim"`; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	assertClean(t, git, status)

	// A message naming another file of the base names it as REF:path too.
	write(t, "intents/dup.yaml", tenantYAML)
	git("add", ".")
	git("commit", "--quiet", "-m", "duplicate tenant")
	write(t, "intents/dup.yaml", "")
	status = git("status", "--porcelain")
	code, _, stderr = runMain("diff", "--base", "main", "intents")
	if want := `(also defined at main:intents/dup.yaml:4)`; code != ExitUsage || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr lacks %q:\n%s", code, want, stderr)
	}
	if strings.Contains(stderr, os.TempDir()) {
		t.Errorf("stderr names the temporary worktree:\n%s", stderr)
	}
	assertClean(t, git, status)

	// An unknown ref.
	code, _, stderr = runMain("diff", "--base", "no-such-branch", "intents")
	if code != ExitUsage || !strings.Contains(stderr, "not a commit") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	// A PATH outside the repository.
	code, _, stderr = runMain("diff", "--base", "main", os.TempDir())
	if code != ExitUsage || !strings.Contains(stderr, "is not in a git repository") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	assertClean(t, git, status)
}

// TestDiffRevisions: two commits compared, as `git diff REV1 REV2
// [PATH...]` names them (or --base and --head), in the repository that
// holds the path, wherever virtc runs; the working tree is not read.
func TestDiffRevisions(t *testing.T) {
	git := gitRepo(t)
	repo, _ := os.Getwd()
	write(t, "intents/tenant.yaml", tenantYAML)
	write(t, "intents/web01.yaml", vmYAML("web01", "u1.medium"))
	git("add", ".")
	git("commit", "--quiet", "-m", "one")
	write(t, "intents/web01.yaml", vmYAML("web01", "u1.large"))
	git("commit", "--quiet", "-am", "two")
	write(t, "intents/web02.yaml", vmYAML("web02", "u1.small"))
	git("add", ".")
	git("commit", "--quiet", "-m", "three")
	// The working tree has a change no revision has: it is not compared.
	write(t, "intents/web03.yaml", vmYAML("web03", "u1.small"))
	status := git("status", "--porcelain")

	for _, c := range []struct {
		dir  string
		args []string
		want []string
	}{
		{repo, []string{"HEAD~2", "HEAD"}, []string{"virtc diff HEAD~2 → HEAD: allowed", "size u1.medium → u1.large", "+ shop/web02 (added)"}},
		{repo, []string{"--base", "HEAD~1", "--head", "HEAD", "intents"}, []string{"virtc diff HEAD~1 → HEAD: allowed", "+ shop/web02 (added)"}},
		// From outside the repository: the path names it.
		{t.TempDir(), []string{"HEAD~2", "HEAD~1", filepath.Join(repo, "intents")}, []string{"virtc diff HEAD~2 → HEAD~1: allowed", "size u1.medium → u1.large"}},
	} {
		t.Chdir(c.dir)
		code, stdout, stderr := runMain(append([]string{"diff", "--diff=false"}, c.args...)...)
		if code != ExitOK {
			t.Errorf("diff %v: exit %d; stderr:\n%s", c.args, code, stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("diff %v: stdout lacks %q:\n%s", c.args, w, stdout)
			}
		}
		if strings.Contains(stdout, "web03") {
			t.Errorf("diff %v compared the working tree:\n%s", c.args, stdout)
		}
	}
	t.Chdir(repo)
	assertClean(t, git, status)

	// --head compares with a revision: it needs the other one.
	if code, _, stderr := runMain("diff", "--head", "HEAD", "intents"); code != ExitUsage || !strings.Contains(stderr, "--head HEAD needs --base") {
		t.Errorf("--head alone: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestDiffUsage(t *testing.T) {
	for _, args := range [][]string{
		{"diff"},
		{"diff", "one"},
		{"diff", "a", "b", "c"},
		{"diff", "--format", "yaml", "a", "b"},
		{"diff", "--color", "sometimes", "a", "b"},
	} {
		if code, _, stderr := runMain(args...); code != ExitUsage || !strings.Contains(stderr, "Usage: virtc diff") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, stderr)
		}
	}
}

func TestDiffColor(t *testing.T) {
	dir := t.TempDir()
	for _, side := range []string{"old", "new"} {
		size := map[string]string{"old": "u1.medium", "new": "u1.large"}[side]
		write(t, filepath.Join(dir, side, "t.yaml"), tenantYAML)
		write(t, filepath.Join(dir, side, "vm.yaml"), vmYAML("web01", size))
	}
	old, new := filepath.Join(dir, "old"), filepath.Join(dir, "new")
	if _, out, _ := runMain("diff", old, new); strings.Contains(out, "\x1b[") {
		t.Error("colour on a writer that is not a terminal")
	}
	_, out, _ := runMain("diff", "--color", "always", old, new)
	if !strings.Contains(out, "\x1b[32m+    name: u1.large\x1b[0m") {
		t.Errorf("no coloured diff line with --color always:\n%q", out)
	}
	if _, out, _ := runMain("diff", "--color", "always", "--format", "markdown", old, new); strings.Contains(out, "\x1b[") {
		t.Error("colour in Markdown")
	}
}

// TestDiffMarkerCatalog: a directory's virtc.yaml names its catalog
// (catalogDirs, relative to the directory), and both sides of the diff
// read it, as `virtc build DIR`, the other commands that read a directory
// and the Argo CD plugin do: the VMs use an image only platform/ defines,
// so a command that did not read it would refuse them.
func TestDiffMarkerCatalog(t *testing.T) {
	git := gitRepo(t)
	image := `apiVersion: virtc.dev/v1alpha1
kind: Image
metadata:
  name: golden-rhel
spec:
  dataSource:
    name: rhel9
    managedBy: HyperConverged
  provenance: "the platform team's golden image"
  preference: rhel.9
  minRootDisk: 30Gi
`
	write(t, "platform/images.yaml", image)
	write(t, "clusters/east/virtc.yaml", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata:\n  name: east\nspec:\n  catalogDirs: [../../platform]\n")
	write(t, "clusters/east/tenant.yaml", tenantYAML)
	vm := strings.Replace(vmYAML("web01", "u1.medium"), "image: rhel9", "image: golden-rhel", 1)
	write(t, "clusters/east/web01.yaml", vm)
	git("add", ".")
	git("commit", "--quiet", "-m", "base")
	write(t, "clusters/east/web01.yaml", strings.Replace(vm, "u1.medium", "u1.large", 1))

	for _, args := range [][]string{
		{"diff", "--base", "main", "--diff=false", "clusters/east"},
		// the catalog named twice is read once
		{"diff", "--base", "main", "--diff=false", "--catalog", "platform", "clusters/east"},
	} {
		code, stdout, stderr := runMain(args...)
		if code != ExitOK || !strings.Contains(stdout, "size u1.medium → u1.large") {
			t.Errorf("%v: exit %d, want 0 and the size change; stderr:\n%s\nstdout:\n%s", args, code, stderr, stdout)
		}
	}
	// the other commands that read the directory read its catalog too
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "clusters/east"}, "kind: VirtualMachine\n"},
		{[]string{"validate", "clusters/east"}, ""},
		{[]string{"catalog", "clusters/east"}, "golden-rhel"},
		{[]string{"report", "clusters/east"}, "web01"},
		{[]string{"restore-plan", "shop/web01", "clusters/east"}, "#!/usr/bin/env bash"},
	} {
		code, stdout, stderr := runMain(tc.args...)
		if code != ExitOK || !strings.Contains(stdout, tc.want) {
			t.Errorf("%v: exit %d, want 0 and %q in stdout; stderr:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}
