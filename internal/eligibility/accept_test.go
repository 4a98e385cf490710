package eligibility_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/source"
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
	for _, d := range diags.Sorted() {
		// Evidence dated after the as-of day is also refused by the build
		// (golden err-evidence-future); here it is judged.
		if d.Severity == diag.Error && d.Field != "spec.date" {
			t.Fatal(diag.Format(diags.Sorted()))
		}
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
		{"another tenant's later evidence does not move the date", "", []string{
			evidence("e", "restore-drill", "backupPolicy: daily", "2026-09-15"),
			evidence("other", "security-review", "tenant: other", "2026-12-20"),
			evidence("other-vm", "migration-test", "vm: other/x", "2026-12-21")}, "e", "e"},
		{"platform-wide evidence about a profile no VM of the tenant uses does not move the date", "", []string{
			evidence("e", "restore-drill", "backupPolicy: daily", "2026-09-15"),
			evidence("weekly", "restore-drill", "backupPolicy: weekly", "2026-12-20")}, "e", "e"},
		{"platform-wide evidence about a profile the tenant uses moves it", "", []string{
			evidence("e", "restore-drill", "backupPolicy: daily", "2026-09-15"),
			evidence("ceph-later", "storage-failover", "storageProfile: ceph-rbd", "2026-12-20")}, "why:counted until 2026-12-14", "why:counted until 2026-12-14"},
		{"the tenant's own later evidence moves it", "", []string{
			evidence("e", "restore-drill", "backupPolicy: daily", "2026-09-15"),
			evidence("mine", "security-review", "tenant: shop", "2026-12-20")}, "why:counted until 2026-12-14", "why:counted until 2026-12-14"},
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

// model compiles intents and returns the model and its evidence context,
// whatever the diagnostics (a VM refused for a missing assessment is still
// resolved).
func model(t *testing.T, all string) (compile.Result, eligibility.Context) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.yaml"), []byte(all), 0o644); err != nil {
		t.Fatal(err)
	}
	diags := &diag.List{}
	res := compile.Compile(source.Read([]string{dir}, source.Options{}, diags), compile.Options{}, diags)
	if res.Model == nil {
		t.Fatal(diag.Format(diags.Sorted()))
	}
	return res, eligibility.ContextOf(res.Model)
}

// The hardware-passthrough class is excluded until every feature the VM
// uses has an architecture assessment (doc 000, workload eligibility
// matrix); then it is judged on its other checks as a conditional class.
func TestExcludedNeedsAssessment(t *testing.T) {
	base := strings.Replace(intents, "dataProtection: {external: true}", "dataProtection: {external: true}\n  enable: [dedicatedCPU, hugepages]", 1) + `---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: dpdk, namespace: shop}
spec: {size: cx1.large, image: rhel9, migration: Never}
`
	assess := func(feature string) string {
		return evidence("assess-"+strings.ToLower(feature), "architecture-assessment", "class: hardware-passthrough, feature: "+feature, "2026-11-01")
	}
	// The storage profile's and backup policy's checks.
	drill := evidence("drill", "restore-drill", "backupPolicy: daily", "2026-11-20") + evidence("ceph", "storage-failover", "storageProfile: ceph-rbd", "2026-11-01")
	for _, c := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"no assessment", nil, eligibility.Refused},
		{"one of two features assessed", []string{assess("hugepages"), drill}, eligibility.Refused},
		{"another class's evidence does not count", []string{strings.Replace(assess("hugepages"), "hardware-passthrough", "standard", 1), assess("dedicatedCPU"), drill}, eligibility.Refused},
		{"assessed, restore drill missing", []string{assess("hugepages"), assess("dedicatedCPU")}, eligibility.Pending},
		{"assessed and drilled", []string{assess("hugepages"), assess("dedicatedCPU"), drill}, eligibility.Accepted},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, ctx := model(t, base+strings.Join(c.extra, ""))
			for _, tn := range res.Model.Tenants {
				for _, vm := range tn.VMs {
					if vm.Name != "dpdk" {
						continue
					}
					r := eligibility.Classify(vm)
					if r.Class.Name != "hardware-passthrough" {
						t.Fatalf("class %s", r.Class.Name)
					}
					if got := eligibility.Accept(vm, r, ctx).Status; got != c.want {
						t.Errorf("status %s, want %s", got, c.want)
					}
				}
			}
		})
	}
}

// A preview gate's support review counts only for the gate, on the exact
// version, and not narrowed (a gate is cluster-wide).
func TestJudgeGate(t *testing.T) {
	review := func(name, covers string) string {
		return evidence(name, "support-review", "class: confidential-or-tech-preview, "+covers, "2026-11-01")
	}
	for _, c := range []struct {
		name, extra, want string // want: the accepting Evidence, or "why:…"
	}{
		{"none", "", "why:no evidence"},
		{"counts", review("r", "feature: videoConfig"), "r"},
		{"another gate", review("r", "feature: objectGraph"), "why:no evidence"},
		{"narrowed to a tenant", review("r", "feature: videoConfig, tenant: shop"), "why:narrowed to a tenant"},
		{"another version", strings.Replace(review("r", "feature: videoConfig"), "4.22.2", "4.22.1", 1), "why:recorded on platform 4.22.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ctx := model(t, intents+c.extra)
			j := eligibility.JudgeGate("videoConfig", ctx)
			if why, ok := strings.CutPrefix(c.want, "why:"); ok {
				if j.Evidence != "" || !strings.Contains(j.Why, why) {
					t.Errorf("accepted by %q, why %q; want missing because %q", j.Evidence, j.Why, why)
				}
			} else if j.Evidence != c.want {
				t.Errorf("accepted by %q (why %q), want %q", j.Evidence, j.Why, c.want)
			}
		})
	}
}

// TestMultiRow: a VM in several rows needs every row's checks, and an
// Evidence narrowed to a class counts for a VM in that class even when it
// is not the VM's most restrictive one.
func TestMultiRow(t *testing.T) {
	dir := t.TempDir()
	in := `apiVersion: virtc.dev/v1alpha1
kind: PlatformFacts
metadata: {name: lab}
spec: {version: 4.22.2}
---
apiVersion: virtc.dev/v1alpha1
kind: NetworkProfile
metadata: {name: vlan7}
spec: {type: bridge, migratable: true, bridge: {name: br1, vlan: 7}}
---
apiVersion: virtc.dev/v1alpha1
kind: Tenant
metadata: {name: ops}
spec: {environment: lab, allow: {networks: [default, vlan7]}}
---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: node, namespace: ops}
spec: {size: u1.small, image: rhel9, workerNode: true, migration: Required, networks: [default, vlan7]}
` + evidence("mig", "migration-test", "storageProfile: ceph-rbd, networkProfiles: [default, vlan7], class: additional-network", "2026-11-20")
	if err := os.WriteFile(filepath.Join(dir, "in.yaml"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	diags := &diag.List{}
	res := compile.Compile(source.Read([]string{dir}, source.Options{}, diags), compile.Options{}, diags)
	if diags.HasErrors() {
		t.Fatal(diag.Format(diags.Sorted()))
	}
	vm := res.Model.Tenants[0].VMs[0]
	r := eligibility.Classify(vm)
	if got, want := strings.Join(r.Names(), ","), "worker-virtualization,live-migration,additional-network"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if r.Class.Name != "worker-virtualization" {
		t.Errorf("label class %s, want the most restrictive row", r.Class.Name)
	}
	rows := map[string]bool{}
	for _, q := range r.Requirements {
		rows[q.Row] = true
	}
	for _, want := range []string{"worker-virtualization", "live-migration", "additional-network"} {
		if !rows[want] {
			t.Errorf("no requirement of row %s: %+v", want, r.Requirements)
		}
	}
	a := eligibility.Accept(vm, r, eligibility.ContextOf(res.Model))
	for _, j := range a.Judged {
		if j.Check == "migration-test" && j.Evidence != "mig" {
			t.Errorf("migration test: accepted by %q (%s), want mig (narrowed to additional-network, one of the VM's rows)", j.Evidence, j.Why)
		}
	}
	if a.Status != eligibility.Pending {
		t.Errorf("status %s, want %s: the other rows' checks have no evidence", a.Status, eligibility.Pending)
	}
}

// ContextOf computes each tenant's as-of day once; a VM judged beside its
// tenant's that uses something they do not (a write the guardrails ask
// about) is still judged as of the Evidence about what it uses, as
// AsOfTenant gives it, and the same as in a Context without that memo.
func TestTenantAsOfOnce(t *testing.T) {
	res, ctx := model(t, intents+
		evidence("e", "restore-drill", "backupPolicy: daily", "2026-09-15")+
		evidence("weekly", "restore-drill", "backupPolicy: weekly", "2026-12-20"))
	plain := eligibility.Context{Evidence: ctx.Evidence, PlatformVersion: ctx.PlatformVersion}
	web := *res.Model.Tenants[0].VMs[0]
	weekly := web
	weekly.Backup.Name = "weekly"
	for _, c := range []struct {
		vm   *resolve.VM
		want string
	}{{&web, "2026-09-15"}, {&weekly, "2026-12-20"}} {
		if got := eligibility.AsOfTenant(ctx.Evidence, c.vm.Tenant, c.vm).Format(time.DateOnly); got != c.want {
			t.Errorf("%s with policy %s: AsOfTenant %s, want %s", c.vm.Name, c.vm.Backup.Name, got, c.want)
		}
		memo := eligibility.Accept(c.vm, eligibility.Classify(c.vm), ctx)
		fresh := eligibility.Accept(c.vm, eligibility.Classify(c.vm), plain)
		if fmt.Sprint(memo) != fmt.Sprint(fresh) {
			t.Errorf("%s with policy %s: judged\n%v\nwith ContextOf, and\n%v\nwithout its memo", c.vm.Name, c.vm.Backup.Name, memo, fresh)
		}
	}
}
