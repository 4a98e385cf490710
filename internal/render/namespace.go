package render

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// Namespace is the tenant's namespace.
func Namespace(t *resolve.Tenant) emit.Object {
	labels := model.TenantNamespaceLabels(t)
	ns := &corev1.Namespace{
		TypeMeta:   typeMeta("v1", "Namespace"),
		ObjectMeta: objectMeta("Namespace", "", t.Name, t.Doc.Rel, labels, t.Metadata.Annotations),
	}
	return emit.Object{APIVersion: "v1", Kind: "Namespace", Name: t.Name, Scope: emit.TenantScope, Body: ns}
}
