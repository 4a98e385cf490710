package argocd

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var updatePermits = flag.Bool("update-permits", false, "rewrite internal/appproject/testdata/permits.json with Argo CD's answers")

// permitsTable is the table of AppProjects and kinds that virtc's check
// of the tenants' projects (internal/appproject) is tested against.
const permitsTable = "../../internal/appproject/testdata/permits.json"

// TestArgoCDPermits runs Argo CD's own AppProject code (argo-cd v3.6.1
// AppProject.IsGroupKindNamePermitted, in argocd-permits, which
// tools/build.sh builds beside Argo CD) on the table and requires the
// table's answers to be Argo CD's: internal/appproject's test then holds
// virtc's check to them. No control plane: make e2e-argocd runs it.
func TestArgoCDPermits(t *testing.T) {
	if os.Getenv(GateEnv) != "1" {
		t.Skipf("needs Argo CD's tools; run `make e2e-argocd` (or set %s=1)", GateEnv)
	}
	bin := filepath.Join(argocdDir(t, "argocd-permits"), "argocd-permits")
	table, err := os.ReadFile(permitsTable)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(table)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	answered, err := cmd.Output()
	if err != nil {
		t.Fatalf("argocd-permits: %v\n%s", err, stderr.String())
	}
	type row struct {
		Project   string `json:"project"`
		Group     string `json:"group"`
		Kind      string `json:"kind"`
		Permitted bool   `json:"permitted"`
	}
	var want, got []row
	if err := json.Unmarshal(table, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(answered, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("argocd-permits answered %d rows of %d", len(got), len(want))
	}
	if *updatePermits {
		if err := os.WriteFile(permitsTable, answered, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("project %q, %s %q: Argo CD permits %v, the table says %v (-update-permits rewrites it)", want[i].Project, want[i].Kind, want[i].Group, got[i].Permitted, want[i].Permitted)
		}
	}
}
