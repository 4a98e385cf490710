package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/internal/model"
	"sigs.k8s.io/yaml"
)

// TestGuardrailPolicies applies the tenants' guardrails policies
// (ValidatingAdmissionPolicies, internal/rules/admission.go) to
// a real API server and checks what issue 24 asks of them:
//
//   - a tenant's user, holding exactly the RoleBindings virtc emits (and
//     the upstream roles they name, testdata/upstream-edit-roles.yaml),
//     who writes around Git is refused each direct bypass with the
//     rule's message;
//   - what KubeVirt and CDI create for the tenant, as their service
//     accounts, is admitted, and so is a tenant's write that keeps to its
//     allowances;
//   - every object of every golden and example output is admitted under
//     its own policies (as the admin identity Argo CD would use), on the
//     platform version it installs (forGuardrails).
//
// The server runs with --authorization-mode=RBAC (controlplane.go).
func TestGuardrailPolicies(t *testing.T) {
	bins := binaries(t)
	outputs := append(goldenOutputs(t), exampleOutputs(t)...)
	// Beside the other tests, once the outputs are built (exampleOutputs
	// changes the working directory), and each version on a server of its
	// own, in parallel.
	t.Parallel()
	for _, version := range platformVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			// A claim's dataSourceRef.namespace (a clone from another
			// namespace) is kept only with CrossNamespaceVolumeDataSource
			// (alpha, off by default: the API server drops the field);
			// a cluster may turn it on, and the policy holds then too.
			var gates []string
			if version == platformVersions[0] {
				gates = append(gates, "--feature-gates=CrossNamespaceVolumeDataSource=true")
			}
			c := startControlPlane(t, bins, version, gates...)
			installEditRoles(t, c)
			if version == platformVersions[0] {
				t.Run("bypasses", func(t *testing.T) { checkBypasses(t, c) })
				t.Run("compile-refusals", func(t *testing.T) { checkCompileRefusals(t, c) })
			}
			admitted := 0
			for _, o := range forGuardrails(t, outputs, version) {
				t.Run(o.name, func(t *testing.T) { admitted += checkAdmitted(t, c, o) })
			}
			t.Logf("platform %s: %d objects admitted under their tenants' guardrails", version, admitted)
		})
	}
}

// forGuardrails selects the outputs whose guardrails are judged on a
// platform version: those installing it, and on the newest version those
// fitting every version. The policies' CEL and the API server are the same
// on every version; what differs is the CRDs, and TestConformance applies
// each output fitting every version to every version's CRDs. Judging such
// an output's creates once more per older version would repeat the same
// judgement (about 80 of the suite's 140 outputs, a third of its time).
func forGuardrails(t *testing.T, outputs []output, version string) []output {
	return selectOutputs(t, outputs, version, version == platformVersions[0])
}

// installEditRoles installs the upstream edit roles
// (testdata/upstream-edit-roles.yaml, Cluster.InstallEditRoles).
func installEditRoles(t *testing.T, c *Cluster) {
	t.Helper()
	if err := c.InstallEditRoles(t.Context(), EditRoles); err != nil {
		t.Fatal(err)
	}
}

// waitEnforced waits until the tenant's policy refuses a probe (a dry
// run): the API server enforces a new policy once its informers see it.
func waitEnforced(t *testing.T, c *Cluster, tenant string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := probeCreate(t.Context(), c, tenant)
		var refused *APIError
		if err != nil && !errors.As(err, &refused) {
			t.Fatal(err)
		}
		if refused != nil && strings.Contains(refused.Message, "virtc guardrail instancetype") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the guardrails of tenant %s are not enforced after 60s: %v", tenant, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// probeCreate dry-runs the creation of the tenant's probe VM as the admin,
// as `kubectl create --dry-run=server` does: nil when it is admitted, an
// *APIError when the server refuses it.
func probeCreate(ctx context.Context, c *Cluster, tenant string) error {
	objs, err := ParseObjects([]byte(probeVM(tenant)))
	if err != nil {
		return err
	}
	return c.create(ctx, objs[0], true, nil)
}

// probeVM is a VM of a size no catalog has, in the tenant's namespace.
func probeVM(tenant string) string {
	return fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: virtc-guardrail-probe, namespace: %s}
spec:
  runStrategy: Halted
  instancetype: {name: virtc-guardrail-probe}
  template: {spec: {domain: {devices: {}}}}
`, tenant)
}

// checkAdmitted puts an output's namespaces and its tenants' policies in
// force, then dry-runs the whole output on the server: every object must
// pass its tenant's guardrails. It returns the number of objects
// admitted. The policies are deleted again (and the test waits until the
// server no longer enforces them, since the next output may hold other
// policies of the same names); the namespaces stay, for the next outputs.
func checkAdmitted(t *testing.T, c *Cluster, o output) int {
	ctx := t.Context()
	objs, err := ParseObjects(o.yaml)
	if err != nil {
		t.Fatal(err)
	}
	var inForce []Object
	var tenants []string
	for _, obj := range objs {
		switch obj.Kind {
		case "Namespace":
			inForce = append(inForce, obj)
		case "ValidatingAdmissionPolicy":
			labels, _ := obj.Doc["metadata"].(map[string]any)["labels"].(map[string]any)
			tenants = append(tenants, labels[model.LabelTenant].(string))
			inForce = append(inForce, obj)
		case "ValidatingAdmissionPolicyBinding":
			inForce = append(inForce, obj)
		}
	}
	if len(tenants) == 0 {
		t.Skip("no tenant, so no guardrails: nothing to judge")
	}
	prepare(t, c, objs)
	inForceFile, err := c.objectsFile(inForce)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CP.MustKubectl(ctx, nil, ApplyArgs(inForceFile, false)...); err != nil {
		t.Fatal(err)
	}
	policies := slices.DeleteFunc(slices.Clone(inForce), func(o Object) bool { return o.Kind == "Namespace" })
	t.Cleanup(func() {
		ctx := context.WithoutCancel(ctx)
		for _, p := range policies {
			if err := c.remove(ctx, p, false); err != nil {
				t.Errorf("clean up: %v", err)
			}
		}
		for _, tenant := range tenants {
			if err := waitLifted(ctx, c, tenant); err != nil {
				t.Error(err)
			}
		}
	})
	for _, tenant := range tenants {
		waitEnforced(t, c, tenant)
	}
	file, err := c.file(o.yaml)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.CP.Kubectl(ctx, nil, ApplyArgs(file, true)...)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("the output is refused under its tenants' guardrails (%s): %s", strings.Join(tenants, ", "), res)
	}
	return len(objs)
}

// waitLifted waits until the probe of waitEnforced is admitted again:
// the server no longer enforces the tenant's deleted policy.
func waitLifted(ctx context.Context, c *Cluster, tenant string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := probeCreate(ctx, c, tenant)
		if err == nil {
			return nil
		}
		var refused *APIError
		if !errors.As(err, &refused) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the deleted guardrails of tenant %s are still enforced after 60s: %v", tenant, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
