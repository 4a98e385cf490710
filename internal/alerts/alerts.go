// Package alerts decides, from the resolved model, what virtc's monitoring
// watches: the Prometheus alerting rules each VM's tier, run strategy,
// migration mode, image and backup policy imply, each tenant's quota
// headroom, the restore drills' evidence and the platform's health, and
// for each VM what is watched and what is not (virtc report). Package
// render turns the plan into PrometheusRule and AlertmanagerConfig
// objects; the thresholds and severities are catalog data
// (catalog/monitoring/alerting.yaml, overridden by the Platform's
// spec.monitoring).
//
// Every metric and label the rules read is one the components export at
// the pinned versions; metrics_test.go names the upstream file of each.
package alerts

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/sizing"
	"github.com/virtc/virtc/internal/versions"
)

// Where the rules go and what they are called.
const (
	// PlatformNamespace holds the platform's and the quota (capacity)
	// rules: OpenShift Virtualization's namespace, evaluated by the
	// platform Prometheus once labelled openshift.io/cluster-monitoring.
	PlatformNamespace = "openshift-cnv"
	// BackupNamespace holds each tenant's backup rules, beside its Velero
	// Schedules (OADP's namespace, where Velero's metrics are).
	BackupNamespace = "openshift-adp"
	PlatformRule    = "virtc-platform"
	VMRule          = "virtc-vms"
	// ReceiverName is the AlertmanagerConfig in a tenant's namespace (and
	// its receiver).
	ReceiverName = "virtc-alerts"
	// QuotaName is the tenant ResourceQuota the quota rule reads
	// (render.QuotaName).
	QuotaName = "virtc-vms"
)

// BackupRule is the name of a tenant's backup rule in openshift-adp.
func BackupRule(tenant string) string { return "virtc-backups-" + tenant }

// Labels of every alert.
const (
	LabelSeverity = "severity"
	LabelTenant   = "virtc_tenant"
	LabelTier     = "virtc_tier"
)

// Rule is one Prometheus alerting rule.
type Rule struct {
	Alert       string
	Expr        string
	For         string
	Labels      map[string]string
	Annotations map[string]string
}

// Group is a rule group.
type Group struct {
	Name  string
	Rules []Rule
}

// RuleSet is one PrometheusRule: where it goes and its groups.
type RuleSet struct {
	Namespace string
	Name      string
	// Tenant is the tenant it is about (empty: the platform's).
	Tenant string
	// Source is the intent file it comes from.
	Source string
	Groups []Group
}

// Receiver is a tenant's AlertmanagerConfig.
type Receiver struct {
	Tenant string
	Source string
	*api.TenantAlerts
}

// Item is one thing virtc report says about a VM's monitoring.
type Item struct {
	// What is watched: running, guest-agent, migration, backup, quota.
	What string `json:"what"`
	// Alert is the alert that watches it (empty: not watched).
	Alert string `json:"alert,omitempty"`
	// Detail says how (threshold, severity) or why not.
	Detail string `json:"detail"`
}

// Plan is everything the monitoring of a build holds.
type Plan struct {
	Settings Settings
	Platform RuleSet
	// Tenants' rule sets, in tenant order: VM rules (nil when the tenant
	// has no VM to watch) and backup rules (nil without Schedules).
	VMs     map[string]*RuleSet
	Backups map[string]*RuleSet
	// Receivers are the tenants' AlertmanagerConfigs, by tenant.
	Receivers map[string]*Receiver
	// Coverage is, per VM (namespace/name), what is watched and what not.
	Coverage map[string][]Item

	schedule func(tenant, policy string) string
}

// On reports whether the model's build compiles monitoring: it has a
// Platform whose spec.monitoring does not turn it off, or, in a
// tenant-only build, the Platform's published facts say it is on.
func On(m *resolve.Model) bool {
	switch {
	case m.Platform != nil:
		return m.Platform.Obj.Spec.Monitoring.On()
	case m.Facts != nil:
		return m.Facts.Obj.Spec.Monitoring.On()
	}
	return false
}

// settingsOf is the build's monitoring settings: the Platform's, else its
// published facts'.
func settingsOf(m *resolve.Model) *api.Monitoring {
	if m.Platform != nil {
		return m.Platform.Obj.Spec.Monitoring
	}
	return m.Facts.Obj.Spec.Monitoring
}

// Compile plans the monitoring of a model; nil when it is off. schedule
// names the Velero Schedule of a tenant's backup policy
// (render.ScheduleName).
func Compile(m *resolve.Model, schedule func(tenant, policy string) string) (*Plan, error) {
	if !On(m) {
		return nil, nil
	}
	s, err := Load(settingsOf(m))
	if err != nil {
		return nil, err
	}
	p := &Plan{
		Settings:  s,
		VMs:       map[string]*RuleSet{},
		Backups:   map[string]*RuleSet{},
		Receivers: map[string]*Receiver{},
		Coverage:  map[string][]Item{},
		schedule:  schedule,
	}
	var quota []Rule
	for _, t := range m.Tenants {
		if err := p.tenant(m, t, &quota); err != nil {
			return nil, err
		}
	}
	if m.Platform == nil {
		// A tenant-only build writes its tenants' rules and receivers;
		// virtc-platform (the platform's health, every tenant's quota,
		// the restore drills) is the platform repository's object, and
		// two tenant repositories would fight over it. A tenant's quota
		// headroom is then watched from its own namespace, routed to the
		// tenant (TenantQuota).
		for _, r := range quota {
			i := slices.IndexFunc(m.Tenants, func(t *resolve.Tenant) bool { return t.Name == r.Labels[LabelTenant] })
			t := m.Tenants[i]
			if p.VMs[t.Name] == nil {
				p.VMs[t.Name] = &RuleSet{Namespace: t.Name, Name: VMRule, Tenant: t.Name, Source: t.Doc.Rel}
			}
			rs := p.VMs[t.Name]
			rs.Groups = append(rs.Groups, Group{Name: "virtc-quota", Rules: []Rule{r}})
		}
		return p, nil
	}
	p.Platform = RuleSet{Namespace: PlatformNamespace, Name: PlatformRule, Source: m.Platform.Doc.Rel}
	p.Platform.Groups = append(p.Platform.Groups, platformGroup(m, s))
	if len(quota) > 0 {
		p.Platform.Groups = append(p.Platform.Groups, Group{Name: "virtc-quota", Rules: quota})
	}
	if drills := drillRules(m, s); len(drills) > 0 {
		p.Platform.Groups = append(p.Platform.Groups, Group{Name: "virtc-restore-drills", Rules: drills})
	}
	return p, nil
}

// platformGroup watches OpenShift Virtualization and the operators virtc
// installs.
func platformGroup(m *resolve.Model, s Settings) Group {
	labels := func() map[string]string { return map[string]string{LabelSeverity: s.Platform.Severity} }
	csvs := []string{regexQuote(strings.TrimSuffix(versions.HCOCSV(m.Platform.Version), m.Platform.Version.String())) + ".*"}
	if dp := m.Platform.Obj.Spec.DataProtection; dp != nil && !dp.External {
		csvs = append(csvs, regexQuote(versions.OADPCSV(""))+".*")
	}
	// HCO v1.18.1 reports error (2) when the HyperConverged is not
	// Available or is Degraded and warning (1) while it has not reconciled
	// or is Progressing; during its own upgrade only Degraded is an error
	// (controllers/hyperconverged/hyperconverged_controller.go,
	// getSystemHealthStatus). An update of the operator is one the
	// Platform asked for (virtc's approver approves only the route to its
	// pin), and it is Degraded for longer than its CSV is replaced: HCO's
	// readiness probe always answers (pkg/util/hcoping.go), so OLM has the
	// new CSV Succeeded as soon as its pod runs, while HCO stays in upgrade
	// mode until every component reports the new version
	// (completeReconciliation), and KubeVirt reports Degraded=True for the
	// whole of its own rolling update (kubevirt v1.8.4
	// pkg/virt-operator/util/client.go, UpdateInProgress), which HCO
	// aggregates into its own Degraded (aggregateComponentConditions).
	// So neither rule fires while HCO's CSV is being replaced nor for
	// upgradeFor after it was last seen so: OLM's csv_abnormal is 1 for the
	// old CSV (Replacing) and the new one (Pending to Installing) until the
	// new one has Succeeded, and is deleted then (operator-lifecycle-manager
	// v0.42.0 pkg/metrics/metrics.go, EmitCSVMetric). max_over_time over
	// the window rather than OLM's csv_succeeded: a Prometheus without that
	// much history (k8s has no persistent storage by default) then pages
	// as before instead of taking every Succeeded CSV for a new one.
	// VirtcOperatorNotSucceeded watches an update whose CSV does not
	// succeed. HCO's own alert is the same split
	// (pkg/monitoring/hyperconverged/rules/alerts/health_alerts.go).
	updating := fmt.Sprintf(" unless on () (max_over_time(csv_abnormal{name=~%s,phase=~\"Pending|InstallReady|Installing|Replacing\"}[%s]) == 1)", promString(csvs[0]), s.Platform.UpgradeFor)
	return Group{Name: "virtc-platform", Rules: []Rule{
		{
			Alert:  "VirtcHyperConvergedUnhealthy",
			Expr:   "kubevirt_hco_system_health_status == 2" + updating,
			For:    s.Platform.UnhealthyFor,
			Labels: labels(),
			Annotations: map[string]string{
				"summary":     "OpenShift Virtualization is not healthy",
				"description": "HCO has reported its system health as error for " + s.Platform.UnhealthyFor + ", outside an update of the operator and the " + s.Platform.UpgradeFor + " after it: the HyperConverged is not Available, or it or a component it deploys is Degraded (oc get hyperconverged -n openshift-cnv -o yaml).",
			},
		},
		{
			Alert:  "VirtcHyperConvergedWarning",
			Expr:   "kubevirt_hco_system_health_status == 1" + updating,
			For:    s.Platform.UnhealthyFor,
			Labels: map[string]string{LabelSeverity: "warning"},
			Annotations: map[string]string{
				"summary":     "OpenShift Virtualization has not finished reconciling",
				"description": "HCO has reported its system health as warning for " + s.Platform.UnhealthyFor + ", outside an update of the operator and the " + s.Platform.UpgradeFor + " after it: the HyperConverged has not completed reconciling its components, or is Progressing (oc get hyperconverged -n openshift-cnv -o yaml).",
			},
		},
		{
			Alert:  "VirtcOperatorNotSucceeded",
			Expr:   fmt.Sprintf("csv_abnormal{name=~%s} == 1", promString(strings.Join(csvs, "|"))),
			For:    s.Platform.UpgradeFor,
			Labels: labels(),
			Annotations: map[string]string{
				"summary":     "Operator CSV {{ $labels.name }} is {{ $labels.phase }}",
				"description": "The ClusterServiceVersion {{ $labels.name }} has not been Succeeded for " + s.Platform.UpgradeFor + " (phase {{ $labels.phase }}, reason {{ $labels.reason }}): an install or upgrade is stuck or failed.",
			},
		},
	}}
}

// should reports whether a VM is meant to run, and why not.
func should(vm *resolve.VM) (bool, string) {
	switch {
	case vm.Spec.Retired:
		return false, "retired (halted)"
	case vm.RunStrategy == api.RunAlways || vm.RunStrategy == api.RunRerunOnFailure:
		return true, ""
	default:
		return false, "runStrategy " + vm.RunStrategy + " (not meant to be always running)"
	}
}

// tenant plans a tenant's VM, backup and quota rules and its receiver.
func (p *Plan) tenant(m *resolve.Model, t *resolve.Tenant, quota *[]Rule) error {
	s := p.Settings
	type set struct{ running, agent, migrate []string }
	byTier := map[string]*set{}
	tierOf := map[string]string{}
	top := ""
	var need sizing.Pod
	for _, vm := range t.VMs {
		key := vm.Namespace + "/" + vm.Name
		ta := s.Tier(vm.Tier)
		if byTier[vm.Tier] == nil {
			byTier[vm.Tier] = &set{}
		}
		b := byTier[vm.Tier]
		if top == "" || s.rank(vm.Tier) < s.rank(top) {
			top = vm.Tier
		}
		if !vm.Spec.Retired {
			// Any VM that is not retired may be started or migrated.
			pod := sizing.KubeVirt.LauncherFor(sizing.ShapeOf(vm))
			need.MilliCPU, need.Memory = max(need.MilliCPU, pod.MilliCPU), max(need.Memory, pod.Memory)
		}
		var items []Item
		run, why := should(vm)
		if run {
			b.running = append(b.running, vm.Name)
			items = append(items, Item{What: "running", Alert: "VirtcVMNotRunning", Detail: fmt.Sprintf("not running for %s (%s)", ta.NotRunningFor, ta.Severity)})
		} else {
			items = append(items, Item{What: "running", Detail: "not watched: " + why})
		}
		switch {
		case run && vm.Image != nil && vm.Image.Spec.GuestAgent:
			b.agent = append(b.agent, vm.Name)
			items = append(items, Item{What: "guest-agent", Alert: "VirtcVMGuestAgentMissing", Detail: fmt.Sprintf("running without the guest agent for %s (%s)", ta.GuestAgentMissingFor, ta.Severity)})
		case run:
			items = append(items, Item{What: "guest-agent", Detail: "not watched: image " + vm.ImageName + " declares no guest agent"})
		default:
			items = append(items, Item{What: "guest-agent", Detail: "not watched: not meant to run"})
		}
		switch {
		case run && vm.Migration == api.MigrationRequired:
			b.migrate = append(b.migrate, vm.Name)
			items = append(items, Item{What: "migration", Alert: "VirtcVMMigrationStuck, VirtcVMMigrationFailed, VirtcVMNotMigratable",
				Detail: fmt.Sprintf("migration running over %s, last migration failed, or not live-migratable (%s)", ta.MigrationStuckAfter, ta.Severity)})
		case run:
			items = append(items, Item{What: "migration", Detail: "not watched: migration " + vm.Migration + " (not Required)"})
		default:
			items = append(items, Item{What: "migration", Detail: "not watched: not meant to run"})
		}
		if vm.TakesBackups() {
			tierOf[vm.Backup.Name] = higher(s, tierOf[vm.Backup.Name], vm.Tier)
		} else {
			items = append(items, Item{What: "backup", Detail: "not watched: backup policy " + vm.Backup.Name + " takes no backups"})
		}
		p.Coverage[key] = items
	}
	var groups []Group
	for _, tier := range s.Tiers {
		b := byTier[tier.Tier]
		if b == nil {
			continue
		}
		if rules := vmRules(t.Name, tier, b.running, b.agent, b.migrate); len(rules) > 0 {
			groups = append(groups, Group{Name: "virtc-vms-" + tier.Tier, Rules: rules})
		}
	}
	if len(groups) > 0 {
		p.VMs[t.Name] = &RuleSet{Namespace: t.Name, Name: VMRule, Tenant: t.Name, Source: t.Doc.Rel, Groups: groups}
		if t.Spec.Alerts != nil && (len(t.Spec.Alerts.Email) > 0 || t.Spec.Alerts.Webhook != "") {
			p.Receivers[t.Name] = &Receiver{Tenant: t.Name, Source: t.Doc.Rel, TenantAlerts: t.Spec.Alerts}
		}
	}
	backups, unwatched, err := backupRules(s, t, tierOf, p.schedule)
	if err != nil {
		return err
	}
	if len(backups) > 0 {
		p.Backups[t.Name] = &RuleSet{Namespace: BackupNamespace, Name: BackupRule(t.Name), Tenant: t.Name, Source: t.Doc.Rel,
			Groups: []Group{{Name: "virtc-backups-" + t.Name, Rules: backups}}}
	}
	for _, vm := range t.VMs {
		if !vm.TakesBackups() {
			continue
		}
		key := vm.Namespace + "/" + vm.Name
		if why, ok := unwatched[vm.Backup.Name]; ok {
			p.Coverage[key] = append(p.Coverage[key], Item{What: "backup", Detail: "not watched: " + why})
			continue
		}
		ta := s.Tier(tierOf[vm.Backup.Name])
		p.Coverage[key] = append(p.Coverage[key], Item{What: "backup", Alert: "VirtcBackupOverdue, VirtcBackupNeverSucceeded",
			Detail: fmt.Sprintf("Schedule %s without a successful backup for its longest interval plus %s (%s)", p.schedule(t.Name, vm.Backup.Name), ta.BackupGrace, ta.Severity)})
	}
	if need.MilliCPU > 0 {
		*quota = append(*quota, quotaRule(s, t.Name, top, need))
		for _, vm := range t.VMs {
			key := vm.Namespace + "/" + vm.Name
			p.Coverage[key] = append(p.Coverage[key], Item{What: "quota", Alert: "VirtcTenantQuotaHeadroom",
				Detail: fmt.Sprintf("tenant quota headroom below %s CPU or %s memory, the largest VM's launcher pod (%s)", milliText(need.MilliCPU), bytesText(need.Memory), s.Tier(top).Severity)})
		}
	}
	return nil
}

// higher is the more important of two tiers (either may be empty).
func higher(s Settings, a, b string) string {
	if a == "" || s.rank(b) < s.rank(a) {
		return b
	}
	return a
}

// MigrationFailedWindow is how long VirtcVMMigrationFailed holds after a
// failed migration ended.
const MigrationFailedWindow = time.Hour

// vmRules are the rules of a tenant's VMs of one tier: KubeVirt v1.8.4's
// virt-controller metrics (pkg/monitoring/metrics/virt-controller), which
// carry the VM's namespace and name; virt-operator's ServiceMonitor keeps
// them as they are (pkg/virt-operator/resource/generate/components/
// prometheus.go, HonorLabels: true), so the namespace user workload
// monitoring enforces on the tenant's rule is the VM's.
func vmRules(ns string, ta api.TierAlerting, running, agent, migrate []string) []Rule {
	labels := func() map[string]string {
		return map[string]string{LabelSeverity: ta.Severity, LabelTenant: ns, LabelTier: ta.Tier}
	}
	sel := func(names []string, more string) string {
		return fmt.Sprintf("{namespace=%s,name=~%s%s}", promString(ns), promString(nameRegex(names)), more)
	}
	var rules []Rule
	if len(running) > 0 {
		rules = append(rules, Rule{
			Alert: "VirtcVMNotRunning",
			// One series per VM: kubevirt_vm_info carries the VM's
			// printable status (KubeVirt v1.8.4 pkg/monitoring/metrics/
			// virt-controller/vmstats_collector.go, CollectVMsInfo), so a
			// VM that crash-loops changes series every few minutes
			// (CrashLoopBackOff, Starting), and an alert on each series
			// would start its for: timer again at every change.
			Expr:   "max by (namespace, name) (kubevirt_vm_info" + sel(running, `,status_group!~"running|migrating"`) + ") == 1",
			For:    ta.NotRunningFor,
			Labels: labels(),
			Annotations: map[string]string{
				"summary":     "VM {{ $labels.namespace }}/{{ $labels.name }} is not running",
				"description": "The " + ta.Tier + " VM {{ $labels.namespace }}/{{ $labels.name }} should run (its runStrategy keeps it running) and has not been running for " + ta.NotRunningFor + ", whatever states it went through (oc describe vm -n {{ $labels.namespace }} {{ $labels.name }}).",
			},
		})
	}
	if len(agent) > 0 {
		rules = append(rules, Rule{
			Alert:  "VirtcVMGuestAgentMissing",
			Expr:   "kubevirt_vmi_info" + sel(agent, `,phase="running",guest_os_name=""`) + " == 1",
			For:    ta.GuestAgentMissingFor,
			Labels: labels(),
			Annotations: map[string]string{
				"summary":     "VM {{ $labels.namespace }}/{{ $labels.name }} runs without its guest agent",
				"description": "The image of VM {{ $labels.namespace }}/{{ $labels.name }} declares the QEMU guest agent, but the running VM has reported no guest OS information for " + ta.GuestAgentMissingFor + ": its readiness probe, and consistent snapshots and backups, depend on the agent.",
			},
		})
	}
	if len(migrate) > 0 {
		stuck, _ := ParseDuration(ta.MigrationStuckAfter)
		rules = append(rules,
			Rule{
				Alert: "VirtcVMMigrationStuck",
				Expr: fmt.Sprintf("(time() - kubevirt_vmi_migration_start_time_seconds%s) > %d unless on (namespace, name, migration_name) kubevirt_vmi_migration_end_time_seconds%s",
					sel(migrate, ""), int64(stuck/time.Second), sel(migrate, "")),
				Labels: labels(),
				Annotations: map[string]string{
					"summary":     "Live migration of VM {{ $labels.namespace }}/{{ $labels.name }} has run over " + ta.MigrationStuckAfter,
					"description": "The VM must live-migrate (migration Required), and its migration {{ $labels.migration_name }} has not ended " + ta.MigrationStuckAfter + " after it started: a node drain or upgrade waits for it.",
				},
			},
			Rule{
				Alert: "VirtcVMMigrationFailed",
				// The end time is the VMI's last migration's, kept until
				// the next one (KubeVirt v1.8.4 vmistats_collector.go,
				// collectVMIMigrationTime): the alert holds for a window
				// after the failure, not until another migration succeeds.
				Expr:   fmt.Sprintf("(time() - kubevirt_vmi_migration_end_time_seconds%s) < %d", sel(migrate, `,status="failed"`), int64(MigrationFailedWindow/time.Second)),
				Labels: labels(),
				Annotations: map[string]string{
					"summary":     "Live migration of VM {{ $labels.namespace }}/{{ $labels.name }} failed",
					"description": "The VM must live-migrate (migration Required), and its migration {{ $labels.migration_name }} failed in the last " + FormatDuration(MigrationFailedWindow) + ": a node drain cannot move it (oc get vmim -n {{ $labels.namespace }}).",
				},
			},
			Rule{
				Alert:  "VirtcVMNotMigratable",
				Expr:   "kubevirt_vmi_non_evictable" + sel(migrate, "") + " == 1",
				For:    ta.NotRunningFor,
				Labels: labels(),
				Annotations: map[string]string{
					"summary":     "VM {{ $labels.namespace }}/{{ $labels.name }} cannot live-migrate",
					"description": "The VM must live-migrate (evictionStrategy LiveMigrate), and KubeVirt reports it not migratable (its LiveMigratable condition is false): a node drain will block on it.",
				},
			},
		)
	}
	return rules
}

// backupRules watch each Velero Schedule virtc generates for the tenant:
// Velero v1.18's velero_backup_last_successful_timestamp{schedule}
// (pkg/metrics/metrics.go), set when a backup of the Schedule completes,
// and absent until the first one does (InitSchedule sets only counters).
//
// A schedule that does not fire twice in four years (29 February, or a day
// no month has) is not watched: unwatched says so, by policy.
func backupRules(s Settings, t *resolve.Tenant, tierOf map[string]string, scheduleName func(tenant, policy string) string) (rules []Rule, unwatched map[string]string, err error) {
	unwatched = map[string]string{}
	seen := map[string]bool{}
	for _, vm := range t.VMs {
		if !vm.TakesBackups() || seen[vm.Backup.Name] {
			continue
		}
		policy := vm.Backup.Name
		seen[policy] = true
		ta := s.Tier(tierOf[policy])
		interval, err := cronInterval(vm.Backup.Spec.Schedule)
		if err != nil {
			unwatched[policy] = fmt.Sprintf("backup policy %s: %v", policy, err)
			continue
		}
		grace, err := ParseDuration(ta.BackupGrace)
		if err != nil {
			return nil, nil, fmt.Errorf("tier %s backupGrace: %v", ta.Tier, err)
		}
		limit := interval + grace
		schedule := scheduleName(t.Name, policy)
		metric := fmt.Sprintf("velero_backup_last_successful_timestamp{schedule=%s}", promString(schedule))
		labels := func() map[string]string {
			return map[string]string{LabelSeverity: ta.Severity, LabelTenant: t.Name, LabelTier: ta.Tier, "backup_policy": policy, "schedule": schedule}
		}
		rules = append(rules,
			Rule{
				Alert:  "VirtcBackupOverdue",
				Expr:   fmt.Sprintf("time() - %s > %d", metric, int64(limit/time.Second)),
				Labels: labels(),
				Annotations: map[string]string{
					"summary":     "No successful backup of Schedule " + schedule + " for " + FormatDuration(limit),
					"description": fmt.Sprintf("Backup policy %s (%q, at most %s between backups) has had no successful backup for tenant %s for longer than that plus %s (velero backup get -n openshift-adp -l velero.io/schedule-name=%s).", policy, vm.Backup.Spec.Schedule, FormatDuration(interval), t.Name, ta.BackupGrace, schedule),
				},
			},
			Rule{
				Alert:  "VirtcBackupNeverSucceeded",
				Expr:   "absent(" + metric + ")",
				For:    FormatDuration(limit),
				Labels: labels(),
				Annotations: map[string]string{
					"summary":     "Schedule " + schedule + " has no successful backup",
					"description": fmt.Sprintf("Velero has reported no successful backup of Schedule %s (backup policy %s, tenant %s) for %s: its backups fail, or Velero's metrics are not collected.", schedule, policy, t.Name, FormatDuration(limit)),
				},
			},
		)
	}
	return rules, unwatched, nil
}

// quotaRule watches a tenant's ResourceQuota through kube-state-metrics'
// kube_resourcequota{namespace, resourcequota, resource, type}
// (internal/store/resourcequota.go): the hard limit less the use must keep
// room for the largest VM's virt-launcher pod, what a migration's target
// pod or a restart needs.
func quotaRule(s Settings, tenant, tier string, need sizing.Pod) Rule {
	ta := s.Tier(tier)
	q := func(resource, typ string) string {
		return fmt.Sprintf("kube_resourcequota{namespace=%s,resourcequota=%q,resource=%q,type=%q}", promString(tenant), QuotaName, resource, typ)
	}
	cpu := strconv.FormatFloat(float64(need.MilliCPU)/1000, 'f', -1, 64)
	mem := strconv.FormatInt(need.Memory, 10)
	return Rule{
		Alert: "VirtcTenantQuotaHeadroom",
		Expr: fmt.Sprintf("(%s - ignoring (type) %s) < %s or (%s - ignoring (type) %s) < %s",
			q("requests.cpu", "hard"), q("requests.cpu", "used"), cpu,
			q("requests.memory", "hard"), q("requests.memory", "used"), mem),
		Labels: map[string]string{LabelSeverity: ta.Severity, LabelTenant: tenant, LabelTier: ta.Tier},
		Annotations: map[string]string{
			"summary":     "Tenant " + tenant + " quota has no room for a migration or restart",
			"description": fmt.Sprintf("ResourceQuota %s/%s leaves less {{ $labels.resource }} than the largest VM's virt-launcher pod needs (%s CPU, %s memory): a live migration's target pod or a restart of it would be refused.", tenant, QuotaName, milliText(need.MilliCPU), bytesText(need.Memory)),
		},
	}
}

// drillRules warn before the evidence of a restore drill that a VM's
// acceptance rests on expires (its backup policy's drillInterval after
// its date): from the Evidence in Git, no metric. They also fire while the
// Evidence's date is still in the future: a build without a date (no
// --as-of or SOURCE_DATE_EPOCH) has no clock and judges as of the newest
// Evidence, so a mistyped year (2099) would count for ever there; the
// cluster's clock tells (issue 46). A day of slack keeps a drill recorded
// today in a time zone ahead of UTC quiet.
func drillRules(m *resolve.Model, s Settings) []Rule {
	ctx := eligibility.ContextOf(m)
	type drill struct {
		policy, evidence string
		date, expires    time.Time
		tier             string
	}
	found := map[string]*drill{}
	dates := map[string]string{}
	for _, e := range m.Evidence {
		dates[e.Obj.Metadata.Name] = e.Obj.Spec.Date
	}
	for _, t := range m.Tenants {
		for _, vm := range t.VMs {
			if run, _ := should(vm); !run {
				continue
			}
			a := eligibility.Accept(vm, eligibility.Classify(vm), ctx)
			for _, j := range a.Judged {
				if j.BackupPolicy == "" || j.ValidFor == 0 || j.Evidence == "" {
					continue
				}
				date, err := time.Parse(time.DateOnly, dates[j.Evidence])
				if err != nil {
					continue
				}
				key := j.BackupPolicy + "/" + j.Evidence
				if d := found[key]; d != nil {
					d.tier = higher(s, d.tier, vm.Tier)
					continue
				}
				found[key] = &drill{policy: j.BackupPolicy, evidence: j.Evidence, date: date, expires: date.Add(j.ValidFor), tier: vm.Tier}
			}
		}
	}
	var drills []*drill
	for _, d := range found {
		drills = append(drills, d)
	}
	slices.SortFunc(drills, func(a, b *drill) int {
		return cmp.Or(cmp.Compare(a.policy, b.policy), cmp.Compare(a.evidence, b.evidence))
	})
	var rules []Rule
	for _, d := range drills {
		ta := s.Tier(d.tier)
		warn, err := ParseDuration(ta.DrillWarning)
		if err != nil {
			continue
		}
		rules = append(rules, Rule{
			Alert:  "VirtcRestoreDrillExpiring",
			Expr:   fmt.Sprintf("vector(time()) > %d or vector(time()) < %d", d.expires.Add(-warn).Unix(), d.date.Add(-24*time.Hour).Unix()),
			Labels: map[string]string{LabelSeverity: ta.Severity, LabelTier: ta.Tier, "backup_policy": d.policy, "evidence": d.evidence},
			Annotations: map[string]string{
				"summary":     "Restore drill evidence " + d.evidence + " of " + d.date.Format(time.DateOnly) + " expires on " + d.expires.Format(time.DateOnly),
				"description": fmt.Sprintf("The restore drill of backup policy %s (Evidence %s, dated %s) counts until %s: do the drill again and record its Evidence, or the build refuses the %s VMs that rely on it. Firing before %s: the Evidence is dated in the future, which no drill can be (record the day the drill was done).", d.policy, d.evidence, d.date.Format(time.DateOnly), d.expires.Format(time.DateOnly), ta.Tier, d.date.Format(time.DateOnly)),
			},
		})
	}
	return rules
}

// nameRegex matches exactly the names given (PromQL anchors regexes).
func nameRegex(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexQuote(n)
	}
	return strings.Join(q, "|")
}

// regexQuote escapes the characters of Kubernetes names that mean
// something in a regular expression (RE2, as Prometheus uses).
func regexQuote(s string) string { return strings.ReplaceAll(s, ".", `\.`) }

// promString is a PromQL double-quoted string literal.
func promString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func milliText(m int64) string { return strconv.FormatFloat(float64(m)/1000, 'f', -1, 64) }

// bytesText is an amount of memory for people, in GiB.
func bytesText(b int64) string { return strconv.FormatFloat(float64(b)/(1<<30), 'f', 1, 64) + "Gi" }
