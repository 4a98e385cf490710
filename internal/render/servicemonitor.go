package render

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtc/virtc/internal/alerts"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// VeleroMonitorName names the ServiceMonitor of Velero's metrics.
const VeleroMonitorName = "virtc-velero"

// VeleroMonitor renders the ServiceMonitor that gives the backup alerts
// their data, when virtc installs OADP and compiles monitoring: the
// backups' rules (alerts.backupRules) read Velero's
// velero_backup_last_successful_timestamp, and OADP creates the Service of
// Velero's metrics but nothing that scrapes it (oadp-operator oadp-1.5
// internal/controller/monitor.go, ReconcileVeleroMetricsSVC: Service
// openshift-adp-velero-metrics-svc, port "monitoring" 8085, labelled as the
// Velero server with the DataProtectionApplication's name as instance,
// internal/controller/velero.go getAppLabels). The namespace is labelled
// for the platform Prometheus with the rules (monitorNamespace).
func VeleroMonitor(plan *alerts.Plan, p *resolve.Platform) []emit.Object {
	if plan == nil || p == nil {
		return nil
	}
	if dp := p.Obj.Spec.DataProtection; dp == nil || dp.External {
		return nil
	}
	sm := &extapi.ServiceMonitor{
		TypeMeta:   typeMeta("monitoring.coreos.com/v1", "ServiceMonitor"),
		ObjectMeta: objectMeta("ServiceMonitor", model.OADPNamespace, VeleroMonitorName, p.Doc.Rel, map[string]string{model.LabelPlatform: p.Name}, nil),
		Spec: extapi.ServiceMonitorSpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{
				"app.kubernetes.io/name":      "velero",
				"app.kubernetes.io/component": "server",
				"app.kubernetes.io/instance":  model.DPAName,
			}},
			Endpoints: []extapi.Endpoint{{Port: "monitoring", Interval: "30s"}},
		},
	}
	return []emit.Object{{APIVersion: "monitoring.coreos.com/v1", Kind: "ServiceMonitor", Namespace: model.OADPNamespace, Name: VeleroMonitorName, Scope: emit.Cluster, Body: sm}}
}
