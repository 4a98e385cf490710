package alerts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/test/conform"
)

// recorded is what the alerts suite recorded from the real virt-controller
// (test/controllers TestAlertsOnTheRealSeries, VIRTC_RECORD_SERIES), and
// the intents it ran.
const (
	recordedSeries = "testdata/crashloop/recorded.yaml"
	recordedInputs = "testdata/crashloop/inputs.yaml"
)

// naiveControl is VirtcVMNotRunning as it was before issue 45: on each
// series of kubevirt_vm_info, whose status label changes as a VM
// crash-loops.
const naiveControl = `groups:
- name: control
  rules:
  - alert: NaiveVMNotRunning
    expr: kubevirt_vm_info{namespace="alerting",status_group!~"running|migrating"} == 1
    for: 2m
`

// TestPromtoolRecordedSeries runs virtc's VM rules of the recorded
// tenant on the series KubeVirt's virt-controller really exported while
// one of its VMs crash-looped (CrashLoopBackOff and Starting taking turns,
// each a series of its own): VirtcVMNotRunning fires for that VM once the
// tier's threshold has passed since it first stopped running, and not a
// step before; the same rule on each series (the control) has not fired
// then; the VMs that ran fire nothing.
func TestPromtoolRecordedSeries(t *testing.T) {
	bin, err := conform.Tool("promtool", "PROMTOOL_BIN")
	if err != nil {
		conform.Skip(t, err)
	}
	raw, err := os.ReadFile(recordedSeries)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Interval string   `yaml:"interval"`
		Series   []series `yaml:"input_series"`
	}
	if err := yaml.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	step, err := time.ParseDuration(rec.Interval)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res := build(t, recordedInputs)
	var vmRules *ruleFile
	for _, f := range ruleFiles(t, res.YAML, dir) {
		if f.key == "alerting/virtc-vms" {
			vmRules = f
		}
	}
	if vmRules == nil {
		t.Fatal("the recorded tenant's build has no PrometheusRule alerting/virtc-vms")
	}
	var rule promRule
	for _, r := range vmRules.rules {
		if r.Alert == "VirtcVMNotRunning" {
			rule = r
		}
	}
	threshold, err := time.ParseDuration(rule.For)
	if err != nil {
		t.Fatalf("VirtcVMNotRunning for: %q: %v", rule.For, err)
	}
	control := filepath.Join(dir, "control.yaml")
	if err := os.WriteFile(control, []byte(naiveControl), 0o644); err != nil {
		t.Fatal(err)
	}

	// since: the first scrape from which flaky always had a series of a
	// status that is not running
	since, statuses := notRunningSince(t, rec.Series, "flaky", step)
	if len(statuses) < 2 {
		t.Fatalf("the recording has flaky in %v only: no status change to test", statuses)
	}
	fires := since + threshold
	labels := map[string]string{"namespace": "alerting", "name": "flaky"}
	for k, v := range rule.Labels {
		labels[k] = v
	}
	u := unitTest{Name: "recorded crash loop", Interval: rec.Interval, Series: rec.Series, Alerts: []alertTest{
		{EvalTime: secs(fires - step), Alertname: "VirtcVMNotRunning", Exp: []expAlert{}},
		{EvalTime: secs(fires + step), Alertname: "VirtcVMNotRunning", Exp: []expAlert{{Labels: labels, Annotations: expand(rule.Annotations, labels)}}},
		{EvalTime: secs(fires + step), Alertname: "NaiveVMNotRunning", Exp: []expAlert{}},
	}}
	data, err := yaml.Marshal(map[string]any{"rule_files": []string{vmRules.path, control}, "evaluation_interval": rec.Interval, "tests": []unitTest{u}})
	if err != nil {
		t.Fatal(err)
	}
	test := filepath.Join(dir, "recorded.test.yaml")
	if err := os.WriteFile(test, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "test", "rules", test).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	t.Logf("flaky not running from %v (statuses %v): VirtcVMNotRunning fires at %v, the control does not\n%s", since, statuses, fires, out)
}

var statusLabel = regexp.MustCompile(`status="([^"]*)",status_group="([^"]*)"`)

// notRunningSince is the offset of the first sample from which vm always
// has a series whose status group is neither running nor migrating, and
// the statuses it went through.
func notRunningSince(t *testing.T, all []series, vm string, step time.Duration) (time.Duration, []string) {
	t.Helper()
	var down [][]string
	var statuses []string
	for _, s := range all {
		m := statusLabel.FindStringSubmatch(s.Series)
		if !strings.Contains(s.Series, `name="`+vm+`"`) || m == nil || m[2] == "running" || m[2] == "migrating" {
			continue
		}
		statuses = append(statuses, m[1])
		down = append(down, strings.Fields(s.Values))
	}
	n := 0
	for _, d := range down {
		n = max(n, len(d))
	}
	first := -1
	for i := 0; i < n; i++ {
		present := false
		for _, d := range down {
			present = present || i < len(d) && d[i] != "_" && d[i] != "stale"
		}
		switch {
		case !present:
			first = -1
		case first < 0:
			first = i
		}
	}
	if first < 0 {
		t.Fatalf("the recording ends with %s running", vm)
	}
	return time.Duration(first) * step, statuses
}
