package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/internal/versions"
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
	var name, upgradingTo, published string
	var release versions.Release
	var version versions.Version
	switch {
	case m.Platform != nil:
		p := m.Platform
		name, release, version, upgradingTo = p.Name, p.Release, p.Version, p.Obj.Spec.UpgradingTo
	case m.Facts != nil:
		// A tenant-only build: the platform's published facts say where it
		// is (resolveFacts checked the version is a known one).
		f := m.Facts.Obj
		release, version, _, _ = versions.LookupMinor(f.Spec.Version)
		name, upgradingTo, published = f.Metadata.Name, f.Spec.UpgradingTo, " (its published PlatformFacts)"
	default:
		return
	}
	if release.Baseline || upgradingTo != "" {
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
		diags.Errorf(pos, "spec.tier", "VM %s/%s is production tier but platform %q%s is on %s, a release on the upgrade path to the %s baseline, not a production target (upgrade the Platform to %s, name the baseline version it is on its way to in its spec.upgradingTo, or use tier standard)",
			vm.Namespace, vm.Name, name, published, version, base.Minor, base.Supported())
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
	if p == nil {
		publishedGate(m, opts, diags)
		return
	}
	version, judged := eligibility.PlatformGate(m)
	if version == "" {
		return
	}
	prod := productionVMs(m)
	if len(prod) == 0 {
		return
	}
	var missing []string
	for _, j := range judged {
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
	what := productionWhat(prod)
	refuse := diags.Errorf
	if opts.GateWarns {
		refuse = diags.Warnf
	}
	if version != p.Version.String() {
		// On the upgrade path: the gate of the version it is upgrading to
		// holds already, or production would run ungated for as long as
		// spec.upgradingTo stays.
		refuse(p.Doc.Pos("spec.upgradingTo"), "spec.upgradingTo", "platform %q on %s runs production %s on its way to %s, but the exact-version compatibility gate of %s lacks evidence: %s (doc 000: an exact 4.22.z compatibility gate before promotion; record an Evidence for each check with spec.covers.platformVersion: %s, or keep the VMs at tier standard until the gate passes)",
			p.Name, p.Version.String(), what, version, version, strings.Join(missing, "; "), version)
		return
	}
	refuse(p.Doc.Pos("spec.version"), "spec.version", "platform %q runs production %s but the exact-version compatibility gate of %s lacks evidence: %s (record an Evidence for each check with spec.covers.platformVersion: %s, or keep the VMs at tier standard)",
		p.Name, what, version, strings.Join(missing, "; "), version)
}

func productionWhat(prod []*resolve.VM) string {
	if len(prod) > 1 {
		return fmt.Sprintf("%d VMs (%s/%s, ...)", len(prod), prod[0].Namespace, prod[0].Name)
	}
	return fmt.Sprintf("VM %s/%s", prod[0].Namespace, prod[0].Name)
}

// publishedGate is compatibilityGate in a tenant-only build: the gate's
// Evidence is platform-wide and lives in the platform repository, so the
// build judges the gate by the platform's published facts (virtc facts
// lists each check its Evidence accepts); a check they do not list refuses
// the production VMs, never skipped silently.
func publishedGate(m *resolve.Model, opts Options, diags *diag.List) {
	if m.Facts == nil {
		return
	}
	f := m.Facts
	release, version, ok := versions.GateVersion(f.Obj.Spec.Version, f.Obj.Spec.UpgradingTo)
	if !ok {
		return
	}
	prod := productionVMs(m)
	if len(prod) == 0 {
		return
	}
	var missing []string
	for _, g := range release.CompatibilityGate {
		if !slices.ContainsFunc(f.Obj.Spec.CompatibilityGate, func(a api.GateFact) bool { return a.Check == g.Check && a.Evidence != "" }) {
			missing = append(missing, g.Check)
		}
	}
	if len(missing) == 0 {
		return
	}
	refuse := diags.Errorf
	if opts.GateWarns {
		refuse = diags.Warnf
	}
	field := "spec.compatibilityGate"
	switch {
	case len(f.Obj.Spec.CompatibilityGate) > 0:
	case version != f.Obj.Spec.Version:
		field = "spec.upgradingTo"
	default:
		field = "spec.version"
	}
	refuse(f.Doc.Pos(field), field, "the published facts of platform %q list no accepted Evidence on %s for the compatibility gate's checks %s, and the build has production %s (record them in the platform repository and publish the facts again with virtc facts, or keep the VMs at tier standard)",
		f.Obj.Metadata.Name, version, strings.Join(missing, ", "), productionWhat(prod))
}

// productionMonitoring refuses production VMs on a Platform that turns the
// generated monitoring off (spec.monitoring.enabled: false). Doc 000,
// Applicable Principles, "Observability by Default": "platform and
// workload health is observable, with alerting and evidence captured for
// acceptance"; "Availability, maintenance, and remediation contract": a
// workload is eligible for a stated availability tier "only after its VM
// profile documents ... health monitoring"; the standard row of the
// matrix lists monitoring among its evidence. Standard-tier builds may
// switch it off (their own monitoring, a lab).
func productionMonitoring(m *resolve.Model, diags *diag.List) {
	var name, published string
	var doc *source.Doc
	switch {
	case m.Platform != nil:
		if m.Platform.Obj.Spec.Monitoring.On() {
			return
		}
		name, doc = m.Platform.Name, m.Platform.Doc
	case m.Facts != nil:
		if m.Facts.Obj.Spec.Monitoring.On() {
			return
		}
		name, doc, published = m.Facts.Obj.Metadata.Name, m.Facts.Doc, " (its published PlatformFacts)"
	default:
		return
	}
	prod := productionVMs(m)
	if len(prod) == 0 {
		return
	}
	diags.Errorf(doc.Pos("spec.monitoring.enabled"), "spec.monitoring.enabled", "platform %q%s turns the generated monitoring off but runs production %s: a production VM's health is monitored and alerted on (remove spec.monitoring.enabled: false, or keep the VMs at tier standard)",
		name, published, productionWhat(prod))
}
