package render

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/virtc/virtc/fn/emit"
	"github.com/virtc/virtc/fn/resolve"
)

// Namespace is the tenant's namespace.
func Namespace(t *resolve.Tenant) emit.Object {
	labels := namespaceLabels(t)
	ns := &corev1.Namespace{
		TypeMeta:   typeMeta("v1", "Namespace"),
		ObjectMeta: objectMeta("Namespace", "", t.Name, t.Doc.Rel, labels, t.Metadata.Annotations),
	}
	return emit.Object{APIVersion: "v1", Kind: "Namespace", Name: t.Name, Scope: emit.TenantScope, Body: ns}
}

// NamespaceLabels are the labels of the tenant's namespace in the
// cluster: virtc's and the API server's kubernetes.io/metadata.name
// (which migration policies' namespace selectors may also match).
func NamespaceLabels(t *resolve.Tenant) map[string]string {
	l := namespaceLabels(t)
	l[LabelManagedBy] = ManagedBy
	l["kubernetes.io/metadata.name"] = t.Name
	return l
}

func namespaceLabels(t *resolve.Tenant) map[string]string {
	labels := map[string]string{LabelTenant: t.Name}
	if t.Spec.Retired {
		labels[LabelRetired] = "true"
	}
	if e := t.Spec.Environment; e != "" {
		labels[LabelEnvironment] = e
	}
	for k, v := range t.Metadata.Labels {
		labels[k] = v
	}
	if t.PrimaryNetwork != nil {
		labels[LabelPrimaryUDN] = ""
	}
	return labels
}
