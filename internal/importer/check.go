package importer

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/live"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/internal/yamlorder"
)

// compileVM compiles one VM's intent with its tenant, the catalog entries it
// needs and the user's catalog.
func (im *importer) compileVM(vm *api.VM, catalogDocs []*source.Doc, opts catalog.Options) (*compiled, []string) {
	c := im.compile(vm, catalogDocs, opts)
	var why []string
	for _, d := range c.errs {
		why = append(why, fmt.Sprintf("the intent does not compile: %s: %s", d.Field, d.Message))
	}
	return c, why
}

// policyRefusals are the guardrails' refusals (a diagnostic with a Rule)
// of the compile of vm, a VM refused while it was mapped: vm lacks what
// could not be mapped, so the compile's other errors may only say that
// again, but a guardrail judges what is there (a secret in Git, node
// placement, an excluded device, a network the tenant may not use).
func (im *importer) policyRefusals(vm *api.VM, catalogDocs []*source.Doc, opts catalog.Options) []string {
	var why []string
	for _, d := range im.compile(vm, catalogDocs, opts).errs {
		if d.Rule != "" {
			why = append(why, fmt.Sprintf("the intent would not compile either: %s: %s", d.Field, d.Message))
		}
	}
	return why
}

// compileVMDiags is compileVM with the fields of the errors only.
func (im *importer) compileVMDiags(vm *api.VM, catalogDocs []*source.Doc, opts catalog.Options) (*compiled, []string) {
	c := im.compile(vm, catalogDocs, opts)
	var fields []string
	for _, d := range c.errs {
		fields = append(fields, d.Field)
	}
	return c, fields
}

// compiled is one VM's compile: its objects (vmObjects), the model they
// were rendered from and the errors (no objects then).
type compiled struct {
	key  string
	objs []emit.Object
	// model is the compile's model (live.Diff classifies a size change
	// with its catalog).
	model *resolve.Model
	errs  []diag.Diagnostic
	// genericObjs are objs as JSON values (generic).
	genericObjs []emit.Object
	// nads are the NetworkAttachmentDefinitions the compile renders in the
	// VM's namespace (reportNADs compares those of its networks with the
	// live ones).
	nads []emit.Object
}

// generic are the VM's objects with their bodies as JSON values
// (emit.Generic), made once: live.Changes and notCarried read them.
func (c *compiled) generic() ([]emit.Object, error) {
	if c.genericObjs == nil && len(c.objs) > 0 {
		out := make([]emit.Object, len(c.objs))
		for i, o := range c.objs {
			body, err := emit.Generic(o.Body)
			if err != nil {
				return nil, err
			}
			o.Body = body
			out[i] = o
		}
		c.genericObjs = out
	}
	return c.genericObjs, nil
}

// intentFile is one file of a compile's inputs: its path and the JSON that
// marshal writes as YAML.
type intentFile struct {
	rel  string
	json []byte
}

func jsonOf(v any) []byte {
	js, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return js
}

// parseFiles parses intent files as the YAML marshal writes.
func parseFiles(files []intentFile, diags *diag.List) []*source.Doc {
	var docs []*source.Doc
	for _, f := range files {
		data, err := yamlorder.JSONToYAML(f.json)
		if err != nil {
			panic(err)
		}
		docs = append(docs, source.Parse(f.rel, f.rel, data, diags)...)
	}
	return docs
}

// compileOptions are the options of every compile of an import: the
// gate's refusals are the build's (the import compares manifests).
func compileOptions(opts catalog.Options) compile.Options {
	return compile.Options{Catalog: opts, GateWarnings: true, ObjectsOnly: true}
}

// compile compiles the VM being checked (im.cur) as if it were imported
// alone: its intent, its Tenant allowing its own additional networks, the
// catalog entries it needs as they were when it was mapped, the user's
// catalog. compileAll's compile of the VM is that compile's outcome when
// it has one.
func (im *importer) compile(vm *api.VM, catalogDocs []*source.Doc, opts catalog.Options) *compiled {
	c := im.cur
	if c.batch != nil {
		return c.batch
	}
	var files []intentFile
	var key strings.Builder
	add := func(rel string, v any) {
		// The key is made of the JSON that marshal writes as YAML: the
		// same JSON is the same YAML, and only a compile needs the YAML.
		js := jsonOf(v)
		files = append(files, intentFile{rel, js})
		fmt.Fprintf(&key, "%s\x00%d\x00%s", rel, len(js), js)
	}
	for _, f := range c.pending {
		add(path.Join("catalog", f+".yaml"), c.entries[f])
	}
	add(path.Join(vm.Metadata.Namespace, "tenant.yaml"), tenant(vm.Metadata.Namespace, c.nets))
	add(path.Join(vm.Metadata.Namespace, vm.Metadata.Name+".yaml"), vm)
	// A VM is compiled with the same files up to three times (its deferred
	// changes, its check, what it does not carry): the last compile is
	// kept and reused while its inputs are byte for byte the same (the
	// catalog docs and options do not change during an import).
	if im.last != nil && im.last.key == key.String() {
		return im.last
	}
	diags := &diag.List{}
	docs := append(slices.Clone(catalogDocs), parseFiles(files, diags)...)
	res := compile.Compile(docs, compileOptions(opts), diags)
	im.last = &compiled{key: key.String(), objs: vmObjects(res.Objects, vm), model: res.Model, errs: diags.Errors(), nads: namespaceNADs(res.Objects)[vm.Metadata.Namespace]}
	return im.last
}

// liveOf are the live objects of the export that desired objects name
// (kind, namespace and name), in export order: all that live.Diff needs to
// report the changes of one VM's objects, without reading (and printing as
// removed) the rest of a fleet's export for every VM.
func (im *importer) liveOf(desired []emit.Object) []live.Object {
	if im.byRef == nil {
		im.byRef = map[string][]int{}
		for i, o := range im.objs {
			im.byRef[o.Ref()] = append(im.byRef[o.Ref()], i)
		}
	}
	var idx []int
	for _, d := range desired {
		idx = append(idx, im.byRef[d.Kind+" "+d.Namespace+"/"+d.Name]...)
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	out := make([]live.Object, len(idx))
	for i, x := range idx {
		out[i] = im.objs[x]
	}
	return out
}

// vmObjects are the compiled objects of one VM (the VM and its disks).
func vmObjects(objs []emit.Object, vm *api.VM) []emit.Object {
	var out []emit.Object
	for _, o := range objs {
		if o.Namespace != vm.Metadata.Namespace {
			continue
		}
		if o.Kind == "VirtualMachine" && o.Name == vm.Metadata.Name {
			out = append(out, o)
		}
		if o.Kind == "PersistentVolumeClaim" && strings.HasPrefix(o.Name, vm.Metadata.Name+"-") {
			out = append(out, o)
		}
	}
	return out
}

// namespaceNADs are a compile's NetworkAttachmentDefinitions by namespace.
func namespaceNADs(objs []emit.Object) map[string][]emit.Object {
	out := map[string][]emit.Object{}
	for _, o := range objs {
		if o.Kind == "NetworkAttachmentDefinition" {
			out[o.Namespace] = append(out[o.Namespace], o)
		}
	}
	return out
}

// check compiles the intent and compares it with the live objects: any
// difference but virtc's own labels and annotations refuses the VM.
//
// changes are deferred changes of the VM: the intent is compared with the
// live VM as it will be once they apply.
func (im *importer) check(vm *api.VM, o live.Object, catalogDocs []*source.Doc, opts catalog.Options, changes []deferral) []string {
	res, why := im.compileVM(vm, catalogDocs, opts)
	if len(why) > 0 {
		return why
	}
	desired, err := res.generic()
	if err != nil {
		return []string{err.Error()}
	}
	rep, err := live.Changes(desired, withDeferred(im.liveOf(desired), o, changes), res.model)
	if err != nil {
		return []string{err.Error()}
	}
	for _, s := range rep.VMs {
		for _, ch := range s.Changes {
			if ch.Field == "last-applied" {
				// Undone by removing the annotation before the first sync.
				continue
			}
			if ch.Field != live.FieldOwnMetadata {
				why = append(why, fmt.Sprintf("%s: the intent would change the live object: %s (%s)", ch.Name, ch.Detail, ch.Effect))
			}
		}
	}
	if len(why) == 0 {
		// Never dropped without refusal: what the guest would lose if the
		// VM were rebuilt from Git.
		im.cur.notCarried = im.notCarried(vm, withDeferred([]live.Object{o}, o, changes)[0], catalogDocs, opts)
		for _, it := range im.cur.notCarried {
			if guestVisible(it.Path, o) {
				why = append(why, fmt.Sprintf("%s: the intent cannot carry it, and the guest boots or sees it: a VM rebuilt from Git would differ (virtc does not write it; keep the VM out of Git, or remove the field from the VM first if the guest does without it)", it.Path))
			}
			if placement(it.Path) {
				why = append(why, fmt.Sprintf("%s: node placement beyond the catalog's worker pools: the tenant's guardrails admit a pool's node selector and tolerations only, and no affinity of the VM's own (000 Authorization and lifecycle boundaries: no arbitrary node placement), so Argo CD's apply of the adopted VM, which keeps it, would be denied (move the VM to a worker pool of the catalog first, or keep it out of Git)", it.Path))
			}
		}
	}
	if len(why) == 0 {
		im.cur.nads = res.nads
		if im.used == nil {
			im.used = map[string]bool{}
		}
		for _, f := range im.cur.pending {
			im.used[f] = true
		}
		if im.refs == nil {
			im.refs = map[string]bool{}
		}
		for _, r := range im.cur.refs {
			im.refs[r] = true
		}
	}
	return why
}

// setByCluster are live fields that KubeVirt, CDI or the API server set:
// not written by anyone in Git, and left alone by virtc's manifests.
var setByCluster = []string{
	"metadata.finalizers",
	`metadata.annotations["kubevirt.io/latest-observed-api-version"]`,
	`metadata.annotations["kubevirt.io/storage-observed-api-version"]`,
	`metadata.annotations["kubemacpool.io/transaction-timestamp"]`,
	"spec.instancetype.revisionName",
	"spec.preference.revisionName",
	"spec.template.metadata.creationTimestamp",
	`spec.template.metadata.annotations["kubevirt.io/pci-topology-version"]`,
}

// guestVisible reports whether a live VM path that the intent does not
// carry changes how the guest boots or what it sees: the domain (firmware,
// features, devices, clock, CPU, memory) and the guest's host and domain
// name, but not the pod's resources, nor autoattachPodInterface of a VM
// that lists its interfaces (KubeVirt v1.8.4 attaches the pod network
// only to a VM without any: pkg/network/vmispec/defaults.go
// SetDefaultNetworkInterface).
func guestVisible(p string, o live.Object) bool {
	if strings.HasPrefix(p, "spec.template.spec.domain.resources") {
		return false
	}
	if kubevirtDefault(p, o) {
		return false
	}
	if p == "spec.template.spec.domain.devices.autoattachPodInterface" {
		return len(listAt(o.Body, "spec", "template", "spec", "domain", "devices", "interfaces")) == 0
	}
	return strings.HasPrefix(p, "spec.template.spec.domain.") || p == "spec.template.spec.subdomain" || p == "spec.template.spec.hostname"
}

// defaultTrue are the device switches whose true is what an unset one
// means to KubeVirt v1.8.4, which attaches the device unless the field is
// false: the graphics device and its input devices
// (pkg/virt-launcher/virtwrap/converter/compute/graphics.go and
// input_device.go), the serial console (converter.go,
// pkg/virt-controller/services/serialconsolelog.go) and the memory
// balloon (compute/balloon.go). Forklift's OpenStack adapter writes
// autoattachGraphicsDevice on every VM (forklift v2.12.5
// pkg/controller/plan/adapter/openstack/builder.go mapVideo: true unless
// the image's hw_video_model is none).
var defaultTrue = []string{
	"spec.template.spec.domain.devices.autoattachGraphicsDevice",
	"spec.template.spec.domain.devices.autoattachSerialConsole",
	"spec.template.spec.domain.devices.autoattachMemBalloon",
}

// kubevirtDefault reports a live field whose value is what KubeVirt does
// without it: the VM virtc writes, which leaves it unset, boots the same.
func kubevirtDefault(p string, o live.Object) bool {
	if !slices.Contains(defaultTrue, p) {
		return false
	}
	var cur any = o.Body
	for _, k := range strings.Split(p, ".") {
		m, _ := cur.(map[string]any)
		cur = m[k]
	}
	v, ok := cur.(bool)
	return ok && v
}

// placement reports a live VM path that the tenant's placement guardrail
// judges (internal/render validatingadmissionpolicy.go, rule placement): a node
// selector, a toleration, a node or pod affinity. Client-side apply keeps
// such a field the intent does not write on the VM, where the guardrail
// refuses it (test/conformance TestImportAdoption).
func placement(p string) bool {
	for _, prefix := range []string{"spec.template.spec.nodeSelector", "spec.template.spec.tolerations", "spec.template.spec.affinity.nodeAffinity", "spec.template.spec.affinity.podAffinity"} {
		if p == prefix || strings.HasPrefix(p, prefix+".") || strings.HasPrefix(p, prefix+"[") {
			return true
		}
	}
	return false
}

// notCarried lists the live VM's fields the compiled VM does not write.
func (im *importer) notCarried(vm *api.VM, o live.Object, catalogDocs []*source.Doc, opts catalog.Options) []Item {
	res, _ := im.compileVM(vm, catalogDocs, opts)
	var desired map[string]any
	objs, _ := res.generic()
	for _, d := range objs {
		if d.Kind == "VirtualMachine" {
			desired = d.Body.(map[string]any)
		}
	}
	ref := o.Namespace + "/" + o.Name
	var items []Item
	if len(live.LastApplied(desired, o.Body)) > 0 {
		items = append(items, Item{VM: ref, Path: `metadata.annotations["` + live.LastAppliedAnnotation + `"]`, Action: true,
			Why: fmt.Sprintf("BEFORE THE FIRST SYNC: oc annotate vm/%s -n %s %s- (the VM was created with kubectl apply: Argo CD's client-side apply would delete the fields of that configuration virtc does not write; ServerSideApply=true alone does the same on Argo CD 3.x, whose client-side-apply migration hands kubectl's fields to its own manager: add ClientSideApplyMigration=false if you sync server-side)", o.Name, o.Namespace, live.LastAppliedAnnotation)})
	}
	for _, p := range uncovered("", o.Body, desired) {
		if slices.Contains(setByCluster, p) || p == `metadata.annotations["`+live.LastAppliedAnnotation+`"]` {
			continue
		}
		why := "not in the intent; it stays on the live VM as it is (virtc's manifest does not set it), but Git does not have it"
		switch {
		case kubevirtDefault(p, o):
			why = "true is KubeVirt's default (the device is attached unless the field is false): the VM virtc writes, without it, boots the same; it stays on the live VM"
		case strings.HasPrefix(p, "spec.dataVolumeTemplates"):
			why = "the root disk's template: the intent refers to its DataVolume by name (existingRootDisk); the template stays on the live VM, so deleting the VM still deletes the DataVolume"
		case strings.HasPrefix(p, "metadata.labels") || strings.HasPrefix(p, "metadata.annotations") || strings.HasPrefix(p, "spec.template.metadata"):
			why = "a label or annotation of another tool: it stays on the live object; add it to the intent's metadata if virtc should own it"
		}
		items = append(items, Item{VM: ref, Path: p, Why: why})
	}
	return items
}

// uncovered are the paths of live maps' keys that desired does not have
// (a list, or a value, that desired has covers everything under it).
func uncovered(prefix string, have, desired map[string]any) []string {
	var out []string
	for _, k := range sortedKeys(have) {
		if k == "apiVersion" || k == "kind" || have[k] == nil {
			continue
		}
		p := live.JoinPath(prefix, k)
		if m, ok := have[k].(map[string]any); ok && len(m) == 0 {
			// An empty map is a setting of its own (bootloader.bios: {},
			// features.smm: {}, devices.rng: {}), except an empty
			// resources (no requests or limits).
			if _, ok := desired[k]; !ok && k != "resources" {
				out = append(out, p)
			}
			continue
		}
		d, ok := desired[k]
		lm, lIsMap := have[k].(map[string]any)
		if !ok && lIsMap {
			out = append(out, uncovered(p, lm, map[string]any{})...)
			continue
		}
		if !ok {
			out = append(out, p)
			continue
		}
		dm, dIsMap := d.(map[string]any)
		if lIsMap && dIsMap {
			out = append(out, uncovered(p, lm, dm)...)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// Report is the import report as text.
func (r Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "virtc import: %d VM(s) imported, %d refused\n", len(r.Imported), len(r.Refused))
	// Each VM's items, in their order (not a scan of every VM's items
	// for each VM: a fleet has tens of thousands).
	byVM := map[string][]Item{}
	for _, it := range r.NotCarried {
		byVM[it.VM] = append(byVM[it.VM], it)
	}
	for _, v := range r.Imported {
		fmt.Fprintf(&b, "\nimported %s\n", v)
		items := byVM[v]
		for _, it := range items {
			if it.Action {
				fmt.Fprintf(&b, "  action: %s: %s\n", it.Path, it.Why)
			}
		}
		for _, it := range items {
			if it.Deferred {
				fmt.Fprintf(&b, "  deferred change: %s: %s\n", it.Path, it.Why)
			}
		}
		for _, it := range items {
			if !it.Action && !it.Deferred {
				fmt.Fprintf(&b, "  not carried: %s: %s\n", it.Path, it.Why)
			}
		}
	}
	for _, rf := range r.Refused {
		fmt.Fprintf(&b, "\nrefused %s\n", rf.VM)
		for _, why := range rf.Reasons {
			fmt.Fprintf(&b, "  %s\n", why)
		}
	}
	reportSection(&b, "quota (VMs of these namespaces are refused and keep running: the Tenant's quota counts them from their live spec, so the compiled ResourceQuota is never below what the namespace's live VMs use; lower it only after the refused VMs are gone or imported)", r.Quotas)
	reportSection(&b, "changed at a VM's next start (the NetworkAttachmentDefinitions of the imported VMs' networks, as virtc writes them from their NetworkProfiles; Multus reads a NAD when a VM's pod starts, so running VMs keep theirs and a VM started after the first sync gets virtc's: review each difference before merging)", r.NextStart)
	reportSection(&b, "not imported (no imported VM uses them; virtc leaves them alone)", r.Left)
	return b.String()
}

// reportSection writes a heading and its lines, indented, when there are
// any.
func reportSection(b *strings.Builder, heading string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", heading)
	for _, l := range lines {
		fmt.Fprintf(b, "  %s\n", l)
	}
}

// listAt is the list at a path of a live object (nil if there is none).
func listAt(m map[string]any, path ...string) []any {
	var cur any = m
	for _, k := range path {
		mm, _ := cur.(map[string]any)
		cur = mm[k]
	}
	l, _ := cur.([]any)
	return l
}
