package vap

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/jsonnet"
	"github.com/virtc/virtc/internal/render"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/source"
)

// Refused is a golden scenario the compile refuses, as a cluster would
// meet it: what the compile said, and each tenant's guardrails and each
// VM's objects rendered as the compile would have rendered them had it
// not refused (render.Unchecked). The caller sets source.BaseEnv to the
// scenario's absolute directory first, as virtc build does.
type Refused struct {
	Model *resolve.Model
	Docs  []*source.Doc
	// Diags are the compile's diagnostics; Before those of decoding and
	// resolving alone (intents and catalogs that are malformed or name
	// what does not exist: they describe no object to admit).
	Diags, Before *diag.List
	// Policies are each tenant's ValidatingAdmissionPolicy, by tenant.
	Policies map[string]emit.Object
	// VMs are each VM's objects (its data disks and the VM).
	VMs map[*resolve.VM][]emit.Object
}

// RefusedDirs are the golden scenarios (below golden) the compile refuses
// on its own inputs: those with an errors.txt, less those run as another
// command or with flags.
func RefusedDirs(golden string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(golden, "*", "errors.txt"))
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, f := range files {
		dir := filepath.Dir(f)
		if exists(filepath.Join(dir, "command")) || exists(filepath.Join(dir, "flags")) {
			continue
		}
		dirs = append(dirs, dir)
	}
	return dirs, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// CompileRefused compiles the golden scenario in dir. Its Model is nil
// when nothing resolves.
func CompileRefused(dir string) (*Refused, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	read := func(diags *diag.List) []*source.Doc {
		return source.Read([]string{abs}, source.Options{Evaluate: jsonnet.Options{}.Evaluate, Base: abs}, diags)
	}
	r := &Refused{Diags: &diag.List{}, Before: &diag.List{}}
	r.Docs = read(r.Diags)
	res := compile.Compile(r.Docs, compile.Options{}, r.Diags)
	if res.Model == nil {
		return r, nil
	}
	r.Model = res.Model
	set := decode.Decode(read(r.Before), false, r.Before)
	resolve.Resolve(set, catalog.Build(set, catalog.Options{}, r.Before), r.Before)
	r.Policies, r.VMs = render.Unchecked(res.Model)
	return r, nil
}

// VMAt is the VM ("namespace/name") whose intent document holds the
// diagnostic's position, or "".
func (r *Refused) VMAt(d diag.Diagnostic) string {
	if d.Subject != "" {
		return d.Subject
	}
	var at *source.Doc
	for _, doc := range r.Docs {
		if doc.File != d.File || doc.Node == nil || doc.Node.Line > d.Line {
			continue
		}
		if at == nil || doc.Node.Line > at.Node.Line {
			at = doc
		}
	}
	for _, t := range r.Model.Tenants {
		for _, vm := range t.VMs {
			if at != nil && vm.Doc == at {
				return vm.Namespace + "/" + vm.Name
			}
		}
	}
	return ""
}

// IntentRefusals are the refusals of decoding and resolving (by their
// text), and the VMs ("namespace/name") they concern: intents and
// catalogs that are malformed or name what does not exist.
func (r *Refused) IntentRefusals() (errs, vms map[string]bool) {
	errs, vms = map[string]bool{}, map[string]bool{}
	for _, d := range r.Before.Errors() {
		errs[d.String()] = true
		if vm := r.VMAt(d); vm != "" {
			vms[vm] = true
		}
	}
	return errs, vms
}

// Guardrails are the rules of guardrails by which the compile refuses
// each VM ("namespace/name"), and Refused every VM it refuses at all.
func (r *Refused) Guardrails() (guardrails map[string][]string, refused map[string]bool) {
	guardrails, refused = map[string][]string{}, map[string]bool{}
	if r.Model == nil {
		return guardrails, refused
	}
	intentErrors, _ := r.IntentRefusals()
	for _, d := range r.Diags.Errors() {
		vm := r.VMAt(d)
		if vm == "" {
			continue
		}
		refused[vm] = true
		if d.Rule != "" && !intentErrors[d.String()] && !slices.Contains(guardrails[vm], d.Rule) {
			guardrails[vm] = append(guardrails[vm], d.Rule)
		}
	}
	return guardrails, refused
}

// Namespaces are the tenants' Namespaces as virtc writes them (their
// labels select the policies' bindings), and Bindings the policies'
// bindings, for the tenants whose policy renders.
func (r *Refused) Namespaces() (namespaces, bindings []emit.Object, err error) {
	for _, t := range r.Model.Tenants {
		if _, ok := r.Policies[t.Name]; !ok {
			continue
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("tenant %s: %v", t.Name, p)
				}
			}()
			namespaces = append(namespaces, render.Namespace(t))
			bindings = append(bindings, render.ValidatingAdmissionPolicyBinding(t))
		}()
	}
	return namespaces, bindings, err
}
