package render

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// ValidatingAdmissionPolicyBinding puts the tenant's guardrails policy
// into force: Deny (a refused write fails with the rule's message), in
// the namespaces the policy's matchConstraints select (the tenant's).
func ValidatingAdmissionPolicyBinding(t *resolve.Tenant) emit.Object {
	name := model.GuardrailPolicyName(t.Name)
	obj := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
		ObjectMeta: objectMeta("ValidatingAdmissionPolicyBinding", "", name, t.Doc.Rel, map[string]string{model.LabelTenant: t.Name}, nil),
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	return emit.Object{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding", Name: name, Scope: emit.TenantScope, Body: obj}
}
