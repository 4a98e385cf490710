package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/rules"
	"github.com/virtc/virtc/test/internal/vap"
)

// checkBypasses writes, as each writer, every case of the bypass suite
// (test/internal/vap Cases: attempts around Git by field, kind, verb and identity,
// and the legitimate writes of the tenants and of the cluster's other
// writers) and every field of KubeVirt's VirtualMachine type outside
// virtc's allow list (test/internal/vap FieldAttempts), into the tenants of
// golden/guardrails-platform, on a real kube-apiserver: an attempt is
// refused by the policy with the rule's message, a legitimate write is
// admitted. Writes are server-side dry runs; an update's object exists
// first, written by an exempt controller.
func checkBypasses(t *testing.T, c *Cluster) {
	ctx := t.Context()
	out, err := os.ReadFile(filepath.Join(repoRoot, "golden", "guardrails-platform", "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ParseObjects(out)
	if err != nil {
		t.Fatal(err)
	}
	env := prepare(t, c, objs)
	deleteWhenDone(t, c, &objs, &env)
	apply(t, c, "apply", out)
	waitEnforced(t, c, "plain")
	waitEnforced(t, c, "lab")

	t.Run("tenant-roles", func(t *testing.T) { checkTenantRoles(t, c) })
	grantWriters(t, c)
	grantUpstreamEdit(t, c)

	base := vap.Base{}
	for _, o := range objs {
		base.Objects = append(base.Objects, o.Doc)
	}
	// What the same policies' CEL decides in test/internal/vap: the API server
	// reports the first refusal of a policy's validations, which must be
	// the first test/internal/vap gives (the order of the rules is the cluster's
	// too), and admits what test/internal/vap admits.
	policies, err := vap.Policies(base.Objects)
	if err != nil {
		t.Fatal(err)
	}
	decide := func(t *testing.T, tc vap.Case) string {
		t.Helper()
		ns := tc.Namespace()
		denials, err := policies[ns].Admit(vap.Request{Object: tc.Object, OldObject: tc.Old, User: tc.As.User, Groups: tc.As.Groups}, map[string]string{"virtc.dev/tenant": ns})
		if err != nil {
			t.Fatal(err)
		}
		if len(denials) == 0 {
			return ""
		}
		return denials[0].Rule
	}

	cases := base.Cases()
	web := base.Find("VirtualMachine", "plain", "web01")
	attempts := vap.FieldAttempts(web)
	for _, a := range attempts {
		cases = append(cases, vap.Case{Name: "field " + a.Path, As: vap.PlainUser, Object: a.Object, Old: web, Refused: []string{"template-fields"}, Invalid: schemaRefused[a.Path]})
	}
	// The claims' storage classes exist, resizable (the API server's
	// PersistentVolumeClaimResize admission reads the class).
	var written []Object
	for _, tc := range cases {
		for _, doc := range []map[string]any{tc.Object, tc.Old} {
			if o, err := objectOf(doc); err == nil {
				written = append(written, o)
			}
		}
	}
	if _, err := c.EnsureStorageClasses(ctx, written); err != nil {
		t.Fatal(err)
	}
	// Creates first: an update's old object, once written, stays.
	slices.SortStableFunc(cases, func(a, b vap.Case) int {
		return cmpBool(a.Old != nil, b.Old != nil)
	})
	refused, fields, invalid := 0, 0, 0
	for _, tc := range cases {
		switch {
		case strings.HasPrefix(tc.Name, "field "):
			fields++
		case len(tc.Refused) > 0:
			refused++
		}
		if tc.Invalid != "" {
			invalid++
		}
		t.Run(tc.Name, func(t *testing.T) {
			want := decide(t, tc)
			if (want == "") != (len(tc.Refused) == 0) {
				t.Fatalf("test/internal/vap's CEL decides %q, the case wants refused by %v", want, tc.Refused)
			}
			tryCase(t, c, tc, want)
		})
	}
	for path := range schemaRefused {
		if !slices.ContainsFunc(attempts, func(a vap.Attempt) bool { return a.Path == path }) {
			t.Errorf("schemaRefused lists %s, which FieldAttempts no longer writes", path)
		}
	}
	t.Logf("%d attempts refused and %d legitimate writes admitted, and %d fields of the VirtualMachine type refused (%d of them by the CRD's schema first), by the API server", refused, len(cases)-refused-fields, fields, invalid)
}

// grantWriters binds the writers of the bypass suite. The cluster's other
// writers hold broad roles in a cluster (virt-operator's, cdi-operator's,
// OADP's, MTV's, OVN-Kubernetes'), and so do a cluster-admin and Argo CD:
// cluster-admin stands in for them here, so that only the policy decides.
// The tenants' groups hold what virtc's Roles grant them, and
// NetworkAttachmentDefinitions and UserDefinedNetworks, which OpenShift may
// aggregate into edit: the policy must refuse them either way.
func grantWriters(t *testing.T, c *Cluster) {
	t.Helper()
	ctx := t.Context()
	grants := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: virtc-test-writers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
`
	var privileged []vap.Identity
	for _, e := range rules.Exempt {
		privileged = append(privileged, vap.Identity{User: e})
	}
	privileged = append(privileged, vap.ClusterAdmin, vap.ArgoCD, vap.VirtHandler, vap.PVBinder)
	for _, id := range privileged {
		if ns, name, ok := serviceAccount(id.User); ok {
			grants += fmt.Sprintf("- {kind: ServiceAccount, namespace: %s, name: %s}\n", ns, name)
		} else {
			grants += fmt.Sprintf("- {kind: User, apiGroup: rbac.authorization.k8s.io, name: %q}\n", id.User)
		}
	}
	grants += `- {kind: ServiceAccount, namespace: plain, name: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: virtc-test-network-edit}
rules:
- apiGroups: [k8s.cni.cncf.io]
  resources: [network-attachment-definitions]
  verbs: [create, update, patch]
- apiGroups: [k8s.ovn.org]
  resources: [userdefinednetworks]
  verbs: [create, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: virtc-test-network-edit}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: virtc-test-network-edit}
subjects:
- {kind: Group, apiGroup: rbac.authorization.k8s.io, name: plain-devs}
- {kind: Group, apiGroup: rbac.authorization.k8s.io, name: lab-devs}
`
	grantObjs, err := ParseObjects([]byte(grants))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(ctx, []byte(grants)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.WithoutCancel(ctx), grantObjs); err != nil {
			t.Errorf("clean up: %v", err)
		}
	})

}

// grantUpstreamEdit binds the bypass suite's tenant users, in their
// tenants' namespaces, to Kubernetes' edit and KubeVirt's kubevirt.io:edit
// (the upstream roles, installEditRoles), as a cluster-admin may beside
// virtc's Roles: the guardrails must refuse whatever RBAC grants, so the
// attempts reach the policy rather than stop at RBAC (checkTenantRoles
// asks what virtc's Roles alone grant).
func grantUpstreamEdit(t *testing.T, c *Cluster) {
	t.Helper()
	var grants string
	for _, id := range []vap.Identity{vap.PlainUser, vap.LabUser} {
		ns := strings.TrimSuffix(id.Groups[0], "-devs")
		for _, role := range []string{"edit", "kubevirt.io:edit"} {
			grants += fmt.Sprintf(`---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: virtc-test-upstream-%s, namespace: %s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %q}
subjects:
- {kind: User, apiGroup: rbac.authorization.k8s.io, name: %s}
`, strings.ReplaceAll(role, ":", "-"), ns, role, id.User)
		}
	}
	if _, err := c.Apply(t.Context(), []byte(grants)); err != nil {
		t.Fatal(err)
	}
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// schemaRefused are the field attempts whose sample value the
// VirtualMachine CRD's schema refuses before the policy judges it (a
// value outside an enum, a field the CRD of this platform does not have),
// with what the schema says: the write cannot be made with that value,
// and test/internal/vap shows the policy refuses the field whatever its value.
var schemaRefused = map[string]string{
	// In CDI's DataVolumeSpec that kubevirt.io/api v1.8.4 builds on, not
	// in the DataVolume template schema of KubeVirt v1.8.4's CRD: strict
	// decoding refuses it, and a non-strict write has it pruned.
	"spec.dataVolumeTemplates[].spec.serviceAccountName": `strict decoding error: unknown field "spec.dataVolumeTemplates[1].spec.serviceAccountName"`,
}

// serviceAccount splits a service account's user name.
func serviceAccount(user string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	return namespace, name, ok
}

// tryCase writes a case as its writer (a server-side dry run, with the
// Impersonate-User and Impersonate-Group headers kubectl's --as and
// --as-group send): a create, or an update of the object as it exists,
// which an exempt controller writes first. The API server reports the
// first validation that refuses: it must be rule want ("": admitted).
func tryCase(t *testing.T, c *Cluster, tc vap.Case, want string) {
	t.Helper()
	ctx := t.Context()
	obj, err := objectOf(tc.Object)
	if err != nil {
		t.Fatal(err)
	}
	header := http.Header{}
	header.Add("Impersonate-User", tc.As.User)
	for _, g := range tc.As.Groups {
		header.Add("Impersonate-Group", g)
	}
	if tc.Old != nil {
		err = tryUpdate(ctx, c, tc, obj, header)
	} else {
		err = c.create(ctx, obj, true, header)
	}
	var refusal *APIError
	if err != nil && !errors.As(err, &refusal) {
		t.Fatal(err)
	}
	if want == "" {
		if refusal != nil {
			t.Errorf("refused, want admitted: %s", refusal.Message)
		}
		return
	}
	if tc.Invalid != "" {
		if refusal == nil || !strings.Contains(refusal.Message, tc.Invalid) {
			t.Errorf("want refused by the schema (%s), got %v", tc.Invalid, err)
		}
		return
	}
	switch {
	case refusal == nil:
		t.Errorf("admitted, want refused by %s", want)
	case strings.Contains(refusal.Message, "is forbidden: User"):
		t.Errorf("refused by RBAC, not by the policy (the test's writer must hold the rights): %s", refusal.Message)
	case !strings.Contains(refusal.Message, "denied request: virtc guardrail "+want+": "):
		t.Errorf("refused, but not by %s first: %s", want, refusal.Message)
	}
}

// tryUpdate makes sure the case's old object exists (written by
// KubeVirt's controller, which the policy does not judge; a claim bound,
// as only a bound claim may grow), then dry-runs the update, a PUT of the
// case's object at the old one's resourceVersion.
func tryUpdate(ctx context.Context, c *Cluster, tc vap.Case, obj Object, header http.Header) error {
	old, err := objectOf(tc.Old)
	if err != nil {
		return err
	}
	live, _, ok, err := c.get(ctx, old)
	if err != nil {
		return err
	}
	if !ok {
		writer := http.Header{"Impersonate-User": {vap.VirtController.User}}
		if err := c.create(ctx, old, false, writer); err != nil {
			return fmt.Errorf("the case's old object: %w", err)
		}
		if old.Kind == "PersistentVolumeClaim" {
			if err := c.BindClaims(ctx, []Object{old}); err != nil {
				return err
			}
		}
		if live, _, _, err = c.get(ctx, old); err != nil {
			return err
		}
	}
	meta, _ := live.Doc["metadata"].(map[string]any)
	doc := obj.Doc
	m, _ := doc["metadata"].(map[string]any)
	m["resourceVersion"] = meta["resourceVersion"]
	if status, ok := live.Doc["status"]; ok && obj.Kind == "PersistentVolumeClaim" {
		doc["status"] = status
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	path, err := c.objectPath(ctx, obj)
	if err != nil {
		return err
	}
	_, err = c.send(ctx, http.MethodPut, path, url.Values{"dryRun": {"All"}, "fieldManager": {"tenant"}, "fieldValidation": {"Strict"}}, "application/json", body, header)
	return err
}
