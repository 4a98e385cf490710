package alerts_test

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/alerts"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/sizing"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/test/conform"
)

// fleet is the golden scenario whose generated rules Prometheus's own rule
// engine checks and unit-tests.
const fleet = "../../golden/monitoring-fleet/inputs.yaml"

// TestPromtool builds the monitoring-fleet golden scenario, writes each
// PrometheusRule of virtc's output as a Prometheus rule file, checks them
// with `promtool check rules`, and runs `promtool test rules` on unit tests
// with synthetic series, written here from the fleet's intents (which VMs
// should run, must migrate, run the guest agent, are backed up, and the
// tiers' thresholds): every alert of the output must fire where the
// intents say it should (with its labels and annotations) and stay silent
// otherwise, and each alert is checked both ways.
func TestPromtool(t *testing.T) {
	bin, err := conform.Tool("promtool", "PROMTOOL_BIN")
	if err != nil {
		conform.Skip(t, err)
	}
	dir := t.TempDir()
	res := build(t, fleet)
	files := ruleFiles(t, res.YAML, dir)
	if out, err := exec.Command(bin, append([]string{"check", "rules"}, paths(files)...)...).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	g := &gen{t: t, files: files, m: res.Model, covered: map[string]int{}, silent: map[string]bool{}}
	g.settings, err = alerts.Load(res.Model.Platform.Obj.Spec.Monitoring)
	if err != nil {
		t.Fatal(err)
	}
	g.vms()
	g.backups()
	g.quota()
	g.platform()
	g.drills()
	// Every alerting rule of the output is unit-tested, firing and not.
	for _, f := range files {
		for _, r := range f.rules {
			if g.covered[f.key+"/"+ruleKey(r)] == 0 {
				t.Errorf("%s: no promtool test fires %s %v", f.key, r.Alert, r.Labels)
			}
			if !g.silent[f.key+"/"+r.Alert] {
				t.Errorf("%s: no promtool test checks that %s stays silent", f.key, r.Alert)
			}
		}
	}
	if t.Failed() {
		return
	}
	tests := g.testFiles(dir)
	out, err := exec.Command(bin, append([]string{"test", "rules"}, tests...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	t.Logf("promtool: %d rule files, %d unit tests:\n%s", len(files), len(g.tests), out)
}

func build(t *testing.T, dir string) compile.Result {
	t.Helper()
	diags := &diag.List{}
	docs := source.Read([]string{dir}, source.Options{}, diags)
	res := compile.Compile(docs, compile.Options{}, diags)
	if diags.HasErrors() {
		t.Fatalf("build %s: %v", dir, diags.Errors())
	}
	return res
}

// promRule is an alerting rule as the output states it.
type promRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// ruleFile is one PrometheusRule of the output, written as a rule file.
type ruleFile struct {
	key   string // namespace/name
	path  string
	rules []promRule
}

func paths(files []*ruleFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.path)
	}
	return out
}

// ruleFiles writes the spec of each PrometheusRule of a build's output
// (its groups) as a Prometheus rule file.
func ruleFiles(t *testing.T, stream []byte, dir string) []*ruleFile {
	t.Helper()
	var files []*ruleFile
	dec := yaml.NewDecoder(bytes.NewReader(stream))
	for {
		var doc struct {
			Kind     string `yaml:"kind"`
			Metadata struct {
				Name      string `yaml:"name"`
				Namespace string `yaml:"namespace"`
			} `yaml:"metadata"`
			Spec struct {
				Groups []struct {
					Name  string     `yaml:"name"`
					Rules []promRule `yaml:"rules"`
				} `yaml:"groups"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if doc.Kind != "PrometheusRule" {
			continue
		}
		f := &ruleFile{key: doc.Metadata.Namespace + "/" + doc.Metadata.Name}
		f.path = filepath.Join(dir, doc.Metadata.Namespace+"_"+doc.Metadata.Name+".rules.yaml")
		data, err := yaml.Marshal(map[string]any{"groups": doc.Spec.Groups})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, g := range doc.Spec.Groups {
			f.rules = append(f.rules, g.Rules...)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatal("the build has no PrometheusRule")
	}
	return files
}

func ruleKey(r promRule) string {
	keys := slices.Sorted(maps.Keys(r.Labels))
	var b strings.Builder
	b.WriteString(r.Alert)
	for _, k := range keys {
		fmt.Fprintf(&b, ",%s=%s", k, r.Labels[k])
	}
	return b.String()
}

// Unit test files of promtool.
type (
	series struct {
		Series string `yaml:"series"`
		Values string `yaml:"values"`
	}
	expAlert struct {
		Labels      map[string]string `yaml:"exp_labels"`
		Annotations map[string]string `yaml:"exp_annotations"`
	}
	alertTest struct {
		EvalTime  string     `yaml:"eval_time"`
		Alertname string     `yaml:"alertname"`
		Exp       []expAlert `yaml:"exp_alerts"`
	}
	unitTest struct {
		Name     string      `yaml:"name"`
		Interval string      `yaml:"interval"`
		Series   []series    `yaml:"input_series,omitempty"`
		Alerts   []alertTest `yaml:"alert_rule_test"`
		// file is the rule file it tests; step the evaluation interval.
		file *ruleFile
		step time.Duration
	}
)

type gen struct {
	t        *testing.T
	files    []*ruleFile
	m        *resolve.Model
	settings alerts.Settings
	tests    []*unitTest
	covered  map[string]int
	silent   map[string]bool
}

func (g *gen) file(key string) *ruleFile {
	for _, f := range g.files {
		if f.key == key {
			return f
		}
	}
	g.t.Fatalf("the output has no PrometheusRule %s", key)
	return nil
}

// test starts a unit test of a rule file, with samples every step.
func (g *gen) test(f *ruleFile, name string, step time.Duration) *unitTest {
	u := &unitTest{Name: name, Interval: secs(step), file: f, step: step}
	g.tests = append(g.tests, u)
	return u
}

// series adds a series holding value from time 0 to until.
func (u *unitTest) series(s string, value float64, until time.Duration) {
	u.Series = append(u.Series, series{Series: s, Values: fmt.Sprintf("%gx%d", value, int(until/u.step)+1)})
}

// flapping adds two series that take turns, each present for period and
// then gone (a stale marker, as Prometheus writes when a series leaves a
// scrape) for period, from time 0 to until.
func (u *unitTest) flapping(a, b string, period, until time.Duration) {
	n := int(period / u.step)
	var va, vb []string
	for at, on := time.Duration(0), true; at <= until; at, on = at+period, !on {
		present, gone := fmt.Sprintf("1x%d", n-1), fmt.Sprintf("stale _x%d", n-2)
		if on {
			va, vb = append(va, present), append(vb, gone)
		} else {
			va, vb = append(va, gone), append(vb, present)
		}
	}
	u.Series = append(u.Series, series{Series: a, Values: strings.Join(va, " ")}, series{Series: b, Values: strings.Join(vb, " ")})
}

// expect says which alerts are firing at an evaluation time: each by its
// full label set (the series' and the rule's); nil: none.
func (g *gen) expect(u *unitTest, at time.Duration, alert string, firing ...map[string]string) {
	a := alertTest{EvalTime: secs(at), Alertname: alert, Exp: []expAlert{}}
	for _, labels := range firing {
		r := g.rule(u.file, alert, labels)
		a.Exp = append(a.Exp, expAlert{Labels: labels, Annotations: expand(r.Annotations, labels)})
		g.covered[u.file.key+"/"+ruleKey(r)]++
	}
	if len(firing) == 0 {
		g.silent[u.file.key+"/"+alert] = true
	}
	u.Alerts = append(u.Alerts, a)
}

// rule finds the one rule of a file whose alert has these labels.
func (g *gen) rule(f *ruleFile, alert string, labels map[string]string) promRule {
	var found []promRule
	for _, r := range f.rules {
		if r.Alert != alert {
			continue
		}
		ok := true
		for k, v := range r.Labels {
			ok = ok && labels[k] == v
		}
		if ok {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		g.t.Fatalf("%s: %d rules %s match labels %v, want 1", f.key, len(found), alert, labels)
	}
	return found[0]
}

var labelRef = regexp.MustCompile(`\{\{ \$labels\.([a-z_]+) \}\}`)

// expand fills in the {{ $labels.NAME }} of annotations, as Prometheus's
// template engine does.
func expand(annotations, labels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range annotations {
		out[k] = labelRef.ReplaceAllStringFunc(v, func(m string) string { return labels[labelRef.FindStringSubmatch(m)[1]] })
	}
	return out
}

func with(base map[string]string, more ...string) map[string]string {
	out := maps.Clone(base)
	for i := 0; i+1 < len(more); i += 2 {
		out[more[i]] = more[i+1]
	}
	return out
}

func (g *gen) dur(s string) time.Duration {
	d, err := alerts.ParseDuration(s)
	if err != nil {
		g.t.Fatal(err)
	}
	return d
}

// shouldRun: the VM's run strategy keeps it running (KubeVirt v1.8.4
// pkg/virt-controller/watch/vm.go: Always and RerunOnFailure start it, the
// others leave it to a person or to a single run), and it is not retired.
func shouldRun(vm *resolve.VM) bool {
	return !vm.Spec.Retired && (vm.RunStrategy == api.RunAlways || vm.RunStrategy == api.RunRerunOnFailure)
}

// vmLabels are the labels virtc's rules add to a VM alert.
func (g *gen) vmLabels(vm *resolve.VM) map[string]string {
	ta := g.settings.Tier(vm.Tier)
	return map[string]string{"severity": ta.Severity, "virtc_tenant": vm.Namespace, "virtc_tier": vm.Tier}
}

// vms: per tenant, every VM in a bad state at once; the alerts fire for
// the VMs that should be watched, when their tier's threshold has passed.
func (g *gen) vms() {
	for _, t := range g.m.Tenants {
		var vms []*resolve.VM
		for _, vm := range t.VMs {
			if !vm.Spec.Retired {
				vms = append(vms, vm)
			}
		}
		if len(vms) == 0 {
			continue
		}
		f := g.file(t.Name + "/" + alerts.VMRule)
		var fors []time.Duration
		for _, vm := range vms {
			fors = append(fors, g.dur(g.settings.Tier(vm.Tier).NotRunningFor), g.dur(g.settings.Tier(vm.Tier).GuestAgentMissingFor))
		}
		longest := slices.Max(fors) + 10*time.Minute

		// Not running: stopped VMs.
		u := g.test(f, t.Name+": stopped VMs", time.Minute)
		for _, vm := range vms {
			u.series(fmt.Sprintf(`kubevirt_vm_info{namespace=%q,name=%q,status="stopped",status_group="non_running"}`, vm.Namespace, vm.Name), 1, longest)
		}
		g.expect(u, time.Minute, "VirtcVMNotRunning")
		for _, at := range thresholds(vms, func(vm *resolve.VM) time.Duration { return g.dur(g.settings.Tier(vm.Tier).NotRunningFor) }) {
			var firing []map[string]string
			for _, vm := range vms {
				if shouldRun(vm) && g.dur(g.settings.Tier(vm.Tier).NotRunningFor) <= at {
					firing = append(firing, with(g.vmLabels(vm), "namespace", vm.Namespace, "name", vm.Name))
				}
			}
			g.expect(u, at, "VirtcVMNotRunning", firing...)
		}
		// A crash-looping VM changes series every five minutes, as
		// KubeVirt's virt-controller reports it (v1.8.4
		// vmstats_collector.go: the status label is the VM's printable
		// status, CrashLoopBackOff in status group error, Starting in
		// starting): the alert stays pending through the changes and
		// fires at the tier's threshold.
		u = g.test(f, t.Name+": crash-looping VMs", time.Minute)
		for _, vm := range vms {
			u.flapping(fmt.Sprintf(`kubevirt_vm_info{namespace=%q,name=%q,status="crashloopbackoff",status_group="error"}`, vm.Namespace, vm.Name),
				fmt.Sprintf(`kubevirt_vm_info{namespace=%q,name=%q,status="starting",status_group="starting"}`, vm.Namespace, vm.Name), 5*time.Minute, longest)
		}
		for _, at := range thresholds(vms, func(vm *resolve.VM) time.Duration { return g.dur(g.settings.Tier(vm.Tier).NotRunningFor) }) {
			var firing []map[string]string
			for _, vm := range vms {
				if shouldRun(vm) && g.dur(g.settings.Tier(vm.Tier).NotRunningFor) <= at {
					firing = append(firing, with(g.vmLabels(vm), "namespace", vm.Namespace, "name", vm.Name))
				}
			}
			g.expect(u, at, "VirtcVMNotRunning", firing...)
		}
		u = g.test(f, t.Name+": running and migrating VMs", time.Minute)
		for i, vm := range vms {
			status := []string{"running", "migrating"}[i%2]
			u.series(fmt.Sprintf(`kubevirt_vm_info{namespace=%q,name=%q,status=%q,status_group=%q}`, vm.Namespace, vm.Name, status, status), 1, longest)
		}
		g.expect(u, longest, "VirtcVMNotRunning")

		// Guest agent: running VMs that report no guest OS.
		u = g.test(f, t.Name+": running VMs without guest OS information", time.Minute)
		for _, vm := range vms {
			u.series(fmt.Sprintf(`kubevirt_vmi_info{node="worker-1",namespace=%q,name=%q,phase="running",evictable="true",outdated="false"}`, vm.Namespace, vm.Name), 1, longest)
		}
		g.expect(u, time.Minute, "VirtcVMGuestAgentMissing")
		for _, at := range thresholds(vms, func(vm *resolve.VM) time.Duration { return g.dur(g.settings.Tier(vm.Tier).GuestAgentMissingFor) }) {
			var firing []map[string]string
			for _, vm := range vms {
				if shouldRun(vm) && vm.Image.Spec.GuestAgent && g.dur(g.settings.Tier(vm.Tier).GuestAgentMissingFor) <= at {
					firing = append(firing, with(g.vmLabels(vm), "node", "worker-1", "namespace", vm.Namespace, "name", vm.Name, "phase", "running", "evictable", "true", "outdated", "false"))
				}
			}
			g.expect(u, at, "VirtcVMGuestAgentMissing", firing...)
		}
		u = g.test(f, t.Name+": running VMs whose guest agent reports", time.Minute)
		for _, vm := range vms {
			u.series(fmt.Sprintf(`kubevirt_vmi_info{node="worker-1",namespace=%q,name=%q,phase="running",guest_os_name="Red Hat Enterprise Linux"}`, vm.Namespace, vm.Name), 1, longest)
		}
		g.expect(u, longest, "VirtcVMGuestAgentMissing")

		g.migrations(f, vms)
	}
}

// thresholds are the evaluation times just past each VM's threshold.
func thresholds(vms []*resolve.VM, of func(*resolve.VM) time.Duration) []time.Duration {
	var out []time.Duration
	for _, vm := range vms {
		if at := of(vm) + time.Minute; !slices.Contains(out, at) {
			out = append(out, at)
		}
	}
	slices.Sort(out)
	return out
}

// migrations: VMs that must live-migrate (migration Required) are watched
// for a migration that does not end, one that failed, and for not being
// migratable; other VMs are not.
func (g *gen) migrations(f *ruleFile, vms []*resolve.VM) {
	must := func(vm *resolve.VM) bool { return shouldRun(vm) && vm.Migration == api.MigrationRequired }
	if !slices.ContainsFunc(vms, must) {
		return
	}
	var longest time.Duration
	for _, vm := range vms {
		longest = max(longest, g.dur(g.settings.Tier(vm.Tier).MigrationStuckAfter), g.dur(g.settings.Tier(vm.Tier).NotRunningFor))
	}
	longest += 10 * time.Minute
	series := func(metric string, vm *resolve.VM, extra string) string {
		return fmt.Sprintf(`%s{node="worker-1",namespace=%q,name=%q,migration_name="kubevirt-evacuation-1"%s}`, metric, vm.Namespace, vm.Name, extra)
	}
	labels := func(vm *resolve.VM, more ...string) map[string]string {
		return with(g.vmLabels(vm), append([]string{"node", "worker-1", "namespace", vm.Namespace, "name", vm.Name, "migration_name", "kubevirt-evacuation-1"}, more...)...)
	}

	u := g.test(f, vms[0].Namespace+": migrations started at 0 that have not ended", time.Minute)
	for _, vm := range vms {
		u.series(series("kubevirt_vmi_migration_start_time_seconds", vm, ""), 0, longest)
	}
	g.expect(u, time.Minute, "VirtcVMMigrationStuck")
	for _, at := range thresholds(vms, func(vm *resolve.VM) time.Duration { return g.dur(g.settings.Tier(vm.Tier).MigrationStuckAfter) }) {
		var firing []map[string]string
		for _, vm := range vms {
			if must(vm) && g.dur(g.settings.Tier(vm.Tier).MigrationStuckAfter) < at {
				firing = append(firing, labels(vm))
			}
		}
		g.expect(u, at, "VirtcVMMigrationStuck", firing...)
	}
	u = g.test(f, vms[0].Namespace+": migrations that ended", time.Minute)
	for _, vm := range vms {
		u.series(series("kubevirt_vmi_migration_start_time_seconds", vm, ""), 0, longest)
		u.series(series("kubevirt_vmi_migration_end_time_seconds", vm, `,status="succeeded"`), 60, longest)
	}
	g.expect(u, longest, "VirtcVMMigrationStuck")
	g.expect(u, longest, "VirtcVMMigrationFailed")

	// The failed migration's series stays until the VM migrates again
	// (KubeVirt v1.8.4 collectVMIMigrationTime reports the VMI's last
	// migration): the alert holds for the window after it ended, then
	// ends although the series is still there.
	u = g.test(f, vms[0].Namespace+": migrations that failed", time.Minute)
	window := alerts.MigrationFailedWindow
	until := max(longest, window+10*time.Minute)
	var firing []map[string]string
	for _, vm := range vms {
		u.series(series("kubevirt_vmi_migration_start_time_seconds", vm, ""), 0, until)
		u.series(series("kubevirt_vmi_migration_end_time_seconds", vm, `,status="failed"`), 60, until)
		if must(vm) {
			firing = append(firing, labels(vm, "status", "failed"))
		}
	}
	g.expect(u, 2*time.Minute, "VirtcVMMigrationFailed", firing...)
	g.expect(u, window, "VirtcVMMigrationFailed", firing...)
	g.expect(u, window+2*time.Minute, "VirtcVMMigrationFailed")
	g.expect(u, longest, "VirtcVMMigrationStuck")

	u = g.test(f, vms[0].Namespace+": VMs that cannot migrate", time.Minute)
	for _, vm := range vms {
		u.series(fmt.Sprintf(`kubevirt_vmi_non_evictable{node="worker-1",namespace=%q,name=%q}`, vm.Namespace, vm.Name), 1, longest)
	}
	g.expect(u, time.Minute, "VirtcVMNotMigratable")
	for _, at := range thresholds(vms, func(vm *resolve.VM) time.Duration { return g.dur(g.settings.Tier(vm.Tier).NotRunningFor) }) {
		var firing []map[string]string
		for _, vm := range vms {
			if must(vm) && g.dur(g.settings.Tier(vm.Tier).NotRunningFor) < at {
				firing = append(firing, with(g.vmLabels(vm), "node", "worker-1", "namespace", vm.Namespace, "name", vm.Name))
			}
		}
		g.expect(u, at, "VirtcVMNotMigratable", firing...)
	}
	u = g.test(f, vms[0].Namespace+": VMs that can migrate", time.Minute)
	for _, vm := range vms {
		u.series(fmt.Sprintf(`kubevirt_vmi_non_evictable{node="worker-1",namespace=%q,name=%q}`, vm.Namespace, vm.Name), 0, longest)
	}
	g.expect(u, longest, "VirtcVMNotMigratable")
}

// cronIntervals are the longest gaps between two runs of the fleet's
// backup schedules, worked out by hand: daily at 02:00, Sundays at 03:00.
var cronIntervals = map[string]time.Duration{
	"0 2 * * *": 24 * time.Hour,
	"0 3 * * 0": 7 * 24 * time.Hour,
}

// backups: each tenant Schedule alerts once it has gone its longest
// interval plus the grace of its most important VM's tier without a
// successful backup, and when it never had one.
func (g *gen) backups() {
	for _, t := range g.m.Tenants {
		tierOf := map[string]string{}
		var policies []string
		for _, vm := range t.VMs {
			if !vm.TakesBackups() {
				continue
			}
			if _, ok := tierOf[vm.Backup.Name]; !ok {
				policies = append(policies, vm.Backup.Name)
				tierOf[vm.Backup.Name] = vm.Tier
			}
			if vm.Tier == resolve.TierProduction {
				tierOf[vm.Backup.Name] = vm.Tier
			}
		}
		if len(policies) == 0 {
			continue
		}
		f := g.file(alerts.BackupNamespace + "/" + alerts.BackupRule(t.Name))
		for _, policy := range policies {
			p, _ := g.m.Catalog.BackupPolicies.Get(policy)
			interval, ok := cronIntervals[p.Spec.Schedule]
			if !ok {
				g.t.Fatalf("backup policy %s: schedule %q is not in cronIntervals", policy, p.Spec.Schedule)
			}
			ta := g.settings.Tier(tierOf[policy])
			limit := interval + g.dur(ta.BackupGrace)
			schedule := t.Name + "-" + policy
			labels := map[string]string{"severity": ta.Severity, "virtc_tenant": t.Name, "virtc_tier": ta.Tier, "backup_policy": policy, "schedule": schedule}
			metric := fmt.Sprintf(`velero_backup_last_successful_timestamp{schedule=%q}`, schedule)
			step := 10 * time.Minute

			u := g.test(f, schedule+": last backup at 0", step)
			u.series(metric, 0, limit+time.Hour)
			g.expect(u, limit-step, "VirtcBackupOverdue")
			g.expect(u, limit+step, "VirtcBackupOverdue", labels)
			g.expect(u, limit+step, "VirtcBackupNeverSucceeded")

			u = g.test(f, schedule+": no backup yet", step)
			g.expect(u, limit-step, "VirtcBackupNeverSucceeded")
			g.expect(u, limit+step, "VirtcBackupNeverSucceeded", labels)
			g.expect(u, limit+step, "VirtcBackupOverdue")
		}
	}
}

// quota: each tenant's quota alerts when what is left of it is less than
// the largest VM's virt-launcher pod requests, CPU or memory.
func (g *gen) quota() {
	f := g.file(alerts.PlatformNamespace + "/" + alerts.PlatformRule)
	for _, t := range g.m.Tenants {
		var need sizing.Pod
		tier := resolve.TierStandard
		for _, vm := range t.VMs {
			if vm.Spec.Retired {
				continue
			}
			pod := sizing.KubeVirt.LauncherFor(sizing.ShapeOf(vm))
			need.MilliCPU, need.Memory = max(need.MilliCPU, pod.MilliCPU), max(need.Memory, pod.Memory)
			if vm.Tier == resolve.TierProduction {
				tier = vm.Tier
			}
		}
		if need.MilliCPU == 0 {
			continue
		}
		ta := g.settings.Tier(tier)
		rule := map[string]string{"severity": ta.Severity, "virtc_tenant": t.Name, "virtc_tier": tier}
		q := func(resource, typ string) string {
			return fmt.Sprintf(`kube_resourcequota{namespace=%q,resourcequota="virtc-vms",resource=%q,type=%q}`, t.Name, resource, typ)
		}
		// hard 100 CPUs and 1Ti, used leaving left of each.
		quota := func(name string, cpuLeft, memLeft float64) *unitTest {
			u := g.test(f, t.Name+": quota "+name, time.Minute)
			u.series(q("requests.cpu", "hard"), 100, 10*time.Minute)
			u.series(q("requests.cpu", "used"), 100-cpuLeft, 10*time.Minute)
			u.series(q("requests.memory", "hard"), 1<<40, 10*time.Minute)
			u.series(q("requests.memory", "used"), float64(int64(1<<40)-int64(memLeft)), 10*time.Minute)
			return u
		}
		cpu, mem := float64(need.MilliCPU)/1000, float64(need.Memory)
		u := quota("with room for the largest VM", 2*cpu, 2*mem)
		g.expect(u, 5*time.Minute, "VirtcTenantQuotaHeadroom")
		u = quota("short of CPU", cpu/2, 2*mem)
		g.expect(u, 5*time.Minute, "VirtcTenantQuotaHeadroom", with(rule, "namespace", t.Name, "resourcequota", "virtc-vms", "resource", "requests.cpu"))
		u = quota("short of memory", 2*cpu, mem/2)
		g.expect(u, 5*time.Minute, "VirtcTenantQuotaHeadroom", with(rule, "namespace", t.Name, "resourcequota", "virtc-vms", "resource", "requests.memory"))
	}
}

// platform: HCO's health and the operators' CSVs.
func (g *gen) platform() {
	f := g.file(alerts.PlatformNamespace + "/" + alerts.PlatformRule)
	p := g.settings.Platform
	sev := map[string]string{"severity": p.Severity}
	unhealthy, upgrade := g.dur(p.UnhealthyFor), g.dur(p.UpgradeFor)

	version := g.m.Platform.Version.String()
	warn := map[string]string{"severity": "warning"}
	// HCO v1.18.1's values (pkg/monitoring/hyperconverged/metrics/
	// operator_metrics.go): 0 healthy, 1 warning, 2 error.
	for _, tc := range []struct {
		name   string
		value  float64
		firing map[string]string // by alert
	}{
		{"HCO reports error", 2, map[string]string{"VirtcHyperConvergedUnhealthy": "critical"}},
		{"HCO reports warning", 1, map[string]string{"VirtcHyperConvergedWarning": "warning"}},
		{"HCO reports healthy", 0, nil},
	} {
		u := g.test(f, tc.name, time.Minute)
		u.series("kubevirt_hco_system_health_status", tc.value, unhealthy+10*time.Minute)
		for _, alert := range []string{"VirtcHyperConvergedUnhealthy", "VirtcHyperConvergedWarning"} {
			g.expect(u, unhealthy-time.Minute, alert)
			labels := sev
			if alert == "VirtcHyperConvergedWarning" {
				labels = warn
			}
			if _, ok := tc.firing[alert]; ok {
				g.expect(u, unhealthy+time.Minute, alert, labels)
			} else {
				g.expect(u, unhealthy+time.Minute, alert)
			}
		}
		// During an update of the operator (its old CSV Replacing, the
		// new one Installing), neither fires: KubeVirt's components
		// report Degraded while they roll.
		u = g.test(f, tc.name+" during an update", time.Minute)
		u.series("kubevirt_hco_system_health_status", tc.value, unhealthy+10*time.Minute)
		u.series(fmt.Sprintf(`csv_abnormal{namespace="openshift-cnv",name="kubevirt-hyperconverged-operator.v%s",version=%q,phase="Replacing",reason="BeingReplaced"}`, version, version), 1, unhealthy+10*time.Minute)
		u.series(fmt.Sprintf(`csv_abnormal{namespace="openshift-cnv",name="kubevirt-hyperconverged-operator.v%s-next",version=%q,phase="Installing",reason="InstallWaiting"}`, version, version), 1, unhealthy+10*time.Minute)
		g.expect(u, unhealthy+time.Minute, "VirtcHyperConvergedUnhealthy")
		g.expect(u, unhealthy+time.Minute, "VirtcHyperConvergedWarning")

		// After it: OLM has the new CSV Succeeded (csv_abnormal deleted)
		// while KubeVirt's components still roll, Degraded. Quiet for
		// upgradeFor after the last Installing sample, then the alert's
		// own unhealthyFor: an update that leaves HCO unhealthy pages.
		u = g.test(f, tc.name+" after an update", time.Minute)
		installing := 5 * time.Minute
		u.series("kubevirt_hco_system_health_status", tc.value, installing+upgrade+unhealthy+10*time.Minute)
		u.Series = append(u.Series, series{
			Series: fmt.Sprintf(`csv_abnormal{namespace="openshift-cnv",name="kubevirt-hyperconverged-operator.v%s",version=%q,phase="Installing",reason="InstallWaiting"}`, version, version),
			Values: fmt.Sprintf("1x%d stale", int(installing/u.step)),
		})
		for _, alert := range []string{"VirtcHyperConvergedUnhealthy", "VirtcHyperConvergedWarning"} {
			g.expect(u, installing+upgrade-time.Minute, alert)
			g.expect(u, installing+upgrade+unhealthy-time.Minute, alert)
			labels := sev
			if alert == "VirtcHyperConvergedWarning" {
				labels = warn
			}
			if _, ok := tc.firing[alert]; ok {
				g.expect(u, installing+upgrade+unhealthy+2*time.Minute, alert, labels)
			} else {
				g.expect(u, installing+upgrade+unhealthy+2*time.Minute, alert)
			}
		}
	}

	hco := with(sev, "namespace", "openshift-cnv", "name", "kubevirt-hyperconverged-operator.v"+version, "version", version, "phase", "Installing", "reason", "InstallWaiting")
	oadp := with(sev, "namespace", "openshift-adp", "name", "oadp-operator.v1.5.3", "version", "1.5.3", "phase", "Failed", "reason", "InstallCheckFailed")
	other := with(sev, "namespace", "openshift-operators", "name", "other-operator.v1.0.0", "version", "1.0.0", "phase", "Failed", "reason", "InstallCheckFailed")
	csv := func(l map[string]string) string {
		return fmt.Sprintf(`csv_abnormal{namespace=%q,name=%q,version=%q,phase=%q,reason=%q}`, l["namespace"], l["name"], l["version"], l["phase"], l["reason"])
	}
	u := g.test(f, "CSVs not succeeded", time.Minute)
	for _, l := range []map[string]string{hco, oadp, other} {
		u.series(csv(l), 1, upgrade+10*time.Minute)
	}
	g.expect(u, upgrade-time.Minute, "VirtcOperatorNotSucceeded")
	firing := []map[string]string{hco}
	if dp := g.m.Platform.Obj.Spec.DataProtection; dp != nil && !dp.External {
		firing = append(firing, oadp)
	}
	g.expect(u, upgrade+time.Minute, "VirtcOperatorNotSucceeded", firing...)
}

// drills: each restore drill's evidence warns its tier's drillWarning
// before it expires (its date plus the backup policy's drillInterval).
func (g *gen) drills() {
	f := g.file(alerts.PlatformNamespace + "/" + alerts.PlatformRule)
	for _, e := range g.m.Evidence {
		if e.Obj.Spec.Check != "restore-drill" {
			continue
		}
		policy := e.Obj.Spec.Covers.BackupPolicy
		p, ok := g.m.Catalog.BackupPolicies.Get(policy)
		if !ok || p.Spec.DrillInterval == "" {
			continue
		}
		tier := ""
		for _, t := range g.m.Tenants {
			for _, vm := range t.VMs {
				if shouldRun(vm) && vm.Backup.Name == policy && vm.Tier == resolve.TierProduction {
					tier = vm.Tier
				}
			}
		}
		if tier == "" {
			continue
		}
		valid, err := decode.ParseRetention(p.Spec.DrillInterval)
		if err != nil {
			g.t.Fatal(err)
		}
		date, err := time.Parse(time.DateOnly, e.Obj.Spec.Date)
		if err != nil {
			g.t.Fatal(err)
		}
		ta := g.settings.Tier(tier)
		warnAt := time.Duration(date.Add(valid).Unix())*time.Second - g.dur(ta.DrillWarning)
		day := 24 * time.Hour
		u := g.test(f, "restore drill "+e.Obj.Metadata.Name, day)
		u.step = day
		labels := map[string]string{"severity": ta.Severity, "virtc_tier": tier, "backup_policy": policy, "evidence": e.Obj.Metadata.Name}
		// Dated in the future (a mistyped year): firing until the day
		// before its date, quiet from then until the warning.
		dated := time.Duration(date.Unix()) * time.Second
		g.expect(u, dated-2*day, "VirtcRestoreDrillExpiring", labels)
		g.expect(u, dated, "VirtcRestoreDrillExpiring")
		g.expect(u, warnAt-day, "VirtcRestoreDrillExpiring")
		g.expect(u, warnAt+day, "VirtcRestoreDrillExpiring", labels)
	}
}

// testFiles writes the unit tests, one file per rule file and evaluation
// step (promtool evaluates a test file's rules at one interval).
func (g *gen) testFiles(dir string) []string {
	type key struct {
		file string
		step time.Duration
	}
	byKey := map[key][]*unitTest{}
	var keys []key
	for _, u := range g.tests {
		k := key{u.file.path, u.step}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], u)
	}
	var out []string
	for i, k := range keys {
		doc := map[string]any{
			"rule_files":          []string{k.file},
			"evaluation_interval": secs(k.step),
			"tests":               byKey[k],
		}
		data, err := yaml.Marshal(doc)
		if err != nil {
			g.t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("test-%02d.yaml", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			g.t.Fatal(err)
		}
		out = append(out, path)
	}
	return out
}

func secs(d time.Duration) string { return fmt.Sprintf("%ds", int64(d/time.Second)) }

// TestPromtoolCheckGoldens runs `promtool check rules` on every rule group
// of every golden scenario's expected output (TestPromtool unit-tests the
// fleet's; the others come from the same code with other intents).
func TestPromtoolCheckGoldens(t *testing.T) {
	bin, err := conform.Tool("promtool", "PROMTOOL_BIN")
	if err != nil {
		conform.Skip(t, err)
	}
	outputs, err := filepath.Glob("../../golden/*/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, out := range outputs {
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("kind: PrometheusRule")) {
			continue
		}
		dir := filepath.Join(t.TempDir(), filepath.Base(filepath.Dir(out)))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files = append(files, paths(ruleFiles(t, data, dir))...)
	}
	if len(files) == 0 {
		t.Fatal("no golden output has a PrometheusRule")
	}
	if out, err := exec.Command(bin, append([]string{"check", "rules"}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	t.Logf("promtool check rules: %d rule files of %d golden outputs", len(files), len(outputs))
}
