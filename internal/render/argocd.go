package render

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
)

// ArgoCDControllerName names the ClusterRole, and its ClusterRoleBinding,
// that let Argo CD's application controller sync what virtc builds.
const ArgoCDControllerName = "virtc-argocd-application-controller"

// argoCDResources are the resources a `virtc build` prints, by API group:
// what Argo CD's application controller reads, applies and prunes (the
// Backups are a VM's backups before a change; the restore plan's Restores
// and VirtualMachineRestores are applied by a person, not Argo CD). make conformance applies every golden and
// example build as the controller with this role alone
// (TestArgoCDControllerApplies), so a kind missing here fails there.
var argoCDResources = []rbacv1.PolicyRule{
	manage("", "namespaces", "resourcequotas", "persistentvolumeclaims", "serviceaccounts", "configmaps"),
	manage("batch", "jobs"),
	manage("rbac.authorization.k8s.io", "roles", "rolebindings"),
	manage("networking.k8s.io", "networkpolicies"),
	manage("admissionregistration.k8s.io", "validatingadmissionpolicies", "validatingadmissionpolicybindings"),
	manage("operators.coreos.com", "catalogsources", "operatorgroups", "subscriptions"),
	manage("hco.kubevirt.io", "hyperconvergeds"),
	manage("oadp.openshift.io", "dataprotectionapplications"),
	manage("velero.io", "schedules", "backups"),
	manage("instancetype.kubevirt.io", "virtualmachineclusterinstancetypes", "virtualmachineclusterpreferences"),
	manage("migrations.kubevirt.io", "migrationpolicies"),
	manage("k8s.ovn.org", "clusteruserdefinednetworks", "userdefinednetworks"),
	manage("k8s.cni.cncf.io", "network-attachment-definitions"),
	manage("cdi.kubevirt.io", "datavolumes", "datasources"),
	manage("kubevirt.io", "virtualmachines"),
	manage("snapshot.kubevirt.io", "virtualmachinesnapshots"),
	manage("monitoring.coreos.com", "prometheusrules", "servicemonitors", "alertmanagerconfigs"),
}

func manage(group string, resources ...string) rbacv1.PolicyRule {
	return verbs([]string{"get", "list", "watch", "create", "update", "patch", "delete"}, group, resources...)
}

// ArgoCDController is the ClusterRole that lets Argo CD's application
// controller sync virtc's builds, and its ClusterRoleBinding to the
// controller's ServiceAccounts (argocd-application-controller upstream;
// <ArgoCD name>-argocd-application-controller under OpenShift GitOps,
// argocd-operator v0.18.0 controllers/argocd/service_account.go
// getServiceAccountName).
//
// OpenShift GitOps gives its default instance's controller the right to
// read everything but to write only some groups (gitops-operator v1.20.0
// controllers/argocd/openshift/openshift.go policyRulesForClusterConfig:
// OLM, OpenShift's config, RBAC, storage, namespaces, claims, config
// maps), and other instances nothing outside their namespaces: without
// this role a sync of VirtualMachines, HyperConverged, admission policies,
// quotas or Velero Schedules is forbidden. Upstream Argo CD's controller
// may do anything already.
//
// The role also holds every rule of the Roles virtc writes (the tenants'
// and the approver's): Kubernetes lets a user create a Role only with the
// rights it grants, unless it may escalate, which this role does not give
// (kube-apiserver pkg/registry/rbac/escalation_check.go). It may bind
// those Roles by name: a RoleBinding is otherwise checked against its
// Role, which a first sync's dry run does not have yet.
func ArgoCDController(serviceAccounts []rbacv1.Subject) []emit.Object {
	rules := append([]rbacv1.PolicyRule(nil), argoCDResources...)
	for _, r := range tenantRoles {
		rules = append(rules, r.rules...)
	}
	rules = append(rules, approverRules("", "")...)
	rules = append(rules, approverCatalogRules("")...)
	// A RoleBinding is checked against its Role's rules unless its writer
	// may bind that Role: on a first sync's dry run the Role does not
	// exist yet, so the binding would be refused as not found.
	bindable := []string{ApproverName, ApproverCatalogRole(model.CNVNamespace), ApproverCatalogRole(model.OADPNamespace)}
	for _, r := range tenantRoles {
		bindable = append(bindable, TenantRoleName(r.level))
	}
	rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles"}, Verbs: []string{"bind"}, ResourceNames: bindable})
	role := &rbacv1.ClusterRole{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
		ObjectMeta: objectMeta("ClusterRole", "", ArgoCDControllerName, "", nil, nil),
		Rules:      rules,
	}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
		ObjectMeta: objectMeta("ClusterRoleBinding", "", ArgoCDControllerName, "", nil, nil),
		Subjects:   serviceAccounts,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ArgoCDControllerName},
	}
	return []emit.Object{
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: ArgoCDControllerName, Body: role},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", Name: ArgoCDControllerName, Body: binding},
	}
}
