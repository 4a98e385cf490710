// Package importer turns live VMs (an export of `oc get vm,dv,pvc,nad -o
// yaml`) into virtc intents that compile to the objects already running:
// same names, disks, firmware UUID and serial, MAC addresses. Every VM is
// checked by compiling its intent and comparing the result with the live
// objects (package live): a VM whose compiled form differs in more than
// virtc's own labels and annotations is refused with the differences as
// reasons, so an import never yields an intent that would restart, re-create
// or cut off a VM. What the intent does not carry (fields virtc does not
// write, which stay on the live object) is listed in the report, path by
// path.
package importer

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	kubevirtv1 "kubevirt.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/live"
	"github.com/virtc/virtc/internal/sizing"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/internal/yamlorder"
)

// Result is what an import writes and reports.
type Result struct {
	// Files are the intent and catalog files by path relative to the output
	// directory, in path order.
	Files []File
	// Imported lists the VMs written, "namespace/name".
	Imported []string
	// Refused are the VMs not imported, each with its reasons.
	Refused []Refusal
	// NotCarried are the live fields the intents do not carry.
	NotCarried []Item
	// Quotas say, per namespace in which VMs are refused, the quota its
	// Tenant states so that the refused VMs keep fitting.
	Quotas []string
	// Left are the exported objects that belong to no imported VM
	// ("Kind namespace/name"): not imported, and not touched.
	Left []string
	// NextStart are the differences between the live
	// NetworkAttachmentDefinitions of the imported VMs' networks and those
	// virtc writes from their NetworkProfiles, one line each: Multus reads
	// a NAD when a VM's pod starts, so they reach a VM at its next start,
	// never a running one (live.Changes classifies them so).
	NextStart []string
}

// File is one written file.
type File struct {
	Path string
	Data []byte
}

// Refusal is a VM that cannot be imported faithfully.
type Refusal struct {
	VM      string
	Reasons []string
}

// Item is one live field an intent does not carry.
type Item struct {
	VM   string
	Path string
	// Why says what happens to it.
	Why string
	// Action: something to do on the cluster before the first sync.
	Action bool
	// Deferred: a change of the live VM the intent makes (the
	// deferred-change mode, Options.DeferChanges).
	Deferred bool
}

// apiVersion of intents.
const apiVersion = "virtc.dev/v1alpha1"

// Import maps the live objects to intents, compiled and compared with the
// live objects against the catalog (the embedded one unless opts say
// otherwise, plus user catalog docs).
//
// Each VM is judged as if it were imported alone: its intent compiled with
// its Tenant (allowing its own additional networks) and the catalog entries
// it needs, as they were when it was mapped. That takes one compile of all
// the VMs together (compileAll): a VM that compiles there without any error
// compiles alone to the same objects; only VMs that are refused, or whose
// batch has an error, are compiled one by one.
func Import(objs []live.Object, catalogDocs []*source.Doc, opts catalog.Options, mode Options) Result {
	return importVMs(objs, catalogDocs, opts, mode, true)
}

// importVMs is Import; batch false compiles every VM alone (the tests
// hold both ways equal).
func importVMs(objs []live.Object, catalogDocs []*source.Doc, opts catalog.Options, mode Options, batch bool) Result {
	diags := &diag.List{}
	cat := catalog.Build(decode.Decode(catalogDocs, false, diags), opts, diags)
	im := &importer{cat: cat, objs: objs, newCatalog: map[string]any{}}
	var res Result
	namespaces := map[string]bool{}
	// nets are the additional networks the imported VMs of each namespace
	// use: its Tenant allows them.
	nets := map[string][]string{}
	// Mapping a VM reads the export and the catalog only, never another
	// VM's compile: every VM is mapped first, with what it needs recorded
	// as it was then (mapVM), and then compiled and checked in export
	// order.
	var cands []*candidate
	// unnamed are the VMs refused for their namespace or name (pathNames),
	// whose namespace gets no Tenant either.
	unnamed := map[string]bool{}
	for _, o := range objs {
		if o.Kind != "VirtualMachine" {
			continue
		}
		if why := pathNames(o); why != "" {
			cands = append(cands, &candidate{o: o, reasons: []string{why}})
			unnamed[o.Namespace+"/"+o.Name] = true
			continue
		}
		cands = append(cands, im.mapVM(o))
	}
	if batch {
		im.compileAll(cands, catalogDocs, opts)
	}
	for _, c := range cands {
		im.cur = c
		o, vm, reasons := c.o, c.vm, c.reasons
		ref := o.Namespace + "/" + o.Name
		var changes []deferral
		if len(reasons) == 0 && mode.DeferChanges {
			changes = im.deferChanges(vm, catalogDocs, opts)
		}
		if d, ok := runningForm(o); ok && len(reasons) == 0 {
			changes = append(changes, d)
		}
		if len(reasons) == 0 {
			reasons = im.check(vm, o, catalogDocs, opts, changes)
		} else if vm != nil && !unnamed[ref] {
			// All refusals at once: what policy says of the part that
			// could be mapped, so that an owner does not learn of it
			// only once the mapping's refusals are fixed.
			reasons = append(reasons, im.policyRefusals(vm, catalogDocs, opts)...)
		}
		if len(reasons) > 0 {
			res.Refused = append(res.Refused, Refusal{VM: ref, Reasons: reasons})
			continue
		}
		namespaces[o.Namespace] = true
		nets[o.Namespace] = append(nets[o.Namespace], c.nets...)
		res.Imported = append(res.Imported, ref)
		data := c.yaml
		if data == nil || len(changes) > 0 {
			data = marshal(vm)
		}
		res.Files = append(res.Files, File{Path: path.Join(o.Namespace, o.Name+".yaml"), Data: data})
		im.networkAttachments(c.nads, c.nets)
		res.NotCarried = append(res.NotCarried, deferredItems(ref, changes)...)
		res.NotCarried = append(res.NotCarried, c.notCarried...)
	}
	refusedIn, refusedVM := map[string]bool{}, map[string]bool{}
	for _, rf := range res.Refused {
		if unnamed[rf.VM] {
			continue
		}
		ns, _, _ := strings.Cut(rf.VM, "/")
		refusedIn[ns], refusedVM[rf.VM] = true, true
		// A namespace whose VMs are all refused still gets its Tenant
		// (with a quota that covers them): the namespace comes under Git
		// first, its VMs as they are fixed and imported again.
		namespaces[ns] = true
	}
	for _, ns := range slices.Sorted(maps.Keys(namespaces)) {
		t := tenant(ns, nets[ns])
		if refusedIn[ns] {
			q, hotplug, unknown := im.namespaceQuota(ns, refusedVM)
			if len(unknown) > 0 {
				res.dropNamespace(ns, fmt.Sprintf("namespace %s: VMs of it are refused and the quota of its Tenant could not cover them (%s): virtc would compile a ResourceQuota below what the live VMs use, and no VM pod of the namespace could start", ns, strings.Join(unknown, "; ")))
				continue
			}
			t.Spec.Quota = q
			line := fmt.Sprintf("%s: spec.quota covers all %d live VMs of the namespace, the refused ones included (cpu %d, memory %s, storage %s)",
				ns, *q.VMs, *q.CPU, q.Memory.String(), q.Storage.String())
			if hotplug > 0 {
				a := sizing.KubeVirt.Attachment
				line += fmt.Sprintf("; cpu and memory hold %d hot-plug attachment pods of %s CPU and %s memory (those of the refused VMs with hot-plugged volumes and of their migration targets, and a spare for a change of volumes)",
					hotplug, resource.NewMilliQuantity(a.MilliCPU, resource.DecimalSI), resource.NewQuantity(a.Memory, resource.DecimalSI))
			}
			res.Quotas = append(res.Quotas, line)
		}
		res.Files = append(res.Files, File{Path: path.Join(ns, "tenant.yaml"), Data: marshal(t)})
	}
	for _, name := range slices.Sorted(maps.Keys(im.newCatalog)) {
		if im.used[name] {
			res.Files = append(res.Files, File{Path: path.Join("catalog", name+".yaml"), Data: marshal(im.newCatalog[name])})
		}
	}
	slices.SortFunc(res.Files, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	res.Left = im.left(res.Imported)
	res.NextStart = im.nextStart()
	return res
}

// pathNames says why a live VM's namespace or name cannot name its files,
// or "" when both can. They become the paths of its intent
// (NAMESPACE/NAME.yaml) and its Tenant (NAMESPACE/tenant.yaml) under
// --out, and an export is input like any other: a namespace .., or a name
// with a /, would write outside it. Kubernetes names a namespace with a
// DNS-1123 label and a VirtualMachine with a DNS-1123 subdomain, neither
// of which can.
func pathNames(o live.Object) string {
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Sprintf("metadata.namespace %q: not a Kubernetes namespace name (a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit); virtc writes no file for it", o.Namespace)
	}
	if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
		return fmt.Sprintf("metadata.name %q: not a VirtualMachine name (a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit); virtc writes no file for it", o.Name)
	}
	return ""
}

// networkAttachments records the NetworkAttachmentDefinitions an imported
// VM's compile renders for its additional networks (the first of each).
func (im *importer) networkAttachments(nads []emit.Object, nets []string) {
	if im.nads == nil {
		im.nads = map[string]emit.Object{}
	}
	for _, o := range nads {
		ref := o.Namespace + "/" + o.Name
		if _, ok := im.nads[ref]; !ok && slices.Contains(nets, o.Name) {
			im.nads[ref] = o
		}
	}
}

// nextStart compares the recorded NetworkAttachmentDefinitions with the
// live ones of the export, as virtc diff --live does: what differs besides
// virtc's own labels and annotations, which a VM gets at its next start.
func (im *importer) nextStart() []string {
	var out []string
	for _, ref := range slices.Sorted(maps.Keys(im.nads)) {
		desired, err := emit.Generic(im.nads[ref].Body)
		if err != nil {
			out = append(out, fmt.Sprintf("NetworkAttachmentDefinition %s: %v", ref, err))
			continue
		}
		o := im.nads[ref]
		o.Body = desired
		rep, err := live.Changes([]emit.Object{o}, im.liveOf([]emit.Object{o}), nil)
		if err != nil {
			out = append(out, fmt.Sprintf("NetworkAttachmentDefinition %s: %v", ref, err))
			continue
		}
		for _, w := range rep.Warnings {
			if w.Rule == "live-change" {
				out = append(out, w.Object+": "+w.Message)
			}
		}
	}
	return out
}

type importer struct {
	cat  *catalog.Catalog
	objs []live.Object
	// newCatalog are the catalog entries the VMs need that the catalog
	// lacks, by file name (kind-name); used marks those an imported VM uses.
	newCatalog map[string]any
	used       map[string]bool
	// pending are the entries the VM being mapped needs, pendingRefs
	// the live objects it uses (importer.vm); refs those of imported VMs.
	pending     []string
	pendingRefs []string
	refs        map[string]bool
	// primaryUDNs are the export's primary UserDefinedNetworks by
	// namespace (primaryUDN).
	primaryUDNs map[string][]live.Object
	// cur is the VM being compiled and checked.
	cur *candidate
	// nads are the NetworkAttachmentDefinitions virtc writes for the
	// imported VMs' additional networks, by namespace/name
	// (networkAttachments).
	nads map[string]emit.Object
	// last is the last compile of a VM alone (importer.compile).
	last *compiled
	// byRef indexes objs by Ref (liveOf); first the first object of each
	// kind, namespace and name (find).
	byRef map[string][]int
	first map[string]int
}

// candidate is one live VM as mapped to an intent, with what its compile
// needs as it was when it was mapped: a later VM may map to a catalog
// entry of the same file name and replace it in newCatalog.
type candidate struct {
	o       live.Object
	vm      *api.VM
	reasons []string
	// pending are the new catalog entries the VM needs (file names),
	// entries their values, refs the live objects it uses.
	pending []string
	entries map[string]any
	refs    []string
	// nets are the VM's additional networks (additionalNetworks).
	nets []string
	// yaml is the intent as written (marshal), when compileAll made it.
	yaml []byte
	// batch is the VM's compile in compileAll, when it is the VM's own.
	batch *compiled
	// notCarried are the live fields the intent does not carry (check).
	notCarried []Item
	// nads are the NetworkAttachmentDefinitions of the VM's namespace in
	// its checked compile (check).
	nads []emit.Object
}

// mapVM maps one live VM (importer.vm) and records what it needs.
func (im *importer) mapVM(o live.Object) *candidate {
	vm, reasons := im.vm(o)
	c := &candidate{o: o, vm: vm, reasons: reasons, pending: im.pending, refs: im.pendingRefs, entries: map[string]any{}}
	for _, f := range im.pending {
		c.entries[f] = im.newCatalog[f]
	}
	if vm != nil {
		c.nets = im.additionalNetworks(vm)
	}
	return c
}

// dropNamespace refuses the imported VMs of a namespace (and drops their
// files) for a reason of the namespace's.
func (r *Result) dropNamespace(ns, why string) {
	var imported []string
	for _, v := range r.Imported {
		if n, _, _ := strings.Cut(v, "/"); n != ns {
			imported = append(imported, v)
			continue
		}
		r.Refused = append(r.Refused, Refusal{VM: v, Reasons: []string{why}})
	}
	r.Imported = imported
	r.Files = slices.DeleteFunc(r.Files, func(f File) bool { return strings.HasPrefix(f.Path, ns+"/") })
	r.NotCarried = slices.DeleteFunc(r.NotCarried, func(it Item) bool { return strings.HasPrefix(it.VM, ns+"/") })
	slices.SortFunc(r.Refused, func(a, b Refusal) int { return cmp.Compare(a.VM, b.VM) })
}

// tenant is the Tenant of an imported namespace. It allows the additional
// networks its imported VMs are attached to (an additional network reaches
// only the tenants that list it in spec.allow.networks): the live VMs
// already use them, so the intents keep what the cluster has.
func tenant(ns string, networks []string) *api.Tenant {
	t := &api.Tenant{TypeMeta: api.TypeMeta{APIVersion: apiVersion, Kind: "Tenant"}, Metadata: api.ObjectMeta{Name: ns}}
	if len(networks) > 0 {
		t.Spec.Allow = &api.TenantAllow{Networks: slices.Compact(slices.Sorted(slices.Values(networks)))}
	}
	return t
}

// additionalNetworks are the networks of an imported VM that are not the
// pod network, by the catalog's profile or the one the import adds.
func (im *importer) additionalNetworks(vm *api.VM) []string {
	var out []string
	for _, n := range vm.Spec.Networks {
		p, ok := im.cat.NetworkProfiles.Get(n)
		if !ok {
			p, ok = im.newCatalog["network-"+n].(*api.NetworkProfile)
		}
		if ok && p.Spec.Additional() {
			out = append(out, n)
		}
	}
	return out
}

// marshal writes an intent as YAML.
func marshal(v any) []byte {
	js, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	data, err := yamlorder.JSONToYAML(js)
	if err != nil {
		panic(err)
	}
	return data
}

// find returns the live object of a kind and name in a namespace.
func (im *importer) find(kind, namespace, name string) (live.Object, bool) {
	if im.first == nil {
		im.first = map[string]int{}
		for i, o := range im.objs {
			if _, ok := im.first[o.Ref()]; !ok {
				im.first[o.Ref()] = i
			}
		}
	}
	i, ok := im.first[kind+" "+namespace+"/"+name]
	if !ok {
		return live.Object{}, false
	}
	o := im.objs[i]
	im.pendingRefs = append(im.pendingRefs, o.Ref())
	return o, true
}

// left are the objects no imported VM uses, directly or through an owner.
func (im *importer) left(imported []string) []string {
	accounted := map[string]bool{}
	for _, ref := range imported {
		accounted["VirtualMachine "+ref] = true
	}
	for r := range im.refs {
		accounted[r] = true
	}
	for changed := true; changed; {
		changed = false
		for _, o := range im.objs {
			if accounted[o.Ref()] {
				continue
			}
			meta, _ := o.Body["metadata"].(map[string]any)
			owners, _ := meta["ownerReferences"].([]any)
			for _, ow := range owners {
				m, _ := ow.(map[string]any)
				kind, _ := m["kind"].(string)
				name, _ := m["name"].(string)
				if accounted[kind+" "+o.Namespace+"/"+name] {
					accounted[o.Ref()] = true
					changed = true
				}
			}
		}
	}
	var out []string
	for _, o := range im.objs {
		// A VM is imported or refused (with its reasons).
		if !accounted[o.Ref()] && o.Kind != "VirtualMachine" {
			out = append(out, o.Ref())
		}
	}
	return out
}

func decodeInto(body map[string]any, out any) error {
	data, err := marshalGeneric(body)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	// A field the pinned API does not have is not silently dropped.
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// decodeSubset decodes body into out, a type of the fields virtc writes
// (extapi): the fields it lacks are the caller's to check (unknown).
func decodeSubset(body map[string]any, out any) error {
	data, err := marshalGeneric(body)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// vm maps one live VM to an intent and says why it cannot be imported:
// with reasons, the intent is the part that could be mapped (nil when the
// VM could not be read at all).
func (im *importer) vm(o live.Object) (*api.VM, []string) {
	im.pending, im.pendingRefs = nil, nil
	var kv kubevirtv1.VirtualMachine
	if err := decodeInto(o.Body, &kv); err != nil {
		return nil, []string{fmt.Sprintf("not a KubeVirt v1 VirtualMachine: %v", err)}
	}
	var why []string
	refuse := func(format string, a ...any) { why = append(why, fmt.Sprintf(format, a...)) }
	// KubeVirt's VirtualMachineInstanceSpec decodes itself, past
	// DisallowUnknownFields: what the typed VM does not hold is found by
	// comparing its encoding with the export.
	if typed, err := emit.Generic(&kv); err == nil && hasUnknown(o.Body, typed) {
		for _, p := range unknown("", o.Body, typed) {
			refuse("%s: a field KubeVirt v1.8.4's API does not have (kubevirt.io/api v1.8.4); virtc would drop it", p)
		}
	}
	vm := &api.VM{TypeMeta: api.TypeMeta{APIVersion: apiVersion, Kind: "VM"}, Metadata: api.ObjectMeta{Name: o.Name, Namespace: o.Namespace}}
	spec := &vm.Spec
	if kv.Spec.Template == nil {
		return nil, []string{"spec.template: absent"}
	}
	tmpl := kv.Spec.Template.Spec

	pref := im.size(kv, spec, refuse)
	lifecycle(kv, spec, refuse)

	// Identity, and the firmware and devices the guest boots with.
	if fw := tmpl.Domain.Firmware; fw != nil && (fw.UUID != "" || fw.Serial != "") {
		spec.Firmware = &api.Firmware{UUID: string(fw.UUID), Serial: fw.Serial}
	}
	if fw := tmpl.Domain.Firmware; fw == nil || fw.Serial == "" {
		// Created before KubeVirt v1.7, whose webhook gives a new VM a
		// serial: never add one to a running guest.
		spec.KubeVirtDefaults = append(spec.KubeVirtDefaults, api.DefaultSerial)
	}
	im.boot(tmpl, spec)
	im.tuning(o.Body, tmpl, spec)

	hasRoot := im.volumes(kv, o.Namespace, pref, spec, refuse)
	if !hasRoot && len(why) == 0 {
		refuse("spec.template.spec.volumes: no root disk (a DataVolume or claim that boots first)")
	}

	im.networks(o.Namespace, tmpl, spec, refuse)
	access(tmpl, spec, refuse)
	slices.Sort(spec.KubeVirtDefaults)
	// With refusals, vm is what could be mapped: the import judges it by
	// policy too (policyRefusals), never writes it.
	return vm, why
}

// size maps the VM's instance type and preference (a template VM's
// preference is its image's), and returns the preference whose
// needs its image must meet.
func (im *importer) size(kv kubevirtv1.VirtualMachine, spec *api.VMSpec, refuse func(string, ...any)) string {
	tmpl := kv.Spec.Template.Spec
	// A published cluster instance type of the catalog.
	kinds := &api.MatcherKinds{}
	if it := kv.Spec.Instancetype; it != nil {
		kinds.Instancetype = kindSpelling(it.Kind)
	}
	if p := kv.Spec.Preference; p != nil {
		kinds.Preference = kindSpelling(p.Kind)
	}
	if *kinds != (api.MatcherKinds{}) {
		spec.MatcherKinds = kinds
	}
	switch it := kv.Spec.Instancetype; {
	case it == nil:
		spec.Size = im.inlineSize(tmpl.Domain, refuse)
	case it.Kind != "" && it.Kind != "VirtualMachineClusterInstancetype" && it.Kind != "virtualmachineclusterinstancetype":
		refuse("spec.instancetype.kind: %s %q is namespaced; virtc refers to cluster instance types only", it.Kind, it.Name)
	case it.InferFromVolume != "":
		refuse("spec.instancetype.inferFromVolume: an inferred instance type; name it explicitly first")
	default:
		if _, ok := im.cat.Sizes.Get(it.Name); !ok {
			refuse("spec.instancetype.name: %q is not a size of the catalog (add a Size of that name and shape to the catalog, or switch the VM to a catalog size)", it.Name)
		}
		spec.Size = it.Name
	}
	pref := ""
	switch p := kv.Spec.Preference; {
	case p == nil:
		// A template VM (the console's "Create from template"): it states
		// its tuning itself; the image's preference only names the OS.
		spec.Preference = "none"
		pref = im.templatePreference(kv, refuse)
	case p.Kind != "" && p.Kind != "VirtualMachineClusterPreference" && p.Kind != "virtualmachineclusterpreference":
		refuse("spec.preference.kind: %s %q is namespaced; virtc refers to cluster preferences only", p.Kind, p.Name)
	default:
		pref = p.Name
		if _, ok := im.cat.Preferences.Get(pref); !ok {
			refuse("spec.preference.name: %q is not a preference of the catalog", pref)
		}
	}
	if d := tmpl.Domain; kv.Spec.Instancetype != nil && (d.CPU != nil || d.Memory != nil) || d.Resources.Requests != nil || d.Resources.Limits != nil {
		refuse("spec.template.spec.domain: sets CPU, memory or resources beside the instance type, or resource requests or limits; virtc leaves them to the size")
	}
	return pref
}

// lifecycle maps the run strategy, and migration from the eviction
// strategy.
func lifecycle(kv kubevirtv1.VirtualMachine, spec *api.VMSpec, refuse func(string, ...any)) {
	tmpl := kv.Spec.Template.Spec
	switch {
	case kv.Spec.RunStrategy != nil:
		spec.RunStrategy = string(*kv.Spec.RunStrategy)
	default:
		// spec.running, the form before runStrategy (KubeVirt v1.3-era
		// VMs), or neither: the run strategy KubeVirt reads from it
		// (kubevirt.io/api v1.8.4 VirtualMachine.RunStrategy: running
		// true is Always, false or absent Halted). The live field is
		// replaced before the first sync (runningAction).
		rs, _ := kv.RunStrategy()
		spec.RunStrategy = string(rs)
	}
	if spec.RunStrategy == api.RunAlways {
		spec.RunStrategy = ""
	}

	// Migration, from the eviction strategy.
	switch es := tmpl.EvictionStrategy; {
	case es == nil:
		spec.KubeVirtDefaults = append(spec.KubeVirtDefaults, api.DefaultEvictionStrategy)
	case *es == kubevirtv1.EvictionStrategyLiveMigrate:
		spec.Migration = api.MigrationRequired
	case *es == kubevirtv1.EvictionStrategyLiveMigrateIfPossible:
	case *es == kubevirtv1.EvictionStrategyNone:
		spec.Migration = api.MigrationNever
	default:
		refuse("spec.template.spec.evictionStrategy: %s has no virtc equivalent", *es)
	}
}

// volumes maps the VM's disks and volumes: its root disk and image,
// data disks, cloud-init and CD-ROMs. It says whether a root disk was
// found.
func (im *importer) volumes(kv kubevirtv1.VirtualMachine, namespace, pref string, spec *api.VMSpec, refuse func(string, ...any)) bool {
	tmpl := kv.Spec.Template.Spec
	disks := map[string]kubevirtv1.Disk{}
	for _, d := range tmpl.Domain.Devices.Disks {
		disks[d.Name] = d
	}
	implicitDisks := len(tmpl.Domain.Devices.Disks) == 0
	if implicitDisks {
		// KubeVirt gives every volume a plain disk and boots the first.
		spec.KubeVirtDefaults = append([]string{api.DefaultDisks}, spec.KubeVirtDefaults...)
		boot := uint(1)
		for i, v := range tmpl.Volumes {
			d := kubevirtv1.Disk{Name: v.Name, DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{}}}
			if i == 0 {
				d.BootOrder = &boot
			}
			disks[v.Name] = d
		}
	}
	root := rootVolume(tmpl)
	hasRoot := false
	for _, v := range tmpl.Volumes {
		d, hasDisk := disks[v.Name]
		dev, ok := diskDevice(d, hasDisk)
		switch {
		case v.CloudInitNoCloud != nil:
			im.cloudInit(v, dev, ok, spec, refuse)
			continue
		case v.ContainerDisk != nil:
			im.cdrom(v, d, hasDisk, spec, refuse)
			continue
		case v.DataVolume == nil && v.PersistentVolumeClaim == nil:
			refuse("spec.template.spec.volumes[%s]: a volume of a kind virtc does not write (only DataVolumes, claims, cloud-init NoCloud and CD-ROMs of catalog container disks)", v.Name)
			continue
		case !ok:
			refuse("spec.template.spec.domain.devices.disks[%s]: a device virtc does not write (a CD-ROM, LUN, cache or I/O mode, shareable, block size, dedicated I/O thread or error policy; virtc writes a disk with a bus, serial and boot order)", v.Name)
			continue
		}
		claim, dvName := "", ""
		hot := false
		if v.DataVolume != nil {
			dvName, hot = v.DataVolume.Name, v.DataVolume.Hotpluggable
		} else {
			claim, hot = v.PersistentVolumeClaim.ClaimName, v.PersistentVolumeClaim.Hotpluggable
			if v.PersistentVolumeClaim.ReadOnly {
				refuse("spec.template.spec.volumes[%s].persistentVolumeClaim.readOnly: virtc does not write read-only disks", v.Name)
			}
		}
		size, class, source, ok := im.claimFacts(kv, namespace, cmp.Or(dvName, claim))
		if !ok {
			refuse("spec.template.spec.volumes[%s]: DataVolume or claim %q is neither in the export nor a dataVolumeTemplate (export it with the VM)", v.Name, cmp.Or(dvName, claim))
			continue
		}
		if v.Name == root {
			if hot {
				refuse("spec.template.spec.volumes[%s]: a hot-plugged root disk; virtc's root disk is part of the VM", v.Name)
			}
			hasRoot = true
			spec.ExistingRootDisk = &api.ExistingDisk{DataVolume: dvName, PersistentVolumeClaim: claim}
			if v.Name != "rootdisk" {
				spec.ExistingRootDisk.VolumeName = v.Name
			}
			if !implicitDisks {
				spec.RootDiskDevice = rootDevice(dev)
			}
			q := size
			spec.RootDisk = &q
			spec.Image = im.image(source, pref, spec.Preference == "none", size, refuse)
			continue
		}
		disk := api.Disk{Name: v.Name, Size: size, ExistingClaim: claim, ExistingDataVolume: dvName, Hotpluggable: hot}
		if !implicitDisks {
			disk.Bus, disk.Serial, disk.BootOrder, disk.Target = dev.Bus, dev.Serial, dev.BootOrder, dev.Target
			if disk.Target == api.TargetDisk {
				disk.Target = ""
			}
		}
		disk.Storage = im.storageProfile(class)
		spec.Disks = append(spec.Disks, disk)
	}
	return hasRoot
}

// networks maps the VM's networks and interfaces to network profiles,
// their interface settings and MAC addresses.
func (im *importer) networks(namespace string, tmpl kubevirtv1.VirtualMachineInstanceSpec, spec *api.VMSpec, refuse func(string, ...any)) {
	ifaces := map[string]kubevirtv1.Interface{}
	for _, i := range tmpl.Domain.Devices.Interfaces {
		ifaces[i.Name] = i
	}
	var nets []string
	for _, n := range tmpl.Networks {
		i, ok := ifaces[n.Name]
		if !ok {
			refuse("spec.template.spec.networks[%s]: no interface of that name", n.Name)
			continue
		}
		profile, sp := im.network(namespace, n, i, refuse)
		if profile == "" {
			continue
		}
		nets = append(nets, profile)
		if sp != (api.Interface{}) {
			if spec.Interfaces == nil {
				spec.Interfaces = map[string]api.Interface{}
			}
			spec.Interfaces[profile] = sp
		}
		if i.MacAddress != "" {
			if spec.MACAddresses == nil {
				spec.MACAddresses = map[string]string{}
			}
			spec.MACAddresses[profile] = i.MacAddress
		}
	}
	if len(tmpl.Networks) == 0 && len(tmpl.Domain.Devices.Interfaces) == 0 {
		// KubeVirt attaches the pod network itself.
		spec.KubeVirtDefaults = append(spec.KubeVirtDefaults, api.DefaultNetworks)
		nets = im.cat.DefaultNetworks
	}
	if !slices.Equal(nets, im.cat.DefaultNetworks) {
		spec.Networks = nets
	}
}

// access maps guest access (SSH keys and how they reach the guest) and
// the VM's GPUs and host devices.
func access(tmpl kubevirtv1.VirtualMachineInstanceSpec, spec *api.VMSpec, refuse func(string, ...any)) {
	noCloud, agent := false, false
	for _, ac := range tmpl.AccessCredentials {
		k := ac.SSHPublicKey
		switch {
		case k == nil || k.Source.Secret == nil:
			refuse("spec.template.spec.accessCredentials: only SSH public keys from Secrets (not user passwords)")
			continue
		case k.PropagationMethod.NoCloud != nil:
			noCloud = true
		case k.PropagationMethod.QemuGuestAgent != nil:
			users := k.PropagationMethod.QemuGuestAgent.Users
			if agent && !slices.Equal(users, spec.SSHKeyGuestAgentUsers) {
				refuse("spec.template.spec.accessCredentials: keys propagated through the guest agent to different users; virtc propagates all of a VM's keys to the same users")
			}
			agent = true
			spec.SSHKeyGuestAgentUsers = slices.Clone(users)
		default:
			refuse("spec.template.spec.accessCredentials: SSH keys propagated through config drive; virtc writes NoCloud or guest agent propagation")
			continue
		}
		spec.SSHKeySecrets = append(spec.SSHKeySecrets, k.Source.Secret.SecretName)
	}
	if noCloud && agent {
		refuse("spec.template.spec.accessCredentials: keys propagated both through cloud-init and through the guest agent; virtc propagates all of a VM's keys one way")
	}
	for _, g := range tmpl.Domain.Devices.GPUs {
		spec.GPUs = append(spec.GPUs, api.Device{Name: g.Name, DeviceName: g.DeviceName})
	}
	for _, h := range tmpl.Domain.Devices.HostDevices {
		spec.HostDevices = append(spec.HostDevices, api.Device{Name: h.Name, DeviceName: h.DeviceName})
	}
}

// boot maps what the guest boots with and sees beside its disks and
// interfaces: bootloader, SMM, TPM, clock time zone, tablet and subdomain.
// What it cannot map it leaves on the live VM, where the adoption check
// (guestVisible) refuses it.
func (im *importer) boot(tmpl kubevirtv1.VirtualMachineInstanceSpec, spec *api.VMSpec) {
	dom := tmpl.Domain
	fw := spec.Firmware
	if fw == nil {
		fw = &api.Firmware{}
	}
	if f := dom.Firmware; f != nil && f.Bootloader != nil {
		switch b := f.Bootloader; {
		case b.BIOS != nil && b.EFI == nil && !ptrTrue(b.BIOS.UseSerial):
			fw.Bootloader = "bios"
		case b.EFI != nil && b.BIOS == nil:
			fw.Bootloader, fw.SecureBoot, fw.PersistentEFI = "efi", b.EFI.SecureBoot, b.EFI.Persistent
		}
	}
	if f := dom.Features; f != nil && f.SMM != nil {
		fw.SMM = &api.FeatureState{Enabled: f.SMM.Enabled}
	}
	if t := dom.Devices.TPM; t != nil {
		fw.TPM = &api.TPM{Enabled: t.Enabled, Persistent: t.Persistent}
	}
	if tmpl.Domain.Firmware == nil || tmpl.Domain.Firmware.Bootloader == nil {
		// A template VM without a bootloader (common-templates v0.34.1
		// rhel8.tpl.yaml writes none; rhel9.tpl.yaml writes efi) boots
		// with KubeVirt's default, BIOS on amd64: the intent leaves it to
		// KubeVirt as the VM does. A VM with a preference gets the
		// preference's firmware.
		if spec.Preference == "none" && (tmpl.Architecture == "" || tmpl.Architecture == "amd64") {
			spec.KubeVirtDefaults = append(spec.KubeVirtDefaults, api.DefaultBootloader)
		}
	}
	if *fw != (api.Firmware{}) {
		spec.Firmware = fw
	}
	if c := dom.Clock; c != nil && c.Timezone != nil && c.UTC == nil && c.Timer == nil {
		spec.Clock = &api.Clock{Timezone: string(*c.Timezone)}
	}
	if in := dom.Devices.Inputs; len(in) == 1 && in[0].Type == kubevirtv1.InputTypeTablet && in[0].Name == "tablet" && (in[0].Bus == kubevirtv1.InputBusVirtio || in[0].Bus == kubevirtv1.InputBusUSB) {
		spec.Tablet = string(in[0].Bus)
	}
	spec.Subdomain = tmpl.Subdomain
	// The machine type the guest runs with: KubeVirt v1.8.4's VM mutator
	// writes the cluster's default on create only
	// (pkg/defaults/defaults.go setVMDefaultMachineType), so a VM rebuilt
	// from Git after an upgrade would get a newer chipset without it.
	if m := dom.Machine; m != nil {
		spec.MachineType = m.Type
	}
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// inlineSize is the catalog size of a VM that states its CPU and memory
// itself (no instance type): a catalog size with that inline shape, else a
// new one.
func (im *importer) inlineSize(d kubevirtv1.DomainSpec, refuse func(string, ...any)) string {
	if d.Memory == nil || d.Memory.Guest == nil || d.Memory.Hugepages != nil || d.Memory.MaxGuest != nil {
		refuse("spec.template.spec.domain.memory: no instance type and no plain guest memory (hugepages or maxGuest); virtc cannot write that shape")
		return ""
	}
	shape := api.InlineShape{}
	if c := d.CPU; c != nil {
		if c.Model != "" || c.DedicatedCPUPlacement || c.IsolateEmulatorThread || c.NUMA != nil || c.Realtime != nil || len(c.Features) > 0 || c.MaxSockets != 0 {
			refuse("spec.template.spec.domain.cpu: settings besides sockets, cores and threads (model, dedicated placement, NUMA, features, maxSockets); virtc cannot write them")
			return ""
		}
		shape = api.InlineShape{Sockets: int64(c.Sockets), Cores: int64(c.Cores), Threads: int64(c.Threads)}
	}
	mem := *d.Memory.Guest
	for _, name := range im.cat.Sizes.Names() {
		sz, _ := im.cat.Sizes.Get(name)
		if sz.Spec.Inline != nil && *sz.Spec.Inline == shape && sz.Spec.Memory.Cmp(mem) == 0 {
			return name
		}
	}
	name := fmt.Sprintf("imported-%dcpu-%s", shape.VCPUs(), strings.ToLower(mem.String()))
	if d.CPU != nil {
		name += fmt.Sprintf("-s%dc%dt%d", shape.Sockets, shape.Cores, shape.Threads)
	}
	im.addCatalog("size-"+name, &api.Size{TypeMeta: api.TypeMeta{APIVersion: apiVersion, Kind: "Size"}, Metadata: api.ObjectMeta{Name: name},
		Spec: api.SizeSpec{CPU: shape.VCPUs(), Memory: mem, Inline: &shape}})
	return name
}

// unknown lists the paths of have (a live object) that the typed encoding lacks (null
// values and empty maps aside), list elements by index.
func unknown(path string, have, typed any) []string {
	switch l := have.(type) {
	case map[string]any:
		t, _ := typed.(map[string]any)
		var out []string
		for _, k := range sortedKeys(l) {
			v := l[k]
			if empty(v) {
				continue
			}
			p := live.JoinPath(path, k)
			tv, ok := t[k]
			if !ok {
				out = append(out, p)
				continue
			}
			out = append(out, unknown(p, v, tv)...)
		}
		return out
	case []any:
		t, _ := typed.([]any)
		var out []string
		for i, v := range l {
			if i < len(t) {
				out = append(out, unknown(fmt.Sprintf("%s[%d]", path, i), v, t[i])...)
			}
		}
		return out
	}
	return nil
}

// hasUnknown reports whether unknown finds anything, without making the
// paths (nearly every VM has no field the API lacks).
func hasUnknown(have, typed any) bool {
	switch l := have.(type) {
	case map[string]any:
		t, _ := typed.(map[string]any)
		for k, v := range l {
			if empty(v) {
				continue
			}
			if tv, ok := t[k]; !ok || hasUnknown(v, tv) {
				return true
			}
		}
	case []any:
		t, _ := typed.([]any)
		for i, v := range l {
			if i < len(t) && hasUnknown(v, t[i]) {
				return true
			}
		}
	}
	return false
}

// empty reports whether v is null, an empty list (`disks: []`, which the
// typed VM encodes as nothing and KubeVirt reads as no list), or a map of
// nothing but empty values.
func empty(v any) bool {
	if v == nil {
		return true
	}
	if l, ok := v.([]any); ok && len(l) == 0 {
		return true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, x := range m {
		if !empty(x) {
			return false
		}
	}
	return true
}

// rootVolume is the volume the VM boots from: the disk with the lowest boot
// order, else the first volume.
func rootVolume(t kubevirtv1.VirtualMachineInstanceSpec) string {
	best, name := uint(0), ""
	for _, d := range t.Domain.Devices.Disks {
		if d.BootOrder != nil && (name == "" || *d.BootOrder < best) {
			best, name = *d.BootOrder, d.Name
		}
	}
	if name == "" && len(t.Volumes) > 0 {
		name = t.Volumes[0].Name
	}
	return name
}

// claimFacts finds the size, storage class and source of a DataVolume or
// claim: the VM's dataVolumeTemplate, the live DataVolume, or the claim.
//
// A DataVolume that states no size (storage.resources: {}, as the
// console's InstanceTypes flow writes a clone of a DataSource) has the
// size CDI gave its claim: a clone may leave the size empty and takes its
// source's (containerized-data-importer v1.65.0 pkg/controller/datavolume/
// util.go, renderPvcSpecVolumeSize), and the claim, named as the
// DataVolume, says what it is.
func (im *importer) claimFacts(kv kubevirtv1.VirtualMachine, ns, name string) (resource.Quantity, string, *cdiv1.DataVolumeSpec, bool) {
	sized := func(q resource.Quantity, class string, spec *cdiv1.DataVolumeSpec) (resource.Quantity, string, *cdiv1.DataVolumeSpec, bool) {
		if q.IsZero() {
			if claimQ, claimClass, ok := im.claimSize(ns, name); ok {
				return claimQ, cmp.Or(class, claimClass), spec, true
			}
		}
		return q, class, spec, true
	}
	for _, t := range kv.Spec.DataVolumeTemplates {
		if t.Name == name {
			spec := t.Spec
			q, class := dvSize(spec)
			return sized(q, class, &spec)
		}
	}
	if o, ok := im.find("DataVolume", ns, name); ok {
		var dv cdiv1.DataVolume
		if err := decodeInto(o.Body, &dv); err == nil {
			q, class := dvSize(dv.Spec)
			return sized(q, class, &dv.Spec)
		}
	}
	if q, class, ok := im.claimSize(ns, name); ok {
		return q, class, nil, true
	}
	return resource.Quantity{}, "", nil, false
}

// claimSize is the size and class of the exported claim: what it
// requests, or what it has when it requests nothing.
func (im *importer) claimSize(ns, name string) (resource.Quantity, string, bool) {
	o, ok := im.find("PersistentVolumeClaim", ns, name)
	if !ok {
		return resource.Quantity{}, "", false
	}
	var pvc corev1.PersistentVolumeClaim
	if err := decodeInto(o.Body, &pvc); err != nil {
		return resource.Quantity{}, "", false
	}
	q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if q.IsZero() {
		q = pvc.Status.Capacity[corev1.ResourceStorage]
	}
	return q, deref(pvc.Spec.StorageClassName), true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func dvSize(s cdiv1.DataVolumeSpec) (resource.Quantity, string) {
	if s.Storage != nil {
		return s.Storage.Resources.Requests[corev1.ResourceStorage], deref(s.Storage.StorageClassName)
	}
	if s.PVC != nil {
		return s.PVC.Resources.Requests[corev1.ResourceStorage], deref(s.PVC.StorageClassName)
	}
	return resource.Quantity{}, ""
}

// storageProfile is the catalog profile of a StorageClass ("" for the
// default profile or an unknown class).
func (im *importer) storageProfile(class string) string {
	for _, name := range im.cat.StorageProfiles.Names() {
		p, _ := im.cat.StorageProfiles.Get(name)
		if p.Spec.StorageClass == class && name != im.cat.DefaultStorage {
			return name
		}
	}
	return ""
}

// image is the catalog image of the root disk's source: the catalog image
// of that DataSource and preference, else a new Image for the DataSource or
// registry source, else a catalog image of the same preference (the root
// disk exists: the image only names the OS).
//
// anyPreference: the VM names no preference (a template VM), so any
// catalog image of its source names its OS.
func (im *importer) image(src *cdiv1.DataVolumeSpec, pref string, anyPreference bool, size resource.Quantity, refuse func(string, ...any)) string {
	var ds *api.DataSourceRef
	var reg *api.RegistrySource
	if src != nil {
		if r := src.SourceRef; r != nil && r.Kind == cdiv1.DataVolumeDataSource {
			ds = &api.DataSourceRef{Name: r.Name, Namespace: deref(r.Namespace)}
		}
		if r := src.Source; r != nil && r.Registry != nil && r.Registry.URL != nil {
			reg = &api.RegistrySource{URL: *r.Registry.URL}
		}
	}
	byPreference := ""
	for _, name := range im.cat.Images.Names() {
		img, _ := im.cat.Images.Get(name)
		samePref := img.Spec.Preference == pref
		if !samePref && !anyPreference {
			continue
		}
		if byPreference == "" && samePref {
			byPreference = name
		}
		if ds != nil && img.Spec.DataSource != nil && img.Spec.DataSource.Name == ds.Name && cmp.Or(img.Spec.DataSource.Namespace, im.cat.GoldenImageNamespace) == cmp.Or(ds.Namespace, im.cat.GoldenImageNamespace) {
			return name
		}
		if reg != nil && img.Spec.Registry != nil && img.Spec.Registry.URL == reg.URL {
			return name
		}
	}
	if ds == nil && (reg == nil || !strings.Contains(reg.URL, "@sha256:")) {
		if byPreference == "" {
			refuse("the root disk's source is not a DataSource nor a registry image pinned by digest, and the catalog has no image of preference %q (the image of an existing root disk only names the VM's OS: add the platform's approved Image of that preference to the catalog, or pass it with --catalog, and import again; the disk stays as it is)", pref)
		}
		return byPreference
	}
	name := "imported-"
	if ds != nil {
		// The name becomes the catalog file's (catalog/image-NAME.yaml).
		if errs := validation.IsDNS1123Subdomain(ds.Name); len(errs) > 0 {
			refuse("the root disk's sourceRef.name %q: not a DataSource name (a DNS-1123 subdomain)", ds.Name)
			return ""
		}
		name += ds.Name
	} else {
		name += path.Base(strings.SplitN(reg.URL, "@", 2)[0])
	}
	img := &api.Image{TypeMeta: api.TypeMeta{APIVersion: apiVersion, Kind: "Image"}, Metadata: api.ObjectMeta{Name: name},
		Spec: api.ImageSpec{DataSource: ds, Registry: reg, Preference: pref, MinRootDisk: size}}
	if ds != nil && ds.Namespace == im.cat.GoldenImageNamespace {
		img.Spec.DataSource.Namespace = ""
	}
	im.addCatalog("image-"+name, img)
	return name
}

func (im *importer) addCatalog(file string, obj any) {
	im.newCatalog[file] = obj
	im.pending = append(im.pending, file)
}

// cloudInit maps the NoCloud volume; dev is its disk (ok false: a device
// virtc does not write).
func (im *importer) cloudInit(v kubevirtv1.Volume, dev api.DiskDevice, ok bool, spec *api.VMSpec, refuse func(string, ...any)) {
	ci := v.CloudInitNoCloud
	if v.Name != "cloudinitdisk" {
		refuse("spec.template.spec.volumes[%s]: virtc names the cloud-init volume cloudinitdisk", v.Name)
	}
	if !ok || dev.BootOrder != nil {
		refuse("spec.template.spec.domain.devices.disks[%s]: virtc writes the cloud-init disk as a disk that does not boot", v.Name)
	}
	if ci.NetworkDataBase64 != "" || ci.NetworkData != "" {
		refuse("spec.template.spec.volumes[%s].cloudInitNoCloud: inline network data; virtc writes network data from a Secret (move it to a Secret first)", v.Name)
	}
	out := &api.CloudInit{UserData: ci.UserData}
	if ci.UserDataBase64 != "" {
		// virtctl create vm --cloud-init-user-data writes it encoded: the
		// intent holds it decoded, checked like inline user data.
		data, err := base64.StdEncoding.DecodeString(ci.UserDataBase64)
		switch {
		case err != nil:
			refuse("spec.template.spec.volumes[%s].cloudInitNoCloud.userDataBase64: not base64 (%v)", v.Name, err)
		case base64.StdEncoding.EncodeToString(data) != ci.UserDataBase64:
			refuse("spec.template.spec.volumes[%s].cloudInitNoCloud.userDataBase64: not in the standard encoding virtc writes (line breaks or padding differ)", v.Name)
		case ci.UserData != "":
			refuse("spec.template.spec.volumes[%s].cloudInitNoCloud: both userData and userDataBase64", v.Name)
		}
		out.UserData, out.UserDataEncoding = string(data), "base64"
	}
	if ci.UserDataSecretRef != nil {
		out.UserDataSecret = ci.UserDataSecretRef.Name
	}
	if ci.NetworkDataSecretRef != nil {
		out.NetworkDataSecret = ci.NetworkDataSecretRef.Name
	}
	if dev != (api.DiskDevice{}) && (dev.Target != api.TargetDisk || dev.Bus != "" || dev.Serial != "") {
		d := dev
		if d.Target == api.TargetDisk {
			d.Target = ""
		}
		out.Device = &d
	}
	if out.UserData == "#cloud-config\n" && out.UserDataEncoding == "" && out.UserDataSecret == "" && out.NetworkDataSecret == "" && out.Device == nil {
		// What virtc writes itself for SSH keys without user data.
		return
	}
	spec.CloudInit = out
}

// kindSpelling is the spec.matcherKinds spelling of a live instance type
// or preference kind ("" for the CamelCase kind virtc writes by default).
func kindSpelling(kind string) string {
	switch {
	case kind == "":
		return api.KindAbsent
	case kind == strings.ToLower(kind):
		return api.KindLowercase
	}
	return ""
}

// diskDevice is how the intent spells a volume's disk entry: none (no
// entry), unset (no target) or a disk target with its bus, serial and boot
// order. ok is false for a device virtc does not write.
func diskDevice(d kubevirtv1.Disk, hasDisk bool) (api.DiskDevice, bool) {
	if !hasDisk {
		return api.DiskDevice{Target: api.TargetNone}, true
	}
	if d.LUN != nil || d.CDRom != nil || d.Cache != "" || d.IO != "" || d.Shareable != nil || d.BlockSize != nil || d.DedicatedIOThread != nil || d.ErrorPolicy != nil || d.Tag != "" {
		return api.DiskDevice{}, false
	}
	dev := api.DiskDevice{Target: api.TargetDisk}
	if d.BootOrder != nil {
		b := int64(*d.BootOrder)
		dev.BootOrder = &b
	}
	if d.Disk == nil {
		if d.Serial != "" {
			return api.DiskDevice{}, false
		}
		dev.Target = api.TargetUnset
		return dev, true
	}
	if d.Disk.PciAddress != "" || d.Disk.ReadOnly {
		return api.DiskDevice{}, false
	}
	dev.Bus, dev.Serial = string(d.Disk.Bus), d.Serial
	return dev, true
}

// rootDevice is the spec.rootDiskDevice of a live root disk: nil when it
// is virtc's default (a disk on the default bus that boots first).
func rootDevice(dev api.DiskDevice) *api.DiskDevice {
	if dev.Target == api.TargetDisk {
		dev.Target = ""
	}
	if dev.BootOrder == nil {
		// The live root disk has no boot order: 0 writes none.
		var none int64
		dev.BootOrder = &none
	} else if *dev.BootOrder == 1 {
		dev.BootOrder = nil
	}
	if dev == (api.DiskDevice{}) {
		return nil
	}
	return &dev
}

// network maps an interface to a network profile and the spelling of its
// interface: the pod network to the catalog's pod profile, a Multus network
// to the bridge profile named like its NetworkAttachmentDefinition (a new
// one from the live NAD if the catalog lacks it). The interface keeps its
// name, model, PCI address and ACPI index, and the Multus reference its
// namespace/name form.
func (im *importer) network(ns string, n kubevirtv1.Network, i kubevirtv1.Interface, refuse func(string, ...any)) (string, api.Interface) {
	if i.Ports != nil || i.BootOrder != nil || i.DHCPOptions != nil || i.Tag != "" {
		refuse("spec.template.spec.domain.devices.interfaces[%s]: settings virtc does not write (ports, boot order, DHCP options, tag)", i.Name)
	}
	sp := api.Interface{Model: i.Model, PCIAddress: i.PciAddress, ACPIIndex: int64(i.ACPIIndex)}
	switch i.State {
	case "", kubevirtv1.InterfaceStateLinkUp, kubevirtv1.InterfaceStateLinkDown:
		sp.State = string(i.State)
	default:
		refuse("spec.template.spec.domain.devices.interfaces[%s].state: %s; an interface being hot-unplugged (wait until KubeVirt removed it)", i.Name, i.State)
	}
	switch {
	case n.Pod != nil && i.Binding != nil && i.Binding.Name == "l2bridge":
		// The namespace's primary UserDefinedNetwork, which KubeVirt reaches
		// through the l2bridge binding plugin on the pod network
		// (render/virtualmachine.go attachment, udn-primary).
		name := im.primaryUDN(ns, refuse)
		if name == "" {
			return "", sp
		}
		if n.Name != name {
			sp.Name = n.Name
		}
		return name, sp
	case n.Pod != nil:
		if i.Masquerade == nil {
			refuse("spec.template.spec.domain.devices.interfaces[%s]: the pod network through another binding than masquerade", i.Name)
		}
		profile := im.podProfile(n.Name)
		if profile == "" {
			refuse("spec.template.spec.networks[%s]: the pod network; the catalog has no pod network profile of that name, nor a single one", n.Name)
			return "", sp
		}
		if n.Name != profile {
			sp.Name = n.Name
		}
		return profile, sp
	case n.Multus != nil:
		nad := n.Multus.NetworkName
		if nsName, name, ok := strings.Cut(nad, "/"); ok {
			if nsName != ns {
				refuse("spec.template.spec.networks[%s].multus.networkName: %q is in another namespace; virtc attaches to its tenant's own", n.Name, nad)
				return "", sp
			}
			nad, sp.QualifiedNetworkName = name, true
		}
		if nad != n.Name {
			sp.Name = n.Name
		}
		if i.Bridge == nil && i.SRIOV == nil {
			refuse("spec.template.spec.domain.devices.interfaces[%s]: virtc attaches additional networks through the bridge binding (bridge and localnet profiles) or the sriov binding (sriov profiles)", i.Name)
			return "", sp
		}
		// The name becomes a NetworkProfile's, and its catalog file's
		// (catalog/network-NAME.yaml).
		if errs := validation.IsDNS1123Label(nad); len(errs) > 0 {
			refuse("spec.template.spec.networks[%s].multus.networkName: %q: not a NetworkAttachmentDefinition name a NetworkProfile can have (a DNS-1123 label)", n.Name, n.Multus.NetworkName)
			return "", sp
		}
		// The binding each profile type renders (render/virtualmachine.go
		// attachment): sriov through the sriov binding, bridge and localnet
		// through the bridge binding.
		wantType := func(t string) bool {
			if i.SRIOV != nil {
				return t == api.NetworkSRIOV
			}
			return t == api.NetworkBridge || t == api.NetworkLocalnet
		}
		if p, ok := im.cat.NetworkProfiles.Get(nad); ok {
			if !wantType(p.Spec.Type) {
				refuse("spec.template.spec.networks[%s]: the catalog's profile %q is %s, which virtc attaches through another binding than this interface's", n.Name, nad, p.Spec.Type)
			}
			return nad, sp
		}
		o, ok := im.find("NetworkAttachmentDefinition", ns, nad)
		if !ok {
			refuse("spec.template.spec.networks[%s]: NetworkAttachmentDefinition %s/%s is neither in the export nor a catalog profile", n.Name, ns, nad)
			return "", sp
		}
		profile := im.attachmentProfile(o, ns, nad, refuse)
		if profile == nil {
			return "", sp
		}
		if !wantType(profile.Spec.Type) {
			binding := "bridge"
			if profile.Spec.Type == api.NetworkSRIOV {
				binding = "sriov"
			}
			refuse("spec.template.spec.domain.devices.interfaces[%s]: NetworkAttachmentDefinition %s/%s is %s, which virtc attaches through the %s binding", i.Name, ns, nad, profile.Spec.Type, binding)
			return "", sp
		}
		im.addCatalog("network-"+nad, profile)
		return nad, sp
	}
	refuse("spec.template.spec.networks[%s]: a network of a kind virtc does not write", n.Name)
	return "", sp
}

// cniConfig is what the importer reads of a NetworkAttachmentDefinition's
// CNI configuration: a single plugin, or the first of a plugin list (the
// SR-IOV operator writes "plugins" when meta plugins are configured:
// sriov-network-operator bindata/manifests/cni-config/sriov/sriov-cni-config.yaml).
type cniConfig struct {
	Type     string `json:"type"`
	Bridge   string `json:"bridge"`
	VLAN     *int64 `json:"vlan"`
	Topology string `json:"topology"`
	Plugins  []struct {
		Type string `json:"type"`
	} `json:"plugins"`
}

// attachmentProfile is the NetworkProfile that makes virtc write the same
// attachment as the live NetworkAttachmentDefinition o (nil, with a
// refusal, when there is none):
//   - a Linux bridge (type bridge): a bridge profile, whose NAD virtc
//     writes in the tenant namespace (render/network.go TenantNetworks);
//   - an SR-IOV attachment (type sriov): an sriov profile; the SR-IOV
//     operator writes that NAD from its SriovNetwork and virtc leaves it alone;
//   - an OVN-Kubernetes localnet (type ovn-k8s-cni-overlay, topology
//     localnet) made by a ClusterUserDefinedNetwork of the same name: a
//     localnet profile, from that ClusterUserDefinedNetwork (see localnet).
func (im *importer) attachmentProfile(o live.Object, ns, nad string, refuse func(string, ...any)) *api.NetworkProfile {
	spec, _ := o.Body["spec"].(map[string]any)
	cfgText, _ := spec["config"].(string)
	var cfg cniConfig
	if err := json.Unmarshal([]byte(cfgText), &cfg); err != nil {
		refuse("NetworkAttachmentDefinition %s/%s: spec.config is not a CNI configuration: %v", ns, nad, err)
		return nil
	}
	typ := cfg.Type
	if typ == "" && len(cfg.Plugins) > 0 {
		typ = cfg.Plugins[0].Type
	}
	profile := &api.NetworkProfile{TypeMeta: api.TypeMeta{APIVersion: apiVersion, Kind: "NetworkProfile"}, Metadata: api.ObjectMeta{Name: nad}}
	switch {
	case typ == "bridge" && cfg.Bridge != "":
		// Migratable: a Linux bridge is the same L2 segment on every
		// node, so a migrated guest keeps its MAC and addresses.
		profile.Spec = api.NetworkProfileSpec{Type: api.NetworkBridge, Migratable: true, Bridge: &api.BridgeNetwork{Name: cfg.Bridge, VLAN: cfg.VLAN}}
	case typ == "sriov":
		// Not migratable: the guest holds a virtual function of its
		// node's card, which a migration must unplug and plug again.
		profile.Spec = api.NetworkProfileSpec{Type: api.NetworkSRIOV}
	case typ == "ovn-k8s-cni-overlay" && cfg.Topology == "localnet":
		ln := im.localnet(o, ns, nad, refuse)
		if ln == nil {
			return nil
		}
		// Migratable: a localnet is the same physical network (and VLAN)
		// on every node, as a Linux bridge is.
		profile.Spec = api.NetworkProfileSpec{Type: api.NetworkLocalnet, Migratable: true, Localnet: ln}
	default:
		refuse("NetworkAttachmentDefinition %s/%s: a %q attachment; virtc writes Linux bridge (type bridge with a bridge name), SR-IOV (sriov) and OVN-Kubernetes localnet (ovn-k8s-cni-overlay, topology localnet) attachments", ns, nad, typ)
		return nil
	}
	return profile
}

// primaryUDN is the udn-primary profile of namespace ns's primary
// UserDefinedNetwork, from the catalog or, mapped from the export, added
// to it ("" with a refusal when there is none). virtc renders a
// udn-primary profile as a UserDefinedNetwork of that name in each tenant
// namespace that uses it (render/network.go TenantNetworks,
// model.TenantUDN): Layer2, role Primary, the profile's subnets, IPAM
// lifecycle Persistent. OVN-Kubernetes refuses any change of a
// UserDefinedNetwork's topology or layer2 (self == oldSelf rules of
// go-controller/pkg/crd/userdefinednetwork/v1/udn.go), so a
// UserDefinedNetwork of another form stays outside virtc.
func (im *importer) primaryUDN(ns string, refuse func(string, ...any)) string {
	if im.primaryUDNs == nil {
		// Read once: every VM on the l2bridge binding asks.
		im.primaryUDNs = map[string][]live.Object{}
		for _, o := range im.objs {
			spec, _ := o.Body["spec"].(map[string]any)
			l2, _ := spec["layer2"].(map[string]any)
			if o.Kind == "UserDefinedNetwork" && l2["role"] == "Primary" {
				im.primaryUDNs[o.Namespace] = append(im.primaryUDNs[o.Namespace], o)
			}
		}
	}
	found := im.primaryUDNs[ns]
	if len(found) != 1 {
		refuse("namespace %s: %d primary UserDefinedNetworks in the export; a VM on the l2bridge binding is on its namespace's one primary network (add `oc get userdefinednetwork -n %s -o yaml`)", ns, len(found), ns)
		return ""
	}
	name := found[0].Name
	im.find("UserDefinedNetwork", ns, name) // accounted for
	if p, ok := im.cat.NetworkProfiles.Get(name); ok {
		if p.Spec.Type != api.NetworkUDNPrimary {
			refuse("UserDefinedNetwork %s/%s: the catalog's profile %q is %s, not udn-primary", ns, name, name, p.Spec.Type)
			return ""
		}
		return name
	}
	if p, ok := im.newCatalog["network-"+name].(*api.NetworkProfile); ok && p.Spec.Type == api.NetworkUDNPrimary {
		return name
	}
	var udn extapi.UserDefinedNetwork
	if err := decodeSubset(found[0].Body, &udn); err != nil {
		refuse("UserDefinedNetwork %s/%s: %v", ns, name, err)
		return ""
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		refuse("UserDefinedNetwork %s/%s: not a name a NetworkProfile can have (a DNS-1123 label)", ns, name)
		return ""
	}
	var subnets []string
	if udn.Spec.Layer2 != nil {
		subnets = udn.Spec.Layer2.Subnets
	}
	want := extapi.UserDefinedNetworkSpec{Topology: "Layer2", Layer2: &extapi.Layer2Config{Role: "Primary", Subnets: subnets, IPAM: &extapi.IPAMConfig{Lifecycle: "Persistent"}}}
	spec, _ := found[0].Body["spec"].(map[string]any)
	typed, _ := emit.Generic(want)
	diffs := unknown("spec", spec, typed)
	if !reflect.DeepEqual(udn.Spec, want) || len(subnets) == 0 {
		diffs = append(diffs, "spec "+string(jsonOf(spec)))
	}
	if len(diffs) > 0 {
		refuse("UserDefinedNetwork %s/%s: %s; virtc writes a primary network as Layer2, role Primary, with subnets and IPAM lifecycle Persistent, and OVN-Kubernetes refuses any change of its layer2 once created (keep this namespace's VMs outside virtc)", ns, name, strings.Join(diffs, ", "))
		return ""
	}
	im.addCatalog("network-"+name, &api.NetworkProfile{TypeMeta: api.TypeMeta{APIVersion: apiVersion, Kind: "NetworkProfile"}, Metadata: api.ObjectMeta{Name: name},
		// Migratable: persistent IPAM keeps a VM's address across
		// migrations (OVN-Kubernetes' persistent IPs for KubeVirt).
		Spec: api.NetworkProfileSpec{Type: api.NetworkUDNPrimary, Migratable: true, Layer2: &api.Layer2Network{Subnets: subnets}}})
	return name
}

// localnet maps the ClusterUserDefinedNetwork that made the localnet
// NetworkAttachmentDefinition o. virtc renders a localnet profile as a
// ClusterUserDefinedNetwork named like it (render/network.go
// ClusterNetworks), and OVN-Kubernetes renders the NAD of that name in
// each selected namespace, owned by it (ovn-kubernetes
// go-controller/pkg/clustermanager/userdefinednetwork/template/net-attach-def-template.go
// RenderNetAttachDefManifest). So the import needs that
// ClusterUserDefinedNetwork in the export, its network exactly as virtc
// writes one (secondary role, IPAM disabled: the VMs bring their own
// addresses): its network's topology and localnet cannot change once
// created (self == oldSelf rules of ovn-kubernetes
// go-controller/pkg/crd/userdefinednetwork/v1/cudn.go), so any other form
// stays outside virtc.
func (im *importer) localnet(o live.Object, ns, nad string, refuse func(string, ...any)) *api.LocalnetNetwork {
	owner := ""
	meta, _ := o.Body["metadata"].(map[string]any)
	if refs, ok := meta["ownerReferences"].([]any); ok {
		for _, r := range refs {
			ref, _ := r.(map[string]any)
			if ref["kind"] == "ClusterUserDefinedNetwork" && ref["controller"] == true {
				owner, _ = ref["name"].(string)
			}
		}
	}
	if owner != nad {
		refuse("NetworkAttachmentDefinition %s/%s: a localnet attachment not made by a ClusterUserDefinedNetwork named %s; virtc writes localnet profiles as ClusterUserDefinedNetworks, and OVN-Kubernetes does not take over an attachment it did not make (keep this network outside virtc, or recreate it from a ClusterUserDefinedNetwork)", ns, nad, nad)
		return nil
	}
	c, ok := im.find("ClusterUserDefinedNetwork", "", nad)
	if !ok {
		refuse("NetworkAttachmentDefinition %s/%s: made by ClusterUserDefinedNetwork %s, which is not in the export (add `oc get clusteruserdefinednetwork %s -o yaml`)", ns, nad, nad, nad)
		return nil
	}
	var cudn extapi.ClusterUserDefinedNetwork
	if err := decodeSubset(c.Body, &cudn); err != nil {
		refuse("ClusterUserDefinedNetwork %s: %v", nad, err)
		return nil
	}
	cspec, _ := c.Body["spec"].(map[string]any)
	network, _ := cspec["network"].(map[string]any)
	cfg := cudn.Spec.Network.Localnet
	if cudn.Spec.Network.Topology != "Localnet" || cfg == nil {
		refuse("ClusterUserDefinedNetwork %s: spec.network.topology %s; a localnet profile is a Localnet network", nad, cudn.Spec.Network.Topology)
		return nil
	}
	ln := &api.LocalnetNetwork{PhysicalNetworkName: cfg.PhysicalNetworkName, MTU: cfg.MTU}
	if cfg.VLAN != nil && cfg.VLAN.Access != nil {
		id := cfg.VLAN.Access.ID
		ln.VLAN = &id
	}
	// What render/network.go ClusterNetworks writes for ln, compared with
	// what the cluster has, field by field (extra fields included).
	want := &extapi.LocalnetConfig{Role: "Secondary", PhysicalNetworkName: ln.PhysicalNetworkName, IPAM: &extapi.IPAMConfig{Mode: "Disabled"}, MTU: ln.MTU}
	if ln.VLAN != nil {
		want.VLAN = &extapi.VLANConfig{Mode: "Access", Access: &extapi.VLANAccess{ID: *ln.VLAN}}
	}
	wantNet := extapi.CUDNNetwork{Topology: "Localnet", Localnet: want}
	typed, _ := emit.Generic(wantNet)
	diffs := unknown("spec.network", network, typed)
	if !reflect.DeepEqual(cudn.Spec.Network, wantNet) {
		diffs = append(diffs, "spec.network.localnet "+string(jsonOf(network["localnet"])))
	}
	if len(diffs) > 0 {
		refuse("ClusterUserDefinedNetwork %s: %s; virtc writes a localnet as role Secondary with IPAM mode Disabled and at most physicalNetworkName, an access VLAN and an MTU, and OVN-Kubernetes refuses any change of its network once created (keep this network outside virtc)", nad, strings.Join(diffs, ", "))
		return nil
	}
	return ln
}

// podProfile is the catalog's pod network profile for a live pod network
// named name: the pod profile of that name, else the catalog's only pod
// profile ("" when there is neither).
func (im *importer) podProfile(name string) string {
	if p, ok := im.cat.NetworkProfiles.Get(name); ok && p.Spec.Type == api.NetworkPod {
		return name
	}
	var pods []string
	for _, n := range im.cat.NetworkProfiles.Names() {
		if p, _ := im.cat.NetworkProfiles.Get(n); p.Spec.Type == api.NetworkPod {
			pods = append(pods, n)
		}
	}
	if len(pods) == 1 {
		return pods[0]
	}
	return ""
}
