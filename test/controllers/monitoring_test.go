package controllers

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// alertInputs are the intents of the tenant, shared with the promtool test
// of what this suite records (internal/alerts TestPromtoolRecordedSeries).
const alertInputs = repoRoot + "/internal/alerts/testdata/crashloop/inputs.yaml"

// receiver is a tenant's webhook receiver: it keeps what Alertmanager
// posts (its webhook payload, alertmanager notify/webhook/webhook.go
// Message: version 4, the group's alerts with status and labels).
type receiver struct {
	mu    sync.Mutex
	posts []webhookMessage
	URL   string
}

type webhookMessage struct {
	Version string `json:"version"`
	Status  string `json:"status"`
	Alerts  []struct {
		Status string            `json:"status"`
		Labels map[string]string `json:"labels"`
	} `json:"alerts"`
}

func startReceiver(t *testing.T, path string) *receiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{URL: "http://" + l.Addr().String() + path}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var m webhookMessage
		if req.URL.Path != path || json.NewDecoder(req.Body).Decode(&m) != nil {
			http.Error(w, "not a webhook message to "+path, http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.posts = append(r.posts, m)
		r.mu.Unlock()
	}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return r
}

// firing is every alert the receiver was sent firing, as alertname/name.
func (r *receiver) firing() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.posts {
		for _, a := range p.Alerts {
			if a.Status == "firing" {
				k := a.Labels["alertname"] + "/" + a.Labels["name"]
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// naiveNotRunning is the rule virtc had before issue 45, on each series
// of kubevirt_vm_info: the suite's control that the real series do flap.
const naiveNotRunning = `groups:
- name: suite-control
  rules:
  - alert: NaiveVMNotRunning
    expr: kubevirt_vm_info{namespace="alerting",status_group!~"running|migrating"} == 1
    for: 2m
`

// TestAlertsOnTheRealSeries runs a tenant's VM alerts end to end on real
// parts: virtc's PrometheusRule and AlertmanagerConfig rendered by the
// real prometheus-operator as OpenShift's user-workload monitoring
// configures it, evaluated by a real Prometheus on what the real
// virt-controller exports, and routed by a real Alertmanager to the
// tenant's webhook. One VM crash-loops (its launcher fails before the
// domain runs, every time, so virt-controller backs it off and its
// printable status, a label of kubevirt_vm_info, keeps changing): its
// VirtcVMNotRunning reaches the tenant's receiver once the tier's two
// minutes are over, while the same rule on each series (the control)
// has not fired. Two healthy VMs, one reporting its guest agent, fire
// nothing.
func TestAlertsOnTheRealSeries(t *testing.T) {
	e := start(t)
	tools := conformance.Need(t, FindMonitoringTools)
	const tenant = "alerting"
	recv := startReceiver(t, "/hooks/"+tenant)
	inputs, err := os.ReadFile(alertInputs)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"inputs.yaml": strings.Replace(string(inputs), "http://127.0.0.1:9093/hooks/"+tenant, recv.URL, 1)}
	if files["inputs.yaml"] == string(inputs) {
		t.Fatalf("%s: no webhook of tenant %s to point at the receiver", alertInputs, tenant)
	}
	all := buildFiles(t, tenant, files)
	var objs []conformance.Object
	for _, o := range all {
		if o.Namespace == tenant || o.Kind == "Namespace" && o.Name == tenant {
			objs = append(objs, o)
		}
	}
	if len(find(objs, "PrometheusRule")) != 1 || len(find(objs, "AlertmanagerConfig")) != 1 {
		t.Fatalf("want virtc's PrometheusRule and AlertmanagerConfig in %s, got %v", tenant, objs)
	}
	if err := PrepareGoldenImages(e.ctx, e.cp, objs); err != nil {
		t.Fatal(err)
	}

	m, err := StartMonitoring(e.ctx, e.cp, tools, e.kv, t.TempDir(), map[string]string{"naive": naiveNotRunning})
	if err != nil {
		t.Fatalf("start the monitoring stack: %v", err)
	}
	t.Cleanup(func() {
		keepLogs(t, m.Processes()...)
		m.Stop()
	})
	nodes, err := RegisterNodes(e.ctx, e.cp, e.kv.HandlerKubeconfig, 3)
	if err != nil {
		t.Fatal(err)
	}
	nodes.SetCrashing(tenant, "flaky", true)
	nodes.SetGuestOS(tenant, "db", "Red Hat Enterprise Linux")

	applied := time.Now()
	e.applyTenant(objs, tenant, nil)
	rules, err := m.Rendered(e.ctx, tenant, []string{"virtc-vms"}, "virtc-alerts")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range rules {
		if !strings.Contains(content, `namespace="`+tenant+`"`) {
			t.Errorf("rule file %s: no namespace enforcement (enforcedNamespaceLabel):\n%s", name, content)
		}
	}
	began := time.Now()

	// Until flaky's alert reaches the receiver: the node stand-in and the
	// storage stand-ins each second; what virt-controller exports for
	// flaky, and the alerts Prometheus holds, at each round.
	statuses := map[string]bool{}
	var fired time.Time
	var naiveAtFire string
	deadline := time.Now().Add(8 * time.Minute)
	for fired.IsZero() {
		e.syncStorage(tenant)
		if err := nodes.Sync(e.ctx, tenant); err != nil {
			t.Fatal(err)
		}
		if s, err := m.Query(`kubevirt_vm_info{namespace="` + tenant + `",name="flaky"} == 1`); err == nil {
			for _, x := range s {
				statuses[x.Metric["status"]] = true
			}
		}
		alerts, err := m.Alerts()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range alerts {
			if a.State == "firing" && a.Labels["name"] != "flaky" {
				t.Fatalf("%s fired for %s/%s, a healthy VM (%v)", a.Labels["alertname"], a.Labels["namespace"], a.Labels["name"], a.Labels)
			}
		}
		if slices.Contains(recv.firing(), "VirtcVMNotRunning/flaky") {
			fired = time.Now()
			for _, a := range alerts {
				if a.Labels["alertname"] == "NaiveVMNotRunning" {
					naiveAtFire += a.State + " (" + a.Labels["status"] + ") "
				}
			}
			break
		}
		if time.Now().After(deadline) {
			out, _ := e.cp.Kubectl(e.ctx, nil, "get", "vm,vmi,pods", "-n", tenant, "-o", "wide")
			t.Fatalf("VirtcVMNotRunning for flaky did not reach the receiver in %v (receiver got %v; flaky's statuses %v; alerts %v)\n%s",
				time.Since(began).Round(time.Second), recv.firing(), keys(statuses), alerts, out)
		}
		time.Sleep(time.Second)
	}
	t.Logf("VirtcVMNotRunning for flaky reached %s %v after the rules loaded; flaky's printable statuses meanwhile: %v", recv.URL, fired.Sub(began).Round(time.Second), keys(statuses))
	if len(statuses) < 2 {
		t.Errorf("flaky's kubevirt_vm_info kept one status %v: the crash loop did not make its label change", keys(statuses))
	}
	if strings.Contains(naiveAtFire, "firing") {
		t.Errorf("the control rule on each series fired too (%s): the series did not flap", naiveAtFire)
	} else {
		t.Logf("the same rule on each series: %s(its for: timer restarts at every status change)", naiveAtFire)
	}
	if got := recv.firing(); !slices.Equal(got, []string{"VirtcVMNotRunning/flaky"}) {
		t.Errorf("the receiver was sent %v, want only VirtcVMNotRunning/flaky", got)
	}
	if path := os.Getenv("VIRTC_RECORD_SERIES"); path != "" {
		if err := recordSeries(m, path, tenant, applied, fired); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded kubevirt_vm_info of %s into %s", tenant, path)
	}
	// the healthy VMs ran, and db reported its guest agent
	if s, err := m.Query(`kubevirt_vmi_info{namespace="` + tenant + `",phase="running",guest_os_name!=""}`); err != nil || len(s) != 1 || s[0].Metric["name"] != "db" {
		t.Errorf("want db running with its guest OS reported, got %v (%v)", s, err)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// recordSeries writes kubevirt_vm_info of namespace from start to end, as
// Prometheus scraped it from virt-controller every 5 seconds, as the
// input series of a promtool unit test (internal/alerts
// TestPromtoolRecordedSeries).
func recordSeries(m *Monitoring, path, namespace string, start, end time.Time) error {
	const step = 5 * time.Second
	head := fmt.Sprintf("# Recorded by test/controllers TestAlertsOnTheRealSeries (VIRTC_RECORD_SERIES):\n"+
		"# kubevirt_vm_info of namespace %s as KubeVirt %s's virt-controller exported it and\n"+
		"# Prometheus %s scraped it every %v, from the tenant's apply until\n"+
		"# VirtcVMNotRunning for flaky reached the tenant's receiver (%v later).\n"+
		"# flaky crash-loops (its launcher fails %v after it starts, the VMI never\n"+
		"# runs); web and db run. Values: a sample per scrape, \"stale\" where a\n"+
		"# series left the scrape, \"_\" none.\n", namespace, DefaultKubeVirtVersion, DefaultPrometheusVersion, step, end.Sub(start).Round(time.Second), LaunchFailsAfter)
	return m.Record(path, head, `kubevirt_vm_info{namespace="`+namespace+`"}`, start, end, step, false)
}
