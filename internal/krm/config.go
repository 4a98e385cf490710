package krm

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/internal/warnings"
)

// Kind is the kind of the function's configuration; its apiVersion is
// virtc.dev/v1alpha1. `virtc build` ignores Compiler documents, so a
// Compiler may sit beside the intents it configures.
const Kind = compile.CompilerKind

// Spec holds the options of a Compiler functionConfig.
type Spec = api.CompilerSpec

// config is the decoded functionConfig and where it came from.
type config struct {
	Spec
	// doc is the functionConfig as a document, for locating messages.
	doc *source.Doc
	// dir is the directory of the configuration file as kustomize's origin
	// annotation names it ("" when unknown): item paths are made relative
	// to it.
	dir  string
	file string // the origin path of the Compiler file
	repo string
	ref  *kyaml.ResourceIdentifier
}

// fileDir is the directory of this machine that holds the Compiler file,
// or "" when it cannot be found. kustomize runs an exec function in the
// directory of the kustomization that declares it (kyaml
// fn/runtime/exec/exec.go: cmd.Dir is the plugin loader's WorkingDir, the
// kustomization's root, api internal/target/kusttarget.go), and the
// Compiler's origin path is relative to the kustomization being built,
// which may be an overlay elsewhere: so the file is looked for in the
// working directory under the last components of its origin path, its
// name alone first.
func (c *config) fileDir() string {
	if c.dir == "" || c.file == "" {
		return ""
	}
	parts := strings.Split(path.Join(c.dir, path.Base(c.file)), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] == ".." || parts[i] == "." {
			break
		}
		rel := filepath.FromSlash(strings.Join(parts[i:], "/"))
		if info, err := os.Stat(rel); err == nil && !info.IsDir() {
			if abs, err := filepath.Abs(filepath.Dir(rel)); err == nil {
				return abs
			}
		}
	}
	return ""
}

// configFile is the name messages give the functionConfig when the
// orchestrator does not say which file it came from.
const configFile = "functionConfig"

// readConfig decodes the functionConfig. A missing config means the
// defaults (kpt can run a function without one).
func readConfig(rn *kyaml.RNode, diags *diag.List) *config {
	c := &config{}
	if rn == nil || rn.IsNilOrEmpty() {
		return c
	}
	n := rn.YNode()
	c.ref = refOf(n)
	file := configFile
	if o, ok := originOf(rn); ok {
		file, c.dir, c.repo, c.file = o.label(), path.Dir(o.Path), o.Repo, o.Path
	}
	c.doc = &source.Doc{File: file, Node: n, NoLines: true}
	c.Spec = compile.DecodeCompiler(c.doc, diags)
	if ref := c.Spec.WarningsConfigMap; ref != "" {
		if err := warnings.Check(ref); err != nil {
			diags.Errorf(c.doc.Pos("spec.warningsConfigMap"), "spec.warningsConfigMap", "%q: %v", ref, err)
		}
	}
	return c
}

// origin is kustomize's config.kubernetes.io/origin annotation, set when
// the kustomization asks for `buildMetadata: [originAnnotations]`. Path is
// relative to the kustomization being built.
type origin struct {
	Path string `yaml:"path"`
	Repo string `yaml:"repo"`
	Ref  string `yaml:"ref"`
}

func originOf(rn *kyaml.RNode) (origin, bool) {
	return parseOrigin(annotationsOf(rn.YNode()))
}

// parseOrigin reads kustomize's origin annotation among annotations.
func parseOrigin(ann map[string]string) (origin, bool) {
	v, ok := ann[AnnotationOrigin]
	if !ok {
		return origin{}, false
	}
	var o origin
	if err := yaml.Unmarshal([]byte(v), &o); err != nil || o.Path == "" {
		return origin{}, false
	}
	o.Path = path.Clean(o.Path)
	return o, true
}

// label names the origin in messages.
func (o origin) label() string {
	if o.Repo == "" {
		return o.Path
	}
	s := o.Repo + "//" + o.Path
	if o.Ref != "" {
		s += "?ref=" + o.Ref
	}
	return s
}

// refOf identifies the object a document describes.
func refOf(n *yaml.Node) *kyaml.ResourceIdentifier {
	av, kind := decode.Header(n)
	r := &kyaml.ResourceIdentifier{TypeMeta: kyaml.TypeMeta{APIVersion: av, Kind: kind}}
	if m := source.Lookup(n, "metadata"); m != n && m.Kind == yaml.MappingNode {
		if v := source.Lookup(m, "name"); v != m && v.Kind == yaml.ScalarNode {
			r.Name = v.Value
		}
		if v := source.Lookup(m, "namespace"); v != m && v.Kind == yaml.ScalarNode {
			r.Namespace = v.Value
		}
	}
	return r
}
