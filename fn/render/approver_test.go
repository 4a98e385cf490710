package render

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/virtc/virtc/fn/api"
	"github.com/virtc/virtc/fn/decode"
	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/source"
	"github.com/virtc/virtc/fn/versions"
)

func approverPlatform(t *testing.T, version string) *resolve.Platform {
	t.Helper()
	r, v, err := versions.Lookup(version)
	if err != nil {
		t.Fatal(err)
	}
	obj := &api.Platform{Spec: api.PlatformSpec{Version: version, Approver: &api.Approver{Image: "quay.io/virtc/virtc@sha256:" + strings.Repeat("a", 64)}}}
	return &resolve.Platform{Entry: decode.Entry[api.Platform]{Obj: obj, Doc: &source.Doc{Rel: "platform.yaml"}}, Name: "lab", Release: r, Version: v}
}

// The approver's Role is least privilege: a namespaced Role with no
// wildcard, get/list/patch on installplans, get on its own Subscription
// and the pinned CSV by name, nothing else; its Job is a Sync hook in the
// Subscription's wave, replaced before each run.
func TestApproverLeastPrivilege(t *testing.T) {
	p := approverPlatform(t, "4.21.3")
	objs := Approver(p, hcoApproval(p))
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.Kind)
		if o.Namespace != CNVNamespace {
			t.Errorf("%s in %q, want %s", o.Kind, o.Namespace, CNVNamespace)
		}
	}
	if strings.Join(kinds, " ") != "ServiceAccount Role RoleBinding Job" {
		t.Fatalf("kinds %v", kinds)
	}
	role := objs[1].Body.(*rbacv1.Role)
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"installplans"}, Verbs: []string{"get", "list", "patch"}},
		{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"subscriptions"}, ResourceNames: []string{"hco-operatorhub"}, Verbs: []string{"get"}},
		{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"clusterserviceversions"}, ResourceNames: []string{"kubevirt-hyperconverged-operator.v4.21.3"}, Verbs: []string{"get"}},
	}
	if len(role.Rules) != len(want) {
		t.Fatalf("rules %+v", role.Rules)
	}
	for i, r := range role.Rules {
		if !slices.Equal(r.APIGroups, want[i].APIGroups) || !slices.Equal(r.Resources, want[i].Resources) || !slices.Equal(r.Verbs, want[i].Verbs) || !slices.Equal(r.ResourceNames, want[i].ResourceNames) {
			t.Errorf("rule %d = %+v, want %+v", i, r, want[i])
		}
	}
	rb := objs[2].Body.(*rbacv1.RoleBinding)
	if rb.RoleRef.Kind != "Role" || rb.Subjects[0].Kind != "ServiceAccount" || rb.Subjects[0].Namespace != CNVNamespace {
		t.Errorf("binding %+v", rb)
	}
	job := objs[3].Body.(*batchv1.Job)
	a := job.Annotations
	if a[AnnotationHook] != "Sync" || a[AnnotationHookDeletePolicy] != "BeforeHookCreation" || a[AnnotationSyncWave] != "-30" {
		t.Errorf("job annotations %v", a)
	}
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	if args != "approve-installplan --namespace=openshift-cnv --subscription=hco-operatorhub --csv=kubevirt-hyperconverged-operator.v4.21.3 --via=kubevirt-hyperconverged-operator.v4.20.21,kubevirt-hyperconverged-operator.v4.21.0 --timeout=45m" {
		t.Errorf("args %s", args)
	}
	if *job.Spec.BackoffLimit != 0 || job.Spec.Template.Spec.ServiceAccountName != ApproverName {
		t.Errorf("job spec %+v", job.Spec)
	}
}

// The CSVs the approver may pass agree with versions.Path from any
// version of the previous minor or the same minor: whatever OLM proposes
// on the way is allowed, nothing else is.
func TestApproverViaCoversPath(t *testing.T) {
	for _, target := range []string{"4.21.0", "4.21.3", "4.22.0", "4.22.5"} {
		p := approverPlatform(t, target)
		a := hcoApproval(p)
		allowed := append(slices.Clone(a.via), a.csv)
		for _, r := range versions.Releases() {
			for z := r.Patches[0]; z <= r.Patches[1]; z++ {
				from, _ := versions.Parse(r.Minor + "." + strconv.Itoa(z))
				path, err := versions.Path(from, p.Version)
				if err != nil {
					continue
				}
				for _, v := range path {
					if !slices.Contains(allowed, versions.HCOCSV(v)) {
						t.Errorf("%s → %s passes %s, which the approver of %s does not allow (%v)", from, target, v, target, allowed)
					}
				}
			}
		}
	}
}
