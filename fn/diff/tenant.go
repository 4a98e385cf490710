package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/virtc/virtc/fn/render"
	"github.com/virtc/virtc/fn/resolve"
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
	if st, ok := c.status("ResourceQuota", new.Name, render.QuotaName); ok && st == Changed {
		detail := "the namespace's ResourceQuota changes (see the manifest diff)"
		if old.Spec.Quota == nil && new.Spec.Quota == nil {
			detail = "the namespace's ResourceQuota, derived from its VMs, follows them (see the manifest diff)"
		}
		s.Changes = append(s.Changes, Change{Field: "quota", Effect: EffectNone, Detail: detail})
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
	}
}
