// Package krm runs virtc as a KRM function, the protocol kustomize (exec and
// container functions) and kpt use: a ResourceList on stdin, the list with
// the generated objects appended on stdout, problems as the list's results.
//
// The function compiles the virtc objects among the items (transformer
// form: intents listed as kustomize resources) and the files its
// functionConfig names (generator form). Every item is written back
// unchanged; virtc items must be marked config.kubernetes.io/local-config,
// so kustomize and kpt keep them out of what they apply.
package krm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/par"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/internal/warnings"
)

// Annotations of the KRM function protocol that virtc reads.
const (
	// AnnotationLocalConfig marks an input that tools must not apply.
	AnnotationLocalConfig = "config.kubernetes.io/local-config"
	// AnnotationOrigin is kustomize's record of the file a resource came
	// from (with `buildMetadata: [originAnnotations]`).
	AnnotationOrigin = "config.kubernetes.io/origin"
)

// ErrNoResourceList is returned when the input is not a ResourceList.
var ErrNoResourceList = errors.New("expected a ResourceList (apiVersion config.kubernetes.io/v1) on stdin")

// Run executes the function once: it reads a ResourceList from in and
// writes the resulting ResourceList to out. It returns the diagnostics,
// which are also the list's results, and an error when the function failed:
// framework.Results when the inputs were refused, another error when the
// protocol itself broke. On failure the items are written back without
// generated objects.
func Run(in io.Reader, out io.Writer) (*diag.List, error) {
	data, err := io.ReadAll(io.LimitReader(in, source.MaxInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > source.MaxInput {
		return nil, fmt.Errorf("the ResourceList on stdin is larger than the %d MiB a build's inputs may hold", source.MaxInput>>20)
	}
	l, fast, err := parseLayout(data)
	if err != nil {
		return nil, err
	}
	if fast {
		return runFast(l, out)
	}
	return runFramework(data, out)
}

// runFramework runs the function through kyaml's framework.Execute, for
// the inputs the fast path leaves to it.
func runFramework(data []byte, out io.Writer) (*diag.List, error) {
	diags := &diag.List{}
	p := framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		return process(rl, diags)
	})
	// framework.Execute writes the results and then returns the processor's
	// error. Returning the Results themselves as that error is what makes
	// the process fail: a function that only sets rl.Results exits 0, and
	// kustomize then carries on as if nothing was wrong.
	err := framework.Execute(p, &kio.ByteReadWriter{Reader: bytes.NewReader(data), Writer: out, KeepReaderAnnotations: true})
	return diags, err
}

// item is one input item that is a virtc object.
type item struct {
	doc *source.Doc
	// path and index locate the item's file as the orchestrator reported
	// it; index is -1 when unknown.
	path  string
	index int
	ref   *kyaml.ResourceIdentifier
}

func process(rl *framework.ResourceList, diags *diag.List) error {
	out, res := compileList(rl.Items, rl.FunctionConfig, diags)
	var generated []*kyaml.RNode
	if !diags.HasErrors() {
		var err error
		if generated, err = toNodes(out); err != nil {
			diags.Errorf(diag.Pos{File: "<output>"}, "", "%v", err)
			res = append(res, &framework.Result{Message: err.Error(), Severity: framework.Error})
		}
	}
	rl.Results = res
	if diags.HasErrors() {
		return rl.Results
	}
	rl.Items = append(rl.Items, generated...)
	return nil
}

// compileList compiles the virtc items of a ResourceList and the files its
// functionConfig names. It returns the compiler's output (empty on errors)
// and the list's results.
func compileList(rnItems []*kyaml.RNode, fc *kyaml.RNode, diags *diag.List) ([]byte, framework.Results) {
	cfg := readConfig(fc, diags)
	// The directories the function builds, read as `virtc build` reads
	// them: the generator's paths and the kustomization's own directory
	// (kustomize runs an exec function there), each with the catalog its
	// virtc.yaml names.
	req := compile.Request{CompilerSpec: cfg.Spec, PassThrough: true}.WithMarkers(append([]string{"."}, cfg.Spec.Paths...), diags)
	docs := req.Read(diags)
	onDisk := len(docs)
	items := readItems(rnItems, cfg, diags)
	for _, it := range items {
		docs = append(docs, it.doc)
	}
	opts, err := req.Options()
	if err != nil {
		// readConfig has reported the scope at its field.
		req.Scope = ""
		opts, _ = req.Options()
	}
	req.ReadProjects(&opts, diags)
	res := compile.Compile(docs, opts, diags)
	for _, d := range res.Other {
		// Items that are not virtc objects never reach the compiler; these
		// came from the configured paths, where `virtc build` refuses them
		// too.
		if d.Node.Kind == yaml.MappingNode {
			av, kind := decode.Header(d.Node)
			diags.Errorf(d.Pos("apiVersion"), "apiVersion", "not a virtc object (apiVersion %q, kind %q): the function's paths may hold only virtc files; list other resources under `resources:` in the kustomization", av, kind)
		}
	}
	var out []byte
	if !diags.HasErrors() {
		out = res.YAML
		conflicts(rnItems, res.Objects, diags)
		if ref := cfg.WarningsConfigMap; ref != "" && !diags.HasErrors() {
			out = warnings.Append(out, ref, diags.Sorted())
		}
	}
	return out, results(diags, cfg, docs[:onDisk], items)
}

// readItems turns the virtc items into documents for the compiler. The
// documents are copies without the annotations kustomize and kpt add, so
// none of them is copied onto a generated object.
func readItems(rns []*kyaml.RNode, cfg *config, diags *diag.List) []*item {
	var items []*item
	labels := map[string]int{}
	loc := newLocator()
	for _, rn := range rns {
		if !decode.IsVirtc(rn.YNode()) {
			continue
		}
		it := &item{index: -1, ref: refOf(rn.YNode())}
		doc := &source.Doc{NoLines: true}
		// found: the file is on this machine and doc.Rel is its path as
		// virtc build records it; messages then name it the same way.
		found := false
		var file string
		ann := annotationsOf(rn.YNode())
		if p, idx := fileAnnotations(ann); p != "" {
			it.path = p
			doc.Rel, file, found = sourcePath(".", path.Clean(p))
			if n, err := strconv.Atoi(idx); err == nil {
				it.index = n
			}
		} else if o, ok := parseOrigin(ann); ok {
			it.path, doc.Rel = o.label(), o.Path
			if cfg.dir != "" && o.Repo == cfg.repo {
				// Relative to the Compiler's own file, so a base records the
				// same source whether it is built alone or through an overlay.
				if r, err := filepath.Rel(cfg.dir, o.Path); err == nil {
					doc.Rel, file, found = sourcePath(cfg.fileDir(), filepath.ToSlash(r))
				}
			}
		} else if w, ok := loc.listedIn(it.ref); ok {
			// Nothing said where it came from: it is one of the files the
			// kustomization in the working directory lists (kustomize runs
			// an exec function in the directory of the kustomization that
			// declares it).
			it.path, file, found, doc.Lines = filepath.ToSlash(w.file), w.file, true, w.node
			doc.Rel = source.SourcePath(w.file, ".")
		}
		if found && doc.Lines == nil {
			doc.Lines = loc.inFile(file, it.ref)
		}
		doc.File = it.path
		if found {
			doc.File = doc.Rel
		}
		if doc.File == "" {
			doc.File = describe(it.ref)
		}
		if it.index >= 0 {
			doc.Index = it.index
		}
		labels[doc.File]++
		it.doc = doc
		items = append(items, it)
		if ann[AnnotationLocalConfig] != "true" {
			// The message does not name the object (its place does), so
			// that inputs which all lack the annotation read as one mistake.
			diags.Errorf(diag.Pos{File: doc.File}, "metadata.annotations", "not marked %s: \"true\"; without it kustomize would emit the input itself as a cluster object (mark each virtc input %s: \"true\", or have the Compiler read the intents from spec.paths instead of listing them as resources)", AnnotationLocalConfig, AnnotationLocalConfig)
		}
		doc.Node = stripped(rn.YNode())
	}
	// Messages are matched back to items by file; items that share a file
	// (several documents in one file, or no file at all) get a suffix.
	seen := map[string]int{}
	for _, it := range items {
		f := it.doc.File
		if labels[f] < 2 || it.doc.Lines != nil {
			// Alone in its file, or placed by line (see itemAt).
			continue
		}
		seen[f]++
		n := seen[f]
		if it.index >= 0 {
			n = it.index + 1
		}
		it.doc.File = fmt.Sprintf("%s (document %d)", f, n)
	}
	return items
}

// sourcePath is the virtc.dev/source of an item at rel (slashes) from dir,
// a directory of this machine: the path `virtc build` records for the same
// file (source.SourcePath: from the top of its git repository). When the
// file is not there (the orchestrator described files this process cannot
// see), rel itself and false.
func sourcePath(dir, rel string) (string, string, bool) {
	if dir == "" {
		return rel, "", false
	}
	file := filepath.Join(dir, filepath.FromSlash(rel))
	if info, err := os.Stat(file); err != nil || info.IsDir() {
		return rel, "", false
	}
	return source.SourcePath(file, dir), file, true
}

func describe(r *kyaml.ResourceIdentifier) string {
	if r.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name)
	}
	return fmt.Sprintf("%s %s", r.Kind, r.Name)
}

// strippedPrefixes and strippedKeys are the annotations orchestrators add
// to describe an input document (its file, index, origin, identity, and
// that it is local); they say nothing about the objects virtc generates.
var (
	strippedPrefixes = []string{"config.kubernetes.io/", "internal.config.kubernetes.io/"}
	strippedKeys     = []string{"kustomize.config.k8s.io/id", "config.k8s.io/id"}
)

func strippedKey(k string) bool {
	for _, p := range strippedPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	for _, s := range strippedKeys {
		if k == s {
			return true
		}
	}
	return false
}

// stripped returns the object without the orchestrators' annotations (and
// without an annotations mapping left empty). It copies only the nodes on
// the way to the annotations; the rest is shared with n, which the compiler
// only reads.
func stripped(n *yaml.Node) *yaml.Node {
	mi, meta := field(n, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return n
	}
	ai, ann := field(meta, "annotations")
	if ann == nil || ann.Kind != yaml.MappingNode {
		return n
	}
	keep := make([]*yaml.Node, 0, len(ann.Content))
	for i := 0; i+1 < len(ann.Content); i += 2 {
		if !strippedKey(ann.Content[i].Value) {
			keep = append(keep, ann.Content[i], ann.Content[i+1])
		}
	}
	if len(keep) == len(ann.Content) {
		return n
	}
	m := *meta
	m.Content = append([]*yaml.Node{}, meta.Content...)
	if len(keep) == 0 {
		m.Content = append(m.Content[:ai], m.Content[ai+2:]...)
	} else {
		a := *ann
		a.Content = keep
		m.Content[ai+1] = &a
	}
	c := *n
	c.Content = append([]*yaml.Node{}, n.Content...)
	c.Content[mi+1] = &m
	return &c
}

// field returns the index of key in a mapping and its value.
func field(m *yaml.Node, key string) (int, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return -1, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i, m.Content[i+1]
		}
	}
	return -1, nil
}

// annotationsOf reads an object's annotations from its node (kyaml's
// GetMeta decodes the whole metadata for them, a large share of the
// function's time on a fleet).
func annotationsOf(n *yaml.Node) map[string]string {
	_, meta := field(n, "metadata")
	_, ann := field(meta, "annotations")
	if ann == nil || ann.Kind != yaml.MappingNode {
		return nil
	}
	out := make(map[string]string, len(ann.Content)/2)
	for i := 0; i+1 < len(ann.Content); i += 2 {
		if v := ann.Content[i+1]; v.Kind == yaml.ScalarNode {
			out[ann.Content[i].Value] = v.Value
		}
	}
	return out
}

// fileAnnotations is kioutil.GetFileAnnotations on read annotations: the
// file and index, the internal annotations before the legacy ones.
func fileAnnotations(ann map[string]string) (file, index string) {
	file, ok := ann[kioutil.PathAnnotation]
	if !ok {
		file = ann[kioutil.LegacyPathAnnotation]
	}
	index, ok = ann[kioutil.IndexAnnotation]
	if !ok {
		index = ann[kioutil.LegacyIndexAnnotation]
	}
	return file, index
}

// toNodes parses the compiler's output into items. virtc writes one
// document per object, separated by "---" lines, so the documents are
// parsed on all CPUs (a large fleet's output took a third of the
// function's time); their order is kept, and positions, which differ from
// a parse of the whole stream, are not written out.
func toNodes(out []byte) ([]*kyaml.RNode, error) {
	if len(out) == 0 {
		return nil, nil
	}
	docs := bytes.Split(out, []byte("\n---\n"))
	nodes := make([]*kyaml.RNode, len(docs))
	errs := make([]error, len(docs))
	par.For(len(docs), func(i int) {
		var n yaml.Node
		if err := yaml.Unmarshal(docs[i], &n); err != nil {
			errs[i] = err
			return
		}
		if len(n.Content) == 0 {
			errs[i] = errors.New("an empty document")
			return
		}
		nodes[i] = kyaml.NewRNode(n.Content[0])
	})
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("cannot read back the generated YAML: %v", err)
		}
	}
	return nodes, nil
}

// conflicts reports items that are the same object as one virtc
// generates: kustomize would refuse the duplicate with a message that does
// not say where it came from.
func conflicts(items []*kyaml.RNode, objs []emit.Object, diags *diag.List) {
	gen := map[string]bool{}
	for _, o := range objs {
		gen[objectKey(group(o.APIVersion), o.Kind, o.Namespace, o.Name)] = true
	}
	for _, rn := range items {
		n := rn.YNode()
		if decode.IsVirtc(n) {
			continue
		}
		r := refOf(n)
		if !gen[objectKey(group(r.APIVersion), r.Kind, r.Namespace, r.Name)] {
			continue
		}
		ann := annotationsOf(n)
		file, _ := fileAnnotations(ann)
		if org, ok := parseOrigin(ann); ok && file == "" {
			file = org.label()
		}
		if file == "" {
			file = describe(r)
		}
		diags.Errorf(diag.Pos{File: file}, "", "%s is also generated by virtc: remove it from the resources, or change the intent that generates it", describe(r))
	}
}

func group(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

func objectKey(group, kind, namespace, name string) string {
	return group + "|" + kind + "|" + namespace + "|" + name
}

// results turns the diagnostics into ResourceList results, each pointing
// at the resource, file and field it is about; repeats of one mistake are
// condensed as on stderr (diag.Condense), into one result with the count
// and the common fix.
func results(diags *diag.List, cfg *config, disk []*source.Doc, items []*item) framework.Results {
	byLabel := map[string][]*item{}
	for _, it := range items {
		byLabel[it.doc.File] = append(byLabel[it.doc.File], it)
	}
	byFile := map[string][]*source.Doc{}
	for _, d := range disk {
		byFile[d.File] = append(byFile[d.File], d)
	}
	var out framework.Results
	for _, e := range diag.Condense(diags.Sorted()) {
		if rep := e.Repeat; rep != nil {
			r := &framework.Result{Message: rep.String(), Severity: framework.Error}
			if rep.Severity == diag.Warning {
				r.Severity = framework.Warning
			}
			if rep.Field != "" {
				r.Field = &framework.Field{Path: rep.Field}
			}
			out = append(out, r)
			continue
		}
		d := e.Diagnostic
		r := &framework.Result{Message: d.Message, Severity: framework.Error}
		if d.Severity == diag.Warning {
			r.Severity = framework.Warning
		}
		if d.Field != "" {
			r.Field = &framework.Field{Path: d.Field}
		}
		if its, ok := byLabel[d.File]; ok {
			it := itemAt(its, d.Line)
			r.ResourceRef = it.ref
			if it.path != "" {
				r.File = &framework.File{Path: it.path, Index: max(it.index, 0)}
			}
		} else if docs, ok := byFile[d.File]; ok {
			doc := docAt(docs, d.Line)
			r.ResourceRef = refOf(doc.Node)
			r.File = &framework.File{Path: d.File, Index: doc.Index}
		} else if cfg.doc != nil && d.File == cfg.doc.File {
			r.ResourceRef = cfg.ref
			if d.File != configFile {
				r.File = &framework.File{Path: d.File}
			}
		} else if d.File != "" && !strings.HasPrefix(d.File, "<") {
			r.File = &framework.File{Path: d.File}
		}
		out = append(out, r)
	}
	return out
}

// itemAt returns the item of a file that holds a line: the last one whose
// document as written starts at or before it (items placed by line share
// their file's name).
func itemAt(its []*item, line int) *item {
	best := its[0]
	for _, it := range its[1:] {
		if l := it.doc.Lines; l != nil && line > 0 && l.Line <= line && (best.doc.Lines == nil || l.Line >= best.doc.Lines.Line) {
			best = it
		}
	}
	return best
}

// docAt returns the document of a file that holds a line: the last one
// starting at or before it.
func docAt(docs []*source.Doc, line int) *source.Doc {
	best := docs[0]
	for _, d := range docs[1:] {
		if d.Node != nil && line > 0 && d.Node.Line <= line {
			best = d
		}
	}
	return best
}
