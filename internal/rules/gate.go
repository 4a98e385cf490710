package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/resolve"
)

// EnvironmentLab is the Tenant spec.environment of a tenant that is not
// onboarded.
const EnvironmentLab = "lab"

// gate is the eligibility gate (design document 000, "Workload
// eligibility matrix": "Required evidence before onboarding"; "Acceptance
// evidence"). A VM in a conditional row of the matrix needs accepted
// evidence for every row it is in, in every tier: the rows' boundaries
// ("not enabled by default", "no migration commitment until evidence is
// accepted", "not automatically offered") hold before onboarding, not only
// in production. A production VM needs the evidence of its profiles and
// backup policy as well ("protection selection and restore evidence are
// mandatory before production onboarding", 000 Applicable Principles).
// Evidence counts only on the platform's exact version: without a
// Platform or its PlatformFacts in the build, a VM that needs the gate is
// refused rather than let through. A tenant in the lab environment relaxes
// the conditional rows, visibly (a warning per VM), never in production.
// A VM in the non-x86 row is refused here; the other excluded rows are
// refused by excluded (internal/rules/baseline.go).
func gate(vm *resolve.VM, ctx eligibility.Context, opts Options, diags *diag.List) {
	refuse := diags.Errorf
	if opts.GateWarns {
		refuse = diags.Warnf
	}
	v := gateVerdict(vm, ctx)
	if !v.needed {
		return
	}
	cond, production := v.cond, v.production
	var names []string
	for _, m := range cond {
		names = append(names, m.Class.Name)
	}
	field, doc := "spec.tier", vm.Doc
	if len(cond) > 0 {
		field = cond[0].Reasons[0].Field
	} else if vm.Spec.Tier == "" {
		doc = vm.Tenant.Doc
	}
	pos := doc.Pos(field)
	what := fmt.Sprintf("VM %s/%s is production tier", vm.Namespace, vm.Name)
	if len(cond) > 0 {
		classes := "class"
		if len(names) > 1 {
			classes = "classes"
		}
		what = fmt.Sprintf("VM %s/%s is in the conditional %s %s (%s), whose evidence is required before onboarding in every tier", vm.Namespace, vm.Name,
			classes, strings.Join(names, ", "), strings.Join(reasons(cond), "; "))
	}
	if v.lab {
		diags.Warnf(pos, field, "%s: it compiles without that evidence only because tenant %q is in the lab environment (spec.environment: lab): it is not onboarded and has no availability commitment", what, vm.Namespace)
		return
	}
	// The guardrail whose cluster twin refuses the same VM: the rule of
	// the value the first missing evidence is about (gateRule).
	refuseBy := func(rule string) func(diag.Pos, string, string, ...any) {
		if rule == "" || opts.GateWarns {
			return refuse
		}
		return diags.RuleFor(rule, vm.Namespace+"/"+vm.Name).Errorf
	}
	if v.noFacts {
		rule := gateRule(cond, v.missing)
		if rule == "" && production {
			// Without the platform's version no profile's evidence counts:
			// the cluster refuses a production VM's storage classes.
			rule = "storage-class"
		}
		refuseBy(rule)(pos, field, "%s, but the build has no Platform and no PlatformFacts, and evidence counts only on the platform's exact version: add the platform repository's published facts (virtc facts, a PlatformFacts document) to the inputs", what)
		return
	}
	if len(v.missing) == 0 {
		return
	}
	var missing []string
	for _, j := range v.missing {
		missing = append(missing, j.Missing())
	}
	hint := "record an Evidence for each check"
	switch {
	case production && len(cond) == 0 && vm.Tenant.Spec.Tier != resolve.TierProduction:
		hint += ", or use tier standard"
	case !production:
		hint += ", or, while the tenant is not onboarded, set its spec.environment: lab"
	}
	rule := gateRule(cond, v.missing)
	if len(cond) == 0 {
		refuseBy(rule)(pos, field, "%s but its class %s lacks accepted evidence on platform %s: %s (%s)", what, v.class, ctx.PlatformVersion, strings.Join(missing, "; "), hint)
		return
	}
	refuseBy(rule)(pos, field, "%s, and lacks accepted evidence on platform %s: %s (%s)", what, ctx.PlatformVersion, strings.Join(missing, "; "), hint)
}

// verdict is the eligibility gate's verdict on a VM.
type verdict struct {
	// needed: the VM is in a conditional class, or production tier.
	needed bool
	// lab: a lab tenant's VM, whose conditional classes are relaxed.
	lab bool
	// noFacts: the build has no platform version, so no evidence counts.
	noFacts    bool
	cond       []eligibility.Match
	production bool
	class      string
	// missing are the requirements without evidence that counts.
	missing []eligibility.Judged
}

// gateVerdict is the gate's verdict on a VM (a VM of Git, or a hypothetical
// one, judge.hypothetical): what it lacks.
func gateVerdict(vm *resolve.VM, ctx eligibility.Context) verdict {
	// A VM in the non-x86 row is refused by the architecture guardrail.
	r := eligibility.Classify(vm)
	if slices.ContainsFunc(r.Rows, func(m eligibility.Match) bool {
		return m.Class.Status == eligibility.Excluded && len(m.Class.Evidence) == 0
	}) {
		// Nothing lifts the row: excluded refuses the VM.
		return verdict{}
	}
	v := verdict{cond: r.Conditional(), class: r.Class.Name}
	v.production = vm.Tier == resolve.TierProduction && !vm.Doc.Shadows("spec.tier")
	if len(v.cond) == 0 && !v.production {
		return v
	}
	v.needed = true
	if len(v.cond) > 0 && !v.production && vm.Tenant.Spec.Environment == EnvironmentLab {
		v.lab = true
		return v
	}
	// Without the platform's version no evidence counts: every check the
	// VM needs is missing (eligibility judges none).
	v.noFacts = ctx.PlatformVersion == ""
	a := eligibility.Accept(vm, r, ctx)
	if a.Status != eligibility.Pending {
		// Accepted; or refused for a missing assessment of an excluded
		// row, which the guardrails of devices, sizes and SR-IOV refuse.
		return v
	}
	for _, j := range a.Missing() {
		if !v.production && j.Row == "" {
			// Profiles' and backup policies' checks gate production only.
			continue
		}
		if slices.ContainsFunc(r.Rows, func(m eligibility.Match) bool { return m.Class.Name == j.Row && m.Class.Status == eligibility.Excluded }) {
			// A missing assessment of an excluded row is refused by the
			// guardrail of the excluded value.
			continue
		}
		v.missing = append(v.missing, j)
	}
	return v
}

// gateRule is the guardrail whose cluster twin refuses what the gate
// refuses: the rule of the value the first conditional class or missing
// requirement is about (additional networks: networks; unqualified
// storage: storage-class; migration Required: eviction; a backup
// policy's restore drill: backup). Empty for the worker-virtualization
// class, which nothing in a VirtualMachine shows.
func gateRule(cond []eligibility.Match, missing []eligibility.Judged) string {
	if len(missing) == 0 {
		// No evidence counts at all (no platform version): the first
		// class's value.
		for _, m := range cond {
			if r := classRules[m.Class.Name]; r != "" {
				return r
			}
		}
		return ""
	}
	for _, j := range missing {
		switch {
		case j.Row != "":
			if r := classRules[j.Row]; r != "" {
				return r
			}
		case j.StorageProfile != "":
			return "storage-class"
		case len(j.NetworkProfiles) > 0:
			return "networks"
		case j.BackupPolicy != "":
			return "backup"
		}
	}
	return ""
}

// accepted reports whether the gate accepts what about tests in a VM's
// verdict: no evidence it needs is missing about it.
func accepted(v verdict, about func(eligibility.Requirement) bool) bool {
	if !v.needed || v.lab {
		return true
	}
	return !slices.ContainsFunc(v.missing, func(j eligibility.Judged) bool { return about(j.Requirement) })
}

// storageAccepted reports whether the gate accepts a storage profile for
// a VM of the tenant of a tier: as its root disk's (the default profile)
// or a data disk's.
func (j *judge) storageAccepted(t *resolve.Tenant, tier, name string, p *api.StorageProfile, root bool) bool {
	if tier == resolve.TierProduction && p.Spec.Draft {
		return false // draftProfiles
	}
	vm := j.hypothetical(t, func(vm *resolve.VM) {
		vm.Tier = tier
		if !root {
			vm.Disks = []resolve.Disk{{Disk: api.Disk{Name: "data", Storage: name}, Field: "spec.disks[0]", Storage: resolve.Storage{Name: name, StorageProfile: p}}}
		}
	})
	return accepted(gateVerdict(vm, j.ctx), func(q eligibility.Requirement) bool { return q.StorageProfile == name })
}

// networkAccepted reports whether the gate accepts a network profile for a
// VM of the tenant of a tier.
func (j *judge) networkAccepted(t *resolve.Tenant, tier, name string, p *api.NetworkProfile) bool {
	if tier == resolve.TierProduction && p.Spec.Draft {
		return false // draftProfiles
	}
	vm := j.hypothetical(t, func(vm *resolve.VM) {
		vm.Tier = tier
		vm.Networks = []resolve.Network{{Name: name, NetworkProfile: p, Field: "spec.networks[0]"}}
	})
	return accepted(gateVerdict(vm, j.ctx), func(q eligibility.Requirement) bool { return slices.Contains(q.NetworkProfiles, name) })
}

// liveMigrationAccepted reports whether the gate accepts the live-migration
// class (migration Required) for a VM.
func (j *judge) liveMigrationAccepted(vm *resolve.VM) bool {
	return accepted(gateVerdict(vm, j.ctx), func(q eligibility.Requirement) bool { return q.Row == "live-migration" })
}

// classRules are the guardrails that hold a conditional class's evidence
// in the cluster.
var classRules = map[string]string{
	"additional-network":  "networks",
	"unqualified-storage": "storage-class",
	"live-migration":      "eviction",
}

func reasons(rows []eligibility.Match) []string {
	var out []string
	for _, m := range rows {
		for _, r := range m.Reasons {
			out = append(out, r.Text)
		}
	}
	return out
}

// labTenant refuses a production tenant in the lab environment, and
// warns about every lab tenant on every build, so that the relaxed gate is
// never silent.
func labTenant(t *resolve.Tenant, diags *diag.List) {
	if t.Spec.Environment != EnvironmentLab {
		return
	}
	if t.Spec.Tier == resolve.TierProduction {
		diags.Errorf(t.Doc.Pos("spec.environment"), "spec.environment", "tenant %q is production tier and cannot be in the lab environment (remove spec.environment, or give the tenant tier standard)", t.Name)
		return
	}
	diags.Warnf(t.Doc.Pos("spec.environment"), "spec.environment", "tenant %q is in the lab environment: its VMs in conditional classes of the eligibility matrix compile without evidence; it is not onboarded, and none of its VMs may be production tier", t.Name)
}

// tierOwnership refuses a VM that lowers its tenant's tier: the tenant
// (the platform team) owns it (design document 000, "Authorization and
// lifecycle boundaries": tenant teams operate approved VMs, they do not set
// the platform's commitments; "Availability, maintenance, and remediation
// contract": a workload is eligible for a stated tier only after its
// evidence). With the tier held, a production tenant's VM cannot drop its
// backups either: productionBackup refuses a production VM whose policy
// takes none. A standard tenant's VM may choose a policy without backups:
// no commitment is lowered.
func tierOwnership(vm *resolve.VM, diags *diag.List) {
	t := vm.Tenant
	if vm.Spec.Tier == resolve.TierStandard && t.Spec.Tier == resolve.TierProduction {
		diags.Errorf(vm.Doc.Pos("spec.tier"), "spec.tier", "tier standard is lower than tenant %q's tier production: a VM cannot lower its tenant's tier (remove spec.tier; the tenant's tier is the platform team's to change)", t.Name)
	}
	if vm.Spec.Tier == resolve.TierProduction && t.Spec.Environment == EnvironmentLab {
		diags.Errorf(vm.Doc.Pos("spec.tier"), "spec.tier", "tenant %q is in the lab environment (not onboarded): none of its VMs may be production tier (onboard the tenant first: remove its spec.environment and record the evidence)", t.Name)
	}
}
