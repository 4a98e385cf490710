package conformance

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// TestDataVolumeImmutabilityPolicy checks offline what the control plane
// checks online: the policy and binding decode strictly into the
// admissionregistration.k8s.io/v1 types and say what CDI's webhook does
// (containerized-data-importer v1.65.0,
// pkg/apiserver/webhooks/datavolume-validate.go): on UPDATE of a
// cdi.kubevirt.io DataVolume (not its status), deny unless the spec is
// unchanged, with CDI's message.
func TestDataVolumeImmutabilityPolicy(t *testing.T) {
	objs, err := ParseObjects([]byte(DataVolumeImmutability))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("%d objects, want the policy and its binding", len(objs))
	}
	strict := func(o Object, into any) {
		t.Helper()
		data, err := json.Marshal(o.Doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(data, into); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
	}
	var policy admissionv1.ValidatingAdmissionPolicy
	strict(objs[0], &policy)
	var binding admissionv1.ValidatingAdmissionPolicyBinding
	strict(objs[1], &binding)

	if policy.APIVersion != "admissionregistration.k8s.io/v1" || policy.Kind != "ValidatingAdmissionPolicy" {
		t.Errorf("first object is %s %s", policy.APIVersion, policy.Kind)
	}
	if policy.Spec.FailurePolicy == nil || *policy.Spec.FailurePolicy != admissionv1.Fail {
		t.Errorf("failurePolicy %v, want Fail", policy.Spec.FailurePolicy)
	}
	mc := policy.Spec.MatchConstraints
	if mc == nil || len(mc.ResourceRules) != 1 {
		t.Fatalf("matchConstraints %+v, want one resource rule", mc)
	}
	rule := mc.ResourceRules[0]
	if !slices.Equal(rule.APIGroups, []string{"cdi.kubevirt.io"}) || !slices.Equal(rule.Resources, []string{"datavolumes"}) ||
		!slices.Equal(rule.Operations, []admissionv1.OperationType{admissionv1.Update}) || !slices.Equal(rule.APIVersions, []string{"*"}) {
		t.Errorf("resource rule %+v, want UPDATE of cdi.kubevirt.io/*/datavolumes", rule)
	}
	if len(policy.Spec.Validations) != 1 {
		t.Fatalf("%d validations, want 1", len(policy.Spec.Validations))
	}
	v := policy.Spec.Validations[0]
	if v.Expression != "object.spec == oldObject.spec" {
		t.Errorf("expression %q", v.Expression)
	}
	if v.Message != "Cannot update DataVolume Spec" {
		t.Errorf("message %q, want CDI's", v.Message)
	}
	if binding.Kind != "ValidatingAdmissionPolicyBinding" || binding.Spec.PolicyName != policy.Name || binding.Name != policy.Name {
		t.Errorf("binding %s %q binds %q, want the policy %q", binding.Kind, binding.Name, binding.Spec.PolicyName, policy.Name)
	}
	if !slices.Equal(binding.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) {
		t.Errorf("validationActions %v, want [Deny]", binding.Spec.ValidationActions)
	}
	if binding.Spec.ParamRef != nil || policy.Spec.ParamKind != nil {
		t.Error("the policy takes no parameters")
	}
}

// changedDataVolumeSpecs lists the DataVolumes of cur whose spec differs
// from the same DataVolume in prev: what the policy (and CDI) refuse when
// cur is applied over prev. It evaluates the policy's expression,
// object.spec == oldObject.spec, on the manifests.
func changedDataVolumeSpecs(prev, cur []Object) []string {
	old := map[string]Object{}
	for _, o := range prev {
		old[o.Key()] = o
	}
	var out []string
	for _, o := range cur {
		if o.Group() != "cdi.kubevirt.io" || o.Kind != "DataVolume" {
			continue
		}
		if p, ok := old[o.Key()]; ok && !reflect.DeepEqual(p.Doc["spec"], o.Doc["spec"]) {
			out = append(out, o.String())
		}
	}
	return out
}

// TestChangeStepsKeepDataVolumeSpecs applies the policy's rule to the
// change fixture offline: no step may change a DataVolume's spec, and the
// disk-grown step must grow a data disk (so that the online run exercises
// the rule with a real growth).
func TestChangeStepsKeepDataVolumeSpecs(t *testing.T) {
	steps := changeSteps(t)
	parsed := make([][]Object, len(steps))
	for i, s := range steps {
		objs, err := ParseObjects(s.yaml)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		parsed[i] = objs
	}
	for i := 1; i < len(steps); i++ {
		if changed := changedDataVolumeSpecs(parsed[i-1], parsed[i]); len(changed) > 0 {
			t.Errorf("%s over %s changes the spec of %s: CDI refuses it", steps[i].name, steps[i-1].name, strings.Join(changed, ", "))
		}
	}

	grown := -1
	for i, s := range steps {
		if s.name == "disk-grown" {
			grown = i
		}
	}
	if grown < 1 {
		t.Fatal("no disk-grown step after the base")
	}
	request := func(o Object) resource.Quantity {
		spec, _ := o.Doc["spec"].(map[string]any)
		res, _ := spec["resources"].(map[string]any)
		req, _ := res["requests"].(map[string]any)
		s, _ := req["storage"].(string)
		q, _ := resource.ParseQuantity(s)
		return q
	}
	before := map[string]resource.Quantity{}
	for _, o := range parsed[grown-1] {
		if o.Kind == "PersistentVolumeClaim" {
			before[o.Key()] = request(o)
		}
	}
	grew := false
	for _, o := range parsed[grown] {
		if q, ok := before[o.Key()]; ok && o.Kind == "PersistentVolumeClaim" {
			if r := request(o); r.Cmp(q) > 0 {
				grew = true
			}
		}
	}
	if !grew {
		t.Error("the disk-grown step grows no data disk's PersistentVolumeClaim")
	}
}

// TestChangedDataVolumeSpecs shows the offline rule refusing what virtc's
// earlier output did: a data disk as a DataVolume whose size grows.
func TestChangedDataVolumeSpecs(t *testing.T) {
	dv := func(size string) []Object {
		objs, err := ParseObjects([]byte(`apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: web-data, namespace: shop}
spec:
  source: {blank: {}}
  storage: {resources: {requests: {storage: ` + size + `}}}
`))
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	if got := changedDataVolumeSpecs(dv("10Gi"), dv("25Gi")); len(got) != 1 {
		t.Errorf("a grown DataVolume: %v, want it refused", got)
	}
	if got := changedDataVolumeSpecs(dv("10Gi"), dv("10Gi")); len(got) != 0 {
		t.Errorf("an unchanged DataVolume: %v, want none refused", got)
	}
}
