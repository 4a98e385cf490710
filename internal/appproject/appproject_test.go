package appproject

import (
	"encoding/json"
	"os"
	"testing"
)

// TestPermitsAsArgoCD: Project.PermitsNamespaced answers the table whose
// answers are Argo CD's own (test/argocdproject runs argo-cd v3.6.1's
// AppProject.IsGroupKindNamePermitted on it): absent and empty whitelists,
// exact entries, globs on kind and group, blacklists, a bad pattern.
func TestPermitsAsArgoCD(t *testing.T) {
	data, err := os.ReadFile("testdata/permits.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Project   string      `json:"project"`
		Whitelist []GroupKind `json:"whitelist"`
		Blacklist []GroupKind `json:"blacklist"`
		Group     string      `json:"group"`
		Kind      string      `json:"kind"`
		Permitted bool        `json:"permitted"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	permitted := 0
	for _, c := range cases {
		p := Project{NamespaceResourceWhitelist: c.Whitelist, NamespaceResourceBlacklist: c.Blacklist}
		if got := p.PermitsNamespaced(c.Group, c.Kind); got != c.Permitted {
			t.Errorf("project %q, %s %q: permits %v, Argo CD %v", c.Project, c.Kind, c.Group, got, c.Permitted)
		}
		if c.Permitted {
			permitted++
		}
	}
	// The table is not all one answer.
	if permitted == 0 || permitted == len(cases) {
		t.Errorf("%d of %d cases permitted", permitted, len(cases))
	}
}
