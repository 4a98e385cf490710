package render

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/rules"
)

// ValidatingAdmissionPolicy is the tenant's guardrails policy: the rules
// of internal/rules as the API server evaluates them (CEL), in the tenant's
// namespace (rules.PolicySpec).
func ValidatingAdmissionPolicy(m *resolve.Model, t *resolve.Tenant) emit.Object {
	name := model.GuardrailPolicyName(t.Name)
	obj := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
		ObjectMeta: objectMeta("ValidatingAdmissionPolicy", "", name, t.Doc.Rel, map[string]string{model.LabelTenant: t.Name}, nil),
		Spec:       rules.PolicySpec(m, t),
	}
	return emit.Object{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy", Name: name, Scope: emit.TenantScope, Body: obj}
}
