package eligibility_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/fn/compile"
	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/eligibility"
	"github.com/virtc/virtc/fn/source"
)

const intents = `apiVersion: virtc.dev/v1alpha1
kind: Platform
metadata: {name: lab}
spec:
  version: 4.22.2
  dataProtection: {external: true}
---
apiVersion: virtc.dev/v1alpha1
kind: Tenant
metadata: {name: shop}
---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: web, namespace: shop}
spec: {size: u1.small, image: rhel9}
---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: db, namespace: shop}
spec: {size: u1.medium, image: rhel9}
`

func evidence(name, check, covers, date string) string {
	return "---\napiVersion: virtc.dev/v1alpha1\nkind: Evidence\nmetadata: {name: " + name + "}\nspec:\n  check: " + check +
		"\n  covers: {platformVersion: 4.22.2, " + covers + "}\n  date: \"" + date + "\"\n  by: me\n  link: https://example.com/" + name + "\n"
}

// judge compiles the intents with extra Evidence and returns, per VM, the
// verdict of its restore drill (backup policy daily, drill interval 90d).
func judge(t *testing.T, asOf string, extra ...string) map[string]eligibility.Judged {
	t.Helper()
	dir := t.TempDir()
	all := intents + evidence("ceph", "storage-failover", "storageProfile: ceph-rbd", "2026-11-01") + strings.Join(extra, "")
	if err := os.WriteFile(filepath.Join(dir, "in.yaml"), []byte(all), 0o644); err != nil {
		t.Fatal(err)
	}
	diags := &diag.List{}
	opts := compile.Options{}
	if asOf != "" {
		opts.AsOf, _ = time.Parse(time.DateOnly, asOf)
	}
	res := compile.Compile(source.Read([]string{dir}, source.Options{}, diags), opts, diags)
	if diags.HasErrors() {
		t.Fatal(diag.Format(diags.Sorted()))
	}
	out := map[string]eligibility.Judged{}
	ctx := eligibility.ContextOf(res.Model)
	for _, tn := range res.Model.Tenants {
		for _, vm := range tn.VMs {
			for _, j := range eligibility.Accept(vm, eligibility.Classify(vm), ctx).Judged {
				if j.Check == "restore-drill" {
					out[vm.Name] = j
				}
			}
		}
	}
	return out
}

func TestAcceptEvidence(t *testing.T) {
	for _, c := range []struct {
		name  string
		asOf  string
		extra []string
		web   string // the Evidence accepting web's drill, or "why:<part of the reason>"
		db    string
	}{
		{"none", "", nil, "why:no evidence", "why:no evidence"},
		{"newest of two counts", "2026-12-01", []string{
			evidence("old", "restore-drill", "backupPolicy: daily", "2026-10-01"),
			evidence("new", "restore-drill", "backupPolicy: daily", "2026-11-20")}, "new", "new"},
		{"narrowed to a VM", "2026-12-01", []string{evidence("d", "restore-drill", "backupPolicy: daily, vm: shop/db", "2026-11-20")}, "why:no evidence", "d"},
		{"narrowed to a size", "2026-12-01", []string{evidence("s", "restore-drill", "backupPolicy: daily, size: u1.small", "2026-11-20")}, "s", "why:no evidence"},
		{"another check does not count", "2026-12-01", []string{evidence("x", "security-review", "backupPolicy: daily", "2026-11-20")}, "why:no evidence", "why:no evidence"},
		{"expires after the drill interval", "2026-12-01", []string{evidence("e", "restore-drill", "backupPolicy: daily", "2026-09-01")}, "why:counted until 2026-11-30", "why:counted until 2026-11-30"},
		{"last day of the interval still counts", "2026-11-30", []string{evidence("e", "restore-drill", "backupPolicy: daily", "2026-09-01")}, "e", "e"},
		{"dated after the as-of day", "2026-11-01", []string{evidence("f", "restore-drill", "backupPolicy: daily", "2026-11-20")}, "why:after the as-of date", "why:after the as-of date"},
		{"default as-of is the newest evidence date", "", []string{
			evidence("e", "restore-drill", "backupPolicy: daily", "2026-08-01"),
			evidence("late", "security-review", "tenant: shop", "2026-12-01")}, "why:counted until 2026-10-30", "why:counted until 2026-10-30"},
		{"another platform version", "2026-12-01", []string{strings.Replace(evidence("v", "restore-drill", "backupPolicy: daily", "2026-11-20"), "4.22.2", "4.22.1", 1)}, "why:recorded on platform 4.22.1, not 4.22.2", "why:recorded on platform 4.22.1, not 4.22.2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := judge(t, c.asOf, c.extra...)
			for vm, want := range map[string]string{"web": c.web, "db": c.db} {
				j := got[vm]
				if why, ok := strings.CutPrefix(want, "why:"); ok {
					if j.Evidence != "" || !strings.Contains(j.Why, why) {
						t.Errorf("%s: accepted by %q, why %q; want missing because %q", vm, j.Evidence, j.Why, why)
					}
				} else if j.Evidence != want {
					t.Errorf("%s: accepted by %q (why %q), want %q", vm, j.Evidence, j.Why, want)
				}
			}
		})
	}
}
