package render

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/virtc/virtc/internal/alerts"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
)

// LabelClusterMonitoring marks a namespace whose ServiceMonitors and
// PrometheusRules OpenShift's platform Prometheus reads (cluster
// monitoring operator: namespaces labelled openshift.io/cluster-monitoring
// "true"). OpenShift Virtualization's metrics (virt-controller,
// virt-handler, HCO) are scraped from openshift-cnv only with it, and the
// platform rule is evaluated there only with it.
const LabelClusterMonitoring = "openshift.io/cluster-monitoring"

// PlatformRules renders the platform's PrometheusRule in openshift-cnv:
// HyperConverged health, the operators' CSVs, each tenant's quota headroom
// and the restore drills' evidence (package alerts).
func PlatformRules(plan *alerts.Plan) []emit.Object {
	if plan == nil {
		return nil
	}
	return []emit.Object{prometheusRule(&plan.Platform, map[string]string{}, emit.Cluster)}
}

// TenantRules renders a tenant's PrometheusRules: its VMs' in its
// namespace (evaluated by user workload monitoring, limited to the
// namespace), and its backup Schedules' in openshift-adp beside them.
func TenantRules(plan *alerts.Plan, tenant string) []emit.Object {
	if plan == nil {
		return nil
	}
	var objs []emit.Object
	for _, rs := range []*alerts.RuleSet{plan.VMs[tenant], plan.Backups[tenant]} {
		if rs != nil {
			objs = append(objs, prometheusRule(rs, map[string]string{model.LabelTenant: tenant}, emit.TenantScope))
		}
	}
	return objs
}

func prometheusRule(rs *alerts.RuleSet, labels map[string]string, scope emit.Scope) emit.Object {
	spec := extapi.PrometheusRuleSpec{}
	for _, g := range rs.Groups {
		group := extapi.RuleGroup{Name: g.Name}
		for _, r := range g.Rules {
			group.Rules = append(group.Rules, extapi.Rule{Alert: r.Alert, Expr: r.Expr, For: r.For, Labels: r.Labels, Annotations: r.Annotations})
		}
		spec.Groups = append(spec.Groups, group)
	}
	pr := &extapi.PrometheusRule{
		TypeMeta:   typeMeta("monitoring.coreos.com/v1", "PrometheusRule"),
		ObjectMeta: objectMeta("PrometheusRule", rs.Namespace, rs.Name, rs.Source, labels, nil),
		Spec:       spec,
	}
	return emit.Object{APIVersion: "monitoring.coreos.com/v1", Kind: "PrometheusRule", Namespace: rs.Namespace, Name: rs.Name, Scope: scope, Body: pr}
}

// monitorNamespace labels openshift-cnv and, when virtc installs OADP,
// openshift-adp for the platform Prometheus when the build compiles
// monitoring: the platform rule and the backups' rules are evaluated, and
// Velero's ServiceMonitor read, only in namespaces so labelled.
func monitorNamespace(plan *alerts.Plan, objs []emit.Object) {
	if plan == nil {
		return
	}
	for _, o := range objs {
		if ns, ok := o.Body.(*corev1.Namespace); ok && (ns.Name == alerts.PlatformNamespace || ns.Name == alerts.BackupNamespace) {
			ns.Labels[LabelClusterMonitoring] = "true"
		}
	}
}
