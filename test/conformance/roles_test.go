package conformance

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// roleCheck is one question to the API server's authorizer about a tenant
// group: may it do verb on resource (with its group and subresource) in
// namespace?
type roleCheck struct {
	group, namespace         string
	verb, apiGroup, resource string
	want                     bool
}

// tenantRoleChecks are the rights of golden/guardrails-platform's tenant
// plain, whose access lists a group per level (admin plain-admins, edit
// plain-devs, view plain-auditors), as virtc's Roles grant them: what the
// architecture gives a tenant (doc 000, "Authorization and lifecycle
// boundaries": create and operate approved VirtualMachines, DataVolumes,
// instance types and services; no node, network or storage authority) and
// what it keeps from them (doc 001: guest-administrator rights apart from
// platform-administrator ones; pods/log holds the guest's serial console).
var tenantRoleChecks = []roleCheck{
	{"plain-auditors", "plain", "get", "kubevirt.io", "virtualmachines", true},
	{"plain-auditors", "plain", "list", "", "pods", true},
	{"plain-auditors", "plain", "get", "", "pods/log", false},
	{"plain-auditors", "plain", "get", "", "secrets", false},
	{"plain-auditors", "plain", "create", "kubevirt.io", "virtualmachines", false},
	{"plain-auditors", "plain", "update", "subresources.kubevirt.io", "virtualmachines/stop", false},
	{"plain-auditors", "plain", "get", "subresources.kubevirt.io", "virtualmachineinstances/console", false},
	{"plain-auditors", "plain", "create", "cdi.kubevirt.io", "datavolumes/source", false},

	{"plain-devs", "plain", "create", "kubevirt.io", "virtualmachines", true},
	{"plain-devs", "plain", "patch", "kubevirt.io", "virtualmachines", true},
	{"plain-devs", "plain", "update", "subresources.kubevirt.io", "virtualmachines/stop", true},
	{"plain-devs", "plain", "update", "subresources.kubevirt.io", "virtualmachines/start", true},
	{"plain-devs", "plain", "get", "subresources.kubevirt.io", "virtualmachineinstances/console", true},
	{"plain-devs", "plain", "get", "subresources.kubevirt.io", "virtualmachineinstances/vnc", true},
	{"plain-devs", "plain", "create", "snapshot.kubevirt.io", "virtualmachinesnapshots", true},
	{"plain-devs", "plain", "create", "snapshot.kubevirt.io", "virtualmachinerestores", true},
	{"plain-devs", "plain", "create", "clone.kubevirt.io", "virtualmachineclones", true},
	{"plain-devs", "plain", "create", "cdi.kubevirt.io", "datavolumes", true},
	{"plain-devs", "plain", "patch", "", "persistentvolumeclaims", true},
	{"plain-devs", "plain", "create", "", "services", true},
	{"plain-devs", "plain", "create", "", "secrets", true},
	{"plain-devs", "plain", "get", "", "secrets", false},
	{"plain-devs", "plain", "list", "", "secrets", false},
	{"plain-devs", "plain", "get", "", "pods/log", false},
	{"plain-devs", "plain", "create", "", "pods/exec", false},
	{"plain-devs", "plain", "create", "", "pods", false},
	{"plain-devs", "plain", "update", "", "resourcequotas", false},
	{"plain-devs", "plain", "delete", "networking.k8s.io", "networkpolicies", false},
	{"plain-devs", "plain", "create", "networking.k8s.io", "networkpolicies", false},
	{"plain-devs", "plain", "create", "rbac.authorization.k8s.io", "rolebindings", false},
	{"plain-devs", "plain", "update", "rbac.authorization.k8s.io", "roles", false},
	{"plain-devs", "plain", "create", "kubevirt.io", "virtualmachineinstances", false},
	{"plain-devs", "plain", "create", "kubevirt.io", "virtualmachineinstancemigrations", false},
	{"plain-devs", "plain", "update", "subresources.kubevirt.io", "virtualmachines/migrate", false},
	{"plain-devs", "plain", "create", "snapshot.kubevirt.io", "virtualmachinesnapshotcontents", false},
	{"plain-devs", "plain", "create", "cdi.kubevirt.io", "dataimportcrons", false},
	{"plain-devs", "plain", "create", "cdi.kubevirt.io", "datavolumes/source", false},
	{"plain-devs", "plain", "create", "instancetype.kubevirt.io", "virtualmachineinstancetypes", false},
	{"plain-devs", "plain", "create", "export.kubevirt.io", "virtualmachineexports", false},
	{"plain-devs", "plain", "create", "k8s.cni.cncf.io", "network-attachment-definitions", false},
	{"plain-devs", "lab", "get", "kubevirt.io", "virtualmachines", false},

	{"plain-admins", "plain", "create", "kubevirt.io", "virtualmachines", true},
	{"plain-admins", "plain", "create", "export.kubevirt.io", "virtualmachineexports", true},
	{"plain-admins", "plain", "update", "subresources.kubevirt.io", "virtualmachines/memorydump", true},
	{"plain-admins", "plain", "get", "", "secrets", true},
	{"plain-admins", "plain", "list", "", "secrets", false},
	{"plain-admins", "plain", "get", "", "pods/log", false},
	{"plain-admins", "plain", "create", "rbac.authorization.k8s.io", "rolebindings", false},
	{"plain-admins", "plain", "delete", "networking.k8s.io", "networkpolicies", false},
	{"plain-admins", "plain", "delete", "", "namespaces", false},
}

// checkTenantRoles asks the real API server's RBAC authorizer, with a
// SubjectAccessReview each (what `oc auth can-i --as-group` asks, as doc
// 001's "Validate the resulting identity with oc auth can-i" says), what
// golden/guardrails-platform's RoleBindings let each of tenant plain's
// groups do, as a user who holds nothing else.
func checkTenantRoles(t *testing.T, c *Cluster) {
	for _, rc := range tenantRoleChecks {
		resource, sub, _ := strings.Cut(rc.resource, "/")
		review := map[string]any{
			"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
			"spec": map[string]any{
				"user":   "dave",
				"groups": []string{rc.group, "system:authenticated"},
				"resourceAttributes": map[string]any{
					"namespace": rc.namespace, "verb": rc.verb, "group": rc.apiGroup, "resource": resource, "subresource": sub,
				},
			},
		}
		body, err := json.Marshal(review)
		if err != nil {
			t.Fatal(err)
		}
		code, out, err := c.CP.Request(t.Context(), http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", "application/json", body, nil)
		if err != nil || code/100 != 2 {
			t.Fatalf("SubjectAccessReview: %d %v: %s", code, err, out)
		}
		var answer struct {
			Status struct {
				Allowed bool `json:"allowed"`
			} `json:"status"`
		}
		if err := json.Unmarshal(out, &answer); err != nil {
			t.Fatal(err)
		}
		if answer.Status.Allowed != rc.want {
			t.Errorf("group %s may %s %s (%s) in %s: %v, want %v", rc.group, rc.verb, rc.resource, rc.apiGroup, rc.namespace, answer.Status.Allowed, rc.want)
		}
	}
	t.Logf("%d questions to the API server's authorizer about tenant plain's groups answered as virtc's Roles intend", len(tenantRoleChecks))
}
