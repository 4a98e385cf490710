package source_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

const tenantYAML = "apiVersion: virtc.dev/v1alpha1\nkind: Tenant\nmetadata:\n  name: a\nspec: {}\n"

func write(t *testing.T, file, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rels(t *testing.T, paths []string, opts source.Options) ([]string, *diag.List) {
	t.Helper()
	diags := &diag.List{}
	var out []string
	for _, d := range source.Read(paths, opts, diags) {
		out = append(out, d.Rel)
	}
	return out, diags
}

// The recorded source of a file is one path however the file is named and
// wherever virtc runs: from the top of its git repository (a .git
// directory, or the .git file of a worktree), else from the current
// directory, and $VIRTC_SOURCE_BASE wins over both.
func TestSourcePathIsStable(t *testing.T) {
	t.Setenv(source.BaseEnv, "")
	for _, gitEntry := range []string{"dir", "file"} {
		t.Run(".git "+gitEntry, func(t *testing.T) {
			top := t.TempDir()
			if gitEntry == "dir" {
				if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				write(t, filepath.Join(top, ".git"), "gitdir: /elsewhere/.git/worktrees/x\n")
			}
			write(t, filepath.Join(top, "tenants", "a.yaml"), tenantYAML)
			for _, c := range []struct{ dir, arg string }{
				{".", "."}, {".", "tenants"}, {".", "tenants/a.yaml"}, {"tenants", "."}, {"tenants", "a.yaml"},
				{"tenants", filepath.Join(top, "tenants", "a.yaml")},
			} {
				t.Chdir(filepath.Join(top, c.dir))
				got, diags := rels(t, []string{c.arg}, source.Options{})
				if diags.HasErrors() {
					t.Fatal(diag.Format(diags.Sorted()))
				}
				if len(got) != 1 || got[0] != "tenants/a.yaml" {
					t.Errorf("cd %s && read %s: Rel %q, want tenants/a.yaml", c.dir, c.arg, got)
				}
			}
		})
	}
	t.Run("no repository", func(t *testing.T) {
		top := t.TempDir()
		write(t, filepath.Join(top, "tenants", "a.yaml"), tenantYAML)
		t.Chdir(top)
		for _, arg := range []string{".", "tenants", "tenants/a.yaml"} {
			if got, _ := rels(t, []string{arg}, source.Options{}); len(got) != 1 || got[0] != "tenants/a.yaml" {
				t.Errorf("read %s: Rel %q, want tenants/a.yaml (from the current directory)", arg, got)
			}
		}
		// Outside the current directory and any repository: from the
		// input root, as before.
		t.Chdir(t.TempDir())
		if got, _ := rels(t, []string{filepath.Join(top, "tenants")}, source.Options{}); len(got) != 1 || got[0] != "a.yaml" {
			t.Errorf("outside: Rel %q, want a.yaml", got)
		}
		t.Setenv(source.BaseEnv, top)
		if got, _ := rels(t, []string{filepath.Join(top, "tenants")}, source.Options{}); len(got) != 1 || got[0] != "tenants/a.yaml" {
			t.Errorf("%s=%s: Rel %q, want tenants/a.yaml", source.BaseEnv, top, got)
		}
		// Options.Base (virtc diff OLD NEW: each tree's top) wins.
		if got, _ := rels(t, []string{filepath.Join(top, "tenants")}, source.Options{Base: filepath.Join(top, "tenants")}); len(got) != 1 || got[0] != "a.yaml" {
			t.Errorf("Base: Rel %q, want a.yaml", got)
		}
	})
}

// A symlink is followed only inside the input root: one that leads out of
// it (evil.yaml -> /etc/passwd) is refused, naming the link and its
// target, like a Jsonnet import that leaves the root
// (internal/jsonnet/importer.go); links inside the root are read.
func TestSymlinkOutsideRootRefused(t *testing.T) {
	t.Setenv(source.BaseEnv, "")
	top := t.TempDir()
	secret := filepath.Join(top, "secret.yaml")
	write(t, secret, tenantYAML)
	root := filepath.Join(top, "repo")
	write(t, filepath.Join(root, "tenants", "a.yaml"), strings.Replace(tenantYAML, "name: a", "name: inside", 1))
	links := map[string]string{
		filepath.Join(root, "evil.yaml"):          "/etc/passwd",
		filepath.Join(root, "tenants", "up.yaml"): "../../secret.yaml",
		filepath.Join(root, "same.yaml"):          "tenants/a.yaml", // inside: read
		filepath.Join(root, "dangling.yaml"):      "missing.yaml",
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Skipf("symlinks not supported: %v", err)
		}
	}
	t.Chdir(top)
	diags := &diag.List{}
	docs := source.Read([]string{"repo"}, source.Options{}, diags)
	var names []string
	for _, d := range docs {
		names = append(names, d.File)
	}
	if want := []string{filepath.Join("repo", "same.yaml"), filepath.Join("repo", "tenants", "a.yaml")}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("read %q, want %q", names, want)
	}
	msgs := diag.Format(diags.Sorted())
	for _, want := range []string{
		"repo/evil.yaml: refused: it is a symlink to /etc/passwd, outside the input root repo",
		"repo/tenants/up.yaml: refused: it is a symlink to ../../secret.yaml (" + secret + "), outside the input root repo",
		"repo/dangling.yaml: cannot read: it is a symlink to missing.yaml, which cannot be followed",
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("messages lack %q:\n%s", want, msgs)
		}
	}
	if strings.Contains(msgs, "root:") {
		t.Errorf("the content of /etc/passwd reached a message:\n%s", msgs)
	}
	// A file named on its own: its directory is its input root.
	diags = &diag.List{}
	if docs := source.Read([]string{filepath.Join("repo", "tenants", "up.yaml")}, source.Options{}, diags); len(docs) != 0 || !strings.Contains(diag.Format(diags.Sorted()), "outside the input root repo/tenants") {
		t.Errorf("named link: %d docs, messages:\n%s", len(docs), diag.Format(diags.Sorted()))
	}
	diags = &diag.List{}
	if docs := source.Read([]string{filepath.Join("repo", "same.yaml")}, source.Options{}, diags); len(docs) != 1 || diags.HasErrors() {
		t.Errorf("named link inside its directory: %d docs, messages:\n%s", len(docs), diag.Format(diags.Sorted()))
	}
}

// A symlinked directory is walked like a symlinked file is read: inside
// the input root it is followed (a link that loops back is not), outside it
// is refused with a message, never skipped in silence; a root named
// through a link is read.
func TestDirectorySymlinks(t *testing.T) {
	t.Setenv(source.BaseEnv, "")
	top := t.TempDir()
	write(t, filepath.Join(top, "outside", "x.yaml"), strings.Replace(tenantYAML, "name: a", "name: outside", 1))
	root := filepath.Join(top, "repo")
	write(t, filepath.Join(root, "real", "a.yaml"), strings.Replace(tenantYAML, "name: a", "name: inside", 1))
	for link, target := range map[string]string{
		filepath.Join(root, "alias"):        "real",       // inside: walked
		filepath.Join(root, "real", "loop"): "..",         // loops back to the root: not walked twice
		filepath.Join(root, "away"):         "../outside", // outside: refused
		filepath.Join(top, "rootlink"):      "repo",       // the root named through a link
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Skipf("symlinks not supported: %v", err)
		}
	}
	t.Chdir(top)
	for _, tc := range []struct{ root, want string }{
		{"repo", "repo/alias/a.yaml repo/real/a.yaml"},
		{"rootlink", "rootlink/alias/a.yaml rootlink/real/a.yaml"},
	} {
		diags := &diag.List{}
		var names []string
		for _, d := range source.Read([]string{tc.root}, source.Options{}, diags) {
			names = append(names, filepath.ToSlash(d.File))
		}
		if got := strings.Join(names, " "); got != tc.want {
			t.Errorf("%s: read %q, want %q", tc.root, got, tc.want)
		}
		msgs := diag.Format(diags.Sorted())
		if want := tc.root + "/away: refused: it is a symlink to ../outside (" + filepath.Join(top, "outside") + "), outside the input root " + tc.root; !strings.Contains(msgs, want) {
			t.Errorf("%s: messages lack %q:\n%s", tc.root, want, msgs)
		}
	}
}
