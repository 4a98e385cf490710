package argocd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWithoutStep: the broken drills' scripts lose the whole step they
// cut, its heading of several lines and its commands, and nothing else.
func TestWithoutStep(t *testing.T) {
	for _, c := range []struct {
		golden, heading string
		gone            []string // lines of the step, gone from the script
		kept            []string // the steps around it, kept
	}{
		{"restore-in-place", "## Keep Argo CD",
			[]string{`{"spec":{"syncPolicy":{"automated":{"enabled":false}}}}`, "## Keep Argo CD"},
			[]string{"## Delete the VMs", "## Restore.", "## Hand the VMs back"}},
		{"restore-other-cluster", "## 3b. Argo CD tracking",
			[]string{"argocd.argoproj.io/tracking-id=", "INSTALLATION_ID=", "## argocd.argoproj.io/tracking-id"},
			[]string{"## Restore.", "restore-shop-daily", "## 4. Guest consistency", "## 5. Network identity"}},
	} {
		data, err := os.ReadFile(filepath.Join(repoRoot, "golden", c.golden, "expected.txt"))
		if err != nil {
			t.Fatal(err)
		}
		script := string(data)
		cut, ok := withoutStep(script, c.heading)
		if !ok {
			t.Errorf("%s: no step %q", c.golden, c.heading)
			continue
		}
		for _, g := range c.gone {
			if !strings.Contains(script, g) {
				t.Errorf("%s has no %q", c.golden, g)
			}
			if strings.Contains(cut, g) {
				t.Errorf("%s without %q still has %q", c.golden, c.heading, g)
			}
		}
		for _, k := range c.kept {
			if !strings.Contains(cut, k) {
				t.Errorf("%s without %q lost %q", c.golden, c.heading, k)
			}
		}
	}
	if _, ok := withoutStep("## Only\necho\n", "## Only"); ok {
		t.Error("a last step (no step after it) was cut")
	}
}
