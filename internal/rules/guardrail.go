package rules

import (
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/resolve"
)

// A Guardrail is one rule of a tenant's boundary with its two enforcers
// side by side: the compile's check (Intent, Output) refuses it in Git with
// the file, line and field; the cluster's CEL (Expression, Message) refuses
// it in the tenant's namespace, in the ValidatingAdmissionPolicy virtc
// writes for the tenant (PolicySpec), to a user who writes around Git. Both
// read the tenant's Allowances: what a tenant may use is decided once
// (decide.go), and each enforcer tests an object's or an intent's values
// against that decision. A rule that has only one enforcer is refused by
// TestGuardrailsHaveBothEnforcers.
type Guardrail struct {
	// Name names the rule in its messages (virtc guardrail <name>), in
	// virtc report and in a diagnostic's Rule.
	Name string
	// What says what it refuses, for people (virtc report, the policy's
	// static message, docs/guardrails.md).
	What string
	// Source is the design document section it holds (../shared/seeds),
	// or the upstream behaviour it closes.
	Source string
	// Resources are what it judges in the cluster, as group/resource
	// ("" group: core), each also matched by the policy (guardedResources).
	Resources []string
	// Reads are the fields of those objects the CEL reads, each with the
	// intent field the compile reads for the same value ("" when no intent
	// can express the field: virtc never writes it, and the compile's
	// Output check holds that).
	Reads []Read
	// Expression is true for an object the rule admits; Message is the
	// CEL of its refusal message (the values that matter).
	Expression, Message string
	// Changes: the rule judges what a write adds or changes of the fields
	// it Reads, so that an update that keeps them passes (a VM another
	// writer created, MTV's or an adopted one, stays operable; what a
	// catalog change would now refuse stays as it runs until Git changes
	// it). Without it an update is judged whole.
	Changes bool
	// Intent checks a VM of Git at compile time (nil: no intent can ask
	// for what the rule refuses).
	Intent func(c *VMCheck)
	// Output checks an object the compile writes into a tenant's
	// namespace: the compile never writes what its own policy refuses.
	Output func(c *ObjectCheck)
}

// Read is a field the rule reads: the object's path (lists as [*]) and the
// intent field the compile reads for the same value.
type Read struct {
	Object string
	Intent string
}

// VMCheck is a Guardrail's compile-time check of one VM.
type VMCheck struct {
	j  *judge
	VM *resolve.VM
	// A are the VM's tenant's allowances.
	A     *Allowances
	diags *diag.List
}

// refuse reports refusals of the VM (or of its tenant's document).
func (c *VMCheck) refuse(rs []refusal) {
	for _, r := range rs {
		doc := c.VM.Doc
		if r.Tenant {
			doc = c.VM.Tenant.Doc
		}
		c.diags.Errorf(doc.Pos(r.Field), r.Field, "%s", r.Message)
	}
}

// ObjectCheck is a Guardrail's check of one object the compile writes into
// a tenant's namespace.
type ObjectCheck struct {
	Object emit.Object
	Tenant *resolve.Tenant
	A      *Allowances
	// VM is the model's VM the object belongs to (nil: a tenant's own).
	VM    *resolve.VM
	diags *diag.List
}

// refuse reports that the compile's own output breaks the rule: at the
// VM's document, else the tenant's.
func (c *ObjectCheck) refuse(format string, args ...any) {
	doc := c.Tenant.Doc
	if c.VM != nil {
		doc = c.VM.Doc
	}
	c.diags.Errorf(doc.Pos(""), "", "%s %s/%s: "+format, append([]any{c.Object.Kind, c.Object.Namespace, c.Object.Name}, args...)...)
}

// Guardrail returns the rule of that name.
func Lookup(name string) (Guardrail, bool) {
	for _, g := range Guardrails {
		if g.Name == name {
			return g, true
		}
	}
	return Guardrail{}, false
}

// checkIntents runs every Guardrail's Intent check on every VM.
func checkIntents(m *resolve.Model, j *judge, diags *diag.List) {
	for _, t := range m.Tenants {
		var a *Allowances
		for _, vm := range t.VMs {
			if a == nil {
				al := TenantAllowances(m, t)
				a = &al
			}
			for _, g := range Guardrails {
				if g.Intent != nil {
					g.Intent(&VMCheck{j: j, VM: vm, A: a, diags: diags.RuleFor(g.Name, vm.Namespace+"/"+vm.Name)})
				}
			}
		}
	}
}

// Output checks the objects the compile writes for one group of render
// (render.Groups: the platform's, or a tenant's) against the Guardrails'
// Output checks, and reports what breaks them into diags. The compile
// writes nothing that its own policy refuses.
type Output struct {
	m       *resolve.Model
	tenants map[string]*resolve.Tenant
	vms     map[string]*resolve.VM
}

// NewOutput prepares the checks of a model's output.
func NewOutput(m *resolve.Model) *Output {
	o := &Output{m: m, tenants: map[string]*resolve.Tenant{}, vms: map[string]*resolve.VM{}}
	for _, t := range m.Tenants {
		o.tenants[t.Name] = t
		for _, vm := range t.VMs {
			o.vms[t.Name+"/"+vm.Name] = vm
		}
	}
	return o
}

// Check checks objects; safe to call from several goroutines for
// different groups, each with its own diags.
func (o *Output) Check(objs []emit.Object, diags *diag.List) {
	if o == nil {
		return
	}
	var a *Allowances
	var tenant *resolve.Tenant
	for _, obj := range objs {
		t := o.tenants[obj.Namespace]
		if t == nil {
			continue
		}
		if t != tenant {
			al := TenantAllowances(o.m, t)
			a, tenant = &al, t
		}
		vm := o.vms[obj.Namespace+"/"+vmOf(obj)]
		for _, g := range Guardrails {
			if g.Output != nil {
				subject := ""
				if vm != nil {
					subject = vm.Namespace + "/" + vm.Name
				}
				g.Output(&ObjectCheck{Object: obj, Tenant: t, A: a, VM: vm, diags: diags.RuleFor(g.Name, subject)})
			}
		}
	}
}
