package diff

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

func (c *comparison) tenants(base, head []*resolve.Tenant) {
	baseBy := map[string]*resolve.Tenant{}
	for _, t := range base {
		baseBy[t.Name] = t
	}
	headBy := map[string]*resolve.Tenant{}
	for _, t := range head {
		headBy[t.Name] = t
	}
	var names []string
	for n := range baseBy {
		names = append(names, n)
	}
	for n := range headBy {
		if _, ok := baseBy[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		old, new := baseBy[n], headBy[n]
		s := Subject{Name: n}
		switch {
		case old == nil:
			s.Status = Added
			s.Changes = append(s.Changes, Change{Field: "tenant", Effect: EffectCreated,
				Detail: fmt.Sprintf("new tenant: namespace %s with its quota and access", n)})
		case new == nil:
			s.Status = Removed
			c.removedTenant(old, &s)
		default:
			s.Status = Changed
			c.changedTenant(old, new, &s)
		}
		if len(s.Changes) > 0 {
			c.report.Tenants = append(c.report.Tenants, s)
		}
	}
}

// removedTenant allows only the removal of a tenant that was retired on the
// base branch (which compiles only when all its VMs were retired too).
func (c *comparison) removedTenant(t *resolve.Tenant, s *Subject) {
	obj := ref("Namespace", "", t.Name)
	if !t.Spec.Retired {
		c.refuse("tenant-removed", obj,
			fmt.Sprintf("tenant %s is removed without being retired: Argo CD would delete namespace %s and everything in it", t.Name, t.Name),
			"decommission it deliberately: set spec.retired: true on the Tenant and on each of its VMs, merge, let Argo CD sync, and remove them in a later change")
		s.Changes = append(s.Changes, Change{Field: "tenant", Effect: EffectRefused, Detail: "removed without being retired: refused"})
		return
	}
	c.warn("retired-tenant-removed", obj,
		fmt.Sprintf("tenant %s (retired) is removed: %s", t.Name, leaves("namespace "+t.Name+" and everything in it", "oc delete namespace "+t.Name)),
		"the retired tenant must have been synced by Argo CD before this change lands; make sure no one needs its VMs' data any more; backups already taken are kept until their retention expires")
	s.Changes = append(s.Changes, Change{Field: "tenant", Effect: EffectDeleted, Detail: "removed (it was retired): its namespace is left in the cluster for a person to delete"})
}

func (c *comparison) changedTenant(old, new *resolve.Tenant, s *Subject) {
	switch {
	case !old.Spec.Retired && new.Spec.Retired:
		s.Changes = append(s.Changes, Change{Field: "retired", From: "false", To: "true", Effect: EffectNone,
			Detail: "retired: its namespace is labelled virtc.dev/retired; once synced, a later change may remove the tenant"})
	case old.Spec.Retired && !new.Spec.Retired:
		s.Changes = append(s.Changes, Change{Field: "retired", From: "true", To: "false", Effect: EffectNone, Detail: "no longer retired"})
	}
	if st, ok := c.status("ResourceQuota", new.Name, model.QuotaName); ok && st == Changed {
		detail := "the namespace's ResourceQuota changes (see the manifest diff)"
		if old.Spec.Quota == nil && new.Spec.Quota == nil {
			detail = "the namespace's ResourceQuota, derived from its VMs, follows them (see the manifest diff)"
		}
		s.Changes = append(s.Changes, Change{Field: "quota", Effect: EffectNone, Detail: detail})
	}
	if st, ok := c.status("ValidatingAdmissionPolicy", "", model.GuardrailPolicyName(new.Name)); ok && st == Changed {
		s.Changes = append(s.Changes, Change{Field: "guardrails", Effect: EffectNone,
			Detail: fmt.Sprintf("the guardrails the cluster enforces in namespace %s (ValidatingAdmissionPolicy %s) follow the tenant's allowances and the catalog: what its users may write directly changes with them (see the manifest diff)", new.Name, model.GuardrailPolicyName(new.Name))})
	}
	for _, role := range []struct {
		name     string
		old, new []string
	}{
		{"admin", old.Spec.Access.Admin, new.Spec.Access.Admin},
		{"edit", old.Spec.Access.Edit, new.Spec.Access.Edit},
		{"view", old.Spec.Access.View, new.Spec.Access.View},
	} {
		if strings.Join(role.old, ",") != strings.Join(role.new, ",") {
			s.Changes = append(s.Changes, Change{Field: "access", Name: role.name, From: strings.Join(role.old, ", "), To: strings.Join(role.new, ", "), Effect: EffectNone,
				Detail: fmt.Sprintf("%s access: [%s] → [%s]", role.name, strings.Join(role.old, ", "), strings.Join(role.new, ", "))})
		}
	}
	if old.Backup != new.Backup {
		s.Changes = append(s.Changes, Change{Field: "backup", From: old.Backup, To: new.Backup, Effect: EffectNone,
			Detail: fmt.Sprintf("default backup policy %s → %s (for VMs that name none)", old.Backup, new.Backup)})
		if takesBackups(c.oldCatalog, old.Backup) && !takesBackups(c.newCatalog, new.Backup) {
			c.warn("tenant-backup-downgrade", ref("Namespace", "", new.Name),
				fmt.Sprintf("tenant %s's default backup policy is lowered from %s, which takes backups, to %s, which takes none: its VMs that name no policy are no longer backed up", new.Name, old.Backup, new.Backup),
				"the platform team, which owns the tenant, confirms the downgrade in review; backups already taken are kept until their retention expires")
		}
	}
	c.tenantGate(old, new, s)
}

// tenantGate names a change of the tenant's tier or environment. The
// tenant owns both (design document 000, "Availability, maintenance, and
// remediation contract": a workload is eligible for a stated tier only
// after its evidence; "Workload eligibility matrix": conditional classes
// need evidence before onboarding): a downgrade from production, or a move
// into the lab environment, lifts the gate from all its VMs at once, so it
// is a warning every reviewer sees. It is not refused: the tenant is the
// platform team's, and Git review is the production change boundary (000,
// "Authorization and lifecycle boundaries").
func (c *comparison) tenantGate(old, new *resolve.Tenant, s *Subject) {
	tier := func(t *resolve.Tenant) string {
		if t.Spec.Tier == "" {
			return resolve.TierStandard
		}
		return t.Spec.Tier
	}
	if from, to := tier(old), tier(new); from != to {
		s.Changes = append(s.Changes, Change{Field: "tier", From: from, To: to, Effect: EffectNone,
			Detail: fmt.Sprintf("tier %s → %s (for its VMs that set none)", from, to)})
		if from == resolve.TierProduction {
			c.warn("tenant-tier-downgrade", ref("Namespace", "", new.Name),
				fmt.Sprintf("tenant %s is downgraded from tier production to %s: its VMs lose the production gate (backups that must be taken, accepted evidence for their profiles and backup policy)", new.Name, to),
				"the platform team, which owns the tenant's tier, confirms the downgrade in review; a VM that must stay production sets spec.tier: production itself")
		}
	}
	if old.Spec.Environment != new.Spec.Environment {
		from, to := cmp.Or(old.Spec.Environment, "onboarded"), cmp.Or(new.Spec.Environment, "onboarded")
		s.Changes = append(s.Changes, Change{Field: "environment", From: from, To: to, Effect: EffectNone,
			Detail: fmt.Sprintf("environment %s → %s", from, to)})
		if new.Spec.Environment != "" {
			c.warn("tenant-environment-lab", ref("Namespace", "", new.Name),
				fmt.Sprintf("tenant %s moves into the %s environment: its VMs in conditional classes of the eligibility matrix compile without evidence from now on", new.Name, new.Spec.Environment),
				"only for a tenant that is not onboarded; it cannot be production tier")
		}
	}
}

// takesBackups reports whether the catalog's backup policy takes backups.
func takesBackups(cat *catalog.Catalog, name string) bool {
	if cat == nil {
		return false
	}
	p, ok := cat.BackupPolicies.Get(name)
	return ok && p.Spec.Schedule != ""
}
