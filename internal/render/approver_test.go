package render

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/internal/versions"
)

func approverPlatform(t *testing.T, version string) *resolve.Platform {
	t.Helper()
	r, v, err := versions.Lookup(version)
	if err != nil {
		t.Fatal(err)
	}
	obj := &api.Platform{Spec: api.PlatformSpec{Version: version, Approver: &api.Approver{Image: "quay.io/virtc/virtc@sha256:" + strings.Repeat("a", 64)}}}
	return &resolve.Platform{Entry: decode.Entry[api.Platform]{Obj: obj, Doc: &source.Doc{Rel: "platform.yaml"}}, Name: "lab", Release: r, Version: v, CatalogHead: versions.DefaultHead(v)}
}

// The approver's Role is least privilege: a namespaced Role with no
// wildcard, get/list/patch on installplans, get on its own Subscription
// and the pinned CSV by name, nothing else; in the catalog's namespace a
// Role with get on the Subscription's CatalogSource by name, nothing else;
// its Job is a Sync hook in the Subscription's wave, replaced before each
// run.
func TestApproverLeastPrivilege(t *testing.T) {
	p := approverPlatform(t, "4.21.3")
	objs := Approver(p, hcoApproval(p))
	var kinds []string
	for i, o := range objs {
		kinds = append(kinds, o.Kind)
		want := model.CNVNamespace
		if i == 3 || i == 4 {
			want = model.CatalogSourceNS
		}
		if o.Namespace != want {
			t.Errorf("%s in %q, want %s", o.Kind, o.Namespace, want)
		}
	}
	if strings.Join(kinds, " ") != "ServiceAccount Role RoleBinding Role RoleBinding Job" {
		t.Fatalf("kinds %v", kinds)
	}
	catalogRole := objs[3].Body.(*rbacv1.Role)
	if len(catalogRole.Rules) != 1 || !slices.Equal(catalogRole.Rules[0].Resources, []string{"catalogsources"}) || !slices.Equal(catalogRole.Rules[0].Verbs, []string{"get"}) || !slices.Equal(catalogRole.Rules[0].ResourceNames, []string{model.CatalogSource}) {
		t.Errorf("catalog Role rules %+v", catalogRole.Rules)
	}
	if crb := objs[4].Body.(*rbacv1.RoleBinding); crb.RoleRef.Name != catalogRole.Name || crb.Subjects[0].Name != ApproverName || crb.Subjects[0].Namespace != model.CNVNamespace {
		t.Errorf("catalog RoleBinding %+v", crb)
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
	if rb.RoleRef.Kind != "Role" || rb.Subjects[0].Kind != "ServiceAccount" || rb.Subjects[0].Namespace != model.CNVNamespace {
		t.Errorf("binding %+v", rb)
	}
	job := objs[5].Body.(*batchv1.Job)
	a := job.Annotations
	if a[AnnotationHook] != "Sync" || a[AnnotationHookDeletePolicy] != "BeforeHookCreation" || a[model.AnnotationSyncWave] != "-30" {
		t.Errorf("job annotations %v", a)
	}
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	if args != "approve-installplan --namespace=openshift-cnv --subscription=hco-operatorhub --csv=kubevirt-hyperconverged-operator.v4.21.3 --catalog-head=kubevirt-hyperconverged-operator.v4.21.8 --timeout=45m" {
		t.Errorf("args %s", args)
	}
	if *job.Spec.BackoffLimit != 0 || job.Spec.Template.Spec.ServiceAccountName != ApproverName {
		t.Errorf("job spec %+v", job.Spec)
	}
}

// The approver models OLM's route in the catalog the Subscription installs
// from: the default catalog's head, or the head of the Platform's pinned
// catalog, whose CatalogSource the HCO and OADP Subscriptions both name.
func TestApproverCatalogHead(t *testing.T) {
	p := approverPlatform(t, "4.22.5")
	if a := hcoApproval(p); a.head != "kubevirt-hyperconverged-operator.v4.22.6" {
		t.Errorf("default catalog: head %s", a.head)
	}
	if a := oadpApproval(p); a.head != "oadp-operator.v1.6.0" || a.csv != a.head {
		t.Errorf("OADP: %+v", a)
	}
	if PinnedCatalog(p) != nil || catalogSourceName(p) != model.CatalogSource {
		t.Error("a CatalogSource without spec.catalogSource")
	}
	p.Obj.Spec.CatalogSource = &api.CatalogSource{Image: "registry.example/redhat/redhat-operator-index@sha256:" + strings.Repeat("b", 64), Head: "4.22.5"}
	p.CatalogHead = p.Version
	if a := hcoApproval(p); a.head != "kubevirt-hyperconverged-operator.v4.22.5" {
		t.Errorf("pinned catalog: head %s", a.head)
	}
	objs := PinnedCatalog(p)
	if len(objs) != 1 || objs[0].Namespace != model.CatalogSourceNS || objs[0].Name != model.PinnedCatalogSource || catalogSourceName(p) != model.PinnedCatalogSource {
		t.Fatalf("pinned catalog objects %+v", objs)
	}
	cs := objs[0].Body.(*extapi.CatalogSource)
	if cs.Spec.SourceType != "grpc" || cs.Spec.Image != p.Obj.Spec.CatalogSource.Image || cs.Annotations[model.AnnotationSyncWave] != strconv.Itoa(waveCatalog) {
		t.Errorf("CatalogSource %+v", cs)
	}
	if waveCatalog >= waveOperator {
		t.Error("the CatalogSource's wave is not before the Subscriptions'")
	}
}
