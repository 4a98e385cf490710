package diff

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/sizing"
	"github.com/virtc/virtc/internal/versions"
)

// Effects of a platform upgrade on a running VM.
const (
	// EffectMigrates: KubeVirt live-migrates the VM to a new virt-launcher.
	EffectMigrates = "live-migrates"
	// EffectOldLauncher: the VM keeps running on the old virt-launcher
	// until it is restarted.
	EffectOldLauncher = "old-launcher"
	// EffectEvicted: KubeVirt shuts the VM down (Evict) and its run
	// strategy decides whether it starts again on the new launcher.
	EffectEvicted = "evicted"
	// EffectCheck: a precondition the platform team checks on the
	// cluster before merging (virtc cannot see it).
	EffectCheck = "check"
)

// upgrade says what a platform upgrade does: the CSVs OLM installs, one
// InstallPlan each; what KubeVirt's workload update then does to the
// running VMs, naming those that cannot migrate and why; and what the
// platform team must check first.
//
// After the new CSV rolls out, virt-operator marks every running VMI whose
// virt-launcher is outdated and the workload updater moves it
// (kubevirt.io/kubevirt v1.8.4 pkg/virt-controller/watch/workload-updater/
// workload-updater.go: migratable VMIs are live-migrated when LiveMigrate
// is a method, at most parallelMigrationsPerCluster at once; the others are
// evicted in batches of batchEvictionSize every batchEvictionInterval when
// Evict is a method, and are left alone otherwise). "Migratable" is the
// VMI's LiveMigratable condition (staging/src/kubevirt.io/api/core/v1/
// types.go IsMigratable): storage and networks, not the eviction strategy.
func (c *comparison) upgrade(m *resolve.Model, old, new *resolve.Platform, path []versions.Version) {
	approver := "approved by the approver Job (virtc approve-installplan) only because its CSV is on this path"
	effect := EffectNone
	if new.Obj.Spec.Approver == nil {
		approver = "waiting for a person to approve it (no spec.approver)"
		effect = EffectManual
	}
	var csvs []string
	for _, v := range path {
		csvs = append(csvs, versions.HCOCSV(v))
	}
	plans := "one InstallPlan,"
	if len(path) > 1 {
		plans = fmt.Sprintf("%d InstallPlans, one after another, each", len(path))
	}
	c.report.Platform = append(c.report.Platform, Change{Field: "olm-path", From: versions.HCOCSV(old.Version), To: versions.HCOCSV(new.Version), Effect: effect,
		Detail: fmt.Sprintf("OLM path in the catalog %s (channel head %s, graph of %s): %s → %s: %s %s; the Subscription stays on installPlanApproval Manual, so OLM goes no further than %s", catalogName(new), new.CatalogHead, new.Graph, versions.HCOCSV(old.Version), strings.Join(csvs, " → "), plans, approver, new.Version)})
	if oadp := versions.OADPPath(old.Release, new.Release); len(oadp) > 0 && new.Obj.Spec.DataProtection != nil && !new.Obj.Spec.DataProtection.External {
		c.oadpRoute(old, new, effect, approver)
	}
	w := new.WorkloadUpdate
	var migrating, stuck []*resolve.VM
	var production []*resolve.VM
	for _, t := range m.Tenants {
		for _, vm := range t.VMs {
			if vm.Spec.Retired || vm.RunStrategy == api.RunHalted {
				continue
			}
			if vm.Tier == resolve.TierProduction {
				production = append(production, vm)
			}
			if w.Live() && vm.CanMigrate() {
				migrating = append(migrating, vm)
			} else {
				stuck = append(stuck, vm)
			}
		}
	}
	methods := "workloadUpdateMethods " + strings.Join(w.Methods, ", ")
	switch {
	case len(w.Methods) == 0:
		methods = "no workloadUpdateMethods: automated workload updates are off"
	case w.Evict():
		methods += fmt.Sprintf("; Evict batches of %d every %s", w.BatchEvictionSize, w.BatchEvictionInterval)
	}
	c.report.Platform = append(c.report.Platform, Change{Field: "workloadUpdate", Effect: EffectNone,
		Detail: fmt.Sprintf("after each CSV, KubeVirt moves running VMs to the new virt-launcher (%s): %d VMs live-migrate, %d cannot", methods, len(migrating), len(stuck))})
	for _, vm := range stuck {
		var why []string
		switch {
		case !w.Live():
			why = []string{"LiveMigrate is not a workload update method"}
		default:
			why = vm.MigrationBlockers()
		}
		detail, eff := "keeps the old virt-launcher until it is restarted (Evict is not a workload update method)", EffectOldLauncher
		if w.Evict() {
			detail, eff = fmt.Sprintf("is shut down by Evict (in batches of %d every %s) and starts again on the new virt-launcher if its run strategy restarts it (%s)", w.BatchEvictionSize, w.BatchEvictionInterval, runStrategy(vm)), EffectEvicted
		}
		c.report.Platform = append(c.report.Platform, Change{Field: "vm", Name: vm.Namespace + "/" + vm.Name, Effect: eff,
			Detail: fmt.Sprintf("VM %s/%s cannot live-migrate (%s): %s", vm.Namespace, vm.Name, strings.Join(why, "; "), detail)})
	}
	// The workload updater picks VMIs by their LiveMigratable condition
	// (storage and networks), not by their evictionStrategy: migration:
	// Never (evictionStrategy None) keeps a VM on its node during a drain,
	// not during an upgrade.
	for _, vm := range migrating {
		if vm.Migration == api.MigrationNever {
			c.report.Platform = append(c.report.Platform, Change{Field: "vm", Name: vm.Namespace + "/" + vm.Name, Effect: EffectMigrates,
				Detail: fmt.Sprintf("VM %s/%s has migration: Never, yet the workload update live-migrates it: KubeVirt moves every running VM its storage and networks let migrate, whatever its eviction strategy (give it ReadWriteOnce storage or a non-migratable network to pin it)", vm.Namespace, vm.Name)})
		}
	}
	for _, vm := range production {
		if vm.Backup.BackupPolicy == nil || vm.Backup.Spec.Schedule == "" {
			continue
		}
		c.report.Platform = append(c.report.Platform, Change{Field: "precondition", Name: vm.Namespace + "/" + vm.Name, Effect: EffectCheck,
			Detail: fmt.Sprintf("check before merging: production VM %s/%s has a completed backup younger than the interval of its backup policy %s (schedule %q); virtc cannot see backups on the cluster", vm.Namespace, vm.Name, vm.Backup.Name, vm.Backup.Spec.Schedule)})
	}
	if len(migrating) > 0 {
		c.report.Platform = append(c.report.Platform, Change{Field: "precondition", Effect: EffectCheck,
			Detail: fmt.Sprintf("check before merging: the workload nodes have spare capacity for %s: each migration runs a second virt-launcher of its VM's size until it completes", capacity(m, migrating))})
	}
	if w.Live() {
		for _, t := range m.Tenants {
			if detail := quotaHeadroom(m, t); detail != "" {
				c.report.Platform = append(c.report.Platform, Change{Field: "quota", Name: t.Name, Effect: EffectNone, Detail: detail})
			}
		}
	}
}

// quotaHeadroom says how many concurrent live migrations the ResourceQuota
// of a tenant holds (render.ResourceQuota, sizing.Model.Quota) and why that
// many: the workload updater starts up to parallelMigrationsPerCluster
// migrations for VMIs it picks anywhere in the cluster, so all may be this
// tenant's; a migration the quota has no room for never gets its target
// pod (the ResourceQuota admission refuses it) and the VM stays on the old
// virt-launcher. Empty for a tenant without migratable VMs.
func quotaHeadroom(m *resolve.Model, t *resolve.Tenant) string {
	u := sizing.KubeVirt.Tenant(t)
	parallel := m.ParallelMigrations()
	n := u.Migrations(parallel)
	if n == 0 {
		return ""
	}
	h := u.Headroom(n)
	mem := sizing.Bytes((h.Memory + 1<<20 - 1) >> 20 << 20)
	cpu := sizing.Milli(h.MilliCPU)
	targets, parts := "the target of its largest VM", []string{"a virt-launcher"}
	if n > 1 {
		targets, parts = fmt.Sprintf("the targets of its %d largest VMs", n), []string{"a virt-launcher each"}
	}
	if k := int(min(n, u.HotplugMigratable)); k > 0 {
		a := sizing.KubeVirt.Attachment
		parts = append(parts, fmt.Sprintf("a hot-plug attachment pod (%s CPU, %s memory) for %d %s with hot-plugged volumes",
			resource.NewMilliQuantity(a.MilliCPU, resource.DecimalSI).String(), resource.NewQuantity(a.Memory, resource.DecimalSI).String(), k, plural(k, "VM", "VMs")))
	}
	var states int
	for _, k := range u.StateMigrating {
		states += int(min(n, k))
	}
	if states > 0 {
		parts = append(parts, fmt.Sprintf("a VM-state PVC for %d %s whose persistent EFI/TPM state is not shared", states, plural(states, "VM", "VMs")))
	}
	return fmt.Sprintf("the quota of tenant %s holds %d concurrent live %s (parallelMigrationsPerCluster %d, %d migratable %s): %s CPU and %s memory requested by %s: %s; the workload update starts up to parallelMigrationsPerCluster at once anywhere in the cluster, so all may be this tenant's",
		t.Name, n, plural(int(n), "migration", "migrations"), parallel, len(u.Migratable), plural(len(u.Migratable), "VM", "VMs"), cpu.String(), mem.String(), targets, strings.Join(parts, ", "))
}

func runStrategy(vm *resolve.VM) string {
	if vm.RunStrategy == "" {
		return "runStrategy Always"
	}
	return "runStrategy " + vm.RunStrategy
}

// capacity is the largest spare capacity the concurrent migrations need:
// the biggest VMs that may migrate at once, by memory.
func capacity(m *resolve.Model, vms []*resolve.VM) string {
	n := resolve.DefaultParallelMigrationsPerCluster
	if lm := m.Platform.Obj.Spec.LiveMigration; lm != nil && lm.ParallelMigrationsPerCluster != nil {
		n = int(*lm.ParallelMigrationsPerCluster)
	}
	sorted := slices.Clone(vms)
	slices.SortStableFunc(sorted, func(a, b *resolve.VM) int {
		if c := b.Size.Spec.Memory.Cmp(a.Size.Spec.Memory); c != 0 {
			return c
		}
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	limit := n
	n = min(n, len(sorted))
	var cpu int64
	mem := resource.Quantity{}
	for _, vm := range sorted[:n] {
		cpu += vm.Size.Spec.CPU
		mem.Add(vm.Size.Spec.Memory)
	}
	return fmt.Sprintf("%d concurrent live migrations (parallelMigrationsPerCluster %d, %d VMs to migrate): up to %d vCPUs and %s of guest memory at once (the %d largest)", n, limit, len(vms), cpu, mem.String(), n)
}

// oadpRoute reports OADP's move with the platform release: one InstallPlan
// in the table's model (every OADP bundle skips all earlier ones), or
// OLM's route on the OADP channel of the catalog's graph among the inputs,
// refused when it does not land on the release's OADP.
func (c *comparison) oadpRoute(old, new *resolve.Platform, effect, approver string) {
	from, to := old.Release.OADP.Version, new.Release.OADP.Version
	detail := fmt.Sprintf("OADP %s → %s: one InstallPlan, %s", versions.OADPCSV(from), versions.OADPCSV(to), approver)
	if ch := new.OADPChannel; ch != nil {
		f, err1 := versions.Parse(from)
		t, err2 := versions.Parse(to)
		if err1 == nil && err2 == nil {
			r := ch.Route(f, t)
			if !r.Reached {
				c.report.Platform = append(c.report.Platform, Change{Field: "oadp", From: from, To: to, Effect: EffectRefused,
					Detail: fmt.Sprintf("OADP %s → %s: OLM's upgrade does not land on %s, refused", versions.OADPCSV(from), versions.OADPCSV(to), versions.OADPCSV(to))})
				c.refuse("oadp-upgrade-unreachable", ref("Platform", "", new.Name),
					fmt.Sprintf("OADP goes %s → %s with the platform release, but in the channel %s of %s, %s: the approver refuses that before approving anything", from, to, ch.Name, new.Graph, r.Explain()),
					"pin a platform version whose OADP release the catalog's OADP channel lands on, or render the catalog again if it is not the cluster's")
				return
			}
			var csvs []string
			for _, v := range r.Versions() {
				csvs = append(csvs, versions.OADPCSV(v.String()))
			}
			detail = fmt.Sprintf("OADP %s → %s (channel %s of %s): %d InstallPlan(s), %s", versions.OADPCSV(from), strings.Join(csvs, " → "), ch.Name, new.Graph, len(csvs), approver)
		}
	}
	c.report.Platform = append(c.report.Platform, Change{Field: "oadp", From: from, To: to, Effect: effect, Detail: detail})
}
