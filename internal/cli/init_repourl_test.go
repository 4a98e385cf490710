package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// init refuses a --repo-url that is not a Git URL Argo CD clones from,
// and writes nothing: a line break in it would add fields to the
// ApplicationSet.
func TestInitRefusesRepoURLThatIsNot(t *testing.T) {
	for _, u := range []string{"https://x\n  evil: true", "https://git.example.com/platform/virtual machines.git", "git.example.com:platform"} {
		dir := filepath.Join(t.TempDir(), "repo")
		code, out, errOut := run("init", "--repo-url", u, dir)
		if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "virtc init: --repo-url ") || !strings.Contains(errOut, "want") {
			t.Errorf("init --repo-url %q: exit %d, stdout %q, stderr %q; want exit %d and what a URL is", u, code, out, errOut, ExitUsage)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("init --repo-url %q wrote %s", u, dir)
		}
	}
	for _, u := range []string{"https://git.example.com/platform/vms.git", "git@git.example.com:platform/vms.git"} {
		dir := filepath.Join(t.TempDir(), "repo")
		if code, _, errOut := run("init", "--repo-url", u, dir); code != ExitOK {
			t.Errorf("init --repo-url %q: exit %d: %s", u, code, errOut)
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "argocd", "applicationset.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "repoURL: "+u+"\n") {
			t.Errorf("init --repo-url %q: the ApplicationSet has no repoURL: %s\n%s", u, u, data)
		}
	}
}
