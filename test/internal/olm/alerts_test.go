package olm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtc/virtc/test/conformance"
	"github.com/virtc/virtc/test/controllers"
)

// The time scale of TestDeclaredUpgradeDoesNotPage: the Platform's
// thresholds (15m and 2h by default) shrunk so that the test runs in
// minutes, and how long KubeVirt's components roll after OLM has the new
// CSV Succeeded, longer than unhealthyFor and shorter than upgradeFor.
const (
	unhealthyFor = 30 * time.Second
	upgradeFor   = 90 * time.Second
	roll         = 60 * time.Second
)

// controlRule is virtc's VirtcHyperConvergedUnhealthy before issue 45's
// review of the upgrade: quiet only while OLM reports HCO's CSV being
// replaced. It is loaded beside virtc's rules to show that the upgrade
// the test makes is one that pages without virtc's window.
const controlRule = `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: suite-control
  namespace: openshift-cnv
spec:
  groups:
  - name: suite-control
    rules:
    - alert: SuiteUnhealthyUnlessReplacing
      expr: kubevirt_hco_system_health_status == 2 unless on () (csv_abnormal{name=~"kubevirt-hyperconverged-operator\\.v.*",phase=~"Pending|InstallReady|Installing|Replacing"} == 1)
      for: 30s
`

// TestDeclaredUpgradeDoesNotPage (issue 45): an update of OpenShift
// Virtualization that the Platform declared, made by OLM's own
// InstallPlan, does not page through virtc's platform rules, evaluated by
// a real Prometheus on the series the real olm-operator exports while it
// replaces the CSV; HCO's health after the update, outside that window,
// does.
func TestDeclaredUpgradeDoesNotPage(t *testing.T) {
	e := start(t)
	mtools := conformance.Need(t, controllers.FindMonitoringTools)
	e.platformSpec = fmt.Sprintf("  monitoring:\n    platform: {unhealthyFor: %s, upgradeFor: %s}\n", promDur(unhealthyFor), promDur(upgradeFor))
	e.startOLM("4.21")
	installed := e.build("4.21.0")
	for ns, args := range e.apply(installed) {
		if log, err := e.approver(args, 4*time.Minute); err != nil {
			t.Fatalf("approver in %s: %v\n%s", ns, err, log)
		}
	}
	from, to := hco("4.21.0"), hco("4.21.8")
	if got := e.csvPhase(cnv, from); got != "Succeeded" {
		t.Fatalf("%s: phase %q after the approver returned", from, got)
	}

	health := startHealth(t)
	m := e.platformMonitoring(mtools, health, installed)
	began := time.Now()

	succeeded := e.updateRolling(health, to)

	// What the real olm-operator exported of the update, as Prometheus
	// scraped it: without a sample of the replacement the window has
	// nothing to start from (on a cluster: a replacement shorter than the
	// scrape interval). The CSV's namespace is exported_namespace: the
	// target's is namespace, as a ServiceMonitor without honorLabels
	// gives it.
	phases, err := m.QueryRange(`csv_abnormal{exported_namespace="`+cnv+`"}`, began, time.Now(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, r := range phases {
		seen = append(seen, fmt.Sprintf("%s %s (%d samples)", r.Metric["name"], r.Metric["phase"], len(r.Values)))
	}
	t.Logf("csv_abnormal in %s during the update: %v", cnv, seen)
	if !strings.Contains(strings.Join(seen, "\n"), to+" Installing") {
		t.Fatalf("Prometheus has no sample of %s Installing: %v", to, seen)
	}

	// The window: quiet until upgradeFor after the last sample of the
	// replacement, while HCO reports error for the roll.
	quietUntil := succeeded.Add(upgradeFor + 10*time.Second)
	e.until(time.Until(quietUntil)+time.Minute, "the control firing during the roll", nil, func() (bool, string) {
		return firing(t, m, "SuiteUnhealthyUnlessReplacing"), ""
	})
	time.Sleep(time.Until(quietUntil))
	fired, err := m.QueryRange(`ALERTS{alertstate="firing",alertname=~"Virtc.*"}`, began, time.Now(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fired {
		t.Errorf("%s fired during the declared update (%d samples): %v", r.Metric["alertname"], len(r.Values), r.Metric)
	}

	// Outside the window HCO turns unhealthy (a component Degraded): the
	// alert fires after unhealthyFor.
	health.set(2)
	degradedAt := time.Now()
	e.until(unhealthyFor+time.Minute, "VirtcHyperConvergedUnhealthy after the window", nil, func() (bool, string) {
		return firing(t, m, "VirtcHyperConvergedUnhealthy"), ""
	})
	if d := time.Since(degradedAt); d < unhealthyFor {
		t.Errorf("VirtcHyperConvergedUnhealthy fired %v after HCO turned unhealthy, before unhealthyFor (%v)", d, unhealthyFor)
	}
	if firing(t, m, "VirtcHyperConvergedWarning") || firing(t, m, "VirtcOperatorNotSucceeded") {
		alerts, _ := m.Alerts()
		t.Errorf("alerts other than VirtcHyperConvergedUnhealthy fire: %v", alerts)
	}
	if path := os.Getenv("VIRTC_RECORD_SERIES"); path != "" {
		head := fmt.Sprintf("# Recorded by test/internal/olm TestDeclaredUpgradeDoesNotPage (VIRTC_RECORD_SERIES):\n"+
			"# csv_abnormal as olm-operator %s exported it while its InstallPlan replaced\n"+
			"# %s by %s, and the stand-in's kubevirt_hco_system_health_status (error from\n"+
			"# the new CSV's Installing until %v after it Succeeded, then healthy; error\n"+
			"# again from %v after the start), as Prometheus %s scraped them every 2s.\n"+
			"# A sample per scrape step from the start of monitoring (promtool's time 0); \"_\" none.\n",
			DefaultOLMVersion, from, to, roll, degradedAt.Sub(began).Round(time.Second), controllers.DefaultPrometheusVersion)
		if err := m.Record(path, head, `csv_abnormal or kubevirt_hco_system_health_status`, began, time.Now(), 2*time.Second, false); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded the series into %s", path)
	}
}

// firing reports whether Prometheus has alert firing.
func firing(t *testing.T, m *controllers.Monitoring, alert string) bool {
	t.Helper()
	alerts, err := m.Alerts()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts {
		if a.State == "firing" && a.Labels["alertname"] == alert {
			return true
		}
	}
	return false
}

// until is conformance.Until on the suite's context.
func (e *env) until(limit time.Duration, what string, step func(context.Context) error, done func() (bool, string)) {
	e.t.Helper()
	conformance.Until(e.ctx, e.t, limit, what, step, done)
}

// health is the stand-in for HCO's metrics endpoint: the one gauge
// kubevirt_hco_system_health_status, as HCO v1.18.1 exports it
// (pkg/monitoring/hyperconverged/metrics/operator_metrics.go: no labels;
// 0 healthy, 1 warning, 2 error), with the value the test sets.
type health struct {
	mu    sync.Mutex
	value float64
	url   string
}

func startHealth(t *testing.T) *health {
	t.Helper()
	h := &health{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h.mu.Lock()
		v := h.value
		h.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# HELP kubevirt_hco_system_health_status Indicates whether the system health status is healthy (0), warning (1), or error (2), by aggregating the conditions of HCO and its secondary resources\n"+
			"# TYPE kubevirt_hco_system_health_status gauge\nkubevirt_hco_system_health_status %s\n", strconv.FormatFloat(v, 'g', -1, 64))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	h.url = "http://" + l.Addr().String() + "/metrics"
	return h
}

func (h *health) set(v float64) {
	h.mu.Lock()
	h.value = v
	h.mu.Unlock()
}

// promDur is d as a Prometheus duration (whole seconds).
func promDur(d time.Duration) string { return strconv.Itoa(int(d/time.Second)) + "s" }

// platformMonitoring starts the platform's monitoring scraping
// olm-operator and health, with virtc's platform rules of installed (as
// Argo CD's sync applies them) and the control, and waits until they are
// loaded and the targets up.
func (e *env) platformMonitoring(mtools controllers.MonitoringTools, health *health, installed []conformance.Object) *controllers.Monitoring {
	t := e.t
	from := hco("4.21.0")
	m, err := controllers.StartPlatformMonitoring(e.ctx, e.cp, mtools, filepath.Join(e.dir, "monitoring"), controllers.PlatformOptions{
		EvaluationInterval: "5s",
		Static: []controllers.StaticTarget{
			// openshift/operator-framework-olm's olm-operator-metrics
			// Service and its ServiceMonitor
			{Job: "olm-operator-metrics", Namespace: Namespace, URL: e.olm.MetricsURL},
			// HCO v1.18.1 controllers/alerts/service.go and
			// serviceMonitor.go: kubevirt-hyperconverged-operator-metrics
			{Job: "kubevirt-hyperconverged-operator-metrics", Namespace: cnv, URL: health.url},
		},
	})
	if err != nil {
		t.Fatalf("start the platform's monitoring: %v", err)
	}
	m.StopWithLogs(t, nil)
	// virtc's platform rules as Argo CD's sync applies them, and the control
	var rules []conformance.Object
	for _, o := range installed {
		if o.Kind == "PrometheusRule" && o.Namespace == cnv {
			rules = append(rules, o)
		}
	}
	stream, err := conformance.Stream(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range [][]byte{stream, []byte(controlRule)} {
		if _, err := e.cp.MustKubectl(e.ctx, doc, "apply", "--server-side", "--field-manager=argocd-controller", "-f", "-"); err != nil {
			t.Fatalf("apply the PrometheusRules: %v", err)
		}
	}
	e.until(3*time.Minute, "Prometheus k8s with virtc's platform rules and the control, scraping olm-operator and HCO", m.Refresh, func() (bool, string) {
		loaded, err := m.AlertRules()
		if err != nil {
			return false, err.Error()
		}
		up, err := m.Query(`up{job=~"olm-operator-metrics|kubevirt-hyperconverged-operator-metrics"} == 1`)
		if err != nil {
			return false, err.Error()
		}
		csv, err := m.Query(`csv_succeeded{name="` + from + `"} == 1`)
		if err != nil {
			return false, err.Error()
		}
		return len(loaded["virtc-platform"]) > 0 && len(loaded["suite-control"]) == 1 && len(up) == 2 && len(csv) == 1, fmt.Sprint(loaded, up, csv)
	})
	return m
}

// updateRolling updates the Platform to 4.21.8 through OLM's InstallPlan
// and plays HCO's health through it, and returns when the new CSV
// Succeeded.
func (e *env) updateRolling(health *health, to string) (succeeded time.Time) {
	t := e.t
	// HCO's health as HCO v1.18.1 computes it through an update
	// (controllers/hyperconverged/hyperconverged_controller.go): the new
	// operator's pod starts with the new CSV Installing and finds the
	// HyperConverged's version older than its own (upgrade mode); KubeVirt
	// then reports Degraded=True, UpdateInProgress, while its components
	// roll (kubevirt v1.8.4 pkg/virt-operator/util/client.go), which HCO
	// aggregates into Degraded (aggregateComponentConditions) and, in
	// upgrade mode, reports as error (isSystemHealthStatusError). HCO's
	// readiness does not wait for that (pkg/util/hcoping.go): OLM has the
	// CSV Succeeded while the roll goes on.
	rolled := make(chan struct{})
	go func() {
		defer close(rolled)
		degraded := false
		for e.ctx.Err() == nil {
			phase := e.csvPhase(cnv, to)
			if !degraded && (phase == "Installing" || phase == "Succeeded") {
				degraded = true
				health.set(2)
				t.Logf("HCO %s runs in upgrade mode, KubeVirt rolling: health error (CSV %s)", to, phase)
			}
			if phase == "Succeeded" {
				succeeded = time.Now()
				select {
				case <-e.ctx.Done():
					return
				case <-time.After(roll):
				}
				health.set(0)
				t.Logf("KubeVirt rolled %v after the CSV succeeded: health healthy", roll)
				return
			}
			select {
			case <-e.ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	for ns, args := range e.apply(e.build("4.21.8")) {
		if log, err := e.approver(args, 4*time.Minute); err != nil {
			t.Fatalf("approver in %s for 4.21.8: %v\n%s", ns, err, log)
		}
	}
	select {
	case <-rolled:
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s did not succeed: phase %q", to, e.csvPhase(cnv, to))
	}
	if succeeded.IsZero() {
		t.Fatal("the test ended before the update")
	}
	return succeeded
}
