package placement_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/placement"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/source"
)

func analyze(t *testing.T, yaml string) (*resolve.Model, *placement.Result) {
	t.Helper()
	diags := &diag.List{}
	docs := source.Parse("test.yaml", "test.yaml", []byte(yaml), diags)
	res := compile.Compile(docs, compile.Options{}, diags)
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	return res.Model, placement.Analyze(res.Model)
}

func vm(m *resolve.Model, name string) *resolve.VM {
	for _, t := range m.Tenants {
		for _, v := range t.VMs {
			if v.Name == name {
				return v
			}
		}
	}
	return nil
}

const pools = `
apiVersion: virtc.dev/v1alpha1
kind: WorkerPool
metadata: {name: general}
spec:
  nodeSelector: {a: b}
  nodes: 7
  allocatable: {cpu: "32", memory: 128Gi}
  failureDomain: {level: zone, domains: 3}
---
apiVersion: virtc.dev/v1alpha1
kind: Tenant
metadata: {name: t1, labels: {env: prod}}
spec: {backup: none}
`

// TestPolicyPrecedence follows KubeVirt's matchPolicy (kubevirt v1.8.4
// pkg/virt-controller/watch/migration/migrationpolicy.go): every selector
// label must match; the most matching labels win; on a tie the policy with
// more VMI labels; then the first name in alphabetical order.
func TestPolicyPrecedence(t *testing.T) {
	in := pools + `
---
apiVersion: virtc.dev/v1alpha1
kind: MigrationPolicy
metadata: {name: a-a-tenant}
spec: {allowPostCopy: true, selector: {tenant: t1}}
---
apiVersion: virtc.dev/v1alpha1
kind: MigrationPolicy
metadata: {name: by-pool}
spec: {allowPostCopy: true, selector: {pool: general}}
---
apiVersion: virtc.dev/v1alpha1
kind: MigrationPolicy
metadata: {name: a-by-pool}
spec: {allowPostCopy: true, selector: {pool: general}}
---
apiVersion: virtc.dev/v1alpha1
kind: MigrationPolicy
metadata: {name: big}
spec: {allowPostCopy: true, selector: {tenant: t1, vmLabels: {size: big}}}
---
apiVersion: virtc.dev/v1alpha1
kind: MigrationPolicy
metadata: {name: other-tenant}
spec: {allowPostCopy: true, selector: {tenant: t2, pool: general, vmLabels: {size: big}}}
---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: plain, namespace: t1}
spec: {size: u1.small, image: rhel9}
---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: large, namespace: t1, labels: {size: big}}
spec: {size: u1.small, image: rhel9}
`
	m, r := analyze(t, in)
	// plain: a-a-tenant (1 namespace label; first by name), by-pool and a-by-pool (1 VMI
	// label each) tie on the total; VMI labels win, then the name.
	if got := r.VMs[vm(m, "plain")].Policy; got != "a-by-pool" {
		t.Errorf("plain: policy %q, want a-by-pool", got)
	}
	// large: big matches 2 labels; other-tenant fails on its tenant.
	if got := r.VMs[vm(m, "large")].Policy; got != "big" {
		t.Errorf("large: policy %q, want big", got)
	}
}

// TestEligibleZones counts the nodes left to a VM of a required zone
// spread: seven nodes in three zones are 3, 2 and 2; with one other VM of
// the group in the largest zone, four nodes are left.
func TestEligibleZones(t *testing.T) {
	in := pools + `
---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: a, namespace: t1}
spec: {size: u1.small, image: rhel9, spread: {group: g, across: zone}}
---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: b, namespace: t1}
spec: {size: u1.small, image: rhel9, spread: {group: g, across: zone}}
---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: c, namespace: t1}
spec: {size: u1.small, image: rhel9, spread: {group: h}}
---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: d, namespace: t1}
spec: {size: u1.small, image: rhel9, spread: {group: h}, runStrategy: Halted}
`
	m, r := analyze(t, in)
	for name, want := range map[string]int64{"a": 4, "b": 4, "c": 7, "d": 6} {
		if got := r.VMs[vm(m, name)].Eligible; got != want {
			t.Errorf("%s: %d eligible nodes, want %d (%s)", name, got, want, strings.Join(r.VMs[vm(m, name)].Constraints, "; "))
		}
	}
	p := r.Pools[0]
	if p.Lose != "one zone (3 nodes)" || !p.ReserveOK || !p.DrainOK {
		t.Errorf("pool: lose %q, reserve %v, drain %v %v", p.Lose, p.ReserveOK, p.DrainOK, p.DrainProblems)
	}
	if len(p.VMs) != 3 {
		t.Errorf("pool: %d running VMs, want 3 (d is halted)", len(p.VMs))
	}
}

// TestReserveSpread: N+1 fails when, after losing a node (or the largest
// zone), a required spread group has more running members than hosts (or
// zones) left — the packing finds the one on the lost node no host; the
// drain check counts the same way for its migrations (a migration target must avoid its own
// source's host or zone too, KubeVirt v1.8.4 pkg/virt-controller/watch/
// migration/migration.go createMigrationPodAntiAffinityRule).
func TestReserveSpread(t *testing.T) {
	pool := func(nodes int, fd string) string {
		return `
apiVersion: virtc.dev/v1alpha1
kind: WorkerPool
metadata: {name: p}
spec:
  nodeSelector: {a: b}
  nodes: ` + itoa(nodes) + `
  allocatable: {cpu: "32", memory: 128Gi}
` + fd + `
---
apiVersion: virtc.dev/v1alpha1
kind: Tenant
metadata: {name: t1}
spec: {backup: none}
`
	}
	vms := func(n int, spread string, extra string) string {
		out := ""
		for i := range n {
			out += `
---
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata: {name: v` + itoa(i) + `, namespace: t1}
spec: {size: u1.small, image: rhel9, spread: ` + spread + extra + `}
`
		}
		return out
	}
	zones3 := "  failureDomain: {level: zone, domains: 3}"
	zones1 := "  failureDomain: {level: zone, domains: 1}"
	for _, c := range []struct {
		name    string
		in      string
		reserve bool
		want    string
	}{
		{"2 hosts, 2 members", pool(2, "") + vms(2, "{group: db}", ""), false, "t1/v1 (105m CPU, 2.3Gi; every node with room for it holds a member of its spread group t1/db); no placement of all of them exists"},
		{"3 hosts, 2 members", pool(3, "") + vms(2, "{group: db}", ""), true, ""},
		{"3 zones, 3 members", pool(6, zones3) + vms(3, "{group: db, across: zone}", ""), false, "after losing one zone (2 nodes): 1 of the 3 running VMs finds no room on the 4 nodes: t1/v2 (105m CPU, 2.3Gi; every node with room for it is in a zone holding a member of its spread group t1/db)"},
		{"3 zones, 2 members", pool(6, zones3) + vms(2, "{group: db, across: zone}", ""), true, ""},
		// Losing a zone of 7 nodes in 3 zones takes 3 hosts: 4 are left.
		{"zone loss, 5 host members", pool(7, zones3) + vms(5, "{group: db}", ""), false, "after losing one zone (3 nodes): 1 of the 5 running VMs finds no room on the 4 nodes: t1/v4 (105m CPU, 2.3Gi; every node with room for it holds a member of its spread group t1/db)"},
		{"zone loss, 4 host members", pool(7, zones3) + vms(4, "{group: db}", ""), true, ""},
		// One zone only: N+1 loses a node, the zone stays.
		{"1 zone, 1 member", pool(3, zones1) + vms(1, "{group: db, across: zone}", ""), true, ""},
		{"preferred", pool(2, "") + vms(2, "{group: db, mode: preferred}", ""), true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, r := analyze(t, c.in)
			p := r.Pools[0]
			if p.ReserveOK != c.reserve {
				t.Fatalf("N+1 %v, want %v: %q", p.ReserveOK, c.reserve, p.ReserveProblems)
			}
			if c.want != "" && !strings.Contains(strings.Join(p.ReserveProblems, "; "), c.want) {
				t.Errorf("problems %q, want %q", p.ReserveProblems, c.want)
			}
			// One mechanism: the drain of one node is blocked by the same
			// host spreads that break a single-node N+1.
			if c.name == "2 hosts, 2 members" && p.DrainOK {
				t.Errorf("drain OK, want blocked by the spread group")
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
