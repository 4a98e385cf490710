package vap

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// base is golden/guardrails-platform's output with its policies.
func base(t *testing.T) (Base, map[string]*Policy) {
	t.Helper()
	data, err := os.ReadFile("../../../golden/guardrails-platform/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Split(data)
	if err != nil {
		t.Fatal(err)
	}
	policies, err := Policies(objs)
	if err != nil {
		t.Fatal(err)
	}
	return Base{Objects: objs}, policies
}

// check runs a case through its tenant's policy: refused by every rule it
// names, or admitted.
func check(t *testing.T, policies map[string]*Policy, c Case) {
	t.Helper()
	ns := c.Namespace()
	p := policies[ns]
	if p == nil {
		t.Fatalf("no policy for namespace %s", ns)
	}
	denials, err := p.Admit(Request{Object: c.Object, OldObject: c.Old, User: c.As.User, Groups: c.As.Groups}, map[string]string{"virtc.dev/tenant": ns})
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, d := range denials {
		rules = append(rules, d.Rule)
		if !strings.HasPrefix(d.Message, "virtc guardrail "+d.Rule+": ") {
			t.Errorf("message does not name its rule: %s", d.Message)
		}
	}
	if len(c.Refused) == 0 {
		for _, d := range denials {
			t.Errorf("refused, want admitted: %s", d.Message)
		}
		return
	}
	for _, r := range c.Refused {
		if !slices.Contains(rules, r) {
			t.Errorf("not refused by %s (refusals: %v)", r, denials)
		}
	}
}

// TestBypasses: every attempt to write around Git that the API types allow
// is refused by the rule it breaks, and every legitimate write (virtc's
// own, the tenant's within its allowances, the cluster's other writers) is
// admitted, as the API server evaluates the policies.
func TestBypasses(t *testing.T) {
	b, policies := base(t)
	cases := b.Cases()
	refused, admitted := 0, 0
	for _, c := range cases {
		if len(c.Refused) > 0 {
			refused++
		} else {
			admitted++
		}
		t.Run(c.Name, func(t *testing.T) { check(t, policies, c) })
	}
	t.Logf("%d attempts refused, %d legitimate writes admitted", refused, admitted)
	if refused < 50 {
		t.Errorf("%d attempts: fewer than 50", refused)
	}
}

// TestFieldAttempts: every field of KubeVirt's VirtualMachine type outside
// virtc's allow list, on a new VM and as an update of one of Git, is
// refused; kept from what the VM already had, it is admitted (an adopted
// VM keeps what it runs with).
func TestFieldAttempts(t *testing.T) {
	b, policies := base(t)
	web := b.Find("VirtualMachine", "plain", "web01")
	attempts := FieldAttempts(web)
	if len(attempts) < 100 {
		t.Fatalf("%d field attempts, want the VirtualMachine type's fields outside the allow list (more than 100)", len(attempts))
	}
	for _, a := range attempts {
		t.Run(a.Path, func(t *testing.T) {
			created := deepCopy(a.Object)
			created["metadata"] = map[string]any{"name": "probe", "namespace": "plain", "labels": get(web, "metadata.labels")}
			check(t, policies, Case{As: PlainUser, Object: created, Refused: []string{"template-fields"}})
			check(t, policies, Case{As: PlainUser, Object: a.Object, Old: web, Refused: []string{"template-fields"}})
			kept := with(a.Object, "spec.runStrategy", "Halted")
			check(t, policies, Case{As: PlainUser, Object: kept, Old: a.Object})
		})
	}
	t.Logf("%d fields of the VirtualMachine type outside the allow list, each refused when added and admitted when kept", len(attempts))
}
