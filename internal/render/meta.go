// Package render turns the resolved model into Kubernetes objects, built
// with the real API types. One file per output kind; no renderer reads the
// catalog files: everything it needs is in the resolved model.
package render

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtc/virtc/internal/alerts"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/par"
	"github.com/virtc/virtc/internal/resolve"
)

// Sync waves of the cluster side: the operator first, then the
// HyperConverged, then what uses the CRDs it installs.
const (
	waveOperator = -30
	// waveCatalog: a pinned CatalogSource exists before the Subscriptions
	// that name it.
	waveCatalog = -35
	// waveMigrationNetwork: the live-migration network exists before the
	// HyperConverged makes virt-handler use it.
	waveMigrationNetwork = -25
	waveHyperConverged   = -20
	wavePlatform         = -10
)

// syncWaves order an Argo CD sync: the cluster side (operator, network,
// HyperConverged, then instance types, preferences, cluster networks and
// golden images at -10), namespaces and quota, then networks, then data
// disks and VMs, then backups. Argo CD waits for a wave to be healthy
// before the next; inside a wave it ranks only built-in kinds
// (gitops-engine v3.6.1 pkg/sync/sync_tasks.go, kindOrder): custom kinds
// tie and go by name. So every order virtc needs is a wave, except one:
// data disks' claims share their VMs' wave, where the claim (a ranked kind)
// is applied before the VM (a custom one), because a claim on a
// WaitForFirstConsumer class binds only once its VM's pod is scheduled and
// a wave of its own would never become healthy. Data disks are claims only;
// the only DataVolumes are golden images (-10).
var syncWaves = map[string]int{
	"OperatorGroup":                     waveOperator,
	"Subscription":                      waveOperator,
	"HyperConverged":                    waveHyperConverged,
	"VirtualMachineClusterInstancetype": wavePlatform,
	"VirtualMachineClusterPreference":   wavePlatform,
	"MigrationPolicy":                   wavePlatform,
	"ClusterUserDefinedNetwork":         wavePlatform,
	"DataSource":                        wavePlatform,
	"Namespace":                         0,
	"ResourceQuota":                     0,
	"Role":                              0,
	"RoleBinding":                       0,
	"NetworkPolicy":                     0,
	// A tenant's guardrails are in force before its VMs and disks (2).
	"ValidatingAdmissionPolicy":        0,
	"ValidatingAdmissionPolicyBinding": 0,
	"NetworkAttachmentDefinition":      1,
	"UserDefinedNetwork":               1,
	"DataVolume":                       wavePlatform,
	"PersistentVolumeClaim":            2,
	"VirtualMachine":                   2,
	"Schedule":                         3,
	"Backup":                           3,
	"VirtualMachineSnapshot":           3,
	// Alerts about the objects above come with them: the CRDs are
	// OpenShift monitoring's, always installed.
	"PrometheusRule":     3,
	"AlertmanagerConfig": 3,
}

// objectMeta is the metadata every generated object carries: who manages
// it, the intent file it came from, and its sync wave.
func objectMeta(kind, namespace, name, source string, labels, annotations map[string]string) metav1.ObjectMeta {
	l := map[string]string{model.LabelManagedBy: model.ManagedBy}
	maps.Copy(l, labels)
	a := map[string]string{}
	for k, v := range annotations {
		if !isKRMAnnotation(k) {
			a[k] = v
		}
	}
	if source != "" {
		a[model.AnnotationSource] = source
	}
	if w, ok := syncWaves[kind]; ok {
		a[model.AnnotationSyncWave] = strconv.Itoa(w)
	}
	if opts := syncOptions(kind); opts != "" {
		a[model.AnnotationSyncOptions] = opts
	}
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: l, Annotations: a}
}

// needsCRD lists kinds whose CRDs the operators virtc installs provide: on
// a new cluster they do not exist when Argo CD dry-runs the sync.
var needsCRD = map[string]bool{
	"HyperConverged":                    true,
	"VirtualMachineClusterInstancetype": true,
	"VirtualMachineClusterPreference":   true,
	"MigrationPolicy":                   true,
	"DataVolume":                        true,
	"DataSource":                        true,
	"VirtualMachine":                    true,
	"DataProtectionApplication":         true,
	"Schedule":                          true,
	"Backup":                            true,
}

func syncOptions(kind string) string {
	if needsCRD[kind] {
		return "SkipDryRunOnMissingResource=true"
	}
	return ""
}

// confirmDeletion adds Argo CD's confirmation options to an object's
// sync options: Argo CD then asks a person before pruning the object (it
// was removed from Git) or deleting it (the Application is deleted).
func confirmDeletion(m metav1.ObjectMeta) metav1.ObjectMeta {
	opts := "Prune=confirm,Delete=confirm"
	if prev := m.Annotations[model.AnnotationSyncOptions]; prev != "" {
		opts += "," + prev
	}
	m.Annotations[model.AnnotationSyncOptions] = opts
	return m
}

// NamespaceSyncOptions protect a Namespace: Kubernetes deletes everything
// in a deleted namespace (VMs, DataVolumes, PVCs) without asking Argo CD,
// so the protection of the disks must hold for their namespace too.
//
//   - Delete=false: deleting the Application (or an ApplicationSet dropping
//     a cluster) never deletes the namespace (Argo CD v3.6.1
//     controller/appcontroller.go, shouldBeDeleted). Delete=confirm would
//     not do: the person approves the Application's deletion as a whole
//     (argocd.argoproj.io/deletion-approved), and the namespace's deletion
//     then takes with it the VMs and disks of other Applications (a
//     `--scope vms` Application) that were never asked. With Delete=false
//     VMs and disks are deleted only by their own Application, after their
//     own Delete=confirm.
//   - Prune=confirm: a namespace removed from Git is pruned only once a
//     person confirms (gitops-engine pkg/sync/sync_context.go waits for
//     pruneConfirmed). A retired tenant's namespace trades it for
//     Prune=false (retire): its removal leaves it for a person to delete.
const NamespaceSyncOptions = "Prune=confirm,Delete=false"

// protectNamespace adds NamespaceSyncOptions to a Namespace's sync options.
func protectNamespace(m metav1.ObjectMeta) metav1.ObjectMeta {
	opts := NamespaceSyncOptions
	if prev := m.Annotations[model.AnnotationSyncOptions]; prev != "" {
		opts += "," + prev
	}
	m.Annotations[model.AnnotationSyncOptions] = opts
	return m
}

// keepOnPrune sets the options for objects Argo CD must neither prune nor
// report as extraneous: Velero copies them onto the Backups it creates.
func keepOnPrune(m metav1.ObjectMeta) metav1.ObjectMeta {
	opts := "Prune=false"
	if prev := m.Annotations[model.AnnotationSyncOptions]; prev != "" {
		opts += "," + prev
	}
	m.Annotations[model.AnnotationSyncOptions] = opts
	m.Annotations[AnnotationCompareOptions] = "IgnoreExtraneous"
	return m
}

// withWave overrides an object's sync wave.
func withWave(m metav1.ObjectMeta, wave int) metav1.ObjectMeta {
	m.Annotations[model.AnnotationSyncWave] = strconv.Itoa(wave)
	return m
}

// isKRMAnnotation reports annotations of the KRM function protocol, such as
// config.kubernetes.io/local-config: they describe the intent file to
// kustomize and kpt, and copied onto a generated object they would change
// what those tools do with it (a local-config VM is never applied).
func isKRMAnnotation(key string) bool {
	return strings.HasPrefix(key, "config.kubernetes.io/") || strings.HasPrefix(key, "internal.config.kubernetes.io/")
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// Options are the settings renderers take from outside the model.
type Options struct {
	// Monitoring is the build's alerting plan (alerts.Compile); nil: no
	// monitoring objects.
	Monitoring *alerts.Plan
}

// safety is how renderers protect disks: whether deletions need a person.
type safety struct {
	confirm bool
}

func (s safety) meta(m metav1.ObjectMeta) metav1.ObjectMeta {
	if s.confirm {
		return confirmDeletion(m)
	}
	return m
}

// namespaces protects every Namespace among objs (tenants', openshift-cnv,
// openshift-adp, any other the cluster side emits) like the disks they
// hold: under confirmDeletion, with NamespaceSyncOptions.
func (s safety) namespaces(objs []emit.Object) {
	if !s.confirm {
		return
	}
	for _, o := range objs {
		if ns, ok := o.Body.(*corev1.Namespace); ok {
			ns.ObjectMeta = protectNamespace(ns.ObjectMeta)
		}
	}
}

// All renders every object of the model: Groups joined in order.
func All(m *resolve.Model, opts Options) []emit.Object {
	groups := make([][]emit.Object, len(m.Tenants)+1)
	Groups(m, opts, func(g int, objs []emit.Object) { groups[g] = objs })
	return slices.Concat(groups...)
}

// Groups renders what All renders, group by group: group 0 the platform's
// objects, group i+1 those of m.Tenants[i]. It hands each group, finished
// as All finishes it (Namespaces protected, the monitoring namespace
// labelled, retired objects marked: each of these reads only the object
// and the model), to each on the goroutine that rendered it; the tenants
// are rendered on all CPUs, so each runs concurrently with itself for
// different groups. A caller that serializes each group as it comes
// (virtc build) holds one tenant's typed objects per CPU, not the fleet's.
func Groups(m *resolve.Model, opts Options, each func(group int, objs []emit.Object)) {
	safe := safety{confirm: m.ConfirmDeletion()}
	retired := retiredTenants(m)
	finish := func(objs []emit.Object) []emit.Object {
		safe.namespaces(objs)
		monitorNamespace(opts.Monitoring, objs)
		retire(retired, objs)
		return objs
	}
	var objs []emit.Object
	if p := m.Platform; p != nil {
		objs = append(objs, Platform(m, p)...)
		objs = append(objs, DataProtection(p)...)
		objs = append(objs, VeleroMonitor(opts.Monitoring, p)...)
		objs = append(objs, Instancetypes(m.Catalog, p)...)
		objs = append(objs, Preferences(m.Catalog, p)...)
		objs = append(objs, MigrationPolicies(m.Catalog)...)
		objs = append(objs, GoldenImages(m.Catalog, p)...)
		objs = append(objs, ClusterNetworks(m, p)...)
		objs = append(objs, PlatformRules(opts.Monitoring)...)
	}
	each(0, finish(objs))
	par.For(len(m.Tenants), func(i int) { each(i+1, finish(tenant(m, m.Tenants[i], safe, opts.Monitoring))) })
}

// AnnotationCompareOptions is Argo CD's compare-options annotation.
const AnnotationCompareOptions = "argocd.argoproj.io/compare-options"

// AnnotationIgnoreHealthCheck keeps an object's health out of its
// Application's (argo-cd v3.6.1 controller/health.go setApplicationHealth).
const AnnotationIgnoreHealthCheck = "argocd.argoproj.io/ignore-healthcheck"

// retire marks what is retired — the objects labelled virtc.dev/retired
// (a retired VM, its data disks' claims, a retired disk's claim, a retired
// tenant's Namespace) and every object in a retired tenant's namespace —
// so that removing it from Git later never makes Argo CD prune it, nor wait
// for anyone, nor report the Application OutOfSync:
//
//   - Prune=false replaces Prune=confirm. A prune task whose live object
//     says Prune=false is skipped ("ignored (no prune)") and needs no
//     confirmation: gitops-engine v3.6.1 pkg/sync/sync_context.go,
//     objRequiresPruneConfirmation and pruneObject read the live object's
//     sync options. With Prune=confirm the whole sync waits ("waiting for
//     pruning confirmation of ..."), unrelated changes included.
//   - IgnoreExtraneous: an object in the cluster and not in Git does not
//     make the Application OutOfSync (Argo CD v3.6.1 controller/state.go).
//   - Delete=confirm / Delete=false stay: deleting the Application still
//     asks, or leaves the namespace.
//
// The options must be on the live object before the removal: retire, let
// Argo CD sync, then remove from Git; a person then deletes the objects
// with an explicit command (docs/previews.md, Decommissioning).
func retire(retiredTenants map[string]bool, objs []emit.Object) {
	for _, o := range objs {
		meta, ok := o.Body.(metav1.Object)
		if !ok {
			continue
		}
		if meta.GetLabels()[model.LabelRetired] != "true" && !retiredTenants[meta.GetNamespace()] {
			continue
		}
		a := meta.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		opts := []string{"Prune=false"}
		for _, opt := range strings.Split(a[model.AnnotationSyncOptions], ",") {
			if opt != "" && !strings.HasPrefix(opt, "Prune=") {
				opts = append(opts, opt)
			}
		}
		a[model.AnnotationSyncOptions] = strings.Join(opts, ",")
		cmp := []string{"IgnoreExtraneous"}
		for _, opt := range strings.Split(a[AnnotationCompareOptions], ",") {
			if opt != "" && opt != "IgnoreExtraneous" {
				cmp = append(cmp, opt)
			}
		}
		a[AnnotationCompareOptions] = strings.Join(cmp, ",")
		meta.SetAnnotations(a)
	}
}

// retiredTenants are the names of the model's retired tenants.
func retiredTenants(m *resolve.Model) map[string]bool {
	out := map[string]bool{}
	for _, t := range m.Tenants {
		if t.Spec.Retired {
			out[t.Name] = true
		}
	}
	return out
}

// tenant renders a tenant's namespace, plumbing, VMs and backups.
func tenant(m *resolve.Model, t *resolve.Tenant, safe safety, plan *alerts.Plan) []emit.Object {
	var objs []emit.Object
	objs = append(objs, Namespace(t))
	objs = append(objs, TenantNetworks(m, t)...)
	objs = append(objs, ResourceQuota(m, t))
	objs = append(objs, RoleBindings(t)...)
	objs = append(objs, NetworkPolicy(t))
	objs = append(objs, ValidatingAdmissionPolicy(m, t), ValidatingAdmissionPolicyBinding(t))
	for _, vm := range t.VMs {
		objs = append(objs, DataDisks(vm, safe)...)
		objs = append(objs, VirtualMachine(vm, safe))
		objs = append(objs, Snapshots(vm)...)
	}
	objs = append(objs, Schedules(m, t)...)
	objs = append(objs, OnDemandBackups(m, t)...)
	objs = append(objs, TenantRules(plan, t.Name)...)
	objs = append(objs, AlertmanagerConfig(plan, t.Name)...)
	return objs
}

// Unchecked renders, for a model the compile may have refused, each
// tenant's guardrails policy and the objects of each VM that renders (a VM
// whose catalog references did not resolve does not): what the cluster
// would be asked to admit. Tests hold the compile's refusals to the
// cluster's with it; no build emits it.
func Unchecked(m *resolve.Model) (policies map[string]emit.Object, vms map[*resolve.VM][]emit.Object) {
	safe := safety{confirm: m.ConfirmDeletion()}
	policies, vms = map[string]emit.Object{}, map[*resolve.VM][]emit.Object{}
	for _, t := range m.Tenants {
		func() {
			defer func() { _ = recover() }()
			policies[t.Name] = ValidatingAdmissionPolicy(m, t)
		}()
		for _, vm := range t.VMs {
			func() {
				defer func() { _ = recover() }()
				objs := append(DataDisks(vm, safe), VirtualMachine(vm, safe))
				vms[vm] = objs
			}()
		}
	}
	return policies, vms
}
