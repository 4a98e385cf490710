package render

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/versions"
)

// Argo CD's hook annotations (argo-cd v3.6.1 gitops-engine/pkg/sync/hook).
const (
	AnnotationHook             = "argocd.argoproj.io/hook"
	AnnotationHookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	// ApproverName names the approver's ServiceAccount, Role, RoleBinding
	// and Job in each operator namespace.
	ApproverName = "virtc-installplan-approver"
	// DefaultApproverTimeoutMinutes bounds an approver run when the
	// Platform sets none.
	DefaultApproverTimeoutMinutes = 45
)

// approval is one operator the approver approves InstallPlans of.
type approval struct {
	namespace, subscription string
	// csv is the pinned CSV; head the CSV at the head of the catalog's
	// channel as the build assumed it (the approver decides on the live
	// catalog and says when it differs: internal/approve).
	csv, head string
	// catalog is the CatalogSource the Subscription installs from, in
	// model.CatalogSourceNS: the approver reads its graph.
	catalog string
}

// hcoApproval: the pinned CSV and the head of the catalog the Subscription
// installs from (spec.catalogSource.head, or the default catalog's).
func hcoApproval(p *resolve.Platform) approval {
	return approval{namespace: model.CNVNamespace, subscription: "hco-operatorhub", csv: versions.HCOCSV(p.Version), head: versions.HCOCSV(p.CatalogHead), catalog: catalogSourceName(p)}
}

// oadpApproval: OADP's pinned CSV, the OADP release of the platform
// release, which is also the head of OADP's channel in the catalog (each
// OADP bundle skips every earlier version: versions.OADPChannel).
func oadpApproval(p *resolve.Platform) approval {
	csv := versions.OADPCSV(p.Release.OADP.Version)
	return approval{namespace: model.OADPNamespace, subscription: model.OADPPackage, csv: csv, head: csv, catalog: catalogSourceName(p)}
}

// ApproverCatalogRole names the approver's Role and RoleBinding in the
// catalog's namespace, one per operator namespace.
func ApproverCatalogRole(namespace string) string { return ApproverName + "-" + namespace }

// Approver renders the InstallPlan approver of one operator: a
// ServiceAccount, a Role that may only get, list and patch InstallPlans,
// get the operator's Subscription and get the pinned CSV in the operator's
// namespace, its RoleBinding, a Role and RoleBinding in the catalog's
// namespace that may only get the Subscription's CatalogSource (to find
// its registry, whose graph the approver reads over gRPC as OLM does:
// internal/olmindex), and an Argo CD Sync hook Job in the
// Subscription's wave that runs `virtc approve-installplan` (internal/approve).
//
// The registry is reachable from the Job's pod: openshift-marketplace
// denies all traffic by default (operator-marketplace
// manifests/13_networkpolicy_default-deny.yaml), and OLM adds to each
// catalog's registry pod a NetworkPolicy that takes TCP 50051 from
// anywhere (operator-lifecycle-manager v0.42.0 pkg/controller/registry/
// reconciler/helpers.go DesiredGRPCServerNetworkPolicy,
// "<catalog>-grpc-server"), which is how OLM's catalog-operator reaches it
// too.
//
// The Job shares the Subscription's wave because Argo CD moves to the next
// wave only when every resource of this one is healthy (gitops-engine
// pkg/sync/sync_context.go: the tasks of one phase and wave run together,
// and a running hook or an unhealthy resource holds the sync), and a new
// Manual Subscription stays Progressing until its first InstallPlan is
// approved: in a later wave the Job would never start. The HyperConverged
// and DataProtectionApplication come in later waves, once the Job has seen
// the pinned CSV succeed (its CRDs exist then).
func Approver(p *resolve.Platform, a approval) []emit.Object {
	spec := p.Obj.Spec.Approver
	if spec == nil {
		return nil
	}
	src := p.Doc.Rel
	labels := map[string]string{model.LabelPlatform: p.Name}
	timeout := int64(DefaultApproverTimeoutMinutes)
	if spec.TimeoutMinutes != nil {
		timeout = *spec.TimeoutMinutes
	}
	sa := &corev1.ServiceAccount{
		TypeMeta:   typeMeta("v1", "ServiceAccount"),
		ObjectMeta: withWave(objectMeta("ServiceAccount", a.namespace, ApproverName, src, labels, nil), waveOperator),
	}
	role := &rbacv1.Role{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "Role"),
		ObjectMeta: withWave(objectMeta("Role", a.namespace, ApproverName, src, labels, nil), waveOperator),
		Rules:      approverRules(a.subscription, a.csv),
	}
	rb := &rbacv1.RoleBinding{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
		ObjectMeta: withWave(objectMeta("RoleBinding", a.namespace, ApproverName, src, labels, nil), waveOperator),
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ApproverName, Namespace: a.namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ApproverName},
	}
	catalogRole := &rbacv1.Role{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "Role"),
		ObjectMeta: withWave(objectMeta("Role", model.CatalogSourceNS, ApproverCatalogRole(a.namespace), src, labels, nil), waveOperator),
		Rules:      approverCatalogRules(a.catalog),
	}
	catalogRB := &rbacv1.RoleBinding{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
		ObjectMeta: withWave(objectMeta("RoleBinding", model.CatalogSourceNS, ApproverCatalogRole(a.namespace), src, labels, nil), waveOperator),
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ApproverName, Namespace: a.namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ApproverCatalogRole(a.namespace)},
	}
	args := []string{"approve-installplan", "--namespace=" + a.namespace, "--subscription=" + a.subscription, "--csv=" + a.csv, "--catalog-head=" + a.head}
	args = append(args, fmt.Sprintf("--timeout=%dm", timeout))
	jobMeta := withWave(objectMeta("Job", a.namespace, ApproverName, src, labels, nil), waveOperator)
	jobMeta.Annotations[AnnotationHook] = "Sync"
	// The last run stays for its logs; the next sync replaces it.
	jobMeta.Annotations[AnnotationHookDeletePolicy] = "BeforeHookCreation"
	no, yes := false, true
	deadline := (timeout + 5) * 60
	// No second pod: the approver retries transient API errors itself,
	// within --timeout, and a permanent error or a refusal would fail a
	// second pod the same way (internal/approve, Transient).
	var backoff int32
	job := &batchv1.Job{
		TypeMeta:   typeMeta("batch/v1", "Job"),
		ObjectMeta: jobMeta,
		Spec: batchv1.JobSpec{
			BackoffLimit:          &backoff,
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					ServiceAccountName: ApproverName,
					RestartPolicy:      corev1.RestartPolicyNever,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   &yes,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  "approve",
						Image: spec.Image,
						Args:  args,
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: &no,
							ReadOnlyRootFilesystem:   &yes,
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
	if infra := p.Obj.Spec.Infra; infra != nil {
		job.Spec.Template.Spec.NodeSelector = infra.NodeSelector
		job.Spec.Template.Spec.Tolerations = tolerations(infra.Tolerations)
	}
	return []emit.Object{
		{APIVersion: "v1", Kind: "ServiceAccount", Namespace: a.namespace, Name: ApproverName, Scope: emit.Cluster, Body: sa},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role", Namespace: a.namespace, Name: ApproverName, Scope: emit.Cluster, Body: role},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Namespace: a.namespace, Name: ApproverName, Scope: emit.Cluster, Body: rb},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role", Namespace: model.CatalogSourceNS, Name: ApproverCatalogRole(a.namespace), Scope: emit.Cluster, Body: catalogRole},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Namespace: model.CatalogSourceNS, Name: ApproverCatalogRole(a.namespace), Scope: emit.Cluster, Body: catalogRB},
		{APIVersion: "batch/v1", Kind: "Job", Namespace: a.namespace, Name: ApproverName, Scope: emit.Cluster, Body: job},
	}
}

// approverRules are the approver's rights in its namespace: the
// InstallPlans, its Subscription and the pinned CSV (or any, when they are
// empty: what Argo CD's controller must hold to create the Role,
// ArgoCDController).
func approverRules(subscription, csv string) []rbacv1.PolicyRule {
	names := func(n string) []string {
		if n == "" {
			return nil
		}
		return []string{n}
	}
	return []rbacv1.PolicyRule{
		// InstallPlan names are generated (install-xxxxx): no
		// resourceNames. No watch: the approver polls.
		{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"installplans"}, Verbs: []string{"get", "list", "patch"}},
		{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"subscriptions"}, ResourceNames: names(subscription), Verbs: []string{"get"}},
		{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"clusterserviceversions"}, ResourceNames: names(csv), Verbs: []string{"get"}},
	}
}

// approverCatalogRules are the approver's rights in the catalog's
// namespace: get the Subscription's CatalogSource (any, when catalog is
// empty: ArgoCDController). Its registry is then read over gRPC, which
// takes no Kubernetes rights.
func approverCatalogRules(catalog string) []rbacv1.PolicyRule {
	var names []string
	if catalog != "" {
		names = []string{catalog}
	}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"catalogsources"}, ResourceNames: names, Verbs: []string{"get"}},
	}
}
