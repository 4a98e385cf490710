package render

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// accessRoles binds each access level to Kubernetes' role and KubeVirt's:
// the KubeVirt roles are aggregated into the Kubernetes ones on a default
// install, but binding them explicitly keeps access working where the
// aggregation was changed.
var accessRoles = []struct {
	level        string
	clusterRoles []string
	groups       func(*resolve.Tenant) []string
}{
	{"admin", []string{"admin", "kubevirt.io:admin"}, func(t *resolve.Tenant) []string { return t.Spec.Access.Admin }},
	{"edit", []string{"edit", "kubevirt.io:edit"}, func(t *resolve.Tenant) []string { return t.Spec.Access.Edit }},
	{"view", []string{"view", "kubevirt.io:view"}, func(t *resolve.Tenant) []string { return t.Spec.Access.View }},
}

// RoleBindings grant the tenant's groups their roles in its namespace.
func RoleBindings(t *resolve.Tenant) []emit.Object {
	var objs []emit.Object
	for _, r := range accessRoles {
		groups := r.groups(t)
		if len(groups) == 0 {
			continue
		}
		subjects := make([]rbacv1.Subject, len(groups))
		for i, g := range groups {
			subjects[i] = rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g}
		}
		for _, role := range r.clusterRoles {
			name := "virtc-" + r.level
			if role != r.level {
				name = "virtc-kubevirt-" + r.level
			}
			rb := &rbacv1.RoleBinding{
				TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
				ObjectMeta: objectMeta("RoleBinding", t.Name, name, t.Doc.Rel, map[string]string{model.LabelTenant: t.Name}, nil),
				Subjects:   subjects,
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			}
			objs = append(objs, emit.Object{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Namespace: t.Name, Name: name, Scope: emit.TenantScope, Body: rb})
		}
	}
	return objs
}
