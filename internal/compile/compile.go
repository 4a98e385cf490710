// Package compile runs the pipeline: decode and validate intents, resolve
// them against the catalog, check policy, render, sort and emit. It returns
// either the whole output or the diagnostics, never part of the output.
package compile

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/virtc/virtc/internal/alerts"
	"github.com/virtc/virtc/internal/appproject"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/render"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/rules"
	"github.com/virtc/virtc/internal/source"
)

// Options configure a compile.
type Options struct {
	Catalog catalog.Options
	// Scopes limit the output to objects of these scopes (all when empty).
	// Everything is still read and checked.
	Scopes []emit.Scope
	// Tenant limits the output to one tenant's objects: those in its
	// namespace and those labelled virtc.dev/tenant with its name (its
	// Namespace, its Schedules and Backups in openshift-adp). Empty: all.
	// Everything is still read and checked; a tenant the inputs do not
	// have is an error.
	Tenant string
	// PassThrough keeps documents that are not virtc objects in
	// Result.Other instead of reporting them (KRM function mode).
	PassThrough bool
	// AsOf is the day acceptance evidence expiry is judged on; zero: for
	// each VM, the newest date of the Evidence that concerns its tenant
	// (platform-wide, its tenant's or its VMs'), so that the output depends
	// only on the inputs, never on the clock, and one team's Evidence
	// never expires another team's (eligibility.Context.AsOf).
	AsOf time.Time
	// GateWarnings turns the eligibility gate's refusals into warnings:
	// for virtc report, whose point is to show what each VM still lacks,
	// virtc facts, which needs only the Platform, and virtc import, which
	// compares an adopted VM's manifest with the live one (the build of
	// the imported intents is gated). A build never sets it.
	GateWarnings bool
	// Pieces serializes each object on its own into Result.Pieces instead
	// of the whole stream into Result.YAML (virtc diff compares objects by
	// their bytes).
	Pieces bool
	// Chunks serializes the output into Result.Chunks instead of
	// Result.YAML: Result.Objects is then nil. Each group of objects (the
	// platform's, a tenant's: render.Groups) is serialized as soon as it
	// is rendered, and the serialized objects are then put in Sort's
	// order, so the typed objects of the whole output are never held at
	// once; virtc build writes the chunks one by one, so the output is
	// held once (never joined). It also lets go of the inputs' YAML nodes
	// once every check is done (the documents keep their file names, not
	// their lines): rendering never reads them. At 100,000 VMs this is
	// what keeps a build within 2 GiB.
	Chunks bool
	// ObjectsOnly keeps Result.Objects and serializes nothing (virtc
	// import compares the objects with live ones, one VM at a time).
	ObjectsOnly bool
	// AppProjectFiles are the files the Argo CD AppProjects were read
	// from (CompilerSpec.AppProjects), AppProjects their documents: when
	// files are named, every Tenant is checked against its project
	// (appproject).
	AppProjectFiles []string
	AppProjects     []*source.Doc
}

// Result is the outcome of a compile.
type Result struct {
	// Objects are the generated objects in output order; empty on error.
	Objects []emit.Object
	// YAML is Objects serialized; empty on error and with Options.Pieces.
	YAML []byte
	// Pieces are, with Options.Pieces, each object of Objects serialized
	// on its own (emit.WriteEach); empty on error.
	Pieces [][]byte
	// Chunks are, with Options.Chunks, the output in pieces that join
	// into what YAML would hold (emit.WriteChunks); empty on error.
	Chunks [][]byte
	Model  *resolve.Model
	Diags  *diag.List
	// Other are the input documents that are not virtc objects (only with
	// Options.PassThrough).
	Other []*source.Doc
}

// Compile compiles documents. Diagnostics already in diags (from reading
// the sources) count: if any is an error, nothing is emitted.
func Compile(docs []*source.Doc, opts Options, diags *diag.List) Result {
	set := decode.Decode(docs, opts.PassThrough, diags)
	res := Result{Diags: diags, Other: set.Other}
	if !opts.PassThrough && len(docs) == 0 && !diags.HasErrors() {
		diags.Errorf(diag.Pos{File: "<inputs>"}, "", "no virtc objects found (expected YAML or Jsonnet files with apiVersion virtc.dev/v1alpha1)")
	}
	cat := catalog.Build(set, opts.Catalog, diags)
	m := resolve.Resolve(set, cat, diags)
	m.AsOf = opts.AsOf
	res.Model = m
	rules.CheckWith(m, rules.Options{GateWarns: opts.GateWarnings}, diags)
	var projects *appproject.Checker
	if len(opts.AppProjectFiles) > 0 {
		projects = appproject.New(appproject.Read(opts.AppProjects, diags), opts.AppProjectFiles, m, diags)
	}
	if opts.Tenant != "" && !slices.ContainsFunc(m.Tenants, func(t *resolve.Tenant) bool { return t.Name == opts.Tenant }) {
		names := make([]string, len(m.Tenants))
		for i, t := range m.Tenants {
			names[i] = t.Name
		}
		diags.Errorf(diag.Pos{File: "<inputs>"}, "", "--tenant (spec.tenant): %s", diag.UnknownName("tenant", opts.Tenant, names))
	}
	if opts.Tenant != "" && len(opts.Scopes) > 0 && !slices.ContainsFunc(opts.Scopes, func(s emit.Scope) bool { return s != emit.Cluster }) {
		diags.Errorf(diag.Pos{File: "<inputs>"}, "", "--tenant (spec.tenant) with only the platform scope selects nothing: no platform object is a tenant's (add tenants or vms to the scope)")
	}
	if diags.HasErrors() {
		return res
	}
	// The monitoring of the build (nil when off), from the checked model.
	plan, err := alerts.Compile(m, model.ScheduleName)
	if err != nil {
		diags.Errorf(m.Platform.Doc.Pos("spec.monitoring"), "spec.monitoring", "%v", err)
		return res
	}
	// The guardrails' checks of what the compile writes: it never writes
	// what its own policy refuses. With the gate's refusals as warnings
	// (virtc report, facts, import) the output goes to no cluster: the
	// allowances hold the gate's verdicts, which those modes only report.
	guarded := rules.NewOutput(m)
	if opts.GateWarnings {
		guarded = nil
	}
	if opts.Chunks && !opts.PassThrough {
		// Every check is done: nothing asks for a position from here on.
		for _, d := range docs {
			d.Node, d.Lines = nil, nil
		}
	}
	keep := func(objs []emit.Object) []emit.Object {
		if len(opts.Scopes) > 0 {
			objs = slices.DeleteFunc(objs, func(o emit.Object) bool { return !slices.Contains(opts.Scopes, o.Scope) })
		}
		if opts.Tenant != "" {
			objs = slices.DeleteFunc(objs, func(o emit.Object) bool { return !OfTenant(o, opts.Tenant) })
		}
		return objs
	}
	if opts.Chunks {
		// Each group (the platform's objects, a tenant's) is serialized as
		// soon as it is rendered and its typed objects let go of; the
		// pieces are then put in Sort's order, by keys taken before.
		groups := make([][]emit.Keyed, len(m.Tenants)+1)
		errs := make([]error, len(groups))
		refused := make([]diag.List, len(groups))
		render.Groups(m, render.Options{Monitoring: plan}, func(g int, objs []emit.Object) {
			guarded.Check(objs, &refused[g])
			projects.Check(objs, &refused[g])
			if refused[g].HasErrors() {
				return
			}
			objs = keep(objs)
			pieces, err := emit.WriteEach(objs)
			if err != nil {
				errs[g] = err
				return
			}
			ks := make([]emit.Keyed, len(objs))
			for i, o := range objs {
				ks[i] = emit.Keyed{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Group: g, Index: i, Piece: pieces[i]}
			}
			groups[g] = ks
		})
		for i := range refused {
			diags.Append(&refused[i])
		}
		if diags.HasErrors() {
			return res
		}
		for _, err := range errs {
			if err != nil {
				cannotSerialize(diags, err)
				return res
			}
		}
		res.Chunks = emit.JoinSorted(slices.Concat(groups...))
		return res
	}
	all := render.All(m, render.Options{Monitoring: plan})
	guarded.Check(all, diags)
	if projects.Check(all, diags); diags.HasErrors() {
		return res
	}
	objs := keep(all)
	emit.Sort(objs)
	switch {
	case opts.Pieces:
		res.Pieces, err = emit.WriteEach(objs)
	case !opts.ObjectsOnly:
		res.YAML, err = emit.Write(objs)
	}
	if err != nil {
		cannotSerialize(diags, err)
		return res
	}
	res.Objects = objs
	return res
}

func cannotSerialize(diags *diag.List, err error) {
	diags.Errorf(diag.Pos{File: "<output>"}, "", "cannot serialize output: %v", err)
}

// OfTenant reports whether o is one of tenant's objects (what
// Options.Tenant keeps): in its namespace, or labelled with it (its
// Namespace; its Schedules, which live in openshift-adp).
func OfTenant(o emit.Object, tenant string) bool {
	if o.Namespace == tenant {
		return true
	}
	acc, err := meta.Accessor(o.Body)
	return err == nil && acc.GetLabels()[model.LabelTenant] == tenant
}
