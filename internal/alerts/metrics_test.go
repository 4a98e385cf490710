package alerts_test

import (
	"regexp"
	"slices"
	"testing"
)

// upstream names, for each metric virtc's rules read, the component and
// file that exports it at the pinned version, with the labels the rules
// use: the rules read nothing else.
var upstream = map[string]string{
	// KubeVirt v1.8.4 (docs/observability/metrics.md), virt-controller.
	"kubevirt_vm_info":                          "kubevirt/kubevirt v1.8.4 pkg/monitoring/metrics/virt-controller/vmstats_collector.go (vmInfo: name, namespace, status, status_group)",
	"kubevirt_vmi_info":                         "kubevirt/kubevirt v1.8.4 pkg/monitoring/metrics/virt-controller/vmistats_collector.go (vmiInfo: node, namespace, name, phase, guest_os_name, …; empty values are not created)",
	"kubevirt_vmi_migration_start_time_seconds": "kubevirt/kubevirt v1.8.4 pkg/monitoring/metrics/virt-controller/vmistats_collector.go (vmiMigrationStartTime: node, namespace, name, migration_name)",
	"kubevirt_vmi_migration_end_time_seconds":   "kubevirt/kubevirt v1.8.4 pkg/monitoring/metrics/virt-controller/vmistats_collector.go (vmiMigrationEndTime: node, namespace, name, migration_name, status succeeded|failed)",
	"kubevirt_vmi_non_evictable":                "kubevirt/kubevirt v1.8.4 pkg/monitoring/metrics/virt-controller/vmistats_collector.go (vmiEvictionBlocker: node, namespace, name)",
	// HCO v1.18.1 (docs/metrics.md).
	"kubevirt_hco_system_health_status": "kubevirt/hyperconverged-cluster-operator v1.18.1 pkg/monitoring/hyperconverged/metrics/operator_metrics.go (0 healthy, 1 warning, 2 error)",
	// OLM v0.42.0, what OpenShift 4.22 runs.
	"csv_abnormal": "operator-framework/operator-lifecycle-manager v0.42.0 pkg/metrics/metrics.go (namespace, name, version, phase, reason; set while a CSV is not Succeeded, deleted when its phase changes)",
	// Velero v1.18, OADP's.
	"velero_backup_last_successful_timestamp": "vmware-tanzu/velero v1.18.0 pkg/metrics/metrics.go (schedule; set when a backup completes, absent before)",
	// kube-state-metrics, OpenShift monitoring's.
	"kube_resourcequota": "kubernetes/kube-state-metrics v2.20.0 internal/store/resourcequota.go (namespace, resourcequota, resource, type hard|used; CPU in cores, memory in bytes)",
}

// promqlKeywords are the words of PromQL expressions that are not metrics.
var promqlKeywords = []string{"and", "or", "unless", "on", "ignoring", "bool", "by", "without"}

var (
	promString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	selector   = regexp.MustCompile(`\{[^}]*\}`)
	rangeSel   = regexp.MustCompile(`\[[^\]]*\]`)
	labelList  = regexp.MustCompile(`\b(?:on|ignoring|by|without)\s*\([^)]*\)`)
	identifier = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?`)
)

// metricsOf lists the metric names a PromQL expression reads.
func metricsOf(expr string) []string {
	expr = promString.ReplaceAllString(expr, `""`)
	expr = selector.ReplaceAllString(expr, "")
	expr = rangeSel.ReplaceAllString(expr, "")
	expr = labelList.ReplaceAllString(expr, "")
	var out []string
	for _, m := range identifier.FindAllStringSubmatch(expr, -1) {
		if m[2] != "" || slices.Contains(promqlKeywords, m[1]) {
			continue // a function, or a keyword
		}
		out = append(out, m[1])
	}
	return out
}

// TestMetricsUpstream: every metric a rule of the monitoring-fleet output
// reads is one a component exports at the pinned version (the table), and
// the table names nothing the rules do not read.
func TestMetricsUpstream(t *testing.T) {
	res := build(t, fleet)
	files := ruleFiles(t, res.YAML, t.TempDir())
	used := map[string]bool{}
	for _, f := range files {
		for _, r := range f.rules {
			for _, m := range metricsOf(r.Expr) {
				used[m] = true
				if upstream[m] == "" {
					t.Errorf("%s %s reads %s, which the upstream table does not name (expr %s)", f.key, r.Alert, m, r.Expr)
				}
			}
		}
	}
	for m := range upstream {
		if !used[m] {
			t.Errorf("upstream names %s, which no rule of the fleet reads", m)
		}
	}
}

func TestMetricsOf(t *testing.T) {
	got := metricsOf(`(time() - a_seconds{x="on (y)",name=~"b|c"}) > 5 unless on (namespace, name) b_total{a="1"} or absent(c{s="d"}) or vector(time()) > 3 unless max_over_time(c{s="e"}[2h30m]) == 1`)
	if want := []string{"a_seconds", "b_total", "c", "c"}; !slices.Equal(got, want) {
		t.Errorf("metricsOf = %v, want %v", got, want)
	}
}
