package eligibility

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/versions"
)

// Acceptance of a VM's class and profiles by the Evidence in Git.
const (
	Accepted = "accepted"
	// Pending: a required check has no Evidence that counts (the class is
	// conditional until it has).
	Pending = "conditional"
	// Refused: the class is excluded from the baseline: no evidence makes
	// it acceptable, or the assessment that would lift it is missing.
	Refused = "excluded"
)

// Judged is a requirement with the verdict of the evidence in Git.
type Judged struct {
	Requirement
	// Evidence is the name of the Evidence that accepts it; empty: missing.
	Evidence string
	// Why says why no evidence counts, when it is missing.
	Why string
}

// Missing phrases a missing requirement for people.
func (j Judged) Missing() string {
	return fmt.Sprintf("%s (check %s on %s): %s", j.Description, j.Check, j.Subject(), j.Why)
}

// Acceptance is a VM's verdict.
type Acceptance struct {
	Status string
	Judged []Judged
}

// Missing lists the requirements without evidence that counts.
func (a Acceptance) Missing() []Judged {
	var out []Judged
	for _, j := range a.Judged {
		if j.Evidence == "" {
			out = append(out, j)
		}
	}
	return out
}

// Context is what evidence is judged against.
type Context struct {
	Evidence []decode.Entry[api.Evidence]
	// PlatformVersion is the Platform's exact version (4.22.2), or its
	// published PlatformFacts' in a build without it; empty: the build has
	// neither, and no evidence can be checked.
	PlatformVersion string
	// AsOf is the day evidence expiry is judged on. Zero: the build was
	// told no date (--as-of, SOURCE_DATE_EPOCH); each VM is then judged as
	// of the newest date of the Evidence that concerns its tenant
	// (platform-wide, narrowed to its tenant or to one of its VMs), and a
	// platform-wide check as of the newest platform-wide Evidence: the
	// result depends only on what is in Git, and Evidence another team
	// records for its own tenant never moves this tenant's date (issue #26:
	// one team's later drill expired every other team's).
	AsOf time.Time
	// Published are the compatibility gate's checks that the platform's
	// published facts list as accepted on PlatformVersion, in a tenant-only
	// build (the gate's Evidence stays in the platform repository): a
	// platform-wide requirement they list counts.
	Published []api.GateFact
	// tenants holds each tenant's as-of day and what its VMs use, computed
	// once by ContextOf: judging a VM's requirements would otherwise walk
	// all of its tenant's VMs again for each of them.
	tenants map[*resolve.Tenant]tenantDay
}

// tenantDay is a tenant's as-of day (AsOfTenant) and what its VMs use.
type tenantDay struct {
	use  use
	asOf time.Time
}

// use is what a set of VMs uses that Evidence may be narrowed to.
type use struct{ storage, networks, backups, sizes map[string]bool }

func useOf(vms ...[]*resolve.VM) use {
	u := use{map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}}
	for _, list := range vms {
		for _, vm := range list {
			u.storage[vm.RootStorage.Name] = true
			for _, d := range vm.Disks {
				u.storage[d.Storage.Name] = true
			}
			if vm.StateStorage != nil {
				u.storage[vm.StateStorage.Name] = true
			}
			for _, n := range vm.Networks {
				u.networks[n.Name] = true
			}
			u.backups[vm.Backup.Name] = true
			u.sizes[vm.SizeName] = true
		}
	}
	return u
}

// has reports whether vm uses nothing beyond u.
func (u use) has(vm *resolve.VM) bool {
	if !u.storage[vm.RootStorage.Name] || !u.backups[vm.Backup.Name] || !u.sizes[vm.SizeName] ||
		vm.StateStorage != nil && !u.storage[vm.StateStorage.Name] {
		return false
	}
	for _, d := range vm.Disks {
		if !u.storage[d.Storage.Name] {
			return false
		}
	}
	for _, n := range vm.Networks {
		if !u.networks[n.Name] {
			return false
		}
	}
	return true
}

// tenantAsOf is AsOfTenant(c.Evidence, vm.Tenant, vm), from the tenant's
// day computed once when vm uses nothing its tenant's VMs do not.
func (c Context) tenantAsOf(vm *resolve.VM) time.Time {
	if d, ok := c.tenants[vm.Tenant]; ok && d.use.has(vm) {
		return d.asOf
	}
	return AsOfTenant(c.Evidence, vm.Tenant, vm)
}

// ContextOf is the context of a model: its Evidence, its Platform's
// version and its as-of date.
func ContextOf(m *resolve.Model) Context {
	c := Context{Evidence: m.Evidence, AsOf: m.AsOf}
	if m.AsOf.IsZero() {
		c.tenants = make(map[*resolve.Tenant]tenantDay, len(m.Tenants))
		for _, t := range m.Tenants {
			u := useOf(t.VMs)
			c.tenants[t] = tenantDay{u, asOfUse(m.Evidence, t, u)}
		}
	}
	switch {
	case m.Platform != nil:
		c.PlatformVersion = m.Platform.Version.String()
	case m.Facts != nil:
		f := m.Facts.Obj.Spec
		c.PlatformVersion = f.Version
		if _, exact, ok := versions.GateVersion(f.Version, f.UpgradingTo); ok && exact == f.Version {
			// On the upgrade path the facts list the gate of the version
			// it is upgrading to, not of the one it runs.
			c.Published = f.CompatibilityGate
		}
	}
	return c
}

// AsOf is the day expiry is judged on when no date is given: the newest
// date among the Evidence that keep accepts, so that the result depends
// only on what is in Git (recording new evidence moves it on). Zero
// without such evidence.
func AsOf(evidence []decode.Entry[api.Evidence], keep func(api.EvidenceCovers) bool) time.Time {
	var newest time.Time
	for _, e := range evidence {
		if !keep(e.Obj.Spec.Covers) {
			continue
		}
		if d, err := time.Parse(time.DateOnly, e.Obj.Spec.Date); err == nil && d.After(newest) {
			newest = d
		}
	}
	return newest
}

// platformWide is evidence not narrowed to a tenant, VM or size.
func platformWide(c api.EvidenceCovers) bool { return c.Tenant == "" && c.VM == "" && c.Size == "" }

// AsOfTenant is the day a VM of the tenant is judged on without a given
// date: the newest date of the Evidence that concerns the tenant. That is
// Evidence platform-wide or narrowed to the tenant or one of its VMs, and
// about the platform as a whole or about something its VMs use (a storage
// profile, a network profile, a backup policy, a size): another team's
// record about a profile this tenant does not use never moves its date
// (issue 46), as another tenant's own Evidence never does (issue 26). also
// are VMs judged beside the tenant's own (a VM the guardrails ask about,
// which the tenant could write).
func AsOfTenant(evidence []decode.Entry[api.Evidence], t *resolve.Tenant, also ...*resolve.VM) time.Time {
	return asOfUse(evidence, t, useOf(t.VMs, also))
}

func asOfUse(evidence []decode.Entry[api.Evidence], t *resolve.Tenant, u use) time.Time {
	return AsOf(evidence, func(c api.EvidenceCovers) bool {
		vmTenant, _, _ := strings.Cut(c.VM, "/")
		if c.Tenant != "" && c.Tenant != t.Name || c.VM != "" && vmTenant != t.Name {
			return false
		}
		if c.StorageProfile != "" && !u.storage[c.StorageProfile] ||
			c.BackupPolicy != "" && !u.backups[c.BackupPolicy] ||
			c.Size != "" && !u.sizes[c.Size] {
			return false
		}
		return len(c.NetworkProfiles) == 0 || slices.ContainsFunc(c.NetworkProfiles, func(n string) bool { return u.networks[n] })
	})
}

// Accept judges a classified VM's requirements against the evidence. An
// excluded row stays refused unless it asks for evidence that lifts it (the
// architecture assessments of hardware-passthrough) and all of it is
// accepted; then the VM is judged on the rest, as a conditional row's.
func Accept(vm *resolve.VM, r Result, ctx Context) Acceptance {
	a := Acceptance{Status: Accepted}
	excluded := map[string]bool{}
	for _, m := range r.Rows {
		if m.Class.Status != Excluded {
			continue
		}
		excluded[m.Class.Name] = true
		if len(m.Class.Evidence) == 0 || !slices.ContainsFunc(r.Requirements, func(q Requirement) bool { return q.Row == m.Class.Name }) {
			a.Status = Refused
		}
	}
	for _, q := range r.Requirements {
		j := judge(vm, r, q, ctx)
		switch {
		case j.Evidence != "":
		case excluded[q.Row]:
			a.Status = Refused
		case a.Status == Accepted:
			a.Status = Pending
		}
		a.Judged = append(a.Judged, j)
	}
	return a
}

// Assessments judges the architecture assessment of each excluded hardware
// feature the VM uses (row hardware-passthrough's own requirements),
// whatever other rows of the matrix the VM is in.
func Assessments(vm *resolve.VM, ctx Context) []Judged {
	c := class("hardware-passthrough")
	r := Result{Class: c, Rows: []Match{{Class: c}}}
	var out []Judged
	for _, q := range r.requirements(vm) {
		if q.Row == c.Name {
			out = append(out, judge(vm, r, q, ctx))
		}
	}
	return out
}

// PreviewCheck is the check that accepts a Technology or Developer Preview
// feature gate: "separate approved scope after product maturity and support
// review" (target architecture, workload eligibility matrix).
const PreviewCheck = "support-review"

// PreviewClass is the matrix's row of Technology Preview features.
const PreviewClass = "confidential-or-tech-preview"

// JudgeGate judges the support review of a preview feature gate the
// Platform accepts: an Evidence of check support-review with covers.class
// confidential-or-tech-preview and covers.feature the gate, on the
// Platform's exact version, not narrowed to a tenant, VM or size (a gate is
// cluster-wide).
func JudgeGate(gate string, ctx Context) Judged {
	q := Requirement{Check: PreviewCheck, Description: "support review of feature gate " + gate, Class: PreviewClass, Feature: gate}
	return judgeClusterWide(q, ctx, "a feature gate is on for the whole cluster")
}

// JudgeCompatibilityGate judges each check of a release's exact-version
// compatibility gate (versions.yaml compatibilityGate; doc 000, Summary and
// "Acceptance evidence": "capture evidence for the exact 4.22.z
// combination"): an Evidence of the check on the platform's exact version,
// not narrowed to a tenant, VM or size, since the gate is about the whole
// platform.
func JudgeCompatibilityGate(gate []versions.GateCheck, ctx Context) []Judged {
	var out []Judged
	for _, g := range gate {
		q := Requirement{Check: g.Check, Description: g.Description, PlatformWide: true}
		out = append(out, judgeClusterWide(q, ctx, "the compatibility gate is about the whole platform"))
	}
	return out
}

// PlatformGate judges the compatibility gate the build's Platform's
// production VMs need (versions.GateVersion: the Platform's exact version
// on the baseline release, the baseline version in spec.upgradingTo on a
// release of the upgrade path), with Evidence recorded on that exact
// version. version is empty when the build has no Platform or there is no
// gate to pass.
func PlatformGate(m *resolve.Model) (version string, judged []Judged) {
	p := m.Platform
	if p == nil {
		return "", nil
	}
	r, exact, ok := versions.GateVersion(p.Version.String(), p.Obj.Spec.UpgradingTo)
	if !ok {
		return "", nil
	}
	ctx := ContextOf(m)
	ctx.PlatformVersion = exact
	return exact, JudgeCompatibilityGate(r.CompatibilityGate, ctx)
}

// judgeClusterWide judges a requirement only evidence for the whole
// cluster meets, saying so when the only evidence is narrowed.
func judgeClusterWide(q Requirement, ctx Context, why string) Judged {
	clusterWide := platformWide
	if ctx.AsOf.IsZero() {
		ctx.AsOf = AsOf(ctx.Evidence, platformWide)
	}
	j := judgeWith(q, ctx, clusterWide)
	if j.Evidence == "" && j.Why == "no evidence" {
		for _, e := range ctx.Evidence {
			if c := e.Obj.Spec.Covers; e.Obj.Spec.Check == q.Check && covers(c, q) && !clusterWide(c) {
				j.Why = fmt.Sprintf("evidence %s is narrowed to a tenant, VM or size, and %s", e.Obj.Metadata.Name, why)
				break
			}
		}
	}
	return j
}

func judge(vm *resolve.VM, r Result, q Requirement, ctx Context) Judged {
	if q.PlatformWide {
		if i := slices.IndexFunc(ctx.Published, func(g api.GateFact) bool { return g.Check == q.Check && g.Evidence != "" }); i >= 0 {
			return Judged{Requirement: q, Evidence: ctx.Published[i].Evidence}
		}
		return judgeClusterWide(q, ctx, "the check is about the whole platform")
	}
	if ctx.AsOf.IsZero() {
		ctx.AsOf = ctx.tenantAsOf(vm)
	}
	return judgeWith(q, ctx, func(c api.EvidenceCovers) bool { return applies(c, vm, r) })
}

func judgeWith(q Requirement, ctx Context, applies func(api.EvidenceCovers) bool) Judged {
	j := Judged{Requirement: q}
	if ctx.PlatformVersion == "" {
		j.Why = "no Platform and no PlatformFacts in the build, and evidence counts only on the platform's exact version"
		return j
	}
	var candidates []decode.Entry[api.Evidence]
	for _, e := range ctx.Evidence {
		if e.Obj.Spec.Check == q.Check && applies(e.Obj.Spec.Covers) && covers(e.Obj.Spec.Covers, q) {
			candidates = append(candidates, e)
		}
	}
	// Newest first, then by name, so the verdict names one evidence
	// whatever the input order.
	slices.SortStableFunc(candidates, func(x, y decode.Entry[api.Evidence]) int {
		return cmp.Or(cmp.Compare(y.Obj.Spec.Date, x.Obj.Spec.Date), cmp.Compare(x.Obj.Metadata.Name, y.Obj.Metadata.Name))
	})
	var expired, otherVersion, future *api.Evidence
	for _, e := range candidates {
		spec := e.Obj.Spec
		date, err := time.Parse(time.DateOnly, spec.Date)
		switch {
		case err != nil:
			continue
		case spec.Covers.PlatformVersion != ctx.PlatformVersion:
			if otherVersion == nil {
				otherVersion = e.Obj
			}
		case date.After(ctx.AsOf):
			if future == nil {
				future = e.Obj
			}
		case q.ValidFor > 0 && ctx.AsOf.Sub(date) > q.ValidFor:
			if expired == nil {
				expired = e.Obj
			}
		default:
			j.Evidence = e.Obj.Metadata.Name
			return j
		}
	}
	switch {
	case expired != nil:
		d, _ := time.Parse(time.DateOnly, expired.Spec.Date)
		j.Why = fmt.Sprintf("evidence %s of %s counted until %s, and has expired (drill interval %s of backup policy %s; as of %s)",
			expired.Metadata.Name, expired.Spec.Date, d.Add(q.ValidFor).Format(time.DateOnly), q.ValidForText, q.BackupPolicy, ctx.AsOf.Format(time.DateOnly))
	case future != nil:
		j.Why = fmt.Sprintf("evidence %s is dated %s, after the as-of date %s", future.Metadata.Name, future.Spec.Date, ctx.AsOf.Format(time.DateOnly))
	case otherVersion != nil:
		j.Why = fmt.Sprintf("evidence %s was recorded on platform %s, not %s: do the check again on %s", otherVersion.Metadata.Name, otherVersion.Spec.Covers.PlatformVersion, ctx.PlatformVersion, ctx.PlatformVersion)
	default:
		j.Why = "no evidence"
	}
	return j
}

// applies reports whether evidence narrowed to a tenant, VM, size or class
// is about this VM (a class: one of the VM's rows).
func applies(c api.EvidenceCovers, vm *resolve.VM, r Result) bool {
	return (c.Tenant == "" || c.Tenant == vm.Namespace) &&
		(c.VM == "" || c.VM == vm.Namespace+"/"+vm.Name) &&
		(c.Size == "" || c.Size == vm.SizeName) &&
		(c.Class == "" || slices.Contains(r.Names(), c.Class))
}

// covers reports whether evidence covers what the requirement is about.
func covers(c api.EvidenceCovers, q Requirement) bool {
	if q.StorageProfile != "" && c.StorageProfile != q.StorageProfile {
		return false
	}
	for _, n := range q.NetworkProfiles {
		if !slices.Contains(c.NetworkProfiles, n) {
			return false
		}
	}
	if q.Pool != "" && c.Pool != q.Pool {
		return false
	}
	if q.BackupPolicy != "" && c.BackupPolicy != q.BackupPolicy {
		return false
	}
	if q.Feature != "" && c.Feature != q.Feature {
		return false
	}
	return q.Class == "" || c.Class == q.Class
}
