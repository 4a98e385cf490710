package policy

import (
	"fmt"
	"strings"

	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/eligibility"
	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/versions"
)

// productionVMs are the build's production VMs, in tenant and name order
// (a VM whose tier has a structural error is left out: that is reported
// there).
func productionVMs(m *resolve.Model) []*resolve.VM {
	var out []*resolve.VM
	for _, t := range m.Tenants {
		for _, vm := range t.VMs {
			if vm.Tier == resolve.TierProduction && !vm.Doc.Shadows("spec.tier") {
				out = append(out, vm)
			}
		}
	}
	return out
}

// productionTarget refuses production VMs on a Platform whose release is
// not the product baseline, unless the Platform says it is on its way
// there (spec.upgradingTo). Doc 000, Summary: "The product baseline is
// publicly released OpenShift Virtualization 4.22"; 4.20 and 4.21 are
// releases OLM upgrades through (versions.yaml upgradesFrom), not a place
// for production to stay. Each tenant or VM whose spec.tier makes VMs
// production is reported once.
func productionTarget(m *resolve.Model, diags *diag.List) {
	p := m.Platform
	if p == nil || p.Release.Baseline || p.Obj.Spec.UpgradingTo != "" {
		return
	}
	base, _ := versions.BaselineRelease()
	seen := map[diag.Pos]bool{}
	for _, vm := range productionVMs(m) {
		doc := vm.Doc
		if vm.Spec.Tier == "" {
			doc = vm.Tenant.Doc
		}
		pos := doc.Pos("spec.tier")
		if seen[pos] {
			continue
		}
		seen[pos] = true
		diags.Errorf(pos, "spec.tier", "VM %s/%s is production tier but platform %q is on %s, a release on the upgrade path to the %s baseline, not a production target (upgrade the Platform to %s, name the baseline version it is on its way to in its spec.upgradingTo, or use tier standard)",
			vm.Namespace, vm.Name, p.Name, p.Version, base.Minor, base.Supported())
	}
}

// compatibilityGate refuses a Platform on the baseline release that runs
// production VMs before every check of its release's exact-version
// compatibility gate (versions.yaml compatibilityGate: OpenShift and the
// operator, the storage and network integrations, the management tooling)
// has an Evidence recorded on the Platform's exact version. Doc 000,
// Summary ("Each deployment must pass an exact 4.22.z compatibility gate
// covering OpenShift, the OpenShift Virtualization operator, supported
// storage/network integrations, and planned management tooling before
// promotion") and "Acceptance evidence". Gate evidence is platform-wide: an
// Evidence narrowed to a tenant, VM or size does not count. virtc report
// (GateWarns) warns and shows the gate per production VM instead.
func compatibilityGate(m *resolve.Model, opts Options, diags *diag.List) {
	p := m.Platform
	if p == nil || !p.Release.Baseline || len(p.Release.CompatibilityGate) == 0 {
		return
	}
	prod := productionVMs(m)
	if len(prod) == 0 {
		return
	}
	version := p.Version.String()
	var missing []string
	for _, j := range eligibility.JudgeCompatibilityGate(p.Release.CompatibilityGate, eligibility.ContextOf(m)) {
		switch {
		case j.Evidence != "":
		case j.Why == "no evidence":
			missing = append(missing, fmt.Sprintf("%s (check %s)", j.Description, j.Check))
		default:
			missing = append(missing, fmt.Sprintf("%s (check %s: %s)", j.Description, j.Check, j.Why))
		}
	}
	if len(missing) == 0 {
		return
	}
	what := fmt.Sprintf("VM %s/%s", prod[0].Namespace, prod[0].Name)
	if len(prod) > 1 {
		what = fmt.Sprintf("%d VMs (%s/%s, ...)", len(prod), prod[0].Namespace, prod[0].Name)
	}
	refuse := diags.Errorf
	if opts.GateWarns {
		refuse = diags.Warnf
	}
	refuse(p.Doc.Pos("spec.version"), "spec.version", "platform %q runs production %s but the exact-version compatibility gate of %s lacks evidence: %s (record an Evidence for each check with spec.covers.platformVersion: %s, or keep the VMs at tier standard)",
		p.Name, what, version, strings.Join(missing, "; "), version)
}
