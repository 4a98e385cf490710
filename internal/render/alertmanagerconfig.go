package render

import (
	"github.com/virtc/virtc/internal/alerts"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
)

// AlertmanagerConfig renders the route of a tenant's alerts to its
// receiver (Tenant spec.alerts): an AlertmanagerConfig in its namespace,
// which user workload monitoring's Alertmanager merges with a matcher on
// the namespace (prometheus-operator v0.85.0 pkg/alertmanager/amcfg.go,
// getEnforcer: namespaceEnforcer by default), so it routes that tenant's
// alerts only. Grouped by alert and VM, resolved alerts sent too.
// Nothing without a receiver (the alerts then go where the cluster's
// Alertmanager routes them by default).
func AlertmanagerConfig(plan *alerts.Plan, tenant string) []emit.Object {
	if plan == nil || plan.Receivers[tenant] == nil {
		return nil
	}
	r := plan.Receivers[tenant]
	yes := true
	recv := extapi.AlertReceiver{Name: alerts.ReceiverName}
	for _, to := range r.Email {
		recv.EmailConfigs = append(recv.EmailConfigs, extapi.EmailConfig{To: to, SendResolved: &yes})
	}
	if r.Webhook != "" {
		recv.WebhookConfigs = append(recv.WebhookConfigs, extapi.WebhookConfig{URL: r.Webhook, SendResolved: &yes})
	}
	amc := &extapi.AlertmanagerConfig{
		TypeMeta:   typeMeta("monitoring.coreos.com/v1alpha1", "AlertmanagerConfig"),
		ObjectMeta: objectMeta("AlertmanagerConfig", tenant, alerts.ReceiverName, r.Source, map[string]string{model.LabelTenant: tenant}, nil),
		Spec: extapi.AlertmanagerConfigSpec{
			Route:     &extapi.AlertRoute{Receiver: alerts.ReceiverName, GroupBy: []string{"alertname", "name"}},
			Receivers: []extapi.AlertReceiver{recv},
		},
	}
	return []emit.Object{{APIVersion: "monitoring.coreos.com/v1alpha1", Kind: "AlertmanagerConfig", Namespace: tenant, Name: alerts.ReceiverName, Scope: emit.TenantScope, Body: amc}}
}
