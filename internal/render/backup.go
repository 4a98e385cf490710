package render

import (
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// defaultOnDemandRetention keeps a one-off backup whose VM's policy takes
// none: 30 days.
const defaultOnDemandRetention = 720 * time.Hour

// Schedules renders one Velero Schedule per backup policy the tenant's VMs
// use (policies that take no backups create nothing). It selects the VMs by
// their backup-policy label; the KubeVirt plugin adds each VM's disks,
// cloud-init and credential Secrets and instance type revisions.
func Schedules(m *resolve.Model, t *resolve.Tenant) []emit.Object {
	var objs []emit.Object
	seen := map[string]bool{}
	for _, name := range usedPolicies(t) {
		if seen[name] {
			continue
		}
		seen[name] = true
		p, _ := m.Catalog.BackupPolicies.Get(name)
		e, _ := m.Catalog.BackupPolicies.Entry(name)
		sname := model.ScheduleName(t.Name, name)
		yes, no := true, false
		meta := keepOnPrune(objectMeta("Schedule", model.OADPNamespace, sname, e.Doc.Rel,
			map[string]string{model.LabelTenant: t.Name, model.LabelBackupPolicy: name}, nil))
		// Velero gives every Backup a Schedule creates the Schedule's
		// annotations, and its labels unless the template names labels of
		// its own (v1.18.3 pkg/builder/backup_builder.go FromSchedule). So
		// each nightly Backup carries Argo CD's tracking of the Schedule:
		// its label (label tracking), which the template's labels leave
		// out, and its annotation, which nothing can keep off. Argo CD then
		// counts the Backup as one of the Application's resources
		// (gitops-engine pkg/cache/cluster.go GetManagedLiveObjs) and adds
		// its health, Degraded when the backup PartiallyFailed
		// (resource_customizations/velero.io/Backup/health.lua), to the
		// Application's for as long as the Backup is kept. A failed backup
		// is the backup alerts' to report (VirtcBackupOverdue,
		// VirtcBackupNeverSucceeded), not the tenant's Application health:
		// ignore-healthcheck, copied onto each Backup, keeps it out. The
		// Schedule's own health goes with it (Degraded only on
		// FailedValidation of a cron that virtc has already checked).
		meta.Annotations[AnnotationIgnoreHealthCheck] = "true"
		template := backupSpec(m, t.Name, p, map[string]string{model.LabelBackupPolicy: name})
		template.Metadata = &extapi.BackupMetadata{Labels: maps.Clone(meta.Labels)}
		sch := &extapi.Schedule{
			TypeMeta:   typeMeta("velero.io/v1", "Schedule"),
			ObjectMeta: meta,
			Spec: extapi.ScheduleSpec{
				Schedule: p.Spec.Schedule,
				// A new Schedule waits for its first slot rather than
				// starting a backup during the sync.
				SkipImmediately: &yes,
				// Backups must survive their Schedule's deletion.
				UseOwnerReferencesInBackup: &no,
				Template:                   template,
			},
		}
		objs = append(objs, emit.Object{APIVersion: "velero.io/v1", Kind: "Schedule", Namespace: model.OADPNamespace, Name: sname, Scope: emit.TenantScope, Body: sch})
	}
	return objs
}

// usedPolicies lists, in VM order, the policies of the tenant's VMs that
// take backups.
func usedPolicies(t *resolve.Tenant) []string {
	var out []string
	for _, vm := range t.VMs {
		if vm.TakesBackups() {
			out = append(out, vm.Backup.Name)
		}
	}
	return out
}

// OnDemandBackups renders a Velero Backup for each VM that asks for one
// before a risky change (spec.backupBefore), selecting only that VM.
func OnDemandBackups(m *resolve.Model, t *resolve.Tenant) []emit.Object {
	var objs []emit.Object
	for _, vm := range t.VMs {
		label := vm.Spec.BackupBefore
		if label == "" {
			continue
		}
		name := model.OnDemandBackupName(vm.Namespace, vm.Name, label)
		spec := backupSpec(m, vm.Namespace, vm.Backup.BackupPolicy, map[string]string{model.LabelVM: vm.Name})
		if !vm.TakesBackups() {
			spec.TTL = defaultOnDemandRetention.String()
		}
		b := &extapi.Backup{
			TypeMeta: typeMeta("velero.io/v1", "Backup"),
			ObjectMeta: keepOnPrune(objectMeta("Backup", model.OADPNamespace, name, vm.Doc.Rel,
				map[string]string{model.LabelTenant: t.Name, model.LabelVM: vm.Name}, map[string]string{"virtc.dev/backup-before": label})),
			Spec: spec,
		}
		objs = append(objs, emit.Object{APIVersion: "velero.io/v1", Kind: "Backup", Namespace: model.OADPNamespace, Name: name, Scope: emit.TenantScope, Body: b})
	}
	return objs
}

// backupSpec is what a backup of a tenant's VMs selected by labels holds.
func backupSpec(m *resolve.Model, namespace string, p *api.BackupPolicy, selector map[string]string) extapi.BackupSpec {
	yes, no := true, false
	spec := extapi.BackupSpec{
		IncludedNamespaces: []string{namespace},
		LabelSelector:      &metav1.LabelSelector{MatchLabels: selector},
		SnapshotVolumes:    &yes,
		// Disks are captured by CSI snapshots, never by copying files
		// out of a running guest.
		DefaultVolumesToFsBackup: &no,
	}
	move := true
	if p != nil {
		if p.Spec.Retention != "" {
			if d, err := decode.ParseRetention(p.Spec.Retention); err == nil {
				spec.TTL = d.String()
			}
		}
		spec.StorageLocation = p.Spec.StorageLocation
		move = p.Spec.Method != api.BackupSnapshot
	}
	if spec.StorageLocation == "" && m.Platform != nil {
		spec.StorageLocation = m.Platform.DefaultLocation
	}
	spec.SnapshotMoveData = &move
	return spec
}
