package live

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/diff"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/resolve"
)

// FieldOwnMetadata is the Change.Field of a label or annotation that virtc
// itself sets (virtc.dev/*, app.kubernetes.io/managed-by, Argo CD's sync
// options and waves): the differences an adopted VM is expected to have.
const FieldOwnMetadata = "virtc-metadata"

// Kinds an export of `oc get vm,dv,pvc,nad` holds: objects of other kinds
// are compared only when the export holds one of their kind (else it cannot
// say whether they exist).
var exportedKinds = []string{"VirtualMachine", "DataVolume", "PersistentVolumeClaim", "NetworkAttachmentDefinition"}

// ownMetadata reports whether a label or annotation key is virtc's own.
func ownMetadata(key string) bool {
	return strings.HasPrefix(key, "virtc.dev/") || key == "app.kubernetes.io/managed-by" || strings.HasPrefix(key, "argocd.argoproj.io/")
}

// Diff compares the objects virtc would apply with the live ones and
// classifies each difference as virtc diff does: no effect (metadata),
// live update, restart, online expansion, next start, or refused (a
// change the cluster rejects or that needs the object re-created).
//
// m is the model desired was compiled from: a size difference of a VM is
// classified with its catalog (nil: such a difference is manual).
func Diff(desired []emit.Object, live []Object, base, head string, m *resolve.Model) (*diff.Report, error) {
	return compare(desired, live, base, head, m, true)
}

// Changes is Diff without the text: the report's objects have no
// manifests nor unified diffs (Object.Diff is empty); its summary, VMs,
// changes, refusals and warnings are Diff's. virtc import judges each VM by
// its changes and prints no diff.
func Changes(desired []emit.Object, live []Object, m *resolve.Model) (*diff.Report, error) {
	return compare(desired, live, "", "", m, false)
}

// comparer builds one report of desired against live objects.
type comparer struct {
	r    *diff.Report
	m    *resolve.Model
	text bool
	// vms are the report's VMs by namespace/name, in the order first seen.
	vms     map[string]*diff.Subject
	vmOrder []string
}

func compare(desired []emit.Object, live []Object, base, head string, m *resolve.Model, text bool) (*diff.Report, error) {
	c := &comparer{r: &diff.Report{Base: base, Head: head}, m: m, text: text, vms: map[string]*diff.Subject{}}
	byRef := map[string]Object{}
	for _, o := range live {
		byRef[o.Kind+" "+o.Namespace+"/"+o.Name] = o
	}
	used := map[string]bool{}
	notCompared := map[string]int{}
	// Besides the kinds of `oc get vm,dv,pvc,nad`, any kind the export
	// holds an object of was asked for (for example the networks an
	// import maps from: `oc get userdefinednetwork`).
	kinds := slices.Clone(exportedKinds)
	for _, o := range live {
		if !slices.Contains(kinds, o.Kind) {
			kinds = append(kinds, o.Kind)
		}
	}
	for _, d := range desired {
		if !slices.Contains(kinds, d.Kind) {
			notCompared[d.Kind]++
			continue
		}
		ref := d.Kind + " " + d.Namespace + "/" + d.Name
		lo, ok := byRef[ref]
		used[ref] = ok
		if err := c.desired(d, ref, lo, ok); err != nil {
			return nil, err
		}
	}
	for _, o := range live {
		if used[o.Ref()] || !slices.Contains(kinds, o.Kind) {
			continue
		}
		if err := c.gone(o, live); err != nil {
			return nil, err
		}
	}
	r := c.r
	if len(notCompared) > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(notCompared)) {
			kinds = append(kinds, fmt.Sprintf("%d %s", notCompared[k], k))
		}
		r.Warnings = append(r.Warnings, diff.Finding{Rule: "live-not-compared", Object: "objects of other kinds",
			Message: "not compared (an export of vm,dv,pvc,nad does not hold these kinds): " + strings.Join(kinds, ", ")})
	}
	slices.Sort(c.vmOrder)
	for _, k := range c.vmOrder {
		r.VMs = append(r.VMs, *c.vms[k])
	}
	r.Finish()
	return r, nil
}

// textOf is the manifest of an object, when the report has text.
func (c *comparer) textOf(apiVersion, kind, namespace, name string, body func() map[string]any) (string, error) {
	if !c.text {
		return "", nil
	}
	return manifest(apiVersion, kind, namespace, name, body())
}

func (c *comparer) unified(a, b string) string {
	if !c.text {
		return ""
	}
	return diff.Unified(a, b)
}

// subject is the report's VM vmName in namespace (nil for an object of no
// VM), added on first use.
func (c *comparer) subject(namespace, vmName string) *diff.Subject {
	if vmName == "" {
		return nil
	}
	k := namespace + "/" + vmName
	s, ok := c.vms[k]
	if !ok {
		s = &diff.Subject{Namespace: namespace, Name: vmName, Status: diff.Unchanged}
		c.vms[k] = s
		c.vmOrder = append(c.vmOrder, k)
	}
	return s
}

// desired compares one desired object with its live one (lo, when
// exists): added, unchanged, or changed with each change classified.
func (c *comparer) desired(d emit.Object, ref string, lo Object, exists bool) error {
	r := c.r
	want, err := genericOf(d.Body)
	if err != nil {
		return err
	}
	obj := diff.Object{APIVersion: d.APIVersion, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}
	vmName := vmOf(d.Kind, d.Name, want)
	if !exists {
		r.Summary.Added++
		obj.Status = diff.Added
		text, err := c.textOf(d.APIVersion, d.Kind, d.Namespace, d.Name, func() map[string]any { return want })
		if err != nil {
			return err
		}
		obj.Diff = c.unified("", text)
		r.Objects = append(r.Objects, obj)
		if s := c.subject(d.Namespace, vmName); s != nil {
			s.Status = diff.Changed
			s.Changes = append(s.Changes, diff.Change{Field: "object", Name: ref, Effect: diff.EffectCreated, Detail: ref + " is not in the export: Argo CD creates it"})
		}
		return nil
	}
	diffs := Compare(want, lo.Body)
	diffs = append(diffs, LastApplied(want, lo.Body)...)
	if len(diffs) == 0 {
		r.Summary.Unchanged++
		return nil
	}
	r.Summary.Changed++
	obj.Status = diff.Changed
	oldText, err := c.textOf(d.APIVersion, d.Kind, d.Namespace, d.Name, func() map[string]any { return Project(want, lo.Body) })
	if err != nil {
		return err
	}
	newText, err := c.textOf(d.APIVersion, d.Kind, d.Namespace, d.Name, func() map[string]any { return want })
	if err != nil {
		return err
	}
	obj.Diff = c.unified(oldText, newText)
	r.Objects = append(r.Objects, obj)
	var size *verdict
	if d.Kind == "VirtualMachine" && slices.ContainsFunc(diffs, func(df Difference) bool { return sizePath(df.Path) && !df.Removed }) {
		// Only a size difference reads it (classify).
		size = sizeVerdict(c.m, d.Namespace, d.Name, lo.Body)
	}
	for _, df := range diffs {
		ch := classify(d.Kind, df, size)
		ch.Name = ref
		if ch.Effect == diff.EffectRefused {
			r.Refusals = append(r.Refusals, diff.Finding{Rule: "live-" + strings.ToLower(d.Kind), Object: ref, Message: ch.Detail,
				Fix: "change the intent so that it compiles to the live value, or change the live object first"})
		}
		if s := c.subject(d.Namespace, vmName); s != nil {
			s.Status = diff.Changed
			s.Changes = append(s.Changes, ch)
		} else if ch.Field != FieldOwnMetadata && ch.Effect != diff.EffectRefused {
			r.Warnings = append(r.Warnings, diff.Finding{Rule: "live-change", Object: ref, Message: ch.Detail})
		}
	}
	return nil
}

// gone reports a live object virtc no longer writes: left alone, refused
// (a disk of a VM), or pruned by Argo CD.
func (c *comparer) gone(o Object, live []Object) error {
	r := c.r
	ref := o.Ref()
	if owned(o) {
		// A DataVolume or claim that KubeVirt or CDI made for a VM
		// (owner reference): it goes with its owner. Argo CD never
		// prunes an object with owner references itself: its managed
		// live objects are the tracked ones without any (gitops-engine
		// v3.6.1 pkg/cache/cluster.go GetManagedLiveObjs).
		return nil
	}
	how := tracked(o)
	if how == "" {
		r.Warnings = append(r.Warnings, diff.Finding{Rule: "live-unmanaged", Object: ref,
			Message: ref + " is live but virtc does not write it and nothing marks it as Argo CD's (no " + TrackingAnnotation + " annotation, no " + InstanceLabel + " label, not managed by virtc): Argo CD leaves it alone (it prunes only what it tracks)"})
		return nil
	}
	gone := "is live, tracked by Argo CD (" + how + "), and virtc no longer writes it"
	if vm, ok := diskOf(o, live); ok && diff.LabelsOf(o.Body)["virtc.dev/retired"] != "true" {
		r.Refusals = append(r.Refusals, diff.DiskDeleted(o.Kind, o.Namespace, o.Name, vm, gone))
		return nil
	}
	r.Summary.Removed++
	text, err := c.textOf(o.APIVersion, o.Kind, o.Namespace, o.Name, func() map[string]any { return o.Body })
	if err != nil {
		return err
	}
	r.Objects = append(r.Objects, diff.Object{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Status: diff.Removed, Diff: c.unified(text, "")})
	detail := ref + " " + gone + ": Argo CD prunes it (deletes it from the cluster) when the Application prunes"
	if o.Kind == "VirtualMachine" {
		for _, dv := range diff.TemplateNames(o.Body) {
			r.Refusals = append(r.Refusals, diff.VMDiskDeleted(o.Namespace, o.Name, dv))
		}
		detail += "; the VM stops and is gone"
	}
	r.Warnings = append(r.Warnings, diff.Finding{Rule: "live-pruned", Object: ref, Message: detail})
	return nil
}

// genericOf is a desired object's body as JSON values (emit.Generic): a
// body that is already a map is taken to be emit.Generic's output and used
// as it is (virtc import converts each VM once for several comparisons). It
// is only read.
func genericOf(body any) (map[string]any, error) {
	if m, ok := body.(map[string]any); ok {
		return m, nil
	}
	return emit.Generic(body)
}

// Argo CD's resource tracking (argo-cd v3.6.1 util/argo/resource_tracking.go,
// GetAppName): with the default tracking method (annotation, the default
// case) an object belongs to an Application when its tracking-id annotation
// parses as <application>:<group>/<kind>:<namespace>/<name>; with the label
// method, when it has the app.kubernetes.io/instance label.
const (
	TrackingAnnotation = "argocd.argoproj.io/tracking-id"
	InstanceLabel      = "app.kubernetes.io/instance"
)

// tracked says how Argo CD tracks a live object ("" when nothing marks it
// as an Application's): its tracking-id annotation, its instance label, or
// virtc's managed-by label (virtc's objects are applied by Argo CD).
func tracked(o Object) string {
	meta, _ := o.Body["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if id, _ := ann[TrackingAnnotation].(string); trackingID(id) {
		return TrackingAnnotation + " " + id
	}
	labels := diff.LabelsOf(o.Body)
	if app := labels[InstanceLabel]; app != "" {
		return InstanceLabel + " " + app + ", which Argo CD tracks by with the label tracking method; with the default annotation method it would not prune it"
	}
	if labels["app.kubernetes.io/managed-by"] == "virtc" {
		return "app.kubernetes.io/managed-by virtc"
	}
	return ""
}

// trackingID is ParseAppInstanceValue's format check.
func trackingID(id string) bool {
	parts := strings.SplitN(id, ":", 3)
	return len(parts) == 3 && strings.Count(parts[1], "/") == 1 && strings.Count(parts[2], "/") == 1
}

// diskOf reports whether a live DataVolume or claim is a VM's disk, and
// which VM's: its virtc.dev/vm label, or a live VM whose volumes name it.
// Every DataVolume owns a claim of its name (CDI), so a DataVolume is a disk
// when it belongs to a VM; a claim when it does.
func diskOf(o Object, live []Object) (string, bool) {
	if o.Kind != "DataVolume" && o.Kind != "PersistentVolumeClaim" {
		return "", false
	}
	if vm := diff.LabelsOf(o.Body)["virtc.dev/vm"]; vm != "" {
		return vm, true
	}
	for _, v := range live {
		if v.Kind != "VirtualMachine" || v.Namespace != o.Namespace {
			continue
		}
		spec, _ := v.Body["spec"].(map[string]any)
		tmpl, _ := spec["template"].(map[string]any)
		tspec, _ := tmpl["spec"].(map[string]any)
		vols, _ := tspec["volumes"].([]any)
		for _, vol := range vols {
			vm, _ := vol.(map[string]any)
			dv, _ := vm["dataVolume"].(map[string]any)
			pvc, _ := vm["persistentVolumeClaim"].(map[string]any)
			if n, _ := dv["name"].(string); n == o.Name {
				return v.Name, true
			}
			if n, _ := pvc["claimName"].(string); n == o.Name {
				return v.Name, true
			}
		}
	}
	// A DataVolume no VM uses still owns its claim: pruning it deletes
	// the data.
	return "", o.Kind == "DataVolume"
}

// sizePath reports whether a VirtualMachine path is part of its size: the
// instance type, or the CPU and guest memory an explicit shape writes.
func sizePath(p string) bool {
	return p == "spec.instancetype" || strings.HasPrefix(p, "spec.instancetype.") ||
		strings.HasPrefix(p, "spec.template.spec.domain.cpu") || p == "spec.template.spec.domain.memory" || p == "spec.template.spec.domain.memory.guest"
}

// verdict is how a running VM takes a size change.
type verdict struct{ effect, why string }

// sizeVerdict classifies the change from a live VM's size to the size
// virtc gives it with virtc diff's rules (diff.LiveSizeChange, the default
// cluster: LiveUpdate, hot-plug ratio 4).
func sizeVerdict(m *resolve.Model, namespace, name string, liveVM map[string]any) *verdict {
	if m == nil || m.Catalog == nil {
		return nil
	}
	to := modelVM(m, namespace, name)
	if to == nil || to.Size == nil {
		return nil
	}
	var kv kubevirtv1.VirtualMachine
	data, err := json.Marshal(liveVM)
	if err == nil {
		err = json.Unmarshal(data, &kv)
	}
	if err != nil {
		return nil
	}
	from, fromName := liveSize(m.Catalog, kv)
	if from == nil {
		return &verdict{diff.EffectManual, "the live VM's size is neither a catalog instance type nor an explicit CPU and guest memory: virtc cannot say whether KubeVirt hot-plugs the change"}
	}
	what := fmt.Sprintf("size %s (%d vCPUs, %s) → %s (%d vCPUs, %s)", fromName, from.Spec.CPU, from.Spec.Memory.String(), to.SizeName, to.Size.Spec.CPU, to.Size.Spec.Memory.String())
	if rs := kv.Spec.RunStrategy; rs != nil && *rs == kubevirtv1.RunStrategyHalted || kv.Spec.Running != nil && !*kv.Spec.Running {
		return &verdict{diff.EffectNextStart, what + ": the VM is stopped; it starts with the new size"}
	}
	effect, why := diff.LiveSizeChange(diff.DefaultCluster, m.Catalog, from, to)
	return &verdict{effect, what + ": " + why}
}

// modelVM is the VM of a namespace and name in the model (nil if it has
// none; the last of equals, should there be several). The model's tenants
// are in name order and each tenant's VMs too (resolve.Model), so it
// searches instead of scanning: virtc import compares each of thousands of
// VMs with one model.
func modelVM(m *resolve.Model, namespace, name string) *resolve.VM {
	ts := m.Tenants
	i, _ := slices.BinarySearchFunc(ts, namespace, func(t *resolve.Tenant, ns string) int { return cmp.Compare(t.Name, ns) })
	var to *resolve.VM
	for ; i < len(ts) && ts[i].Name == namespace; i++ {
		vms := ts[i].VMs
		j, _ := slices.BinarySearchFunc(vms, name, func(v *resolve.VM, n string) int { return cmp.Compare(v.Name, n) })
		for ; j < len(vms) && vms[j].Name == name; j++ {
			if vms[j].Namespace == namespace {
				to = vms[j]
			}
		}
	}
	return to
}

// liveSize is the size a live VM runs with: the catalog size its instance
// type names, else its explicit sockets × cores × threads and guest memory.
func liveSize(cat *catalog.Catalog, kv kubevirtv1.VirtualMachine) (*api.Size, string) {
	if it := kv.Spec.Instancetype; it != nil {
		if sz, ok := cat.Sizes.Get(it.Name); ok && it.InferFromVolume == "" {
			return sz, it.Name
		}
		return nil, ""
	}
	if kv.Spec.Template == nil {
		return nil, ""
	}
	d := kv.Spec.Template.Spec.Domain
	if d.Memory == nil || d.Memory.Guest == nil {
		return nil, ""
	}
	cpu := int64(1)
	if c := d.CPU; c != nil {
		cpu = max(int64(c.Sockets), 1) * max(int64(c.Cores), 1) * max(int64(c.Threads), 1)
	}
	return &api.Size{Spec: api.SizeSpec{CPU: cpu, Memory: *d.Memory.Guest}}, "explicit"
}

// owned reports whether the live object has an owner (a VM's
// dataVolumeTemplate DataVolume, a DataVolume's claim).
func owned(o Object) bool {
	meta, _ := o.Body["metadata"].(map[string]any)
	refs, _ := meta["ownerReferences"].([]any)
	return len(refs) > 0
}

// vmOf is the VM an object belongs to: the VM itself, or the VM its
// virtc.dev/vm label names.
func vmOf(kind, name string, body map[string]any) string {
	if kind == "VirtualMachine" {
		return name
	}
	meta, _ := body["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	vm, _ := labels["virtc.dev/vm"].(string)
	return vm
}

// classify says what one difference does to the running VM.
func classify(kind string, d Difference, size *verdict) diff.Change {
	ch := diff.Change{Field: d.Path, From: short(d.Live), To: short(d.Desired)}
	detail := func(effect, why string) diff.Change {
		ch.Effect = effect
		if d.Removed {
			why = "removed by kubectl apply's three-way merge (the live object's " + LastAppliedAnnotation + " has it, virtc's manifest does not; remove the annotation before the first sync, or sync with ServerSideApply=true): " + why
		}
		ch.Detail = fmt.Sprintf("%s: %s → %s: %s", d.Path, cmp.Or(ch.From, "(absent)"), cmp.Or(ch.To, "(absent)"), why)
		return ch
	}
	if d.Removed {
		ch.Field = "last-applied"
	}
	if key, ok := metadataKey(d.Path); ok {
		why := "metadata only"
		if strings.HasPrefix(d.Path, "spec.template.") {
			// KubeVirt v1.8.4 pkg/virt-controller/watch/vm/vm.go sets
			// RestartRequired on changes of the template's spec only.
			why = "the next VM instance carries it; no restart required"
		}
		if ownMetadata(key) && !d.Removed {
			ch.Field = FieldOwnMetadata
			return detail(diff.EffectNone, "virtc's own label or annotation; "+why)
		}
		if !d.Removed {
			ch.Field = "labels"
		}
		return detail(diff.EffectNone, why)
	}
	switch kind {
	case "VirtualMachine":
		switch {
		case d.Path == "spec.runStrategy":
			if d.Desired == "Halted" {
				return detail(diff.EffectStops, "the VM stops")
			}
			return detail(diff.EffectStarts, "the run strategy changes; a stopped VM starts")
		case strings.HasPrefix(d.Path, "spec.template.metadata"):
			// KubeVirt v1.8.4 pkg/virt-controller/watch/vm/vm.go sets
			// RestartRequired on template spec changes only.
			return detail(diff.EffectNextStart, "the next VM instance carries it; no restart is required")
		case sizePath(d.Path) && !d.Removed:
			if size == nil {
				return detail(diff.EffectManual, "virtc does not know the VM's live or desired size, so cannot say whether KubeVirt hot-plugs it")
			}
			return detail(size.effect, size.why)
		case strings.HasPrefix(d.Path, "spec.dataVolumeTemplates") && d.Removed:
			return detail(diff.EffectNone, "KubeVirt keeps the DataVolume (the VM still owns it); the VM no longer re-creates it")
		case strings.HasPrefix(d.Path, "spec.dataVolumeTemplates"):
			return detail(diff.EffectRefused, "KubeVirt does not change an existing DataVolume from its template and CDI refuses every change to a DataVolume's spec")
		case strings.HasPrefix(d.Path, "spec."):
			return detail(diff.EffectRestart, "KubeVirt sets RestartRequired; the change applies at the next restart")
		}
	case "PersistentVolumeClaim":
		if d.Path == "spec.resources.requests.storage" {
			if grows(d) {
				return detail(diff.EffectOnline, "the claim grows; the running guest sees the larger disk")
			}
			return detail(diff.EffectRefused, "a claim cannot shrink")
		}
		if strings.HasPrefix(d.Path, "spec.") {
			return detail(diff.EffectRefused, "the claim's spec is immutable: it would have to be re-created, data lost")
		}
	case "DataVolume":
		if strings.HasPrefix(d.Path, "spec.") {
			return detail(diff.EffectRefused, "CDI refuses every change to a DataVolume's spec (v1.65.0 pkg/apiserver/webhooks/datavolume-validate.go)")
		}
	case "NetworkAttachmentDefinition":
		return detail(diff.EffectNextStart, "Multus reads the attachment when a VM's pod starts; running VMs keep theirs")
	case "UserDefinedNetwork":
		if strings.HasPrefix(d.Path, "spec.") {
			// ovn-kubernetes go-controller/pkg/crd/userdefinednetwork/v1/udn.go:
			// self == oldSelf on topology and layer2.
			return detail(diff.EffectRefused, "OVN-Kubernetes' CRD refuses any change of a UserDefinedNetwork's topology or layer2 (it would have to be deleted, with every VM on it stopped)")
		}
	case "ClusterUserDefinedNetwork":
		if strings.HasPrefix(d.Path, "spec.namespaceSelector") {
			// ovn-kubernetes go-controller/pkg/clustermanager/userdefinednetwork/controller.go
			// (the namespace tracker, deleteNAD once no pod uses the network).
			return detail(diff.EffectNone, "OVN-Kubernetes writes the network's attachment in the namespaces the selector adds and deletes it from the ones it drops once no pod there uses it")
		}
		if strings.HasPrefix(d.Path, "spec.") {
			// ovn-kubernetes go-controller/pkg/crd/userdefinednetwork/v1/cudn.go:
			// self == oldSelf on topology, layer2, localnet, transport, uplinks.
			return detail(diff.EffectRefused, "OVN-Kubernetes' CRD refuses any change of a ClusterUserDefinedNetwork's network (it would have to be deleted, with every VM on it stopped)")
		}
	}
	return detail(diff.EffectManual, "virtc does not know what this changes")
}

// LastAppliedAnnotation is where `kubectl apply` (and so Argo CD's default,
// client-side sync) keeps the configuration it last applied.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// LastApplied lists the fields that `kubectl apply` of desired would
// delete from a live object that someone created with `kubectl apply`:
// its three-way merge removes what the last applied configuration had and
// the new one lacks (k8s.io/kubectl pkg/cmd/apply, CreateThreeWayMergePatch
// / jsonmergepatch for custom resources). Argo CD syncs that way unless the
// Application or the object says ServerSideApply=true.
func LastApplied(desired, live map[string]any) []Difference {
	meta, _ := live["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	text, _ := ann[LastAppliedAnnotation].(string)
	if text == "" {
		return nil
	}
	last, err := generic([]byte(text))
	if err != nil || last == nil {
		return nil
	}
	var out []Difference
	for _, p := range removed("", last, desired) {
		out = append(out, Difference{Path: p.path, Live: p.value, Removed: true})
	}
	return out
}

type removal struct {
	path  string
	value any
}

func removed(path string, last, desired map[string]any) []removal {
	var out []removal
	for _, k := range sortedKeys(last) {
		if k == "apiVersion" || k == "kind" || last[k] == nil {
			continue
		}
		p := JoinPath(path, k)
		d, ok := desired[k]
		lm, lIsMap := last[k].(map[string]any)
		dm, dIsMap := d.(map[string]any)
		switch {
		case !ok && lIsMap && len(lm) == 0:
		case !ok:
			out = append(out, removal{p, last[k]})
		case lIsMap && dIsMap:
			out = append(out, removed(p, lm, dm)...)
		}
	}
	return out
}

// metadataKey returns the label or annotation key of a path in the
// object's or the VM template's metadata.
func metadataKey(path string) (string, bool) {
	for _, prefix := range []string{"metadata.labels", "metadata.annotations", "spec.template.metadata.labels", "spec.template.metadata.annotations"} {
		rest, ok := strings.CutPrefix(path, prefix)
		if !ok {
			continue
		}
		if strings.HasPrefix(rest, "[\"") {
			return strings.TrimSuffix(strings.TrimPrefix(rest, "[\""), "\"]"), true
		}
		if strings.HasPrefix(rest, ".") {
			return rest[1:], true
		}
		if rest == "" {
			return "", false
		}
	}
	return "", false
}

func grows(d Difference) bool {
	want, errA := resource.ParseQuantity(fmt.Sprint(d.Desired))
	have, errB := resource.ParseQuantity(fmt.Sprint(d.Live))
	return errA == nil && errB == nil && want.Cmp(have) > 0
}

func short(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case map[string]any, []any:
		s := fmt.Sprintf("%v", x)
		if len(s) > 80 {
			s = s[:77] + "..."
		}
		return s
	}
	return fmt.Sprint(v)
}

// Project is the live object restricted to the fields virtc sets (atomic
// lists whole), for a readable diff against the desired object.
func Project(desired, live map[string]any) map[string]any {
	out := map[string]any{}
	for k, d := range desired {
		l, ok := live[k]
		if !ok || l == nil {
			continue
		}
		dm, dIsMap := d.(map[string]any)
		lm, lIsMap := l.(map[string]any)
		if dIsMap && lIsMap {
			out[k] = Project(dm, lm)
			continue
		}
		out[k] = l
	}
	return out
}

func manifest(apiVersion, kind, namespace, name string, body map[string]any) (string, error) {
	data, err := emit.Write([]emit.Object{{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name, Body: body}})
	return string(data), err
}
