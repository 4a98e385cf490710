package argocd

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/virtc/virtc/test/conform"
	"github.com/virtc/virtc/test/internal/velero"
)

// The drill's Schedules fire when it asks and never because the run
// crossed a cron of the catalog (issue 48: a cold run that crossed 02:00
// UTC failed when Velero started the nightly backups in the middle of the
// drill). Its first commit (drillCatalog) moves backup policy daily to a
// minute that has just passed (velero.QuietCron): Velero's schedule
// controller then runs the Schedules a day after their creation. It also
// moves tenant analytics to policy nightly, at that minute too, so that
// etl01's launcher pod carries the nightly label from its start (a label
// changed later reaches the pod only when the VM restarts); the nightly
// phase moves nightly's cron to the next minute but one, asking for a
// scheduled backup on purpose.
const (
	platformCatalog = "examples/argocd/platform/catalog.yaml"
	// nightlyTenant's VMs move to policy nightlyPolicy, whose cron is the
	// next minute but one: its Schedule fires during the drill. Not shop,
	// whose Schedule's backups the plans restore: a Schedule of the target
	// cluster that has taken a backup stops the other cluster's plan.
	nightlyTenant = "analytics"
	nightlyVM     = "etl01"
	nightlyPolicy = "nightly"
)

// drillCatalog is the platform catalog cur with backup policy daily
// (catalog/backup.yaml's, the default of examples/argocd's tenants) and
// policy nightly, both at a minute that has just passed, and the files
// that move tenant analytics and its VM to nightly; quiet is that minute's
// cron.
func (e *env) drillCatalog() (files map[string]string, quiet string) {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "catalog/backup.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	quiet = velero.QuietCron(time.Now())
	var daily string
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		if !strings.Contains(doc, "\n  name: daily\n") {
			continue
		}
		const cron = `schedule: "0 2 * * *"`
		daily = strings.Replace(doc, cron, `schedule: "`+quiet+`"`, 1)
		if daily == doc {
			e.t.Fatalf("catalog/backup.yaml: backup policy daily has no %s to move", cron)
		}
	}
	if daily == "" {
		e.t.Fatal("catalog/backup.yaml has no backup policy daily")
	}
	files = map[string]string{
		platformCatalog: e.read(platformCatalog) +
			"\n---\n# the drill: daily at a minute that has just passed, so that no Schedule\n# fires during it (test/argocd/nightly_test.go)\n" + daily +
			nightlyDoc(quiet),
	}
	for _, f := range []string{appDir + "/tenant-" + nightlyTenant + ".yaml", appDir + "/" + nightlyVM + ".yaml"} {
		cur := e.read(f)
		moved := strings.Replace(cur, "\n  backup: daily\n", "\n  backup: "+nightlyPolicy+"\n", 1)
		if moved == cur {
			e.t.Fatalf("%s has no backup: daily to move", f)
		}
		files[f] = moved
	}
	return files, quiet
}

// nightlyDoc is backup policy nightly at cron.
func nightlyDoc(cron string) string {
	return "\n---\n# the drill's nightly backups of tenant " + nightlyTenant + ", at a minute it picks\napiVersion: virtc.dev/v1alpha1\nkind: BackupPolicy\nmetadata:\n  name: " + nightlyPolicy + "\nspec:\n  schedule: \"" + cron + "\"\n  retention: 720h\n"
}

// nightly asks for a scheduled backup that fails, as a nightly one did in
// the cold run of issue 48, and checks what the tenant's Application and
// the alerts make of it:
//
//   - backup policy nightly of tenant analytics moves to the next minute
//     but one; Velero's schedule controller starts the Schedule's backup
//     at that minute (getBackup, with FromSchedule's labels and
//     annotations);
//   - the backup ends PartiallyFailed: etl01 runs, and Velero runs its
//     launcher pod's freeze hook (KubeVirt v1.8.4 pkg/storage/velero/
//     annotations.go) by exec through a kubelet, which is not here;
//   - the Backup carries the Schedule's tracking id, so Argo CD counts it
//     among the Application's resources, and the Application stays Synced
//     and Healthy (ignore-healthcheck, copied from the Schedule): before
//     issue 48 it turned Degraded (argo-cd v3.6.1 resource_customizations/
//     velero.io/Backup/health.lua);
//   - the alert virtc emits for the Schedule fires on what the real Velero
//     reports: `promtool test rules` evaluates the PrometheusRules Argo CD
//     applied on the series of Velero's own /metrics, and
//     VirtcBackupNeverSucceeded fires for analytics-nightly and not for
//     shop-daily, whose backup completed.
//
// The tenant's plan that runs next waits for Synced and Healthy at its
// hand-back, with the failed Backup in the Application. It returns the
// revision it committed.
func (d *drill) nightly(vx *velero.External, quiet string) string {
	e := d.e
	e.t.Helper()
	at := time.Now().UTC().Add(time.Minute).Truncate(time.Minute).Add(time.Minute)
	cron := velero.CronAt(at)
	cur := e.read(platformCatalog)
	moved := strings.Replace(cur, nightlyDoc(quiet), nightlyDoc(cron), 1)
	if moved == cur {
		e.t.Fatalf("%s has no policy %s at %q to move", platformCatalog, nightlyPolicy, quiet)
	}
	files := map[string]string{platformCatalog: moved}
	rev := e.commit("drill: backup policy "+nightlyPolicy+" at "+cron, files)
	e.refresh()
	e.waitApp("policy "+nightlyPolicy+" at "+cron, synced(rev))
	schedule := nightlyTenant + "-" + nightlyPolicy

	// Velero checks its Schedules every minute (scheduleSyncPeriod)
	type backupList struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		} `json:"items"`
	}
	l, err := waitLive(e, "/apis/velero.io/v1/namespaces/"+velero.Namespace+"/backups?labelSelector=velero.io/schedule-name%3D"+schedule,
		time.Until(at.Add(3*time.Minute)), 2*time.Second, func(l backupList) bool {
			if len(l.Items) != 1 {
				return len(l.Items) > 1
			}
			done := l.Items[0].Status.Phase
			return done == "Completed" || strings.Contains(done, "Failed")
		})
	if err != nil {
		e.t.Fatalf("Schedule %s (%q): no finished backup: %v (%+v)", schedule, cron, err, l.Items)
	}
	if len(l.Items) > 1 {
		e.t.Fatalf("Schedule %s took %d backups, want the one asked for", schedule, len(l.Items))
	}
	backup := l.Items[0]
	if backup.Status.Phase != "PartiallyFailed" {
		out, _ := vx.Server.CLI(e.ctx, "backup", "describe", backup.Metadata.Name, "--details", "--colorized=false")
		e.t.Fatalf("Schedule %s's backup %s is %s, want PartiallyFailed (etl01's freeze hook has no kubelet to run in): the case is not tested\n%s", schedule, backup.Metadata.Name, backup.Status.Phase, out)
	}
	e.t.Logf("Schedule %s (%q) took backup %s at %s: %s", schedule, cron, backup.Metadata.Name, time.Now().UTC().Format("15:04:05"), backup.Status.Phase)

	// the Application counts the Backup and stays Synced and Healthy
	key := "velero.io/Backup " + velero.Namespace + "/" + backup.Metadata.Name
	e.refresh()
	a := e.waitApp("Synced and Healthy with failed backup "+backup.Metadata.Name+" among its resources", func(a app) bool {
		listed := false
		for _, r := range a.Status.Resources {
			listed = listed || r.Group+"/"+r.Kind+" "+r.Namespace+"/"+r.Name == key
		}
		return listed && a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy" && a.Status.Sync.Revision == rev
	})
	e.t.Logf("Application %s with %s listed: %s", appName, key, a)

	// the alert, on Velero's own series
	d.alertFires(vx, schedule, "shop-daily")
	return rev
}

// alertFires runs `promtool test rules` on the backup PrometheusRules
// Argo CD applied, with Velero's /metrics as the input series held for
// three days: VirtcBackupNeverSucceeded (absent(velero_backup_last_
// successful_timestamp{schedule}) for a day and the grace) must fire for
// Schedule failing alone, and stay silent for Schedule ok. Only the
// rules' conditions are evaluated (expression, for, labels): their
// annotations are internal/alerts' tests' to check.
func (d *drill) alertFires(vx *velero.External, failing, ok string) {
	e := d.e
	e.t.Helper()
	bin, err := conform.Tool("promtool", "PROMTOOL_BIN")
	if err != nil {
		e.t.Fatal(err)
	}
	metrics, err := vx.Server.Scrape(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	samples := veleroBackupSeries(metrics)
	if !strings.Contains(samples, `velero_backup_partial_failure_total{schedule="`+failing+`"} 1`) {
		e.t.Fatalf("Velero's metrics count no partial failure of Schedule %s:\n%s", failing, samples)
	}
	const alert = "VirtcBackupNeverSucceeded"
	var groups []any
	var want []map[string]string
	for _, tenant := range []string{nightlyTenant, drillTenant} {
		var rule struct {
			Spec struct {
				Groups []struct {
					Name  string           `json:"name"`
					Rules []map[string]any `json:"rules"`
				} `json:"groups"`
			} `json:"spec"`
		}
		e.liveJSON("/apis/monitoring.coreos.com/v1/namespaces/"+velero.Namespace+"/prometheusrules/virtc-backups-"+tenant, &rule)
		for _, g := range rule.Spec.Groups {
			for _, r := range g.Rules {
				delete(r, "annotations")
				labels, _ := r["labels"].(map[string]any)
				if r["alert"] == alert && labels["schedule"] == failing {
					l := map[string]string{}
					for k, v := range labels {
						l[k] = fmt.Sprint(v)
					}
					want = append(want, l)
				}
			}
			groups = append(groups, g)
		}
	}
	if len(want) != 1 {
		e.t.Fatalf("the PrometheusRules applied have %d %s rules for Schedule %s, want 1", len(want), alert, failing)
	}
	var series []map[string]string
	for line := range strings.Lines(samples) {
		line = strings.TrimSpace(line)
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			e.t.Fatalf("velero metrics: %q: %v", line, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue // a histogram's empty sum: no alert reads one
		}
		series = append(series, map[string]string{"series": line[:i], "values": strconv.FormatFloat(v, 'f', -1, 64) + "+0x72"})
	}
	dir := filepath.Join(e.dir, "alerts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	write := func(name string, v any) {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	// JSON is YAML: promtool reads both files as YAML
	write("rules.yaml", map[string]any{"groups": groups})
	write("test.yaml", map[string]any{
		"rule_files":          []string{"rules.yaml"},
		"evaluation_interval": "1h",
		"tests": []any{map[string]any{
			"interval":     "1h",
			"input_series": series,
			"alert_rule_test": []any{map[string]any{
				"eval_time":  "72h",
				"alertname":  alert,
				"exp_alerts": []any{map[string]any{"exp_labels": want[0]}},
			}},
		}},
	})
	out, err := exec.CommandContext(e.ctx, bin, "test", "rules", filepath.Join(dir, "test.yaml")).CombinedOutput()
	if err != nil {
		e.t.Fatalf("promtool test rules (%s must fire for %s alone, on Velero's series):\n%s\nseries:\n%s", alert, failing, out, samples)
	}
	e.t.Logf("promtool test rules: %s fires for %s and not for %s, on %d series of Velero's /metrics: %s", alert, failing, ok, len(series), strings.TrimSpace(string(out)))
}

// veleroBackupSeries are the samples of Velero's backup metrics
// (v1.18.3 pkg/metrics/metrics.go: velero_backup_*), one a line.
func veleroBackupSeries(metrics string) string {
	var b strings.Builder
	for line := range strings.Lines(metrics) {
		if strings.HasPrefix(line, "velero_backup_") {
			b.WriteString(line)
		}
	}
	return b.String()
}
