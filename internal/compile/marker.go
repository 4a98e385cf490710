package compile

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

// MarkerFile marks a directory as one virtc build: the Argo CD plugin
// compiles each directory that holds one (its discovery), and its Compiler
// names the catalog the directory is built with. Being a YAML file beside
// the intents, a build of the directory reads it too and skips the
// Compiler.
const MarkerFile = "virtc.yaml"

// CompilerKind is the kind of the document that holds a compile's options
// (api.CompilerSpec): the KRM function's functionConfig and the marker
// file's content. A build ignores Compiler documents among its inputs.
const CompilerKind = "Compiler"

// DecodeCompiler decodes a Compiler document with virtc's strict decoder.
func DecodeCompiler(doc *source.Doc, diags *diag.List) api.CompilerSpec {
	av, kind := decode.Header(doc.Node)
	if av != api.APIVersion || kind != CompilerKind {
		diags.Errorf(doc.Pos("kind"), "kind", "expected apiVersion %s, kind %s (got apiVersion %q, kind %q)", api.APIVersion, CompilerKind, av, kind)
		return api.CompilerSpec{}
	}
	var c api.Compiler
	decode.Into(doc, &c, diags)
	return c.Spec
}

// ReadMarker reads the Compiler of dir's marker file: found is false when
// dir has none. A file that does not decode, or holds more than one
// Compiler, is reported in diags.
func ReadMarker(dir string, diags *diag.List) (spec api.CompilerSpec, found bool) {
	file := filepath.Join(dir, MarkerFile)
	if st, err := os.Stat(file); err != nil || st.IsDir() {
		return api.CompilerSpec{}, false
	}
	var specs []api.CompilerSpec
	for _, doc := range source.Read([]string{file}, source.Options{}, diags) {
		if _, kind := decode.Header(doc.Node); kind == CompilerKind {
			specs = append(specs, DecodeCompiler(doc, diags))
		}
	}
	if len(specs) > 1 {
		diags.Errorf(diag.Pos{File: file}, "", "holds %d Compiler documents; keep one", len(specs))
	}
	if len(specs) > 0 {
		spec = specs[0]
	}
	return spec, true
}

// WithMarkers is the request with the catalogs that the marker files of
// the directories among dirs name, each relative to its directory, read
// before its paths, and the AppProjects it names; a marker that leaves the
// default catalog out leaves it out of the request. Every file or directory is then read once.
//
// This is what makes every entry point build the same from one directory:
// `virtc build clusters/east`, the kustomize generator whose paths name
// it, the transformer run in it, and the Argo CD plugin (which reads the
// whole marker as its options) all compile it with the catalog its
// virtc.yaml names. The marker's other options (scope, tenant) shape one
// Argo CD Application's output and stay the plugin's.
func (r Request) WithMarkers(dirs []string, diags *diag.List) Request {
	var more []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		spec, found := ReadMarker(d, diags)
		if !found {
			continue
		}
		for _, c := range spec.CatalogDirs {
			if !filepath.IsAbs(c) {
				c = filepath.Join(d, c)
			}
			more = append(more, c)
		}
		for _, p := range spec.AppProjects {
			if !filepath.IsAbs(p) {
				p = filepath.Join(d, p)
			}
			r.AppProjects = append(r.AppProjects, p)
		}
		r.NoDefaultCatalog = r.NoDefaultCatalog || spec.NoDefaultCatalog
	}
	r.AppProjects = distinctPaths(r.AppProjects)
	catalogs := slices.Concat(r.CatalogDirs, more)
	all := distinctPaths(slices.Concat(catalogs, r.Paths))
	n := len(distinctPaths(catalogs))
	r.CatalogDirs, r.Paths = all[:n:n], all[n:]
	return r
}

// distinctPaths is paths with each file or directory once, the first time
// it is named: a catalog both a marker file and --catalog name (the
// command `virtc init` printed before markers named their catalog) is
// read once, not twice with every entry a duplicate.
func distinctPaths(paths []string) []string {
	seen := map[string]bool{}
	out := paths[:0:0]
	for _, p := range paths {
		key := filepath.Clean(p)
		if abs, err := filepath.Abs(p); err == nil {
			key = abs
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	return out
}
