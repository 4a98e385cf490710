package importer

import (
	"bytes"
	"maps"
	"path"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/source"
)

// batchRounds bounds the compiles of compileAll: each round drops the VMs
// its errors concern (usually the first round finds them all); the VMs of
// a batch still failing after the last are compiled alone.
const batchRounds = 3

// compileAll compiles the mapped VMs together, once, and gives each VM
// that compiles there without any error its objects from that compile
// (candidate.batch), in place of a compile of its own. Compiling a VM
// alone (importer.compile) reads its intent, its Tenant, the catalog
// entries it needs and the user's catalog; the batch reads the same
// intent and catalog entries (only VMs whose entries agree with the
// batch's join it), each namespace's Tenant allowing every additional
// network its VMs use (a superset of each VM's own), and the other VMs
// and their entries besides. What the batch adds can only add errors,
// never take one away: a rule over several VMs refuses more of them
// (a spread group, a quota, one primary network per namespace: internal/rules
// placement.go, policy.go, internal/resolve resolve.go), an allow list that
// names more networks admits more, and an entry no VM of its own names
// is never looked up. So a batch without errors means that each of its
// VMs compiles alone without errors too. Its objects are then the same:
// a VM's VirtualMachine and claims are rendered from the VM, its tenant's
// tier, environment and primary network, and the platform
// (internal/render virtualmachine.go, disk.go), none of which another VM
// changes when nothing is refused. The import tests hold the outcome
// equal to compiling every VM alone (TestBatchIsEachAlone).
//
// A batch with errors loses the VMs they concern (an error in a VM's file,
// its Tenant's or in a catalog entry it needs) and is compiled again; an
// error elsewhere (the user's catalog, the platform) sends every VM to
// its own compile, which reports it as before.
func (im *importer) compileAll(cands []*candidate, catalogDocs []*source.Doc, opts catalog.Options) {
	var batch []*candidate
	entries := map[string][]byte{}
	for _, c := range cands {
		if len(c.reasons) > 0 {
			continue
		}
		c.yaml = marshal(c.vm)
		agree := true
		js := make(map[string][]byte, len(c.pending))
		for _, f := range c.pending {
			js[f] = jsonOf(c.entries[f])
			if prev, ok := entries[f]; ok && !bytes.Equal(prev, js[f]) {
				agree = false
			}
		}
		if !agree {
			continue
		}
		for f, data := range js {
			entries[f] = data
		}
		batch = append(batch, c)
	}
	for range batchRounds {
		if len(batch) == 0 {
			return
		}
		// The inputs, and which VMs each file concerns.
		concerns := map[string][]*candidate{}
		var files []intentFile
		needed := map[string]bool{}
		nets := map[string][]string{}
		var namespaces []string
		for _, c := range batch {
			ns := c.vm.Metadata.Namespace
			if _, ok := nets[ns]; !ok {
				namespaces = append(namespaces, ns)
				nets[ns] = nil
			}
			nets[ns] = append(nets[ns], c.nets...)
			for _, f := range c.pending {
				needed[f] = true
				rel := path.Join("catalog", f+".yaml")
				concerns[rel] = append(concerns[rel], c)
			}
			rel := path.Join(ns, c.vm.Metadata.Name+".yaml")
			concerns[rel] = append(concerns[rel], c)
			concerns[path.Join(ns, "tenant.yaml")] = append(concerns[path.Join(ns, "tenant.yaml")], c)
		}
		for _, f := range slices.Sorted(maps.Keys(needed)) {
			files = append(files, intentFile{path.Join("catalog", f+".yaml"), entries[f]})
		}
		slices.Sort(namespaces)
		for _, ns := range namespaces {
			files = append(files, intentFile{path.Join(ns, "tenant.yaml"), jsonOf(tenant(ns, nets[ns]))})
		}
		diags := &diag.List{}
		docs := slices.Clone(catalogDocs)
		docs = append(docs, parseFiles(files, diags)...)
		for _, c := range batch {
			docs = append(docs, source.Parse(path.Join(c.vm.Metadata.Namespace, c.vm.Metadata.Name+".yaml"), path.Join(c.vm.Metadata.Namespace, c.vm.Metadata.Name+".yaml"), c.yaml, diags)...)
		}
		res := compile.Compile(docs, compileOptions(opts), diags)
		errs := diags.Errors()
		if len(errs) == 0 {
			own, nads := vmsObjects(res.Objects), namespaceNADs(res.Objects)
			for _, c := range batch {
				c.batch = &compiled{objs: own[[2]string{c.vm.Metadata.Namespace, c.vm.Metadata.Name}], model: res.Model, nads: nads[c.vm.Metadata.Namespace]}
			}
			return
		}
		drop := map[*candidate]bool{}
		for _, d := range errs {
			cs, ok := concerns[d.File]
			if !ok {
				// Not a file of the batch's own: every VM alone.
				return
			}
			for _, c := range cs {
				drop[c] = true
			}
		}
		batch = slices.DeleteFunc(batch, func(c *candidate) bool { return drop[c] })
	}
}

// vmsObjects are the objects of each VM of a compile (namespace, name), as
// vmObjects selects them from a compile of the VM alone: its
// VirtualMachine and the claims of its data disks (labelled with the VM:
// internal/render disk.go, the only claims virtc renders), in output order.
func vmsObjects(objs []emit.Object) map[[2]string][]emit.Object {
	out := map[[2]string][]emit.Object{}
	for _, o := range objs {
		switch o.Kind {
		case "VirtualMachine":
			k := [2]string{o.Namespace, o.Name}
			out[k] = append(out[k], o)
		case "PersistentVolumeClaim":
			acc, ok := o.Body.(metav1.Object)
			if !ok {
				continue
			}
			if vm := acc.GetLabels()[model.LabelVM]; vm != "" && len(o.Name) > len(vm) && o.Name[:len(vm)+1] == vm+"-" {
				k := [2]string{o.Namespace, vm}
				out[k] = append(out[k], o)
			}
		}
	}
	return out
}
