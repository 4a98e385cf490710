package render

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// A tenant's groups get VM-scoped rights in their namespace, not
// Kubernetes' admin, edit and view (doc 000, "Authorization and lifecycle
// boundaries": tenants "receive only namespace-scoped rights needed to
// create and operate approved VirtualMachine, DataVolume,
// template/instance-type, and service resources"; doc 001, "Security and
// operating boundaries": guest-administrator permissions apart from
// platform-administrator ones). Kubernetes' roles give far more: pods,
// workloads, NetworkPolicies and RoleBindings to edit, and view reads
// pods/log, which holds the guest's serial console log (KubeVirt v1.8.4
// pkg/virt-controller/services/serialconsolelog.go, the guest-console-log
// container; Kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/
// policy.go viewRules). CDI's view role even grants create on
// datavolumes/source, the right to clone the namespace's disks elsewhere
// (CDI v1.65.0 pkg/operator/resources/cluster/rbac.go).
//
// Each level is a Role in the tenant's namespace (so a tenant-only build is
// whole without the platform's build) holding the rules of the levels
// below it, with one RoleBinding. The rules are KubeVirt's own roles
// (pkg/virt-operator/resource/generate/rbac/cluster.go, kubevirt.io:view,
// edit and admin), narrowed to what the architecture lets a tenant do:
//   - no writes of VirtualMachineInstances, replica sets, pools or presets
//     (VMs only as VirtualMachines: guardrail workload-kind), no migration
//     or evacuation (node maintenance is the platform's), no SEV or USB
//     redirection (confidential VMs and device passthrough are outside the
//     baseline), no namespaced instance types (only the catalog's);
//   - no pods/log, exec, attach or port-forward of pods, and no pod writes;
//   - no DataImportCrons, import or upload sources, or upload tokens
//     (images come from the catalog), and no datavolumes/source: the
//     root-disk clones of a VM are authorised for the namespace's default
//     ServiceAccount by virt-controller (pkg/virt-controller/watch/vm/vm.go
//     AuthorizeSA), never for the user;
//   - Secrets: edit may write them (cloud-init and SSH keys never come from
//     Git) but not read them; admin may read one by name (virtctl vmexport
//     download reads the export's token Secret, pkg/virtctl/vmexport).
//     NetworkPolicies, RoleBindings and the quota stay the platform's.
var tenantRoles = []struct {
	level string
	rules []rbacv1.PolicyRule
	// groups are who hold this level.
	groups func(*resolve.Tenant) []string
}{
	{"view", []rbacv1.PolicyRule{
		read("kubevirt.io", "virtualmachines", "virtualmachineinstances", "virtualmachineinstancemigrations"),
		verbs([]string{"get"}, "subresources.kubevirt.io", "virtualmachines/expand-spec", "virtualmachineinstances/guestosinfo", "virtualmachines/objectgraph", "virtualmachineinstances/objectgraph"),
		verbs([]string{"update"}, "subresources.kubevirt.io", "expand-vm-spec"),
		read("snapshot.kubevirt.io", "virtualmachinesnapshots", "virtualmachinesnapshotcontents", "virtualmachinerestores"),
		read("clone.kubevirt.io", "virtualmachineclones"),
		read("export.kubevirt.io", "virtualmachineexports"),
		read("instancetype.kubevirt.io", "virtualmachineinstancetypes", "virtualmachinepreferences"),
		read("cdi.kubevirt.io", "datavolumes", "datasources"),
		read("", "pods", "persistentvolumeclaims", "services", "endpoints", "events", "resourcequotas", "limitranges", "namespaces"),
		read("events.k8s.io", "events"),
		read("discovery.k8s.io", "endpointslices"),
		read("snapshot.storage.k8s.io", "volumesnapshots"),
		read("k8s.cni.cncf.io", "network-attachment-definitions"),
		read("networking.k8s.io", "networkpolicies"),
	}, func(t *resolve.Tenant) []string { return t.Spec.Access.View }},
	{"edit", []rbacv1.PolicyRule{
		verbs([]string{"get"}, "subresources.kubevirt.io", "virtualmachineinstances/console", "virtualmachineinstances/vnc", "virtualmachineinstances/vnc/screenshot", "virtualmachineinstances/portforward", "virtualmachines/portforward", "virtualmachineinstances/filesystemlist", "virtualmachineinstances/userlist"),
		verbs([]string{"update"}, "subresources.kubevirt.io", "virtualmachines/start", "virtualmachines/stop", "virtualmachines/restart", "virtualmachines/addvolume", "virtualmachines/removevolume",
			"virtualmachineinstances/pause", "virtualmachineinstances/unpause", "virtualmachineinstances/softreboot", "virtualmachineinstances/reset", "virtualmachineinstances/freeze", "virtualmachineinstances/unfreeze", "virtualmachineinstances/addvolume", "virtualmachineinstances/removevolume"),
		write("kubevirt.io", "virtualmachines"),
		write("snapshot.kubevirt.io", "virtualmachinesnapshots", "virtualmachinerestores"),
		write("clone.kubevirt.io", "virtualmachineclones"),
		write("cdi.kubevirt.io", "datavolumes"),
		write("", "persistentvolumeclaims", "services"),
		verbs([]string{"create", "update", "patch", "delete"}, "", "secrets"),
	}, func(t *resolve.Tenant) []string { return t.Spec.Access.Edit }},
	{"admin", []rbacv1.PolicyRule{
		write("export.kubevirt.io", "virtualmachineexports"),
		verbs([]string{"update"}, "subresources.kubevirt.io", "virtualmachines/memorydump"),
		verbs([]string{"get"}, "", "secrets"),
	}, func(t *resolve.Tenant) []string { return t.Spec.Access.Admin }},
}

func verbs(v []string, group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: v}
}

func read(group string, resources ...string) rbacv1.PolicyRule {
	return verbs([]string{"get", "list", "watch"}, group, resources...)
}

func write(group string, resources ...string) rbacv1.PolicyRule {
	return verbs([]string{"create", "update", "patch", "delete"}, group, resources...)
}

// TenantRoleName names the Role, and its RoleBinding, of an access level.
func TenantRoleName(level string) string { return "virtc-tenant-" + level }

// RoleBindings are the tenant's Roles, one per access level its groups
// hold, and their RoleBindings.
func RoleBindings(t *resolve.Tenant) []emit.Object {
	var objs []emit.Object
	var rules []rbacv1.PolicyRule
	for _, r := range tenantRoles {
		rules = append(rules, r.rules...)
		groups := r.groups(t)
		if len(groups) == 0 {
			continue
		}
		name := TenantRoleName(r.level)
		labels := map[string]string{model.LabelTenant: t.Name}
		role := &rbacv1.Role{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "Role"),
			ObjectMeta: objectMeta("Role", t.Name, name, t.Doc.Rel, labels, nil),
			Rules:      append([]rbacv1.PolicyRule(nil), rules...),
		}
		subjects := make([]rbacv1.Subject, len(groups))
		for i, g := range groups {
			subjects[i] = rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g}
		}
		rb := &rbacv1.RoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
			ObjectMeta: objectMeta("RoleBinding", t.Name, name, t.Doc.Rel, labels, nil),
			Subjects:   subjects,
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		}
		objs = append(objs,
			emit.Object{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role", Namespace: t.Name, Name: name, Scope: emit.TenantScope, Body: role},
			emit.Object{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Namespace: t.Name, Name: name, Scope: emit.TenantScope, Body: rb})
	}
	return objs
}
