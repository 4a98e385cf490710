// Package rules holds the platform's rules that go beyond a single field:
// what the cluster can actually do with a VM, and what fits in a tenant's
// quota. Each rule reports at the intent field that breaks it.
package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/sizing"
)

// Check runs every rule over the model.
func Check(m *resolve.Model, diags *diag.List) { CheckWith(m, Options{}, diags) }

// Options change how rules report.
type Options struct {
	// GateWarns reports the eligibility gate's refusals (missing
	// evidence, no platform version) as warnings: virtc report shows
	// them rather than failing.
	GateWarns bool
}

// CheckWith runs every rule over the model.
func CheckWith(m *resolve.Model, opts Options, diags *diag.List) {
	oadpInstalled(m, diags)
	j := newJudge(m)
	ctx := j.ctx
	evidenceNames(m, diags)
	futureEvidence(m, opts, diags)
	previewGates(m, ctx, diags)
	placementRules(m, diags)
	bootImageOwners(m, diags)
	bootSourceMarks(m, diags)
	productionTarget(m, diags)
	compatibilityGate(m, opts, diags)
	productionMonitoring(m, diags)
	recoveryOwners(m, diags)
	checkIntents(m, j, diags)
	for _, t := range m.Tenants {
		labTenant(t, diags)
		retiredTenant(t, diags)
		quotaFit(t, diags)
		for _, vm := range t.VMs {
			imageProvenance(vm, diags)
			draftProfiles(vm, diags)
			tierOwnership(vm, diags)
			gate(vm, ctx, opts, diags)
			snapshotBefore(vm, diags)
			previewInProduction(vm, diags)
			names(vm, diags)
			bothUserData(vm, diags)
			liveness(vm, diags)
		}
	}
}

// migration refuses a VM that claims live migration it cannot have, and
// warns when IfPossible will in fact stop the VM during maintenance.
func migration(m *resolve.Model, vm *resolve.VM, diags *diag.List) {
	blockers := migrationBlockers(vm)
	if len(blockers) == 0 {
		return
	}
	switch vm.Migration {
	case api.MigrationRequired:
		hint := "use ReadWriteMany storage and migratable networks, or migration: IfPossible or Never"
		if len(vm.Devices()) > 0 {
			hint = "a VM with a GPU or host device is stopped during node maintenance: use migration: Never"
		}
		diags.Errorf(vm.Doc.Pos("spec.migration"), "spec.migration", "migration: Required cannot be met: %s (%s)", strings.Join(blockers, "; "), hint)
	case api.MigrationIfPossible:
		if slices.Contains(vm.Spec.KubeVirtDefaults, api.DefaultEvictionStrategy) {
			clusterEviction(m, vm, blockers, diags)
			return
		}
		diags.Warnf(vm.Doc.Pos("spec.migration"), "spec.migration", "the VM cannot live-migrate (%s): it gets evictionStrategy None and is stopped during node maintenance", strings.Join(blockers, "; "))
	}
}

// clusterEviction judges a VM that cannot live-migrate but leaves its
// eviction strategy to the cluster's (spec.kubevirtDefaults:
// [evictionStrategy], as virtc import writes for a VM that sets none).
// With the cluster's LiveMigrate, KubeVirt v1.8.4 denies every eviction of
// its virt-launcher pod (pkg/virt-api/webhooks/validating-webhook/admitters/
// pod-eviction-admitter.go: "is configured with an eviction strategy but is
// not live-migratable"), so each drain of its node blocks until someone
// stops the VM. HCO v1.18.1 defaults the cluster's strategy to LiveMigrate
// on clusters with more than one worker (pkg/webhooks/mutator,
// mutateV1beta1EvictionStrategy).
func clusterEviction(m *resolve.Model, vm *resolve.VM, blockers []string, diags *diag.List) {
	const field = "spec.kubevirtDefaults"
	why := strings.Join(blockers, "; ")
	if m.Platform == nil {
		diags.Warnf(vm.Doc.Pos(field), field, "the VM cannot live-migrate (%s) and leaves its eviction strategy to the cluster's: with LiveMigrate (HCO's default on clusters with several workers) KubeVirt denies the eviction of its launcher and every drain of its node blocks (remove evictionStrategy from spec.kubevirtDefaults: virtc then writes None)", why)
		return
	}
	strategy := cmp.Or(m.Platform.Obj.Spec.EvictionStrategy, "LiveMigrate")
	switch strategy {
	case "External":
		// The drain waits for the external controller, by design.
	case "LiveMigrate":
		diags.Errorf(vm.Doc.Pos(field), field, "the VM cannot live-migrate (%s) and leaves its eviction strategy to the cluster's, %s: KubeVirt denies the eviction of its launcher, and every drain of its node blocks (remove evictionStrategy from spec.kubevirtDefaults: virtc then writes None, and maintenance stops the VM)", why, strategy)
	default:
		diags.Warnf(vm.Doc.Pos("spec.migration"), "spec.migration", "the VM cannot live-migrate (%s): with the cluster's evictionStrategy %s it is stopped during node maintenance", why, strategy)
	}
}

func migrationBlockers(vm *resolve.VM) []string { return vm.MigrationBlockers() }

// retiredTenant refuses a retired tenant with VMs that are not retired:
// decommissioning goes VM by VM, so that each VM is halted, with its disks
// and backups kept, before its namespace may go.
func retiredTenant(t *resolve.Tenant, diags *diag.List) {
	if !t.Spec.Retired {
		return
	}
	var active []string
	for _, vm := range t.VMs {
		// A VM whose spec.retired has a structural error is reported
		// there; its unset value says nothing.
		if !vm.Spec.Retired && !vm.Doc.Shadows("spec.retired") {
			active = append(active, vm.Name)
		}
	}
	switch len(active) {
	case 0:
	case 1:
		diags.Errorf(t.Doc.Pos("spec.retired"), "spec.retired", "tenant %q is retired but its VM %s is not: set spec.retired: true on it first", t.Name, active[0])
	default:
		diags.Errorf(t.Doc.Pos("spec.retired"), "spec.retired", "tenant %q is retired but its VMs %s are not: set spec.retired: true on each of them first", t.Name, strings.Join(active, ", "))
	}
}

// quotaFit refuses a tenant whose VMs do not fit in the quota it states.
func quotaFit(t *resolve.Tenant, diags *diag.List) {
	q := t.Spec.Quota
	if q == nil {
		return
	}
	u := sizing.KubeVirt.Tenant(t)
	over := func(field, what string, need, allowed int64, format func(int64) string) {
		if need <= allowed {
			return
		}
		diags.Errorf(t.Doc.Pos(field), field, "tenant %q: its VMs need %s %s but the quota allows %s (over by %s; raise %s or shrink the VMs)",
			t.Name, format(need), what, format(allowed), format(need-allowed), field)
	}
	count := func(n int64) string { return fmt.Sprint(n) }
	bytes := func(n int64) string { return humanBytes(n) }
	if q.VMs != nil {
		over("spec.quota.vms", "VMs", u.VMs, *q.VMs, count)
	}
	if q.CPU != nil {
		over("spec.quota.cpu", "vCPUs", u.VCPUs, *q.CPU, count)
	}
	if q.Memory != nil {
		over("spec.quota.memory", "of guest memory", u.Guest, q.Memory.Value(), bytes)
	}
	if q.Storage != nil {
		over("spec.quota.storage", "of disks", u.Storage, q.Storage.Value(), bytes)
	}
}

// humanBytes writes bytes in the largest binary unit that keeps it exact,
// as Kubernetes quantities do.
func humanBytes(n int64) string {
	q := sizing.Bytes(n)
	return q.String()
}

// productionBackup refuses a production VM whose backup policy takes no
// backups.
func productionBackup(vm *resolve.VM, diags *diag.List) {
	if vm.Tier != resolve.TierProduction || vm.Backup.BackupPolicy == nil || vm.TakesBackups() {
		return
	}
	if vm.Doc.Shadows("spec.tier") {
		// The tier is the tenant's only because the VM's own has a
		// structural error, reported there.
		return
	}
	field, doc := "spec.backup", vm.Doc
	if vm.Spec.Backup == "" {
		if vm.Tenant.Spec.Backup != "" {
			// The policy comes from the tenant: point there.
			field, doc = "spec.backup", vm.Tenant.Doc
		} else {
			field = "spec"
		}
	}
	diags.Errorf(doc.Pos(field), field, "VM %s/%s is production tier but its backup policy %q takes no backups (use a policy with a schedule, such as daily)", vm.Namespace, vm.Name, vm.Backup.Name)
}

// evidenceNames warns about Evidence that names a catalog entry, class or
// tenant that does not exist: it can never accept anything (a misspelt
// profile is otherwise a silent "no evidence").
func evidenceNames(m *resolve.Model, diags *diag.List) {
	var tenants, classes []string
	for _, t := range m.Tenants {
		tenants = append(tenants, t.Name)
	}
	for _, c := range eligibility.Classes() {
		classes = append(classes, c.Name)
	}
	for _, e := range m.Evidence {
		c := e.Obj.Spec.Covers
		warn := func(field, msg string) {
			diags.Warnf(e.Doc.Pos(field), field, "this evidence can accept nothing: %s", msg)
		}
		if c.StorageProfile != "" {
			if _, ok := m.Catalog.StorageProfiles.Get(c.StorageProfile); !ok {
				warn("spec.covers.storageProfile", m.Catalog.StorageProfiles.Unknown("storage profile", c.StorageProfile))
			}
		}
		for i, n := range c.NetworkProfiles {
			if _, ok := m.Catalog.NetworkProfiles.Get(n); !ok {
				warn(fmt.Sprintf("spec.covers.networkProfiles[%d]", i), m.Catalog.NetworkProfiles.Unknown("network profile", n))
			}
		}
		if c.Pool != "" {
			if _, ok := m.Catalog.WorkerPools.Get(c.Pool); !ok {
				warn("spec.covers.pool", m.Catalog.WorkerPools.Unknown("worker pool", c.Pool))
			}
		}
		if c.BackupPolicy != "" {
			if _, ok := m.Catalog.BackupPolicies.Get(c.BackupPolicy); !ok {
				warn("spec.covers.backupPolicy", m.Catalog.BackupPolicies.Unknown("backup policy", c.BackupPolicy))
			}
		}
		if c.Size != "" {
			if _, ok := m.Catalog.Sizes.Get(c.Size); !ok {
				warn("spec.covers.size", m.Catalog.Sizes.Unknown("size", c.Size))
			}
		}
		if c.Class != "" && !slices.Contains(classes, c.Class) {
			warn("spec.covers.class", diag.UnknownName("class", c.Class, classes))
		}
		if c.Tenant != "" && len(tenants) > 0 && !slices.Contains(tenants, c.Tenant) {
			warn("spec.covers.tenant", diag.UnknownName("tenant", c.Tenant, tenants))
		}
		if f := c.Feature; f != "" && m.Platform != nil {
			var known []string
			switch e.Obj.Spec.Check {
			case eligibility.AssessmentCheck:
				known = append([]string{"dedicatedCPU", "hugepages", "sriov"}, m.Platform.PermittedDevices()...)
			case eligibility.PreviewCheck:
				known = slices.Concat(m.Platform.Release.FeatureGates.Alpha, m.Platform.Release.FeatureGates.Beta)
			}
			if known != nil && !slices.Contains(known, f) {
				warn("spec.covers.feature", diag.UnknownName(fmt.Sprintf("feature of check %s", e.Obj.Spec.Check), f, known))
			}
		}
	}
}

// futureEvidence refuses an Evidence dated after the day the build is
// judged as of (--as-of, SOURCE_DATE_EPOCH): no check is done in the
// future, and a mistyped year (2099) would count for ever, its expiry
// moving with it (issue 46). Without a date the build has no clock; the
// restore drills' alerts fire in the cluster instead (alerts drillRules).
func futureEvidence(m *resolve.Model, opts Options, diags *diag.List) {
	if m.AsOf.IsZero() {
		return
	}
	refuse := diags.Errorf
	if opts.GateWarns {
		// virtc report --as-of a past day shows what was accepted then.
		refuse = diags.Warnf
	}
	for _, e := range m.Evidence {
		d, err := time.Parse(time.DateOnly, e.Obj.Spec.Date)
		if err != nil || !d.After(m.AsOf) {
			continue
		}
		refuse(e.Doc.Pos("spec.date"), "spec.date", "evidence %s is dated %s, after %s, the day the build is judged as of (--as-of, or SOURCE_DATE_EPOCH): no check is done in the future, and a mistyped date would count for ever (record the day the check was done)",
			e.Obj.Metadata.Name, e.Obj.Spec.Date, m.AsOf.Format(time.DateOnly))
	}
}

// oadpInstalled refuses a build with a Platform that has no OADP (no
// spec.dataProtection) but emits Velero Schedules or Backups: nobody would
// install their CRDs, so their sync wave would fail on every sync. Without
// a Platform in the inputs (tenant repositories) the platform is built
// elsewhere and the backups are emitted as they are.
func oadpInstalled(m *resolve.Model, diags *diag.List) {
	p := m.Platform
	if p == nil || p.Obj.Spec.DataProtection != nil {
		return
	}
	var users []string
	vms := 0
	for _, t := range m.Tenants {
		for _, vm := range t.VMs {
			if vm.TakesBackups() || vm.Spec.BackupBefore != "" {
				if vms == 0 || users[len(users)-1] != t.Name {
					users = append(users, t.Name)
				}
				vms++
			}
		}
	}
	if vms == 0 {
		return
	}
	var what string
	switch {
	case vms == 1:
		what = fmt.Sprintf("VM %s/%s takes", users[0], firstBackupVM(m))
	case len(users) == 1:
		what = fmt.Sprintf("%d VMs of tenant %s take", vms, users[0])
	case len(users) <= 5:
		what = fmt.Sprintf("%d VMs of tenants %s take", vms, strings.Join(users, ", "))
	default:
		what = fmt.Sprintf("%d VMs of %d tenants (%s, ...) take", vms, len(users), strings.Join(users[:5], ", "))
	}
	diags.Errorf(p.Doc.Pos("spec"), "spec.dataProtection", "platform %q installs no OADP but %s backups (Velero Schedules and Backups in %s); add spec.dataProtection with storage locations, set spec.dataProtection.external: true if OADP is managed outside this build, or give the VMs backup policy none", p.Name, what, "openshift-adp")
}

func firstBackupVM(m *resolve.Model) string {
	for _, t := range m.Tenants {
		for _, vm := range t.VMs {
			if vm.TakesBackups() || vm.Spec.BackupBefore != "" {
				return vm.Name
			}
		}
	}
	return ""
}

// snapshotBefore refuses a VirtualMachineSnapshot of a VM with a disk on a
// storage profile without CSI snapshots (KubeVirt would leave the snapshot
// failing), and warns when the image has no QEMU guest agent: KubeVirt then
// cannot freeze the guest's file systems, so the snapshot is only
// crash-consistent.
func snapshotBefore(vm *resolve.VM, diags *diag.List) {
	if vm.Spec.SnapshotBefore == "" {
		return
	}
	pos := vm.Doc.Pos("spec.snapshotBefore")
	if without := withoutSnapshots(vm, "%s on storage profile %s"); len(without) > 0 {
		diags.Errorf(pos, "spec.snapshotBefore", "cannot snapshot the VM: %s, which has no snapshot support (storage profile spec.snapshots is false); use spec.backupBefore for a Velero backup instead", strings.Join(without, ", "))
		return
	}
	if vm.Image != nil && !vm.Image.Spec.GuestAgent {
		diags.Warnf(pos, "spec.snapshotBefore", "image %s has no QEMU guest agent (image spec.guestAgent): KubeVirt cannot freeze the guest's file systems, so the snapshot is crash-consistent, not filesystem-consistent", vm.ImageName)
	}
}

// liveness refuses a liveness probe on a guest without the QEMU guest
// agent: guestAgentPing would never answer and KubeVirt would restart the
// VM for ever.
func liveness(vm *resolve.VM, diags *diag.List) {
	if h := vm.Spec.Health; h == nil || !h.Liveness || vm.Image == nil || vm.Image.Spec.GuestAgent {
		return
	}
	diags.Errorf(vm.Doc.Pos("spec.health.liveness"), "spec.health.liveness", "image %q does not declare guestAgent: true: a liveness probe on the guest agent would fail and restart the VM over and over (use an image whose guest runs the QEMU guest agent)", vm.ImageName)
}

// withoutSnapshots names, in the given format (what, profile), each of the
// VM's volumes whose storage profile has no CSI snapshots: the root disk,
// every attached disk and the persistent EFI/TPM state, whose
// backend-storage claim KubeVirt snapshots with the disks.
func withoutSnapshots(vm *resolve.VM, format string) []string {
	var without []string
	check := func(what string, st resolve.Storage) {
		if st.StorageProfile != nil && !st.Spec.Snapshots {
			without = append(without, fmt.Sprintf(format, what, st.Name))
		}
	}
	check("the root disk", vm.RootStorage)
	for _, d := range vm.Attached() {
		check("disk "+d.Name, d.Storage)
	}
	if st := vm.StateStorage; st != nil {
		check("the persistent EFI/TPM state", *st)
	}
	return without
}
