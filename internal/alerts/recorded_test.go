package alerts_test

import (
	"maps"
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
	rec, step := readRecording(t, recordedSeries)
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
	out := promtoolTest(t, bin, filepath.Join(dir, "recorded.test.yaml"), []string{vmRules.path, control}, rec.Interval, u)
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

// recordedBackups is what the alerts suite recorded from the real Velero
// (test/internal/velero TestBackupAlertsOnVeleroMetrics,
// VIRTC_RECORD_SERIES), and intents with the same Schedules and
// thresholds.
const (
	recordedBackupSeries = "testdata/backups/recorded.yaml"
	recordedBackupInputs = "testdata/backups/inputs.yaml"
)

var overdueLimit = regexp.MustCompile(`> ([0-9]+)$`)

// backupRule is one of virtc's backup rules with when it must fire on the
// recording.
type backupRule struct {
	rule   promRule
	labels map[string]string
	firing func(at time.Duration) bool
	// threshold is when it starts firing (0: never)
	threshold time.Duration
}

// TestPromtoolRecordedBackups runs virtc's backup rules on
// velero_backup_last_successful_timestamp as the real Velero exported it:
// set by a Completed backup only, kept through the failed ones after it,
// absent for a Schedule that never ran. VirtcBackupOverdue fires once the
// policy's interval and grace have passed since the success, and not a
// step before; VirtcBackupNeverSucceeded fires for the Schedule that never
// ran after its for:, and not a step before, and never for the one whose
// first success came in time.
func TestPromtoolRecordedBackups(t *testing.T) {
	bin, err := conform.Tool("promtool", "PROMTOOL_BIN")
	if err != nil {
		conform.Skip(t, err)
	}
	rec, scrape := readRecording(t, recordedBackupSeries)
	const step = 10 * time.Second
	dir := t.TempDir()
	var files []string
	var rules []backupRule
	for _, f := range ruleFiles(t, build(t, recordedBackupInputs).YAML, dir) {
		if !strings.HasPrefix(f.key, "openshift-adp/virtc-backups-") {
			continue
		}
		files = append(files, f.path)
		for _, r := range f.rules {
			rules = append(rules, recordedBackupRule(t, r, rec.Series, scrape))
		}
	}
	var checks []time.Duration
	kinds := map[string]int{}
	for _, b := range rules {
		if b.threshold > 0 {
			checks = append(checks, b.threshold-step, b.threshold+step)
			kinds[b.rule.Alert]++
		}
	}
	if kinds["VirtcBackupOverdue"] == 0 || kinds["VirtcBackupNeverSucceeded"] == 0 {
		t.Fatalf("the recording fires %v: want a Schedule that succeeded and one that never ran", kinds)
	}
	var tests []alertTest
	for _, at := range checks {
		for _, alert := range []string{"VirtcBackupOverdue", "VirtcBackupNeverSucceeded"} {
			exp := []expAlert{}
			for _, b := range rules {
				if b.rule.Alert == alert && b.firing(at) {
					exp = append(exp, expAlert{Labels: b.labels, Annotations: expand(b.rule.Annotations, b.labels)})
				}
			}
			tests = append(tests, alertTest{EvalTime: secs(at), Alertname: alert, Exp: exp})
		}
	}
	u := unitTest{Name: "recorded backups", Interval: rec.Interval, Series: rec.Series, Alerts: tests}
	out := promtoolTest(t, bin, filepath.Join(dir, "backups.test.yaml"), files, secs(step), u)
	t.Logf("checked at %v: %v\n%s", checks, kinds, out)
}

// recordedBackupRule says when r fires on the recording: the first sample
// of its Schedule's gauge (a Completed backup) and its value, the time of
// that success.
func recordedBackupRule(t *testing.T, r promRule, all []series, scrape time.Duration) backupRule {
	t.Helper()
	schedule := r.Labels["schedule"]
	present, success := time.Duration(-1), time.Duration(0)
	for _, s := range all {
		if !strings.Contains(s.Series, `schedule="`+schedule+`"`) {
			continue
		}
		for i, v := range strings.Fields(s.Values) {
			if v != "_" && v != "stale" && present < 0 {
				present = time.Duration(i) * scrape
				n, err := time.ParseDuration(v + "s")
				if err != nil {
					t.Fatalf("%s: %q: %v", s.Series, v, err)
				}
				success = n
			}
		}
	}
	b := backupRule{rule: r, labels: maps.Clone(r.Labels)}
	switch r.Alert {
	case "VirtcBackupOverdue":
		m := overdueLimit.FindStringSubmatch(r.Expr)
		if m == nil {
			t.Fatalf("%s: no threshold in %q", r.Alert, r.Expr)
		}
		limit, _ := time.ParseDuration(m[1] + "s")
		// the alert carries the series' labels: the scrape's namespace
		b.labels["namespace"] = "openshift-adp"
		b.firing = func(at time.Duration) bool { return present >= 0 && at >= present && at-success > limit }
		if present >= 0 {
			b.threshold = max(present, success+limit)
		}
	case "VirtcBackupNeverSucceeded":
		wait, err := time.ParseDuration(r.For)
		if err != nil {
			t.Fatalf("%s for: %q: %v", r.Alert, r.For, err)
		}
		b.firing = func(at time.Duration) bool { return at >= wait && (present < 0 || at < present) }
		if present < 0 || present > wait {
			b.threshold = wait
		}
	default:
		t.Fatalf("backup rule %s: not known to this test", r.Alert)
	}
	return b
}

// recording is a recording of the alerts suite: promtool input series,
// a sample every Interval.
type recording struct {
	Interval string   `yaml:"interval"`
	Series   []series `yaml:"input_series"`
}

func readRecording(t *testing.T, path string) (recording, time.Duration) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec recording
	if err := yaml.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	step, err := time.ParseDuration(rec.Interval)
	if err != nil {
		t.Fatalf("%s: interval: %v", path, err)
	}
	return rec, step
}

// The recording of the upgrade test (test/internal/olm
// TestDeclaredUpgradeDoesNotPage): OLM's csv_abnormal while its
// InstallPlan replaced HCO's CSV, and HCO's health through the update
// and after it.
const (
	recordedUpgradeSeries = "testdata/upgrade/recorded.yaml"
	recordedUpgradeInputs = "testdata/upgrade/inputs.yaml"
)

// TestPromtoolRecordedUpgrade runs virtc's platform rules on what the
// real olm-operator exported while it replaced HCO's CSV, with HCO's
// health error through the roll after the new CSV Succeeded:
// VirtcHyperConvergedUnhealthy is quiet through the roll and the
// upgradeFor after the last sample of the replacement, and fires
// unhealthyFor after HCO turned unhealthy again outside that window, not a
// step before. The roll outlasts unhealthyFor after the replacement's last
// sample, so the rule of before (quiet only while the CSV is replaced)
// would fire in it.
func TestPromtoolRecordedUpgrade(t *testing.T) {
	bin, err := conform.Tool("promtool", "PROMTOOL_BIN")
	if err != nil {
		conform.Skip(t, err)
	}
	rec, step := readRecording(t, recordedUpgradeSeries)
	const unhealthyFor, upgradeFor = 30 * time.Second, 90 * time.Second
	// the last sample of HCO's CSV being replaced, and HCO's error spans
	lastReplaced := time.Duration(-1)
	var health []string
	for _, s := range rec.Series {
		switch {
		case strings.HasPrefix(s.Series, "csv_abnormal{") && strings.Contains(s.Series, `name="kubevirt-hyperconverged-operator.`):
			for i, v := range strings.Fields(s.Values) {
				if v == "1" {
					lastReplaced = max(lastReplaced, time.Duration(i)*step)
				}
			}
		case strings.HasPrefix(s.Series, "kubevirt_hco_system_health_status"):
			health = strings.Fields(s.Values)
		}
	}
	spans := errorSpans(health, step)
	if lastReplaced < 0 || len(spans) != 2 {
		t.Fatalf("the recording has HCO's CSV replaced until %v and error spans %v: want a replacement, the roll and the error after it", lastReplaced, spans)
	}
	roll, after := spans[0], spans[1]
	if roll[1]-lastReplaced <= unhealthyFor+2*step {
		t.Fatalf("the roll ends %v after the replacement's last sample: not long enough for the rule of before to fire", roll[1]-lastReplaced)
	}
	quietEnd := lastReplaced + upgradeFor
	if after[0] < quietEnd || roll[1] > quietEnd {
		t.Fatalf("the recording's error spans %v and the window's end %v: want the roll inside the window and the error after it outside", spans, quietEnd)
	}
	dir := t.TempDir()
	var files []string
	var rule promRule
	for _, f := range ruleFiles(t, build(t, recordedUpgradeInputs).YAML, dir) {
		if f.key != "openshift-cnv/virtc-platform" {
			continue
		}
		files = append(files, f.path)
		for _, r := range f.rules {
			if r.Alert == "VirtcHyperConvergedUnhealthy" {
				rule = r
			}
		}
	}
	if rule.Alert == "" {
		t.Fatal("the build has no VirtcHyperConvergedUnhealthy")
	}
	fires := after[0] + unhealthyFor
	labels := maps.Clone(rule.Labels)
	labels["namespace"] = "openshift-cnv" // the scrape's, on HCO's series
	var tests []alertTest
	for _, at := range []time.Duration{roll[1] - step, quietEnd - step, fires - step} {
		tests = append(tests, alertTest{EvalTime: secs(at), Alertname: rule.Alert, Exp: []expAlert{}})
	}
	tests = append(tests, alertTest{EvalTime: secs(fires + 2*step), Alertname: rule.Alert,
		Exp: []expAlert{{Labels: labels, Annotations: expand(rule.Annotations, labels)}}})
	u := unitTest{Name: "recorded upgrade", Interval: rec.Interval, Series: rec.Series, Alerts: tests}
	out := promtoolTest(t, bin, filepath.Join(dir, "upgrade.test.yaml"), files, rec.Interval, u)
	t.Logf("replaced until %v, roll %v, window until %v, error again from %v:\n%s", lastReplaced, roll, quietEnd, after[0], out)
}

// errorSpans are the spans [from, to) in which values (a sample per step)
// are 2, HCO's error.
func errorSpans(values []string, step time.Duration) [][2]time.Duration {
	var spans [][2]time.Duration
	for i, v := range values {
		at := time.Duration(i) * step
		switch n := len(spans); {
		case v == "2" && (n == 0 || spans[n-1][1] != at):
			spans = append(spans, [2]time.Duration{at, at + step})
		case v == "2":
			spans[n-1][1] = at + step
		}
	}
	return spans
}

// promtoolTest writes u as the promtool test file path, on rule files
// evaluated every interval, and runs `promtool test rules` on it.
func promtoolTest(t *testing.T, bin, path string, files []string, interval string, u unitTest) []byte {
	t.Helper()
	data, err := yaml.Marshal(map[string]any{"rule_files": files, "evaluation_interval": interval, "tests": []unitTest{u}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "test", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	return out
}
