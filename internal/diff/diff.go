// Package diff compares two compiled trees, the base of a change and its
// head, and says what the change does to the cluster: which objects are
// added, removed or changed, what each VM change means for the running VM
// (live update or restart, following KubeVirt's rules), and which changes
// must not merge because they would destroy data or cannot be applied.
//
// The comparison works on the compile results: object by object on the
// generated manifests (key: apiVersion, kind, namespace, name), and VM by
// VM on the resolved models, so that a change is explained in the terms of
// the intent (size, disks, image) rather than as YAML noise.
package diff

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/placement"
	"github.com/virtc/virtc/internal/resolve"
)

// Object statuses.
const (
	Added     = "added"
	Removed   = "removed"
	Changed   = "changed"
	Unchanged = "unchanged"
)

// Effects of a VM change on the running VM.
const (
	// EffectLive: KubeVirt applies the change to the running VM (CPU and
	// memory hot-plug, with the LiveUpdate rollout strategy).
	EffectLive = "live-update"
	// EffectRestart: the VM keeps running unchanged; KubeVirt sets its
	// RestartRequired condition and applies the change at the next
	// restart.
	EffectRestart = "restart-required"
	// EffectNextStart: the VM is halted; the change applies when it starts.
	EffectNextStart = "next-start"
	// EffectOnline: a disk grows while the VM runs.
	EffectOnline = "online-expansion"
	// EffectStarts and EffectStops: the run strategy starts or stops the VM.
	EffectStarts = "starts"
	EffectStops  = "stops"
	// EffectNone: nothing changes for the running VM.
	EffectNone = "none"
	// EffectManual: the change needs a manual step to take effect.
	EffectManual = "manual"
	// EffectCreated and EffectDeleted: a VM, disk or network comes or goes.
	EffectCreated = "created"
	EffectDeleted = "deleted"
	// EffectRefused: the change is refused (see the report's refusals).
	EffectRefused = "refused"
)

// Report is the outcome of a comparison. Its JSON form is virtc diff's
// --format json output; field names are stable.
type Report struct {
	// Base and Head name the two sides (for example "origin/main" and
	// "working tree").
	Base string `json:"base"`
	Head string `json:"head"`
	// Allowed is false when any change is refused.
	Allowed bool    `json:"allowed"`
	Summary Summary `json:"summary"`
	// Refusals are the changes that must not merge, each with what to do
	// instead.
	Refusals []Finding `json:"refusals"`
	// Warnings are changes that merge but deserve a reviewer's attention.
	Warnings []Finding `json:"warnings"`
	// Platform are the changes of the cluster side (the OpenShift
	// Virtualization version).
	Platform []Change `json:"platform"`
	// Tenants and VMs are the changes in intent terms, in name order.
	Tenants []Subject `json:"tenants"`
	VMs     []Subject `json:"vms"`
	// Objects are the generated objects that differ, in output order.
	Objects []Object `json:"objects"`
}

// Summary counts the generated objects by status.
type Summary struct {
	Added     int `json:"added"`
	Removed   int `json:"removed"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

// Finding is a refusal or a warning.
type Finding struct {
	// Rule names the rule, for example disk-shrink.
	Rule string `json:"rule"`
	// Object is the generated object concerned: "Kind namespace/name".
	Object string `json:"object"`
	// Message says what the change does.
	Message string `json:"message"`
	// Fix says what to do instead (refusals) or what to check (warnings).
	Fix string `json:"fix,omitempty"`
}

// Subject is a Tenant or VM that is added, removed or changed.
type Subject struct {
	Namespace string   `json:"namespace,omitempty"`
	Name      string   `json:"name"`
	Status    string   `json:"status"`
	Changes   []Change `json:"changes"`
}

// Change is one change to a Tenant or VM in intent terms.
type Change struct {
	// Field is the intent field: size, image, rootDisk, disk, network,
	// runStrategy, backup, migration, cloudInit, sshKeys, retired, labels,
	// pool, spread, migrationPolicy, health, snapshotBefore, backupBefore,
	// class, quota, access, vm, tenant, other. A platform change has
	// version, platform, catalog, olm-path, oadp, workloadUpdate, vm (a
	// running VM the upgrade moves or cannot move, Name ns/vm), quota (the
	// live migrations a tenant's quota holds, Name the tenant) or
	// precondition (a check before merging).
	Field string `json:"field"`
	// Name is the disk or network concerned.
	Name string `json:"name,omitempty"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Effect is one of the Effect constants.
	Effect string `json:"effect"`
	// Detail explains the change in user terms.
	Detail string `json:"detail"`
	// what is the change without its effect, for changes KubeVirt may apply
	// live: restartWins rewrites their detail.
	what string
}

// Object is a generated object that differs between the sides.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	// Diff is the unified diff of the object's manifest (omitted with
	// --diff=false).
	Diff string `json:"diff,omitempty"`
}

// Ref is "Kind namespace/name" or "Kind name".
func (o Object) Ref() string { return ref(o.Kind, o.Namespace, o.Name) }

func ref(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// Options configure a comparison.
type Options struct {
	// Base and Head name the sides in the report.
	Base, Head string
	// Cluster is what virtc assumes about the cluster's KubeVirt settings.
	Cluster Cluster
}

// Compare compares the base and head compile results, both without errors.
// A side that has no inputs at all (a directory added by the change) is a
// zero Result.
func Compare(base, head compile.Result, opts Options) (*Report, error) {
	r := &Report{Base: opts.Base, Head: opts.Head}
	objs, err := compareObjects(base.Objects, head.Objects, base.Pieces, head.Pieces)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		switch o.Status {
		case Added:
			r.Summary.Added++
		case Removed:
			r.Summary.Removed++
		case Changed:
			r.Summary.Changed++
		case Unchanged:
			r.Summary.Unchanged++
			continue
		}
		r.Objects = append(r.Objects, o.Object)
	}
	c := &comparison{report: r, cluster: opts.Cluster, objects: objs, byName: indexObjects(objs), newCatalog: catalogOf(head.Model), oldCatalog: catalogOf(base.Model),
		confirm: base.Model != nil && base.Model.ConfirmDeletion()}
	if base.Model != nil {
		c.oldPlacement = placement.Analyze(base.Model)
	}
	if head.Model != nil {
		c.newPlacement = placement.Analyze(head.Model)
		c.headEvidence = eligibility.ContextOf(head.Model)
	}
	c.platform(base, head)
	c.tenants(tenantsOf(base.Model), tenantsOf(head.Model))
	c.vms(vmsOf(base.Model), vmsOf(head.Model))
	c.immutableDataVolumes()
	c.deletedDisks()
	r.Finish()
	return r, nil
}

// Finish decides the report (allowed when nothing is refused) and makes
// its empty lists print as [] in JSON, so that tools need not tell null
// from empty. Every way of building a Report ends with it.
func (r *Report) Finish() {
	r.Allowed = len(r.Refusals) == 0
	r.Refusals = nonNil(r.Refusals)
	r.Warnings = nonNil(r.Warnings)
	r.Platform = nonNil(r.Platform)
	r.Tenants = nonNil(r.Tenants)
	r.VMs = nonNil(r.VMs)
	r.Objects = nonNil(r.Objects)
}

// nonNil makes empty lists print as [] in JSON, so that tools need not
// tell null from empty.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

type comparison struct {
	report  *Report
	cluster Cluster
	objects []objectDiff
	// byName indexes objects by kind, namespace and name (the first in
	// output order when API versions differ).
	byName map[nameKey]int
	// newCatalog is the head's catalog (nil for an empty head), oldCatalog
	// the base's.
	newCatalog, oldCatalog *catalog.Catalog
	// confirm: the base's VMs and disks carry Argo CD's Prune=confirm, so
	// Argo CD asks a person before it deletes them.
	confirm bool
	// headEvidence judges the head's VMs' required checks against the
	// head's Evidence (zero for an empty head).
	headEvidence eligibility.Context
	// oldPlacement and newPlacement place the VMs of each side (nil for
	// an empty side).
	oldPlacement, newPlacement *placement.Result
}

// deletes says how Argo CD deletes what a change removes.
func (c *comparison) deletes(what string) string {
	if c.confirm {
		return fmt.Sprintf("Argo CD deletes %s, data included, once a person confirms the prune (Prune=confirm)", what)
	}
	return fmt.Sprintf("Argo CD deletes %s, data included", what)
}

// leaves says what Argo CD does with a retired object removed from Git:
// virtc gives retired objects Prune=false and IgnoreExtraneous
// (render.retire), so Argo CD neither prunes them nor waits for anyone, and
// a person deletes them with the command given.
func leaves(what, command string) string {
	return fmt.Sprintf("Argo CD leaves %s in the cluster (retired objects carry Prune=false and IgnoreExtraneous: no prune, no wait for a confirmation, no OutOfSync); a person deletes them, data included, with `%s`", what, command)
}

// nameKey is an object's kind, namespace and name.
type nameKey struct{ kind, namespace, name string }

// indexObjects maps each kind, namespace and name to its first object.
func indexObjects(objs []objectDiff) map[nameKey]int {
	m := make(map[nameKey]int, len(objs))
	for i, o := range objs {
		k := nameKey{o.Kind, o.Namespace, o.Name}
		if _, ok := m[k]; !ok {
			m[k] = i
		}
	}
	return m
}

// object finds a generated object of either side by kind and name.
func (c *comparison) object(kind, namespace, name string) (objectDiff, bool) {
	i, ok := c.byName[nameKey{kind, namespace, name}]
	if !ok {
		return objectDiff{}, false
	}
	return c.objects[i], true
}

func (c *comparison) refuse(rule, object, message, fix string) {
	c.report.Refusals = append(c.report.Refusals, Finding{Rule: rule, Object: object, Message: message, Fix: fix})
}

func (c *comparison) warn(rule, object, message, fix string) {
	c.report.Warnings = append(c.report.Warnings, Finding{Rule: rule, Object: object, Message: message, Fix: fix})
}

// status returns the status of the generated object with this key, and
// whether it exists on either side.
func (c *comparison) status(kind, namespace, name string) (string, bool) {
	o, ok := c.object(kind, namespace, name)
	return o.Status, ok
}

func tenantsOf(m *resolve.Model) []*resolve.Tenant {
	if m == nil {
		return nil
	}
	return m.Tenants
}

func vmsOf(m *resolve.Model) []*resolve.VM {
	if m == nil {
		return nil
	}
	var out []*resolve.VM
	for _, t := range m.Tenants {
		out = append(out, t.VMs...)
	}
	slices.SortFunc(out, func(a, b *resolve.VM) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}
