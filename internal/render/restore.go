package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/versions"
)

// Labels of the KubeVirt Velero plugin on a Restore (kubevirt-velero-plugin
// v0.9.0, the plugin of OADP 1.6, pkg/util/util.go: the plugin checks that
// the label is present, whatever its value).
const (
	LabelClearMAC        = "velero.kubevirt.io/clear-mac-address"
	LabelNewFirmwareUUID = "velero.kubevirt.io/generate-new-firmware-uuid"
	// LabelRestoreRunStrategy makes the plugin restore every VM with this
	// run strategy instead of the backed-up one.
	LabelRestoreRunStrategy = "velero.kubevirt.io/restore-run-strategy"
)

// RestoreMode is what a restore plan brings back, and where.
type RestoreMode string

const (
	// RestoreInPlace brings one VM back where it was, with its identity.
	RestoreInPlace RestoreMode = "in-place"
	// RestoreCopy restores one VM as a copy in another namespace, with a
	// new MAC address and firmware UUID.
	RestoreCopy RestoreMode = "copy"
	// RestoreTenant brings back every VM of a tenant in place.
	RestoreTenant RestoreMode = "tenant"
	// RestoreOtherCluster brings a tenant back on another cluster.
	RestoreOtherCluster RestoreMode = "other-cluster"
	// RestoreSnapshot rolls one VM back to a VirtualMachineSnapshot.
	RestoreSnapshot RestoreMode = "snapshot"
)

// RestorePlan says how to restore one VM or one tenant.
type RestorePlan struct {
	Mode RestoreMode
	// VM is the VM of a one-VM plan.
	VM *resolve.VM
	// Tenant is the tenant of a tenant plan (and the VM's tenant).
	Tenant *resolve.Tenant
	// Backup is a Velero Backup name; empty: the latest backup of the VM's
	// Schedule. Only for one-VM plans.
	Backup string
	// TargetNamespace is where a copy goes.
	TargetNamespace string
	// Snapshot is the VirtualMachineSnapshot of a snapshot plan.
	Snapshot string
	// App is the Argo CD Application that syncs the VMs; empty: the script
	// asks for it in $APP.
	App string
	// Platform is the build's Platform, if any: its version decides the
	// fields a VirtualMachineRestore may use.
	Platform *resolve.Platform
}

// ownershipPolicy reports whether the platform's KubeVirt serves
// VirtualMachineRestore spec.volumeOwnershipPolicy (OpenShift
// Virtualization 4.21 and later; 4.20's CRD has no such field). Without a
// Platform the plan takes the form every version accepts.
func (p RestorePlan) ownershipPolicy() bool {
	v := p.Platform
	return v != nil && (v.Version.Major > 4 || v.Version.Major == 4 && v.Version.Minor >= 21)
}

// restoreVMs are the VMs the plan restores from backups, in tenant order,
// and those it cannot (no scheduled backups).
func (p RestorePlan) restoreVMs() (restored, empty []*resolve.VM) {
	if p.Mode != RestoreTenant && p.Mode != RestoreOtherCluster {
		return []*resolve.VM{p.VM}, nil
	}
	for _, vm := range p.Tenant.VMs {
		if vm.TakesBackups() {
			restored = append(restored, vm)
		} else {
			empty = append(empty, vm)
		}
	}
	return restored, empty
}

// policies are the backup policies of the tenant's VMs that take backups,
// each once, in VM order: one Schedule each.
func (p RestorePlan) policies() []string {
	var out []string
	for _, policy := range usedPolicies(p.Tenant) {
		if !slices.Contains(out, policy) {
			out = append(out, policy)
		}
	}
	return out
}

// Objects are the objects the plan applies: Velero Restores, or the
// VirtualMachineRestore of a snapshot plan.
func (p RestorePlan) Objects() []emit.Object {
	switch p.Mode {
	case RestoreSnapshot:
		return []emit.Object{p.vmRestore()}
	case RestoreTenant, RestoreOtherCluster:
		var out []emit.Object
		for _, policy := range p.policies() {
			out = append(out, p.tenantRestore(policy))
		}
		return out
	}
	return []emit.Object{Restore(p)}
}

// Restore renders a Velero Restore of one VM. In place, the VM keeps its
// MAC addresses and firmware UUID: it is the same machine coming back. A
// copy in another namespace gets new ones, so the two never clash on the
// network or in licensing, and comes back Halted, to be started once its
// networks are checked.
func Restore(p RestorePlan) emit.Object {
	vm := p.VM
	yes := true
	spec := extapi.RestoreSpec{
		BackupName:         p.Backup,
		IncludedNamespaces: []string{vm.Namespace},
		// The VM; the KubeVirt plugin's restore graph adds what it uses
		// (its root DataVolume and claim, its data disk claims, its
		// cloud-init and SSH-key Secrets: kvgraph/util.go
		// addCommonVMIObjectGraph), which Velero restores as additional
		// items whatever the selector.
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{model.LabelVM: vm.Name}},
		RestorePVs:    &yes,
		// Never overwrite what exists: the plan deletes the VM and its disks
		// first, so a restore cannot clobber live data, and a restore that
		// finds them recreated restores nothing (the plan checks it cannot).
		ExistingResourcePolicy: "none",
	}
	if p.Backup == "" {
		spec.ScheduleName = model.ScheduleName(vm.Namespace, vm.Backup.Name)
	}
	labels := map[string]string{model.LabelTenant: vm.Namespace, model.LabelVM: vm.Name}
	name := model.LimitName("restore-" + vm.Namespace + "-" + vm.Name)
	if p.Mode == RestoreCopy {
		spec.NamespaceMapping = map[string]string{vm.Namespace: p.TargetNamespace}
		labels[LabelClearMAC] = "true"
		labels[LabelNewFirmwareUUID] = "true"
		labels[LabelRestoreRunStrategy] = "Halted"
		name = model.LimitName("restore-" + vm.Namespace + "-" + vm.Name + "-to-" + p.TargetNamespace)
	}
	r := &extapi.Restore{
		TypeMeta:   typeMeta("velero.io/v1", "Restore"),
		ObjectMeta: objectMeta("Restore", model.OADPNamespace, name, vm.Doc.Rel, labels, nil),
		Spec:       spec,
	}
	return emit.Object{APIVersion: "velero.io/v1", Kind: "Restore", Namespace: model.OADPNamespace, Name: name, Body: r}
}

// tenantRestore restores, from the latest backup of one of the tenant's
// Schedules, every VM that Schedule backs up.
func (p RestorePlan) tenantRestore(policy string) emit.Object {
	t := p.Tenant
	yes := true
	labels := map[string]string{model.LabelTenant: t.Name, model.LabelBackupPolicy: policy}
	if p.Mode == RestoreOtherCluster {
		// The VMs come back stopped: they start once the old cluster's
		// copies are known to be off (same MAC addresses, same addresses).
		labels[LabelRestoreRunStrategy] = "Halted"
	}
	name := model.LimitName("restore-" + t.Name + "-" + policy)
	r := &extapi.Restore{
		TypeMeta:   typeMeta("velero.io/v1", "Restore"),
		ObjectMeta: objectMeta("Restore", model.OADPNamespace, name, t.Doc.Rel, labels, nil),
		Spec: extapi.RestoreSpec{
			ScheduleName:           model.ScheduleName(t.Name, policy),
			IncludedNamespaces:     []string{t.Name},
			LabelSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{model.LabelBackupPolicy: policy}},
			RestorePVs:             &yes,
			ExistingResourcePolicy: "none",
		},
	}
	return emit.Object{APIVersion: "velero.io/v1", Kind: "Restore", Namespace: model.OADPNamespace, Name: name, Body: r}
}

// vmRestore is the VirtualMachineRestore of a snapshot plan (KubeVirt
// v1.8.4 pkg/storage/snapshot/restore.go): InPlace keeps the claims'
// names, so the restored VM's spec is the one in Git; ownership None keeps
// data disks unowned by their VM (the root disk's claim goes back to its
// DataVolume, through cdi.kubevirt.io/storage.populatedFor; where the
// platform has no volumeOwnershipPolicy, the script removes the VM's owner
// reference from the data disks' claims instead); the plan stops
// the VM first, so FailImmediate never stops a VM behind anyone's back.
func (p RestorePlan) vmRestore() emit.Object {
	vm := p.VM
	apiGroup := "kubevirt.io"
	name := model.LimitName("restore-" + vm.Name + "-" + p.Snapshot)
	r := &extapi.VirtualMachineRestore{
		TypeMeta:   typeMeta("snapshot.kubevirt.io/v1beta1", "VirtualMachineRestore"),
		ObjectMeta: objectMeta("VirtualMachineRestore", vm.Namespace, name, vm.Doc.Rel, map[string]string{model.LabelTenant: vm.Namespace, model.LabelVM: vm.Name}, nil),
		Spec: extapi.VirtualMachineRestoreSpec{
			Target:                     corev1.TypedLocalObjectReference{APIGroup: &apiGroup, Kind: "VirtualMachine", Name: vm.Name},
			VirtualMachineSnapshotName: p.Snapshot,
			TargetReadinessPolicy:      "FailImmediate",
			VolumeRestorePolicy:        "InPlace",
		},
	}
	if p.ownershipPolicy() {
		r.Spec.VolumeOwnershipPolicy = "None"
	}
	return emit.Object{APIVersion: "snapshot.kubevirt.io/v1beta1", Kind: "VirtualMachineRestore", Namespace: vm.Namespace, Name: name, Body: r}
}

// claimNames are the PersistentVolumeClaims of a VM's disks: the root
// disk's (its DataVolume's) and the attached data disks' (a retired disk is
// in no backup of the VM, and a plan leaves it alone).
func claimNames(vm *resolve.VM) []string {
	out := []string{model.RootDiskName(vm.Name)}
	for _, d := range vm.Attached() {
		out = append(out, model.DiskName(vm.Name, d.Name))
	}
	return out
}

// diskVolumes are the names of a VM's disk volumes in its spec: the root
// disk's and each attached data disk's (vmDisks).
func diskVolumes(vm *resolve.VM) []string {
	out := []string{model.RootVolume}
	if ex := vm.Spec.ExistingRootDisk; ex != nil && ex.VolumeName != "" {
		out[0] = ex.VolumeName
	}
	for _, d := range vm.Attached() {
		out = append(out, d.Name)
	}
	return out
}

// vmObjects are the objects of a VM that a restore brings back, as
// kubectl's TYPE/NAME arguments.
func vmObjects(vm *resolve.VM) []string {
	out := []string{"virtualmachine/" + vm.Name, "datavolume/" + model.RootDiskName(vm.Name)}
	for _, c := range claimNames(vm) {
		out = append(out, "persistentvolumeclaim/"+c)
	}
	return out
}

// Script is the plan as a bash script a person runs step by step, with the
// plan's objects (objs, as YAML documents in Objects' order) inline.
func (p RestorePlan) Script(objs [][]byte) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	restored, empty := p.restoreVMs()
	w("#!/usr/bin/env bash")
	switch p.Mode {
	case RestoreInPlace:
		w("# Restore VM %s/%s in place, with its MAC addresses and firmware UUID, from %s.", cm(p.VM.Namespace), cm(p.VM.Name), cm(p.source()))
	case RestoreCopy:
		w("# Restore VM %s/%s as a copy in namespace %s (new MAC addresses and firmware UUID), from %s.", cm(p.VM.Namespace), cm(p.VM.Name), cm(p.TargetNamespace), cm(p.source()))
	case RestoreTenant:
		w("# Restore every VM of tenant %s in place from the latest backup of each of its Schedules.", cm(p.Tenant.Name))
	case RestoreOtherCluster:
		w("# Restore tenant %s onto another cluster from the latest backup of each of its Schedules:", cm(p.Tenant.Name))
		w("# platform, VM definitions, the right disks, guest consistency, network identity, in that order.")
	case RestoreSnapshot:
		w("# Roll VM %s/%s back to its VirtualMachineSnapshot %s.", cm(p.VM.Namespace), cm(p.VM.Name), cm(p.Snapshot))
	}
	w("# Generated by virtc restore-plan. Run it step by step; every step stops the script on failure.")
	p.owners(w)
	w("set -euo pipefail")
	if p.Mode == RestoreOtherCluster {
		w("# kubectl's and argocd's current contexts must be the NEW cluster and its Argo CD.")
	}
	if p.Mode == RestoreCopy {
		w("")
		p.copyScript(w, objs)
		return b.String()
	}
	if p.App != "" {
		w("APP=${APP:-%s}", sh(p.App))
	} else {
		w("APP=${APP:?set APP to the Argo CD Application that syncs the VMs (virtc build --scope vms)}")
	}
	w("ARGOCD_NS=${ARGOCD_NS:-argocd}")
	w("")
	if p.Mode == RestoreOtherCluster {
		p.platformSteps(w)
	}
	if p.Mode == RestoreOtherCluster {
		w("## 3. VM definitions and the right disks, from the backups. First keep Argo CD from creating the VMs")
		w("## from Git (blank data disks, a fresh root clone), which would make Velero skip them.")
	} else {
		w("## Keep Argo CD from recreating the VMs while they are restored.")
	}
	w("# spec.syncPolicy.automated.enabled=false turns automated sync, selfHeal included, off and keeps")
	w("# prune and selfHeal for later (Argo CD v3.6.1 controller/appcontroller.go autoSync returns when")
	w("# IsAutomatedSyncEnabled is false). An Application of an ApplicationSet keeps the change only if the")
	w("# ApplicationSet ignores /spec/syncPolicy/automated/enabled (ignoreApplicationDifferences).")
	w(`kubectl -n "$ARGOCD_NS" patch application "$APP" --type merge -p '{"spec":{"syncPolicy":{"automated":{"enabled":false}}}}'`)
	w(`until [ -z "$(kubectl -n "$ARGOCD_NS" get application "$APP" -o jsonpath='{.operation}')" ]; do sleep 5; done  # a sync already started ends first`)
	w(`sleep 15; [ "$(kubectl -n "$ARGOCD_NS" get application "$APP" -o jsonpath='{.spec.syncPolicy.automated.enabled}')" = false ] \`)
	w(`  || { echo "automated sync of $APP was switched back on (ApplicationSet?): stop" >&2; exit 1; }`)
	w("")
	switch p.Mode {
	case RestoreSnapshot:
		p.snapshotScript(w, objs)
		w("")
		p.validation(w, vmNames(restored))
		return b.String()
	case RestoreOtherCluster:
		w("## Remove what Argo CD may have created on this cluster before its sync was off (blank disks, a fresh")
		w("## root clone); nothing else of the tenant is touched.")
	default:
		w("## Delete the VMs and their disks: the Restore never overwrites what exists (existingResourcePolicy: none).")
	}
	for _, vm := range restored {
		w("kubectl -n %s delete virtualmachine %s --ignore-not-found --cascade=foreground --wait  # returns once its VMI, root DataVolume and claim are gone", sh(vm.Namespace), sh(vm.Name))
		w("kubectl -n %s delete persistentvolumeclaim %s --ignore-not-found --wait", sh(vm.Namespace), words(claimNames(vm)))
		if vm.StateStorage != nil {
			// KubeVirt's backend-storage claim of the persistent EFI/TPM
			// state; the plugin's graph backs it up and restores it with
			// the VM (kvgraph/util.go, persistent-state-for).
			w("kubectl -n %s delete persistentvolumeclaim --selector %s --ignore-not-found --wait  # its persistent EFI/TPM state", sh(vm.Namespace), sh("persistent-state-for="+vm.Name))
		}
	}
	w("# Nothing of them is left or recreated: otherwise the Restore would skip it and restore nothing.")
	for _, vm := range restored {
		w(`[ -z "$(kubectl -n %s get %s --ignore-not-found -o name)" ]`, sh(vm.Namespace), words(vmObjects(vm)))
	}
	w("")
	w("## Restore.")
	for i, o := range p.Objects() {
		if p.Mode == RestoreOtherCluster {
			p.ownBackupGuard(w, model.ScheduleName(p.Tenant.Name, p.policies()[i]))
		}
		w("kubectl -n %s delete restore %s --ignore-not-found --wait  # a Restore of an earlier run (only the record: restored objects stay)", sh(model.OADPNamespace), sh(o.Name))
		createFrom(w, objs[i])
		w(`until phase=$(kubectl -n %s get restore %s -o jsonpath='{.status.phase}'); [[ $phase =~ ^(Completed|PartiallyFailed|Failed|FailedValidation)$ ]]; do sleep 10; done`, sh(model.OADPNamespace), sh(o.Name))
		w(`[ "$phase" = Completed ] || { velero -n %s restore describe %s --details >&2; exit 1; }`, sh(model.OADPNamespace), sh(o.Name))
	}
	w("")
	if p.Mode == RestoreOtherCluster {
		p.trackingSteps(w, restored)
		p.identitySteps(w, restored)
	} else {
		w("## Verify.")
		for _, vm := range restored {
			verify(w, vm, vm.Namespace, runs(vm))
		}
	}
	if p.Mode == RestoreOtherCluster && len(empty) > 0 {
		w("")
		w("## VMs without backups come back from Git alone, with empty disks.")
		for _, vm := range empty {
			w(`argocd app sync "$APP" %s`, syncResources(vm))
		}
	}
	w("")
	p.handBack(w)
	w("")
	p.validation(w, vmNames(restored))
	if p.Mode == RestoreInPlace {
		p.drillEvidence(w)
	}
	return b.String()
}

// owners heads the plan with its recovery document's people (doc 001,
// "Upgrade and recovery planning": who restores the cluster service, who
// restores guest data, who validates the application), as the Platform
// and the Tenant name them in Git. The names match api's owner pattern,
// which admits no shell metacharacter, so they are safe in comments and
// in single quotes.
func (p RestorePlan) owners(w func(string, ...any)) {
	cluster := "not named: set the Platform's spec.recovery.restoresClusterService"
	if p.Platform == nil {
		cluster = "not in this build (the Platform's spec.recovery.restoresClusterService)"
	} else if r := p.Platform.Obj.Spec.Recovery; r != nil && r.RestoresClusterService != "" {
		cluster = r.RestoresClusterService
	}
	data, app := p.tenantOwners()
	w("# Who (doc 001, the recovery document):")
	w("#   restores the cluster service:  %s", cm(cluster))
	w("#   restores the guest data:       %s", cm(data))
	w("#   validates the application:     %s", cm(app))
}

// validation is the application's own check, which no command of the plan
// can make: the plan proved that the VMs run on their restored disks, not
// that the application in them serves its users with the restored data.
// The plan names who decides and says on stderr that the restore waits
// for them, so that a pipeline that runs it records the hand-over.
func (p RestorePlan) validation(w func(string, ...any), names []string) {
	_, app := p.tenantOwners()
	w("## Validate the application: %s checks that the application on the restored VMs serves its", cm(app))
	w("## users with the restored data (this plan checked that the VMs run, not what runs in them).")
	w("echo %s >&2", shellQuote(fmt.Sprintf("restored %s: the restore is done once %s has validated the application", strings.Join(names, " "), app)))
}

// shellQuote is s as one shell word: in single quotes, each single quote
// closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// A person with cluster-admin rights runs the script, so no value written
// into it may read as shell syntax: a name with $(...), a backquote, a ;
// or a newline would run a command of its own. The names come from Git
// (decode checks them as DNS-1123 names) and from restore-plan's flags
// (checked there), and the script quotes each of them where it goes all
// the same, so that a check missed never becomes a command. A plain value,
// which every valid name is, is written as it is: the plans of valid
// inputs read as they always did.

// plainWord reports a value the shell reads literally everywhere the plan
// puts one: as a word, in double quotes, in single quotes, in JSON and in
// an unquoted here-document.
func plainWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("._/:=@-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// sh is s as one shell word.
func sh(s string) string {
	if plainWord(s) {
		return s
	}
	return shellQuote(s)
}

// words are ss as shell words, separated by spaces.
func words(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = sh(s)
	}
	return strings.Join(out, " ")
}

// shDQ is s inside a double-quoted string, where $ and backquotes still
// expand: a value that is not plain closes the double quotes, goes in
// single quotes and reopens them.
func shDQ(s string) string {
	if s == "" || plainWord(s) {
		return s
	}
	return `"` + shellQuote(s) + `"`
}

// shSQ is s as a JSON string's content inside a single-quoted shell string
// (a kubectl patch): a value that is not plain is JSON-escaped, and its
// single quotes close and reopen the shell's.
func shSQ(s string) string {
	if s == "" || plainWord(s) {
		return s
	}
	j, _ := json.Marshal(s)
	return strings.ReplaceAll(string(j[1:len(j)-1]), "'", `'\''`)
}

// hd is s in an unquoted here-document (the Evidence's YAML, where $DRILL_DATE
// expands): a value that is not plain becomes a YAML double-quoted string
// with no line break, and its $, backquotes and backslashes are escaped for
// the shell.
func hd(s string) string {
	if plainWord(s) {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, "$", `\$`, "`", "\\`").Replace(strconv.Quote(s))
}

// cm is s in a comment, which a line break would end: a value with a
// control character is written Go-quoted, on one line.
func cm(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// createFrom writes `kubectl create -f -` with doc as its here-document:
// quoted, so nothing in it expands, and ended by a delimiter no line of
// doc equals, so no value in it can end it early.
func createFrom(w func(string, ...any), doc []byte) {
	body := strings.TrimSuffix(string(doc), "\n")
	delim := "EOF"
	for slices.Contains(strings.Split(body, "\n"), delim) {
		delim += "_"
	}
	w("kubectl create -f - <<'%s'", delim)
	w("%s", body)
	w("%s", delim)
}

func vmNames(vms []*resolve.VM) []string {
	names := make([]string, len(vms))
	for i, vm := range vms {
		names[i] = vm.Namespace + "/" + vm.Name
	}
	return names
}

// tenantOwners are the Tenant's two owners, or, where it names none,
// where to name them.
func (p RestorePlan) tenantOwners() (data, app string) {
	t := p.Tenant
	data = fmt.Sprintf("not named: set Tenant %s spec.recovery.restoresGuestData", t.Name)
	app = fmt.Sprintf("the owner of the application (not named: set Tenant %s spec.recovery.validatesApplication)", t.Name)
	if r := t.Spec.Recovery; r != nil {
		if r.RestoresGuestData != "" {
			data = r.RestoresGuestData + ", who runs this plan"
		}
		if r.ValidatesApplication != "" {
			app = r.ValidatesApplication
		}
	}
	return data, app
}

// drillEvidence ends a one-VM plan with the Evidence its run proves: a
// restore drill of the VM's backup policy for its tenant, on the platform's
// exact version read from the cluster (the Succeeded OpenShift
// Virtualization CSV, kubevirt-hyperconverged-operator.vX.Y.Z, in
// openshift-cnv: versions.HCOCSV),
// dated the day it ran, by whoever ran it, linked to the run's record. The
// file goes to Git beside the tenant's other Evidence, so acceptance rests
// on a restore that happened, not on a sentence typed into Git.
func (p RestorePlan) drillEvidence(w func(string, ...any)) {
	vm := p.VM
	if vm.Backup.Name == "" || p.Snapshot != "" {
		return
	}
	w("")
	w("## Evidence: the drill passed. With DRILL_LINK (the record of this run: CI job, ticket) set, write the")
	w("## Evidence it proves; commit the file beside the tenant's Evidence. It counts on this exact platform version")
	w("## and expires after backup policy %s's drill interval.", cm(vm.Backup.Name))
	w(`if [ -z "${DRILL_LINK:-}" ]; then echo "DRILL_LINK is not set: no Evidence written" >&2; exit 0; fi`)
	w(`DRILL_DATE=$(date -u +%%F)`)
	prefix := strings.TrimSuffix(versions.HCOCSV(versions.Version{}), "0.0.0")
	w(`CSV=$(kubectl -n %s get clusterserviceversions -o jsonpath='{range .items[?(@.status.phase=="Succeeded")]}{.metadata.name}{"\n"}{end}' | grep -m1 '^%s')`, model.CNVNamespace, strings.ReplaceAll(prefix, ".", `\.`))
	w(`PLATFORM_VERSION=${CSV#%s}`, prefix)
	w(`[[ $PLATFORM_VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "no Succeeded OpenShift Virtualization CSV in %s ($CSV)" >&2; exit 1; }`, model.CNVNamespace)
	w(`cat > "restore-drill-%s-%s-$DRILL_DATE.yaml" <<EOF`, shDQ(vm.Namespace), shDQ(vm.Name))
	w("apiVersion: virtc.dev/v1alpha1")
	w("kind: Evidence")
	w("metadata:")
	w("  name: restore-drill-%s-%s-$DRILL_DATE", hd(vm.Namespace), hd(vm.Name))
	w("spec:")
	w("  check: restore-drill")
	w("  covers: {platformVersion: \"$PLATFORM_VERSION\", backupPolicy: %s, tenant: %s}", hd(vm.Backup.Name), hd(vm.Namespace))
	w(`  date: "$DRILL_DATE"`)
	w(`  by: "${DRILL_BY:-$(id -un)}"`)
	w(`  link: "$DRILL_LINK"`)
	w("EOF")
	w(`echo "wrote restore-drill-%s-%s-$DRILL_DATE.yaml" >&2`, shDQ(vm.Namespace), shDQ(vm.Name))
}

// runs reports a VM that Git runs: one that restarts on its own.
func runs(vm *resolve.VM) bool {
	return vm.RunStrategy == "Always" || vm.RunStrategy == "RerunOnFailure"
}

// verify checks a restored VM: its root DataVolume adopted the restored
// claim without importing (the plugin marked it
// cdi.kubevirt.io/storage.prePopulated at backup, dv_backup_item_action.go),
// its claims are bound, and it runs. A halted VM's claims on a
// WaitForFirstConsumer class bind only at its first start.
func verify(w func(string, ...any), vm *resolve.VM, ns string, running bool) {
	w("kubectl -n %s wait %s --for=condition=Ready --timeout=30m", sh(ns), sh("datavolume/"+model.RootDiskName(vm.Name)))
	if !running {
		w("kubectl -n %s get persistentvolumeclaim %s  # %s is %s: claims of a WaitForFirstConsumer class stay Pending until it starts", sh(ns), words(claimNames(vm)), cm(vm.Name), cm(vm.RunStrategy))
		return
	}
	w("kubectl -n %s wait persistentvolumeclaim %s --for=jsonpath='{.status.phase}'=Bound --timeout=30m", sh(ns), words(claimNames(vm)))
	w("kubectl -n %s wait %s --for=condition=Ready --timeout=15m", sh(ns), sh("virtualmachine/"+vm.Name))
}

// syncResources are `argocd app sync --resource` arguments for a VM's
// objects in Git (GROUP:KIND:NAMESPACE/NAME).
func syncResources(vm *resolve.VM) string {
	out := []string{"--resource " + sh("kubevirt.io:VirtualMachine:"+vm.Namespace+"/"+vm.Name)}
	for _, d := range vm.Attached() {
		out = append(out, "--resource "+sh(":PersistentVolumeClaim:"+vm.Namespace+"/"+model.DiskName(vm.Name, d.Name)))
	}
	return strings.Join(out, " ")
}

func (p RestorePlan) source() string {
	if p.Backup != "" {
		return "Velero Backup " + p.Backup
	}
	return "the latest backup of Schedule " + model.ScheduleName(p.VM.Namespace, p.VM.Backup.Name)
}

// handBack gives the VMs back to Git: Argo CD must find nothing to change,
// so that turning automated sync on again syncs nothing.
func (p RestorePlan) handBack(w func(string, ...any)) {
	// Not `argocd app diff`'s exit code: it lists every resource the
	// Application tracks, with the extraneous ones (argo-cd v3.6.1
	// cmd/argocd/commands/app.go findAndPrintDiff), among them each Backup
	// Velero took from the Schedule, which carries the Schedule's
	// annotations and so its tracking id (Velero v1.18.3
	// pkg/builder/backup_builder.go FromSchedule): it exits 1 after any
	// backup. The sync status leaves them out (IgnoreExtraneous on the
	// Schedule). Found by make e2e-drills against the real Velero.
	w("## Hand the VMs back to Git. Argo CD must find the Application Synced, with nothing to change; otherwise the diff")
	w("## shows what differs (for example Git changed since the backup: review it before going on). Not `argocd app diff`'s")
	w("## exit code: it also lists the Backups Velero took, which carry the Schedule's tracking id (IgnoreExtraneous).")
	w(`argocd app get "$APP" --refresh >/dev/null`)
	w(`[ "$(kubectl -n "$ARGOCD_NS" get application "$APP" -o jsonpath='{.status.sync.status}')" = Synced ] \`)
	w(`  || { argocd app diff "$APP" >&2 || true; echo "$APP is not Synced: review the differences above before handing back" >&2; exit 1; }`)
	w(`kubectl -n "$ARGOCD_NS" patch application "$APP" --type json -p '[{"op":"remove","path":"/spec/syncPolicy/automated/enabled"}]'`)
	w(`argocd app wait "$APP" --sync --health --timeout 900  # Synced: automated sync (and selfHeal) have nothing to do`)
}

func (p RestorePlan) copyScript(w func(string, ...any), objs [][]byte) {
	vm := p.VM
	w("## Argo CD: nothing to pause. The copy is not in Git, and Argo CD v3 annotation tracking does not count it")
	w("## as the Application's (its argocd.argoproj.io/tracking-id names the original namespace), so it is")
	w("## neither synced nor pruned; the original is not touched.")
	w("kubectl get namespace %s >/dev/null 2>&1 || kubectl create namespace %s", sh(p.TargetNamespace), sh(p.TargetNamespace))
	w(`if kubectl -n %s get virtualmachine %s >/dev/null 2>&1; then echo "namespace %s already has a VM %s: stop" >&2; exit 1; fi`, sh(p.TargetNamespace), sh(vm.Name), shDQ(p.TargetNamespace), shDQ(vm.Name))
	w("")
	w("## Restore the copy, Halted.")
	o := Restore(p)
	w("kubectl -n %s delete restore %s --ignore-not-found --wait  # a Restore of an earlier run (only the record: restored objects stay)", sh(model.OADPNamespace), sh(o.Name))
	createFrom(w, objs[0])
	w(`until phase=$(kubectl -n %s get restore %s -o jsonpath='{.status.phase}'); [[ $phase =~ ^(Completed|PartiallyFailed|Failed|FailedValidation)$ ]]; do sleep 10; done`, sh(model.OADPNamespace), sh(o.Name))
	w(`[ "$phase" = Completed ] || { velero -n %s restore describe %s --details >&2; exit 1; }`, sh(model.OADPNamespace), sh(o.Name))
	w("kubectl -n %s annotate virtualmachine %s argocd.argoproj.io/tracking-id-", sh(p.TargetNamespace), sh(vm.Name))
	w("")
	p.copyIdentity(w)
	w("")
	w("## Verify: a new identity, then start it, then its disks.")
	w("kubectl -n %s get virtualmachine %s -o jsonpath='{.spec.template.spec.domain.firmware.uuid} {.spec.template.spec.domain.firmware.serial}{\"\\n\"}'  # %s %s", sh(p.TargetNamespace), sh(vm.Name), cm(model.FirmwareUUID(p.TargetNamespace, vm.Name)), cm(model.FirmwareSerial(p.TargetNamespace, vm.Name)))
	w("virtctl -n %s start %s", sh(p.TargetNamespace), sh(vm.Name))
	verify(w, vm, p.TargetNamespace, true)
	w("")
	p.validation(w, []string{p.TargetNamespace + "/" + vm.Name})
	p.drillEvidence(w)
	w("# When done: kubectl delete namespace %s (only if it holds nothing else).", cm(p.TargetNamespace))
}

// copyIdentity gives the Halted copy an identity and networks of its own.
// The KubeVirt plugin's labels on the Restore clear the MAC addresses and
// draw a new firmware UUID (kubevirt-velero-plugin
// pkg/plugin/vm_restore_item_action.go); the SMBIOS serial stays the
// original's, and the additional networks would put the copy on the
// original's VLAN with the guest's own address configuration, or, in a
// namespace without the attachment, keep it from starting at all. So the
// plan sets the identity virtc derives for the target namespace (as
// FirmwareUUID and FirmwareSerial would render the copy from Git there)
// and detaches every network but the pod network: the copy starts
// isolated, reachable through the pod network (virtctl console, ssh,
// port-forward). A primary user-defined network is the namespace's, which
// the target may not have: its interface becomes a masquerade on the pod
// network. Each JSON patch tests the index it removes first, so it stops
// on a VM that is not the one virtc rendered.
func (p RestorePlan) copyIdentity(w func(string, ...any)) {
	vm := p.VM
	ns := p.TargetNamespace
	w("## A separate identity and networks: the copy must never pass for the original. Firmware UUID and serial as")
	w("## virtc derives them for %s/%s (the plugin's new UUID is random; the serial would stay the original's).", cm(ns), cm(vm.Name))
	w(`kubectl -n %s patch virtualmachine %s --type merge -p '{"spec":{"template":{"spec":{"domain":{"firmware":{"uuid":"%s","serial":"%s"}}}}}}'`,
		sh(ns), sh(vm.Name), shSQ(model.FirmwareUUID(ns, vm.Name)), shSQ(model.FirmwareSerial(ns, vm.Name)))
	var ops []string
	var detached []string
	for i := len(vm.Networks) - 1; i >= 0; i-- {
		n := vm.Networks[i]
		iface, _ := attachment(n, vm.Namespace, vm.Spec.Interfaces[n.Name])
		switch n.Spec.Type {
		case api.NetworkPod:
			continue
		case api.NetworkUDNPrimary:
			ops = append(ops,
				fmt.Sprintf(`{"op":"test","path":"/spec/template/spec/domain/devices/interfaces/%d/name","value":"%s"}`, i, shSQ(iface.Name)),
				fmt.Sprintf(`{"op":"replace","path":"/spec/template/spec/domain/devices/interfaces/%d","value":{"name":"%s","masquerade":{}}}`, i, shSQ(iface.Name)))
			detached = append(detached, n.Name+" (primary user-defined network: masquerade on the pod network)")
		default:
			ops = append(ops,
				fmt.Sprintf(`{"op":"test","path":"/spec/template/spec/networks/%d/name","value":"%s"}`, i, shSQ(iface.Name)),
				fmt.Sprintf(`{"op":"remove","path":"/spec/template/spec/networks/%d"}`, i),
				fmt.Sprintf(`{"op":"test","path":"/spec/template/spec/domain/devices/interfaces/%d/name","value":"%s"}`, i, shSQ(iface.Name)),
				fmt.Sprintf(`{"op":"remove","path":"/spec/template/spec/domain/devices/interfaces/%d"}`, i))
			detached = append(detached, n.Name)
		}
	}
	if len(ops) == 0 {
		return
	}
	slices.Reverse(detached)
	w("## Networks: detach %s, so that the copy cannot join the original's network with the", cm(strings.Join(detached, ", ")))
	w("## same guest addresses; it keeps the pod network only. A guest with static addresses for those NICs boots")
	w("## without them. To give the copy networks of its own, add them in Git as a VM of namespace %s.", cm(ns))
	w(`kubectl -n %s patch virtualmachine %s --type json -p '[%s]'`, sh(ns), sh(vm.Name), strings.Join(ops, ","))
}

func (p RestorePlan) snapshotScript(w func(string, ...any), objs [][]byte) {
	vm := p.VM
	o := p.vmRestore()
	w("## Stop the VM (KubeVirt restores a stopped VM only) and check the snapshot.")
	w("kubectl -n %s wait %s --for=jsonpath='{.status.readyToUse}'=true --timeout=1m", sh(vm.Namespace), sh("virtualmachinesnapshot/"+p.Snapshot))
	w("kubectl -n %s get virtualmachinesnapshot %s -o jsonpath='{.status.indications}{\"\\n\"}'  # GuestAgent: file systems were frozen; NoGuestAgent: crash-consistent", sh(vm.Namespace), sh(p.Snapshot))
	// KubeVirt v1.8.4 pkg/storage/snapshot/snapshot.go: getSnapshotPVC
	// leaves out a claim whose storage class has no VolumeSnapshotClass
	// (only a log line), the content without it is ready at once, and the
	// snapshot is readyToUse with the disk in
	// status.snapshotVolumes.excludedVolumes (updateSnapshotSnapshotableVolumes);
	// restore.go then restores only the content's volume backups.
	disks := diskVolumes(vm)
	w("## A ready snapshot may hold no copy of a disk: KubeVirt leaves out a disk whose storage class has no")
	w("## VolumeSnapshotClass (status.snapshotVolumes.excludedVolumes), and the restore would not roll it back.")
	w(`included=$(kubectl -n %s get virtualmachinesnapshot %s -o jsonpath='{range .status.snapshotVolumes.includedVolumes[*]}{@}{"\n"}{end}')`, sh(vm.Namespace), sh(p.Snapshot))
	w(`for disk in %s; do grep -qx "$disk" <<<"$included" \`, words(disks))
	w(`  || { echo "snapshot %s holds no copy of disk $disk (status.snapshotVolumes): stop" >&2; exit 1; }; done`, shDQ(p.Snapshot))
	w("virtctl -n %s stop %s", sh(vm.Namespace), sh(vm.Name))
	w("kubectl -n %s wait %s --for=delete --timeout=10m", sh(vm.Namespace), sh("virtualmachineinstance/"+vm.Name))
	w("")
	// KubeVirt v1.8.4 pkg/storage/snapshot/restore.go generateRestoredVMSpec:
	// an existing target VM gets the snapshot's whole spec (only its run
	// strategy is kept); InPlace keeps the claims' names.
	w("## Restore: KubeVirt replaces the VM's whole spec with the snapshot's copy (keeping its run strategy), and")
	w("## InPlace replaces the claims under their own names. If Git changed the VM since the snapshot, the hand-back's")
	w("## argocd app diff shows it, and syncing writes Git's spec back (KubeVirt applies it at the VM's next restart).")
	w("kubectl -n %s delete virtualmachinerestore %s --ignore-not-found --wait  # one of an earlier run", sh(vm.Namespace), sh(o.Name))
	createFrom(w, objs[0])
	w("kubectl -n %s wait %s --for=jsonpath='{.status.complete}'=true --timeout=30m", sh(vm.Namespace), sh("virtualmachinerestore/"+o.Name))
	w("kubectl -n %s wait persistentvolumeclaim %s --for=jsonpath='{.status.phase}'=Bound --timeout=30m", sh(vm.Namespace), words(claimNames(vm)))
	if !p.ownershipPolicy() && len(vm.Attached()) > 0 {
		w("# Data disks are never owned by their VM (deleting the VM must not delete them); a platform without")
		w("# volumeOwnershipPolicy (before 4.21) makes the VM their owner: remove it.")
		for _, d := range vm.Attached() {
			w(`kubectl -n %s patch persistentvolumeclaim %s --type json -p '[{"op":"remove","path":"/metadata/ownerReferences"}]'`, sh(vm.Namespace), sh(model.DiskName(vm.Name, d.Name)))
		}
	}
	w("")
	w("## Run it as Git says (runStrategy %s), so that Git finds nothing to change.", cm(vm.RunStrategy))
	w(`kubectl -n %s patch virtualmachine %s --type merge -p '{"spec":{"runStrategy":"%s"}}'`, sh(vm.Namespace), sh(vm.Name), shSQ(vm.RunStrategy))
	w("")
	p.handBack(w)
}

// ownBackupGuard stops an other-cluster plan before the Restore of
// schedule if this cluster's own Schedule of that name (synced from Git in
// step 2, into the same location as the lost cluster's) has taken a backup:
// a Restore by scheduleName takes the most recent Completed backup with
// the Schedule's name, whichever cluster wrote it (Velero v1.18
// pkg/controller/restore_controller.go, mostRecentCompletedBackup), and
// would restore this cluster's tenant (blank disks) instead of the lost
// one's. Velero records the backups a Schedule itself submits in its
// status.lastBackup (pkg/controller/schedule_controller.go submitBackup);
// the backups synced from the location leave it empty.
func (p RestorePlan) ownBackupGuard(w func(string, ...any), schedule string) {
	w("# The Restore takes Schedule %s's most recent Completed backup, whichever cluster took it: this", cm(schedule))
	w("# cluster's own %s (from Git) must not have taken one, or it would restore this cluster's blank tenant.", cm(schedule))
	w(`[ -z "$(kubectl -n %s get schedule %s --ignore-not-found -o jsonpath='{.status.lastBackup}')" ] \`, sh(model.OADPNamespace), sh(schedule))
	w(`  || { echo "Schedule %s has taken a backup on this cluster: its latest backup may be this cluster's, not the lost one's; in the Restore below, replace scheduleName with backupName: <the lost cluster's backup>" >&2; exit 1; }`, shDQ(schedule))
}

func (p RestorePlan) platformSteps(w func(string, ...any)) {
	t := p.Tenant
	w("## 1. Platform: the new cluster's platform Application (virtc build --scope platform) has synced:")
	w("## OpenShift Virtualization, OADP and the same backup storage location, which Velero reads the backups from.")
	w("kubectl -n openshift-cnv wait hyperconverged/kubevirt-hyperconverged --for=condition=Available --timeout=30m")
	w("kubectl -n %s wait backupstoragelocations --all --for=jsonpath='{.status.phase}'=Available --timeout=10m", sh(model.OADPNamespace))
	for _, policy := range p.policies() {
		w("kubectl -n %s get backups -l %s  # the backups to restore are listed here once Velero synced them", sh(model.OADPNamespace), sh("velero.io/schedule-name="+model.ScheduleName(t.Name, policy)))
	}
	w("## 2. The tenant (virtc build --scope tenants): namespace, quota, RBAC and networks come from Git, not from backups.")
	w("kubectl get namespace %s", sh(t.Name))
	w("")
}

// trackingSteps hand the restored objects that are in Git to this
// cluster's Application. Velero restores them with the old cluster's
// annotation tracking id, <app instance>:<group>/<kind>:<namespace>/<name>
// (Argo CD v3.6.1 util/argo/resource_tracking.go BuildAppInstanceValue),
// and, where the old Argo CD had one, its installation id: an object whose
// id names another Application, or whose installation id is not this Argo
// CD's (getAppInstanceValue), is not this Application's, so its diff never
// comes back clean. The Application's instance name is its name when it
// lives in Argo CD's own namespace, <namespace>_<name> otherwise
// (Application.InstanceName); the installation id is argocd-cm's
// installationID.
func (p RestorePlan) trackingSteps(w func(string, ...any), vms []*resolve.VM) {
	w("## 3b. Argo CD tracking: the restored objects carry the old cluster's Application in their")
	w("## argocd.argoproj.io/tracking-id (and its installation-id): make them this Application's.")
	w(`APP_INSTANCE=${APP_INSTANCE:-$APP}  # <namespace>_<name> for an Application outside $ARGOCD_NS`)
	w(`INSTALLATION_ID=$(kubectl -n "$ARGOCD_NS" get configmap argocd-cm -o jsonpath='{.data.installationID}')`)
	type tracked struct{ group, kind, resource, name string }
	for _, vm := range vms {
		objs := []tracked{{"kubevirt.io", "VirtualMachine", "virtualmachine", vm.Name}}
		for _, d := range vm.Attached() {
			objs = append(objs, tracked{"", "PersistentVolumeClaim", "persistentvolumeclaim", model.DiskName(vm.Name, d.Name)})
		}
		for _, o := range objs {
			w(`kubectl -n %s annotate --overwrite %s %s argocd.argoproj.io/tracking-id="$APP_INSTANCE:%s/%s:%s/%s"`, sh(vm.Namespace), o.resource, sh(o.name), o.group, o.kind, shDQ(vm.Namespace), shDQ(o.name))
			w(`if [ -n "$INSTALLATION_ID" ]; then kubectl -n %s annotate --overwrite %s %s argocd.argoproj.io/installation-id="$INSTALLATION_ID"; else kubectl -n %s annotate %s %s argocd.argoproj.io/installation-id-; fi`, sh(vm.Namespace), o.resource, sh(o.name), sh(vm.Namespace), o.resource, sh(o.name))
		}
	}
}

func (p RestorePlan) identitySteps(w func(string, ...any), vms []*resolve.VM) {
	w("")
	w("## 4. Guest consistency: Velero froze the guest's file systems through the QEMU guest agent (KubeVirt's")
	w("## virt-freezer backup hooks on virt-launcher); a guest without the agent comes back crash-consistent:")
	w("## check its file systems and databases after the start.")
	for _, vm := range vms {
		if vm.Image != nil && !vm.Image.Spec.GuestAgent {
			w("# %s/%s: image %s has no guest agent: crash-consistent disks.", cm(vm.Namespace), cm(vm.Name), cm(vm.ImageName))
		}
	}
	w("## 5. Network identity: the VMs kept their MAC addresses and firmware UUID. Start them only once the old")
	w("## cluster's VMs are off for good (fenced), or the two would share addresses.")
	for _, vm := range vms {
		w(`kubectl -n %s patch virtualmachine %s --type merge -p '{"spec":{"runStrategy":"%s"}}'  # as in Git`, sh(vm.Namespace), sh(vm.Name), shSQ(vm.RunStrategy))
	}
	for _, vm := range vms {
		verify(w, vm, vm.Namespace, runs(vm))
		if runs(vm) {
			w("kubectl -n %s get virtualmachineinstance %s -o jsonpath='{range .status.interfaces[*]}{.name} {.mac} {.ipAddress}{\"\\n\"}{end}'", sh(vm.Namespace), sh(vm.Name))
		}
	}
}
