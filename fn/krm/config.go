package krm

import (
	"fmt"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/virtc/virtc/fn/api"
	"github.com/virtc/virtc/fn/decode"
	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/emit"
	"github.com/virtc/virtc/fn/source"
)

// Kind is the kind of the function's configuration; its apiVersion is
// virtc.dev/v1alpha1. `virtc build` ignores Compiler documents, so a
// Compiler may sit beside the intents it configures.
const Kind = "Compiler"

// Spec holds the options of a Compiler functionConfig. Paths are read
// relative to the function's working directory, which kustomize sets to the
// directory of the kustomization that declares the function.
type Spec struct {
	// Paths are files or directories of intents and catalog entries to read,
	// like the PATH arguments of `virtc build`. A generator names its inputs
	// here; a transformer may leave it empty and get its inputs as items.
	Paths []string `json:"paths,omitempty"`
	// CatalogDirs are catalog files or directories to read besides the
	// inputs, like `virtc build --catalog`.
	CatalogDirs []string `json:"catalogDirs,omitempty"`
	// NoDefaultCatalog leaves the embedded default catalog out, like
	// `virtc build --no-default-catalog`.
	NoDefaultCatalog bool `json:"noDefaultCatalog,omitempty"`
	// Scope limits the output to one scope's objects, like `virtc build
	// --scope`: all (the default), platform, tenants or vms. Everything is
	// still read and checked.
	Scope string `json:"scope,omitempty"`
}

// specFields are the fields of Spec as they are spelled in YAML.
var specFields = []string{"paths", "catalogDirs", "noDefaultCatalog", "scope"}

// config is the decoded functionConfig and where it came from.
type config struct {
	Spec
	// doc is the functionConfig as a document, for locating messages.
	doc *source.Doc
	// dir is the directory of the configuration file as kustomize's origin
	// annotation names it ("" when unknown): item paths are made relative
	// to it.
	dir  string
	repo string
	ref  *kyaml.ResourceIdentifier
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
		file, c.dir, c.repo = o.label(), path.Dir(o.Path), o.Repo
	}
	c.doc = &source.Doc{File: file, Node: n, NoLines: true}
	c.Spec = DecodeConfig(c.doc, diags)
	return c
}

// DecodeConfig decodes a Compiler document strictly: unknown fields and
// wrong types are errors located in doc.
func DecodeConfig(doc *source.Doc, diags *diag.List) Spec {
	var s Spec
	n := doc.Node
	errorf := func(field, format string, args ...any) {
		diags.Errorf(doc.Pos(field), field, format, args...)
	}
	av, kind := decode.Header(n)
	if av != api.APIVersion || kind != Kind {
		errorf("kind", "expected apiVersion %s, kind %s (got apiVersion %q, kind %q)", api.APIVersion, Kind, av, kind)
		return s
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i].Value; k {
		case "apiVersion", "kind", "metadata":
		case "spec":
			s.decode(n.Content[i+1], errorf)
		default:
			errorf(k, "%s", diag.Unknown("field", k, []string{"apiVersion", "kind", "metadata", "spec"}))
		}
	}
	if s.Scope != "" {
		if _, ok := emit.ParseScope(s.Scope); !ok {
			errorf("spec.scope", "%s", diag.Unknown("scope", s.Scope, emit.ScopeNames()))
		}
	}
	return s
}

func (c *Spec) decode(n *yaml.Node, errorf func(field, format string, args ...any)) {
	if n.Kind != yaml.MappingNode {
		errorf("spec", "must be a mapping of options (%s)", strings.Join(specFields, ", "))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		field := "spec." + k
		var err error
		switch k {
		case "paths":
			err = decodeStrings(v, &c.Paths)
		case "catalogDirs":
			err = decodeStrings(v, &c.CatalogDirs)
		case "noDefaultCatalog":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				err = fmt.Errorf("must be true or false")
			} else {
				err = v.Decode(&c.NoDefaultCatalog)
			}
		case "scope":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
				err = fmt.Errorf("must be a string")
			} else {
				c.Scope = v.Value
			}
		default:
			errorf(field, "%s", diag.Unknown("field", k, specFields))
			continue
		}
		if err != nil {
			errorf(field, "%v", err)
		}
	}
}

// decodeStrings reads a list of non-empty strings.
func decodeStrings(n *yaml.Node, out *[]string) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("must be a list of paths")
	}
	for i, e := range n.Content {
		if e.Kind != yaml.ScalarNode || e.Tag != "!!str" || e.Value == "" {
			return fmt.Errorf("item %d must be a non-empty path", i)
		}
		*out = append(*out, e.Value)
	}
	return nil
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
	v, ok := rn.GetAnnotations()[AnnotationOrigin]
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
