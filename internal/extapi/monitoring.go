package extapi

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PrometheusRule is prometheus-operator's monitoring.coreos.com/v1
// PrometheusRule (v0.85.0 pkg/apis/monitoring/v1/prometheusrule_types.go):
// alerting rules that OpenShift's platform Prometheus (in a namespace
// labelled openshift.io/cluster-monitoring) or user workload monitoring
// (any other namespace, its queries limited to that namespace) evaluates.
type PrometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              PrometheusRuleSpec `json:"spec"`
}

// PrometheusRuleSpec holds the rule groups.
type PrometheusRuleSpec struct {
	Groups []RuleGroup `json:"groups"`
}

// RuleGroup is a Prometheus rule group.
type RuleGroup struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// Rule is an alerting rule. Expr is an int-or-string in the CRD; virtc
// writes strings.
type Rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// AlertmanagerConfig is prometheus-operator's monitoring.coreos.com/v1alpha1
// AlertmanagerConfig (v0.85.0
// pkg/apis/monitoring/v1alpha1/alertmanager_config_types.go): a route and
// receivers that the Alertmanager of user workload monitoring merges into
// its configuration, with a matcher on the object's namespace added
// (alertmanagerConfigMatcherStrategy OnNamespace; v0.85.0
// pkg/alertmanager/amcfg.go, getEnforcer: namespaceEnforcer), so that it routes only
// that namespace's alerts.
type AlertmanagerConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              AlertmanagerConfigSpec `json:"spec"`
}

// AlertmanagerConfigSpec is the route and its receivers.
type AlertmanagerConfigSpec struct {
	Route     *AlertRoute     `json:"route"`
	Receivers []AlertReceiver `json:"receivers"`
}

// AlertRoute routes alerts to a receiver, grouped by labels.
type AlertRoute struct {
	Receiver string   `json:"receiver"`
	GroupBy  []string `json:"groupBy,omitempty"`
}

// AlertReceiver is a named receiver.
type AlertReceiver struct {
	Name           string          `json:"name"`
	EmailConfigs   []EmailConfig   `json:"emailConfigs,omitempty"`
	WebhookConfigs []WebhookConfig `json:"webhookConfigs,omitempty"`
}

// EmailConfig mails alerts to an address.
type EmailConfig struct {
	To           string `json:"to"`
	SendResolved *bool  `json:"sendResolved,omitempty"`
}

// WebhookConfig posts alerts to a URL.
type WebhookConfig struct {
	URL          string `json:"url"`
	SendResolved *bool  `json:"sendResolved,omitempty"`
}

// ServiceMonitor is prometheus-operator's monitoring.coreos.com/v1
// ServiceMonitor (v0.85.0 pkg/apis/monitoring/v1/servicemonitor_types.go):
// the Services of its namespace that the Prometheus reading the namespace
// scrapes, and on which port.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ServiceMonitorSpec `json:"spec"`
}

// ServiceMonitorSpec selects the Services and their endpoints.
type ServiceMonitorSpec struct {
	Selector  metav1.LabelSelector `json:"selector"`
	Endpoints []Endpoint           `json:"endpoints"`
}

// Endpoint is a port of the selected Services that is scraped.
type Endpoint struct {
	// Port is the Service port's name.
	Port     string `json:"port"`
	Interval string `json:"interval,omitempty"`
}
