package velero

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/test/conformance"
	"github.com/virtc/virtc/test/controllers"
)

// minutely is a backup policy of the alerts test: a backup every minute,
// so that the backup alerts' thresholds (the cron's interval plus the
// tier's backupGrace) are minutes.
const minutely = `apiVersion: virtc.dev/v1alpha1
kind: BackupPolicy
metadata:
  name: minutely
spec:
  schedule: "* * * * *"
  retention: 1h
`

// alertsPlatform changes a copy of examples/platform for the alerts test:
// tenants payments and web take the minutely policy, and both tiers' backup
// grace is a minute.
func alertsPlatform(t *testing.T) func(dir string) {
	return func(dir string) {
		edit := func(file, old, new string) {
			t.Helper()
			path := filepath.Join(dir, file)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out := strings.Replace(string(src), old, new, 1)
			if out == string(src) {
				t.Fatalf("%s: no %q to change", file, old)
			}
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "catalog", "backup-minutely.yaml"), []byte(minutely), 0o644); err != nil {
			t.Fatal(err)
		}
		edit("tenants/tenants.yaml", "  backup: weekly\n", "  backup: minutely\n")
		edit("tenants/tenants.yaml", "  quota:\n    cpu: 32", "  backup: minutely\n  quota:\n    cpu: 32")
		edit("platform.yaml", "  dataProtection:\n", "  monitoring:\n    tiers:\n      - {tier: production, backupGrace: 1m}\n      - {tier: standard, backupGrace: 1m}\n  dataProtection:\n")
	}
}

// hostAddress is an IPv4 address of this machine other than loopback: the
// API server refuses a loopback address in Endpoints (a pod's IP).
func hostAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Fatalf("no IPv4 address but loopback on this machine (%v): the Velero pod's IP must be one", addrs)
	return ""
}

// veleroReady is the kubelet for the pod of OADP's velero Deployment
// (Deployment), which kube-controller-manager's deployment and replica set
// controllers create: it reports the pod Running and Ready with ip, as the
// kubelet does once the container is ready (its process is the test's
// velero server). The endpoints controller then lists it in the
// Endpoints of OADP's metrics Service, for real.
func (e *env) veleroReady(ip string) {
	e.t.Helper()
	var name string
	e.waitFor(e.t, time.Minute, "the velero Deployment's pod", nil, func() (bool, string) {
		var pods struct {
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"items"`
		}
		e.getJSON("/api/v1/namespaces/"+Namespace+"/pods?labelSelector=deploy%3Dvelero", &pods)
		if len(pods.Items) == 1 {
			name = pods.Items[0].Metadata.Name
		}
		return name != "", fmt.Sprint(pods.Items)
	})
	// bound to a node first, as kube-scheduler does: Endpoints name each
	// address's node
	e.create(map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "node-1"}})
	binding, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Binding",
		"metadata": map[string]any{"name": name, "namespace": Namespace},
		"target":   map[string]any{"apiVersion": "v1", "kind": "Node", "name": "node-1"}})
	if code, body, err := e.cp.Request(e.ctx, "POST", "/api/v1/namespaces/"+Namespace+"/pods/"+name+"/binding", "application/json", binding, nil); err != nil || code/100 != 2 {
		e.t.Fatalf("bind %s: %d %s %v", name, code, body, err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	e.kubectl("-n", Namespace, "patch", "pod", name, "--subresource=status", "--type=merge", "-p", fmt.Sprintf(`{"status":{"phase":"Running","podIP":%q,"podIPs":[{"ip":%q}],"startTime":%q,
"conditions":[{"type":"Ready","status":"True","lastTransitionTime":%q},{"type":"ContainersReady","status":"True","lastTransitionTime":%q}],
"containerStatuses":[{"name":"velero","ready":true,"started":true,"restartCount":0,"image":%q,"imageID":"","state":{"running":{"startedAt":%q}}}]}}`,
		ip, ip, now, now, now, Image, now))
}

// metricsService is OADP's Service of Velero's metrics (oadp-1.5
// internal/controller/monitor.go updateVeleroMetricsSVC): selector and
// labels getDpaAppLabels, port "monitoring" 8085. Its targetPort is where
// this test's server serves them (8085 in OADP's pod).
func (e *env) metricsService(dpa string, port int) {
	e.t.Helper()
	labels := map[string]any{"app.kubernetes.io/name": "velero", "app.kubernetes.io/component": "server",
		"app.kubernetes.io/managed-by": "oadp-operator", "app.kubernetes.io/instance": dpa, "openshift.io/oadp": "True"}
	e.create(map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "openshift-adp-velero-metrics-svc", "namespace": Namespace, "labels": labels},
		"spec": map[string]any{"type": "ClusterIP", "selector": labels,
			"ports": []any{map[string]any{"name": "monitoring", "protocol": "TCP", "port": 8085, "targetPort": port}}}})
}

// TestBackupAlertsOnVeleroMetrics runs virtc's backup alerts on what the
// real Velero exports, collected the way virtc's output has the platform
// collect it: the real prometheus-operator renders virtc's ServiceMonitor
// virtc-velero and its PrometheusRules in openshift-adp for the platform's
// Prometheus k8s, and a real Prometheus discovers Velero's metrics through
// OADP's Service and the Endpoints kube-controller-manager keeps. A
// Schedule whose backups succeeded and then fail (the object store gone)
// fires VirtcBackupOverdue once its cron's interval and the grace have
// passed since the last success; a Schedule that never ran fires
// VirtcBackupNeverSucceeded.
func TestBackupAlertsOnVeleroMetrics(t *testing.T) {
	e := start(t)
	mtools := conformance.Need(t, controllers.FindMonitoringTools)
	const dpaName, ran, neverRan = "velero", "payments-minutely", "web-minutely"
	ip := hostAddress(t)
	MetricsHost = ip
	t.Cleanup(func() { MetricsHost = "127.0.0.1" })

	_, objs, _ := e.platformAtStoreWith(t, alertsPlatform(t))
	var schedules, rules []string
	for _, o := range objs {
		switch {
		case o.Kind == "Schedule":
			schedules = append(schedules, o.Name)
		case o.Kind == "PrometheusRule" && o.Namespace == Namespace:
			rules = append(rules, o.Name)
		}
	}
	t.Logf("Schedules %v, PrometheusRules in %s %v", schedules, Namespace, rules)
	e.startVelero(t, objs)
	_, port, err := net.SplitHostPort(e.velero.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	portNum, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	e.metricsService(dpaName, portNum)
	e.veleroReady(ip)

	began := time.Now()
	m, err := controllers.StartPlatformMonitoring(e.ctx, e.cp, mtools, filepath.Join(e.dir, "monitoring"), controllers.PlatformOptions{})
	if err != nil {
		t.Fatalf("start the platform's monitoring: %v", err)
	}
	m.StopWithLogs(t, func() {
		for _, path := range []string{"/api/v1/namespaces/" + Namespace + "/endpoints", "/api/v1/namespaces/" + Namespace + "/services", "/api/v1/namespaces/" + Namespace + "/pods"} {
			raw, err := e.cp.Get(context.Background(), path)
			t.Logf("%s: %s %v", path, raw, err)
		}
	})
	// Velero's target, discovered from virtc's ServiceMonitor: the
	// operator's relabelling names the job after the Service
	// (pkg/prometheus/promcfg.go generateServiceMonitorConfig)
	e.waitFor(t, 3*time.Minute, "Prometheus scraping Velero through ServiceMonitor virtc-velero", m.Refresh, func() (bool, string) {
		s, err := m.Query(`up{namespace="` + Namespace + `",job="openshift-adp-velero-metrics-svc",endpoint="monitoring"}`)
		if err != nil {
			return false, err.Error()
		}
		return len(s) == 1 && s[0].Value[1] == "1", fmt.Sprint(s)
	})

	// the Schedule that runs: every minute from now, until a backup succeeds
	e.kubectl("-n", Namespace, "patch", "schedule", ran, "--type=merge", "-p", `{"spec":{"schedule":"* * * * *"}}`)
	e.waitFor(t, 4*time.Minute, "a successful backup of "+ran+" in Prometheus", nil, func() (bool, string) {
		s, err := m.Query(`velero_backup_last_successful_timestamp{schedule="` + ran + `"}`)
		if err != nil {
			return false, err.Error()
		}
		return len(s) == 1, fmt.Sprint(s)
	})
	// then the store is gone: its backups fail
	e.store.Stop()
	firing := func(alert, schedule string) bool {
		alerts, err := m.Alerts()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range alerts {
			if a.State == "firing" && a.Labels["alertname"] == alert && a.Labels["schedule"] == schedule {
				return true
			}
		}
		return false
	}
	e.waitFor(t, 5*time.Minute, "VirtcBackupOverdue for "+ran+" and VirtcBackupNeverSucceeded for "+neverRan, nil, func() (bool, string) {
		alerts, _ := m.Alerts()
		return firing("VirtcBackupOverdue", ran) && firing("VirtcBackupNeverSucceeded", neverRan), fmt.Sprint(alerts)
	})
	if path := os.Getenv("VIRTC_RECORD_SERIES"); path != "" {
		head := fmt.Sprintf("# Recorded by test/internal/velero TestBackupAlertsOnVeleroMetrics (VIRTC_RECORD_SERIES):\n"+
			"# velero_backup_last_successful_timestamp as Velero %s exported it and Prometheus\n"+
			"# %s scraped it through virtc's ServiceMonitor virtc-velero every 30s, from\n"+
			"# Prometheus's start until both alerts fired (%v later). %s backed up\n"+
			"# every minute until the object store went, then failed; %s never ran.\n"+
			"# Values: seconds since the recording's start (promtool's time 0), a sample per\n"+
			"# scrape; \"_\" none.\n", DefaultVersion, controllers.DefaultPrometheusVersion, time.Since(began).Round(time.Second), ran, neverRan)
		if err := m.Record(path, head, `velero_backup_last_successful_timestamp`, began, time.Now(), 30*time.Second, true); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded Velero's series into %s", path)
	}
	// nothing but those two fired, of every rule Prometheus k8s loaded,
	// from its start
	fired, err := m.QueryRange(`ALERTS{alertstate="firing"}`, began, time.Now(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fired {
		switch r.Metric["alertname"] + " " + r.Metric["schedule"] {
		case "VirtcBackupOverdue " + ran, "VirtcBackupNeverSucceeded " + neverRan:
		default:
			t.Errorf("%s fired (%d samples): %v", r.Metric["alertname"], len(r.Values), r.Metric)
		}
	}
	var backups struct {
		Items []struct {
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		} `json:"items"`
	}
	e.getJSON("/apis/velero.io/v1/namespaces/"+Namespace+"/backups", &backups)
	phases := map[string][]string{}
	for _, b := range backups.Items {
		s := b.Metadata.Labels["velero.io/schedule-name"]
		phases[s] = append(phases[s], b.Metadata.Name+" "+b.Status.Phase)
	}
	t.Logf("the backups by Schedule: %v", phases)
	completed, failed := false, false
	for _, b := range phases[ran] {
		completed = completed || strings.HasSuffix(b, " Completed")
		failed = failed || strings.HasSuffix(b, " Failed") || strings.HasSuffix(b, " FailedValidation") || strings.HasSuffix(b, " PartiallyFailed")
	}
	if !completed || !failed {
		t.Errorf("Schedule %s: backups %v, want one Completed and, once the store is gone, one failed", ran, phases[ran])
	}
	if len(phases[neverRan]) != 0 {
		t.Errorf("Schedule %s ran: %v", neverRan, phases[neverRan])
	}
}

// waitFor is conformance.Until on the suite's context.
func (e *env) waitFor(t *testing.T, limit time.Duration, what string, step func(context.Context) error, done func() (bool, string)) {
	t.Helper()
	conformance.Until(e.ctx, t, limit, what, step, done)
}
