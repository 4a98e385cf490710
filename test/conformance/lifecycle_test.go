package conformance

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/virtc/virtc/internal/cli"
)

// upgradeSteps are the platform upgrades applied on each version's server:
// the lifecycle fixture at the previous minor, then at this one (the
// golden diff scenarios' old and new trees). 4.20 is the oldest minor:
// no step into it.
var upgradeSteps = map[string]string{
	"4.21": "diff-lifecycle-420-421",
	"4.22": "diff-lifecycle-421-422",
}

// upgrade is a platform upgrade step compiled: the output of the previous
// minor and of this one.
type upgrade struct {
	step      string
	prev, cur []byte
}

// upgradeBuilds compiles the upgrade steps into each version, before the
// versions' checks run in parallel.
func upgradeBuilds(t *testing.T) map[string]upgrade {
	out := map[string]upgrade{}
	for version, step := range upgradeSteps {
		dir := filepath.Join(repoRoot, "golden", step)
		out[version] = upgrade{step: step, prev: build(t, filepath.Join(dir, "old")), cur: build(t, filepath.Join(dir, "new"))}
	}
	return out
}

// build compiles a golden input tree.
func build(t *testing.T, dir string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Main([]string{"build", dir}, strings.NewReader(""), &stdout, &stderr); code != cli.ExitOK {
		t.Fatalf("%s does not build (exit %d):\n%s", dir, code, stderr.String())
	}
	return stdout.Bytes()
}

// hooks are the Argo CD hooks among objs: Argo CD deletes a hook with
// hook-delete-policy BeforeHookCreation before it creates it again, so an
// upgrade replaces the approver Job (whose pod template is immutable)
// rather than patching it.
func hooks(objs []Object) []Object {
	var out []Object
	for _, o := range objs {
		meta, _ := o.Doc["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		if ann["argocd.argoproj.io/hook"] != nil && strings.Contains(ann["argocd.argoproj.io/hook-delete-policy"].(string), "BeforeHookCreation") {
			out = append(out, o)
		}
	}
	return out
}

// checkUpgrade applies the platform of the previous minor, then this
// minor's over it as Argo CD would (hooks replaced, the rest applied over
// the live objects), and checks the result equals the new output. Then it
// checks the approvers' RBAC with kubectl auth can-i.
func checkUpgrade(t *testing.T, c *Cluster, u upgrade) int {
	ctx := t.Context()
	step, prev, cur := u.step, u.prev, u.cur
	prevObjs, curObjs := twoStates(t, c, prev, cur)
	// The namespaces OpenShift has and the platform's objects use without
	// creating them (openshift-marketplace, for the approver's Role on its
	// CatalogSource).
	if _, err := c.EnsureNamespaces(ctx, append(slices.Clone(prevObjs), curObjs...)); err != nil {
		t.Fatal(err)
	}
	apply(t, c, "apply "+step+"/old", prev)
	if len(hooks(prevObjs)) != 2 {
		t.Fatalf("%s/old: %d hooks, want the two approver Jobs", step, len(hooks(prevObjs)))
	}
	if err := c.Delete(ctx, hooks(prevObjs)); err != nil {
		t.Fatalf("delete hooks: %v", err)
	}
	apply(t, c, "apply "+step+"/new over old", cur)
	if err := c.Delete(ctx, minus(prevObjs, curObjs)); err != nil {
		t.Fatalf("prune: %v", err)
	}
	checkEqual(t, curObjs, liveOrFail(t, c, curObjs))
	checkApproverRBAC(t, c)
	return len(prevObjs) + len(curObjs)
}

// olmStandIns registers InstallPlan and ClusterServiceVersion as
// resources: OLM's CRDs for them are not in the shared schemas (only
// Subscription and OperatorGroup are; the CatalogSource's real CRD is in
// test/schemas), and kubectl auth can-i resolves a
// resource name through discovery before it asks the authorizer. These
// stand-ins have OLM's group, version, names and scope and accept any
// object; no InstallPlan or CSV is applied, so their schema checks
// nothing.
const olmStandIns = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: installplans.operators.coreos.com
spec:
  group: operators.coreos.com
  names: {kind: InstallPlan, listKind: InstallPlanList, plural: installplans, singular: installplan}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterserviceversions.operators.coreos.com
spec:
  group: operators.coreos.com
  names: {kind: ClusterServiceVersion, listKind: ClusterServiceVersionList, plural: clusterserviceversions, singular: clusterserviceversion}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func installOLMStandIns(t *testing.T, c *Cluster) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.CP.MustKubectl(ctx, []byte(olmStandIns), "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	// OLM's own CatalogSource CRD (test/schemas/README.md), which the
	// 4.22 clusters have already: the approver reads its Subscription's
	// CatalogSource (issue 42).
	if res, err := c.CP.Kubectl(ctx, nil, "get", "crd/catalogsources.operators.coreos.com"); err != nil || res.ExitCode != 0 {
		crd := filepath.Join(repoRoot, "test", "schemas", "4.22", "crd-yaml", "operators.coreos.com", "operators.coreos.com_catalogsources.yaml")
		if _, err := c.CP.MustKubectl(ctx, nil, "create", "-f", crd); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CP.MustKubectl(ctx, nil, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/installplans.operators.coreos.com", "crd/clusterserviceversions.operators.coreos.com", "crd/catalogsources.operators.coreos.com"); err != nil {
		t.Fatal(err)
	}
	if err := c.CP.ForgetDiscovery(); err != nil {
		t.Fatal(err)
	}
}

// checkApproverRBAC asks the API server what the approvers' service
// accounts may do (kubectl auth can-i, a SubjectAccessReview through the
// RBAC authorizer): exactly get, list and patch InstallPlans in their own
// namespace, get their Subscription and their pinned CSV, get their
// Subscription's CatalogSource in openshift-marketplace; nothing else.
func checkApproverRBAC(t *testing.T, c *Cluster) {
	const cnv = "system:serviceaccount:openshift-cnv:virtc-installplan-approver"
	const adp = "system:serviceaccount:openshift-adp:virtc-installplan-approver"
	installOLMStandIns(t, c)
	// The CatalogSource the Subscriptions install from: redhat-operators,
	// or virtc-redhat-operators with a Platform's spec.catalogSource.
	sub, _, ok, err := c.get(t.Context(), Object{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "openshift-cnv", Name: "hco-operatorhub"})
	if err != nil || !ok {
		t.Fatalf("the HCO Subscription: found %v, %v", ok, err)
	}
	spec, _ := sub.Doc["spec"].(map[string]any)
	source, _ := spec["source"].(string)
	cases := []struct {
		as      string
		args    string
		allowed bool
	}{
		{cnv, "patch installplans.operators.coreos.com -n openshift-cnv", true},
		{cnv, "get installplans.operators.coreos.com -n openshift-cnv", true},
		{cnv, "list installplans.operators.coreos.com -n openshift-cnv", true},
		{cnv, "get subscriptions.operators.coreos.com/hco-operatorhub -n openshift-cnv", true},
		{cnv, "get clusterserviceversions.operators.coreos.com/kubevirt-hyperconverged-operator.v" + pinnedHCO(t, c) + " -n openshift-cnv", true},
		{adp, "patch installplans.operators.coreos.com -n openshift-adp", true},
		{adp, "get subscriptions.operators.coreos.com/redhat-oadp-operator -n openshift-adp", true},
		// The Subscription's CatalogSource, to read its registry's graph
		// (issue 42), and nothing else of the catalogs.
		{cnv, "get catalogsources.operators.coreos.com/" + source + " -n openshift-marketplace", true},
		{adp, "get catalogsources.operators.coreos.com/" + source + " -n openshift-marketplace", true},
		{cnv, "get catalogsources.operators.coreos.com/community-operators -n openshift-marketplace", false},
		{cnv, "list catalogsources.operators.coreos.com -n openshift-marketplace", false},
		{cnv, "patch catalogsources.operators.coreos.com/redhat-operators -n openshift-marketplace", false},
		{cnv, "get pods -n openshift-marketplace", false},

		{cnv, "patch installplans.operators.coreos.com -n openshift-adp", false},
		{cnv, "list installplans.operators.coreos.com --all-namespaces", false},
		{cnv, "watch installplans.operators.coreos.com -n openshift-cnv", false},
		{cnv, "update installplans.operators.coreos.com -n openshift-cnv", false},
		{cnv, "create installplans.operators.coreos.com -n openshift-cnv", false},
		{cnv, "delete installplans.operators.coreos.com -n openshift-cnv", false},
		{cnv, "list subscriptions.operators.coreos.com -n openshift-cnv", false},
		{cnv, "patch subscriptions.operators.coreos.com/hco-operatorhub -n openshift-cnv", false},
		{cnv, "get subscriptions.operators.coreos.com/redhat-oadp-operator -n openshift-adp", false},
		{cnv, "get clusterserviceversions.operators.coreos.com/kubevirt-hyperconverged-operator.v4.99.0 -n openshift-cnv", false},
		{cnv, "list clusterserviceversions.operators.coreos.com -n openshift-cnv", false},
		{cnv, "patch hyperconvergeds.hco.kubevirt.io -n openshift-cnv", false},
		{cnv, "get secrets -n openshift-cnv", false},
		{cnv, "create jobs.batch -n openshift-cnv", false},
		{cnv, "create rolebindings.rbac.authorization.k8s.io -n openshift-cnv", false},
		{cnv, "get installplans.operators.coreos.com -n default", false},
		{adp, "patch installplans.operators.coreos.com -n openshift-cnv", false},
		{adp, "patch dataprotectionapplications.oadp.openshift.io -n openshift-adp", false},
	}
	// The questions are independent reads: asked four at a time.
	results := make([]KubectlResult, len(cases))
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 4)
	for i, tc := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			args := append([]string{"auth", "can-i", "--as=" + tc.as}, strings.Fields(tc.args)...)
			results[i], errs[i] = c.CP.Kubectl(t.Context(), nil, args...)
		}()
	}
	wg.Wait()
	for i, tc := range cases {
		res, err := results[i], errs[i]
		if err != nil {
			t.Fatal(err)
		}
		got := res.ExitCode == 0 && strings.TrimSpace(string(res.Stdout)) == "yes"
		if strings.Contains(string(res.Stderr), "doesn't have a resource type") {
			t.Errorf("can-i %s: the server does not know the resource, so the answer says nothing of RBAC:\n%s", tc.args, res)
			continue
		}
		if got != tc.allowed {
			t.Errorf("%s: can-i %s = %v, want %v\n%s", tc.as, tc.args, got, tc.allowed, res)
		}
	}
}

// pinnedHCO is the HCO version the live approver Role names.
func pinnedHCO(t *testing.T, c *Cluster) string {
	role, _, ok, err := c.get(t.Context(), Object{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role", Namespace: "openshift-cnv", Name: "virtc-installplan-approver"})
	if err != nil || !ok {
		t.Fatalf("the approver Role: found %v, %v", ok, err)
	}
	// .rules[2].resourceNames[0]
	rules, _ := role.Doc["rules"].([]any)
	var name string
	if len(rules) > 2 {
		rule, _ := rules[2].(map[string]any)
		names, _ := rule["resourceNames"].([]any)
		if len(names) > 0 {
			name, _ = names[0].(string)
		}
	}
	v, ok := strings.CutPrefix(name, "kubevirt-hyperconverged-operator.v")
	if !ok {
		t.Fatalf("the approver Role names no HCO CSV: %q", name)
	}
	return v
}
