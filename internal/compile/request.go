package compile

import (
	"fmt"
	"slices"
	"time"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/jsonnet"
	"github.com/virtc/virtc/internal/source"
)

// Request is one compile as every entry point asks for it: the options of
// a Compiler (api.CompilerSpec: `virtc build`'s flags, the KRM function's
// functionConfig, the Argo CD plugin's virtc.yaml) and what only the caller
// knows. Each face fills a Request and calls Run; none reads the inputs or
// sets the compile's options itself.
type Request struct {
	api.CompilerSpec
	// AsOf is the day acceptance evidence expiry is judged on (Options.AsOf).
	AsOf time.Time
	// Base is the repository's top, when the caller knows it better than
	// the files do (source.Options.Base).
	Base string
	// Items are inputs the caller has read already (the KRM function's
	// items), compiled after the files of CatalogDirs and Paths.
	Items []*source.Doc
	// PassThrough keeps documents that are not virtc objects
	// (Options.PassThrough).
	PassThrough bool
}

// Options are the compile's options the request asks for; an unknown
// scope is an error.
func (r Request) Options() (Options, error) {
	opts := Options{Tenant: r.Tenant, AsOf: r.AsOf, PassThrough: r.PassThrough}
	opts.Catalog.NoDefaults = r.NoDefaultCatalog
	if r.Scope != "" {
		scopes, known := emit.ParseScope(r.Scope)
		if !known {
			return Options{}, fmt.Errorf("unknown scope %q (%s)", r.Scope, emit.ScopeHelp)
		}
		opts.Scopes = scopes
	}
	return opts, nil
}

// Inputs are the files and directories the request reads: its catalogs,
// then its paths.
func (r Request) Inputs() []string { return slices.Concat(r.CatalogDirs, r.Paths) }

// Read reads the request's files (Jsonnet evaluated with its external
// variables), then appends its Items.
func (r Request) Read(diags *diag.List) []*source.Doc {
	docs := source.Read(r.Inputs(), source.Options{Evaluate: jsonnet.Options{ExtStr: r.ExtStr}.Evaluate, Base: r.Base}, diags)
	return append(docs, r.Items...)
}

// ReadProjects reads the request's AppProjects files into o: the build
// then checks its Tenants against them (appproject).
func (r Request) ReadProjects(o *Options, diags *diag.List) {
	if len(r.AppProjects) == 0 {
		return
	}
	o.AppProjectFiles = r.AppProjects
	o.AppProjects = source.Read(r.AppProjects, source.Options{Base: r.Base}, diags)
}

// Run reads and compiles what the request asks for; tune, if not nil,
// sets the options of the output's form (Pieces, Chunks, ObjectsOnly)
// before the compile. An unknown scope is reported in diags.
func Run(r Request, tune func(*Options), diags *diag.List) Result {
	opts, err := r.Options()
	if err != nil {
		diags.Errorf(diag.Pos{}, "scope", "%v", err)
		return Result{Diags: diags}
	}
	if tune != nil {
		tune(&opts)
	}
	r.ReadProjects(&opts, diags)
	return Compile(r.Read(diags), opts, diags)
}
