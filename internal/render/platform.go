package render

import (
	"fmt"
	corev1 "k8s.io/api/core/v1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/versions"
)

const operatorGroupCNV = "kubevirt-hyperconverged-group"

// Platform renders the operator install and the HyperConverged.
func Platform(m *resolve.Model, p *resolve.Platform) []emit.Object {
	src := p.Doc.Rel
	labels := map[string]string{model.LabelPlatform: p.Name}
	spec := p.Obj.Spec

	ns := &corev1.Namespace{
		TypeMeta:   typeMeta("v1", "Namespace"),
		ObjectMeta: withWave(objectMeta("Namespace", "", model.CNVNamespace, src, labels, nil), waveOperator),
	}
	og := &extapi.OperatorGroup{
		TypeMeta:   typeMeta("operators.coreos.com/v1", "OperatorGroup"),
		ObjectMeta: objectMeta("OperatorGroup", model.CNVNamespace, operatorGroupCNV, src, labels, nil),
		Spec:       extapi.OperatorGroupSpec{TargetNamespaces: []string{model.CNVNamespace}},
	}
	sub := &extapi.Subscription{
		TypeMeta: typeMeta("operators.coreos.com/v1alpha1", "Subscription"),
		ObjectMeta: objectMeta("Subscription", model.CNVNamespace, "hco-operatorhub", src, labels, map[string]string{
			model.AnnotationOLMGraph: fmt.Sprintf("%s; channel head %s", p.Graph, versions.HCOCSV(p.CatalogHead)),
		}),
		Spec: extapi.SubscriptionSpec{
			Channel:         firstNonEmpty(spec.Channel, p.Release.Channel),
			Name:            model.HCOPackage,
			Source:          catalogSourceName(p),
			SourceNamespace: model.CatalogSourceNS,
			StartingCSV:     versions.HCOCSV(p.Version),
			// Manual: an upgrade is a reviewed change in Git (a new version
			// here), never something OLM does on its own.
			InstallPlanApproval: "Manual",
			Config:              subscriptionConfig(spec.Infra),
		},
	}
	objs := []emit.Object{
		{APIVersion: "v1", Kind: "Namespace", Name: model.CNVNamespace, Scope: emit.Cluster, Body: ns},
		{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: model.CNVNamespace, Name: operatorGroupCNV, Scope: emit.Cluster, Body: og},
		{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: model.CNVNamespace, Name: "hco-operatorhub", Scope: emit.Cluster, Body: sub},
	}
	objs = append(objs, PinnedCatalog(p)...)
	objs = append(objs, Approver(p, hcoApproval(p))...)
	objs = append(objs, MigrationNetwork(m, p)...)
	return append(objs, HyperConverged(m, p))
}

// catalogSourceName is the CatalogSource the Subscriptions install from.
func catalogSourceName(p *resolve.Platform) string {
	if p.Obj.Spec.CatalogSource != nil {
		return model.PinnedCatalogSource
	}
	return model.CatalogSource
}

// PinnedCatalog renders the CatalogSource of spec.catalogSource: sourceType
// grpc with the digest-pinned index image, which OLM's catalog operator
// serves from a registry pod in openshift-marketplace
// (operator-lifecycle-manager v0.42.0 pkg/controller/registry/reconciler/
// grpc.go, EnsureRegistryServer; no updateStrategy: a digest never
// changes, so there is nothing to poll; no grpcPodConfig: reconciler.go
// getDefaultPodContextConfig picks restricted or legacy from the
// namespace's pod-security enforce label, as for redhat-operators). The Subscriptions name it in
// spec.source, and the resolver takes its candidates from that source only
// (resolver.go getSubscriptionVariables: catalog := SourceKey{sub.Spec.
// CatalogSource, sub.Spec.CatalogSourceNamespace}). It comes one wave
// before the Subscriptions, so they never name a missing catalog.
func PinnedCatalog(p *resolve.Platform) []emit.Object {
	cs := p.Obj.Spec.CatalogSource
	if cs == nil {
		return nil
	}
	labels := map[string]string{model.LabelPlatform: p.Name}
	obj := &extapi.CatalogSource{
		TypeMeta:   typeMeta("operators.coreos.com/v1alpha1", "CatalogSource"),
		ObjectMeta: withWave(objectMeta("CatalogSource", model.CatalogSourceNS, model.PinnedCatalogSource, p.Doc.Rel, labels, nil), waveCatalog),
		Spec: extapi.CatalogSourceSpec{
			SourceType:  "grpc",
			Image:       cs.Image,
			DisplayName: "Red Hat Operators (pinned by virtc: kubevirt-hyperconverged " + p.CatalogHead.String() + ")",
			Publisher:   "Red Hat",
		},
	}
	return []emit.Object{{APIVersion: "operators.coreos.com/v1alpha1", Kind: "CatalogSource", Namespace: model.CatalogSourceNS, Name: model.PinnedCatalogSource, Scope: emit.Cluster, Body: obj}}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func subscriptionConfig(infra *api.Placement) *extapi.SubscriptionConfig {
	if infra == nil {
		return nil
	}
	return &extapi.SubscriptionConfig{NodeSelector: infra.NodeSelector, Tolerations: tolerations(infra.Tolerations)}
}

func tolerations(ts []api.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range ts {
		out = append(out, corev1.Toleration{
			Key:      t.Key,
			Operator: corev1.TolerationOperator(t.Operator),
			Value:    t.Value,
			Effect:   corev1.TaintEffect(t.Effect),
		})
	}
	return out
}

func placement(p *api.Placement) *extapi.HyperConvergedConfig {
	if p == nil {
		return nil
	}
	return &extapi.HyperConvergedConfig{NodePlacement: &extapi.NodePlacement{NodeSelector: p.NodeSelector, Tolerations: tolerations(p.Tolerations)}}
}
