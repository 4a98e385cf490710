package placement_test

import (
	"strings"
	"testing"

	"github.com/virtc/virtc/fn/compile"
	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/placement"
	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/source"
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
