// Package schema generates the JSON Schemas of the virtc kinds from the Go
// types in api: structure, required fields and enums from the decoder's
// own field list (decode.Fields), descriptions from the doc comments of the
// Go source, patterns for names and quantities.
//
// The schemas are JSON Schema draft-07, the newest draft that
// yaml-language-server (and so the VS Code YAML extension) implements;
// kubeconform reads it as well. They use nothing a later draft would add.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
)

// Draft is the JSON Schema dialect of the generated schemas.
const Draft = "http://json-schema.org/draft-07/schema#"

// AllFile is the schema of any virtc object (one file may mix kinds).
const AllFile = "virtc.json"

// FileName is the schema file of a kind: its name in lower case, as
// kubeconform's {{.ResourceKind}} spells it.
func FileName(kind string) string { return strings.ToLower(kind) + ".json" }

// Patterns of names and quantities. DNS-1123 forms are Kubernetes' (see
// k8s.io/apimachinery/pkg/util/validation); catalog names are the
// decoder's.
const (
	DNSLabelPattern     = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	DNSLabelMaxLength   = 63
	DNSSubdomainPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	DNSSubdomainMaxLen  = 253
	CatalogNameMaxLen   = 63
	// QuantityPattern is a Kubernetes quantity that is not negative: a
	// decimal number with a binary (Ki..Ei) or decimal (m, k..E) suffix or
	// an exponent.
	QuantityPattern = `^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][-+]?[0-9]+)?$`
)

// Kinds whose metadata differs from a catalog entry's (internal/decode/validate.go):
// Tenant, VM, Platform and NetworkProfile names are DNS-1123 labels (they
// name a namespace, a VirtualMachine, interfaces), and a VM names its Tenant
// in metadata.namespace. Every other kind, as kinds added later, is a
// cluster-wide catalog entry with a catalog name.
var (
	labelNamed = []string{"Tenant", "VM", "Platform", "NetworkProfile"}
	namespaced = []string{"VM"}
)

// rule narrows the schema of one Go field (Struct.Field) beyond its type,
// as the decoder's validation does.
type rule struct {
	pattern   string
	maxLength int
	minimum   *int64
	items     bool // the rule applies to the items of a list
}

func one() *int64 { v := int64(1); return &v }

var (
	label     = rule{pattern: DNSLabelPattern, maxLength: DNSLabelMaxLength}
	subdomain = rule{pattern: DNSSubdomainPattern, maxLength: DNSSubdomainMaxLen}
	catalog   = rule{pattern: decode.CatalogNamePattern, maxLength: CatalogNameMaxLen}
)

var rules = map[string]rule{
	"TenantSpec.Backup":               catalog,
	"TenantQuota.CPU":                 {minimum: one()},
	"TenantQuota.VMs":                 {minimum: one()},
	"VMSpec.Size":                     catalog,
	"VMSpec.Image":                    catalog,
	"VMSpec.Networks":                 {pattern: catalog.pattern, maxLength: catalog.maxLength, items: true},
	"VMSpec.Backup":                   catalog,
	"VMSpec.SSHKeySecrets":            {pattern: subdomain.pattern, maxLength: subdomain.maxLength, items: true},
	"Disk.Name":                       label,
	"Disk.Storage":                    catalog,
	"CloudInit.UserDataSecret":        subdomain,
	"CloudInit.NetworkDataSecret":     subdomain,
	"SizeSpec.CPU":                    {minimum: one()},
	"DataSourceRef.Name":              subdomain,
	"DataSourceRef.Namespace":         label,
	"StorageProfileSpec.StorageClass": subdomain,
}

// Generate returns the schema files, by file name: one per kind of
// decode.Kinds and AllFile. apiDir holds the Go source of api, read for
// the doc comments.
func Generate(apiDir string) (map[string][]byte, error) {
	docs, err := readDocs(apiDir)
	if err != nil {
		return nil, err
	}
	g := &generator{docs: docs}
	files := map[string][]byte{}
	defs := object{}
	var branches []any
	for _, kind := range decode.Kinds {
		t, ok := decode.TypeOf(kind)
		if !ok {
			return nil, fmt.Errorf("kind %s has no Go type", kind)
		}
		s, err := g.kind(kind, t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		top := object{{"$schema", Draft}}
		top = append(top, s...)
		if files[FileName(kind)], err = encode(top); err != nil {
			return nil, err
		}
		defs = append(defs, kv{kind, s})
		branches = append(branches, object{
			{"if", object{{"properties", object{{"kind", object{{"const", kind}}}}}, {"required", []string{"kind"}}}},
			{"then", object{{"$ref", "#/definitions/" + kind}}},
		})
	}
	all := object{
		{"$schema", Draft},
		{"title", "virtc object"},
		{"description", fmt.Sprintf("Any %s object: the intents (Tenant, VM) and the catalog entries. The kind picks the schema.", api.APIVersion)},
		{"type", "object"},
		{"required", []string{"apiVersion", "kind"}},
		{"properties", object{
			{"apiVersion", append(describe(object{}, g.fieldDoc("TypeMeta", "APIVersion")), kv{"const", api.APIVersion})},
			{"kind", append(describe(object{}, g.fieldDoc("TypeMeta", "Kind")), kv{"enum", decode.Kinds})},
		}},
		{"allOf", branches},
		{"definitions", defs},
	}
	if files[AllFile], err = encode(all); err != nil {
		return nil, err
	}
	return files, nil
}

// docs are the doc comments of api: "Type" and "Type.Field".
type docs map[string]string

func readDocs(dir string) (docs, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	d := docs{}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				d[ts.Name.Name] = text(doc)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, field := range st.Fields.List {
					for _, n := range field.Names {
						d[ts.Name.Name+"."+n.Name] = text(field.Doc)
					}
				}
			}
		}
	}
	if len(d) == 0 {
		return nil, fmt.Errorf("no Go types found in %s", dir)
	}
	return d, nil
}

// text turns a doc comment into a description: lines joined, paragraphs
// kept.
func text(c *ast.CommentGroup) string {
	if c == nil {
		return ""
	}
	var paras []string
	for _, p := range strings.Split(strings.TrimSpace(c.Text()), "\n\n") {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			paras = append(paras, p)
		}
	}
	return strings.Join(paras, "\n\n")
}

type generator struct{ docs docs }

func (g *generator) fieldDoc(typ, field string) string { return g.docs[typ+"."+field] }

// typeDoc is the doc comment of a named type of api, if t is one.
func (g *generator) typeDoc(t reflect.Type) string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.PkgPath() != reflect.TypeFor[api.TypeMeta]().PkgPath() {
		return ""
	}
	return g.docs[t.Name()]
}

// kind is the schema of one kind (without $schema).
func (g *generator) kind(kind string, t reflect.Type) (object, error) {
	s, err := g.structure(t)
	if err != nil {
		return nil, err
	}
	out := describe(object{{"title", kind}}, g.typeDoc(t))
	out = append(out, s...)
	props := out.get("properties").(object)
	props.set("apiVersion", append(describe(object{}, g.fieldDoc("TypeMeta", "APIVersion")), kv{"const", api.APIVersion}))
	props.set("kind", append(describe(object{}, g.fieldDoc("TypeMeta", "Kind")), kv{"const", kind}))
	if meta, ok := props.get("metadata").(object); ok {
		mprops := meta.get("properties").(object)
		name := catalog
		if slices.Contains(labelNamed, kind) {
			name = label
		}
		mprops.set("name", name.apply(mprops.get("name").(object)))
		if slices.Contains(namespaced, kind) {
			mprops.set("namespace", label.apply(nonNull(mprops.get("namespace").(object))))
			meta.set("required", append(meta.get("required").([]string), "namespace"))
		} else {
			mprops = mprops.without("namespace")
		}
		meta.set("properties", mprops)
		props.set("metadata", meta)
	}
	out.set("properties", props)
	return out, nil
}

// structure is the schema of a struct: its properties in declaration
// order, the required ones, nothing else allowed (the decoder rejects
// unknown fields).
func (g *generator) structure(t reflect.Type) (object, error) {
	props := object{}
	required := []string{}
	for _, f := range decode.Fields(t) {
		s, err := g.value(f.Type)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", f.Struct.Name(), f.GoName, err)
		}
		desc := g.fieldDoc(f.Struct.Name(), f.GoName)
		if desc == "" {
			desc = g.typeDoc(f.Type)
		}
		s = append(describe(object{}, desc), s...)
		if r, ok := rules[f.Struct.Name()+"."+f.GoName]; ok {
			if r.items {
				s.set("items", r.apply(s.get("items").(object)))
			} else {
				s = r.apply(s)
			}
		}
		// The decoder's own tags come last: they are the rule.
		if f.Enum != nil {
			if s.get("type") == "array" {
				items := slices.Clone(s.get("items").(object))
				items.set("enum", f.Enum)
				s.set("items", items)
			} else {
				s.set("enum", f.Enum)
			}
		}
		if f.Pattern != "" && s.get("type") == "string" {
			s.set("pattern", f.Pattern)
			if f.Hint != "" {
				s.set("description", strings.TrimSpace(desc+" Form: "+f.Hint+"."))
			}
		}
		if f.Required {
			required = append(required, f.Name)
		} else {
			// The decoder takes null for absent.
			s = nullable(s)
		}
		props = append(props, kv{f.Name, s})
	}
	out := object{{"type", "object"}}
	if len(required) > 0 {
		out = append(out, kv{"required", required})
	}
	return append(out, kv{"properties", props}, kv{"additionalProperties", false}), nil
}

// value is the schema of a Go type as the decoder reads it.
func (g *generator) value(t reflect.Type) (object, error) {
	if t == decode.QuantityType {
		return object{{"type", []string{"string", "integer"}}, {"pattern", QuantityPattern}, {"minimum", 0}, {"maximum", int64(decode.MaxQuantity)}}, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.value(t.Elem())
	case reflect.Struct:
		return g.structure(t)
	case reflect.Slice:
		items, err := g.value(t.Elem())
		if err != nil {
			return nil, err
		}
		return object{{"type", "array"}, {"items", items}}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("unsupported map key type %s", t.Key())
		}
		v, err := g.value(t.Elem())
		if err != nil {
			return nil, err
		}
		return object{{"type", "object"}, {"additionalProperties", nullable(v)}}, nil
	case reflect.String:
		return object{{"type", "string"}}, nil
	case reflect.Bool:
		return object{{"type", "boolean"}}, nil
	case reflect.Int64, reflect.Int32, reflect.Int:
		return object{{"type", "integer"}, {"minimum", decode.MinInt}, {"maximum", decode.MaxInt}}, nil
	}
	return nil, fmt.Errorf("unsupported type %s", t)
}

// describe adds a description, if there is one.
func describe(o object, desc string) object {
	if desc == "" {
		return o
	}
	return append(o, kv{"description", desc})
}

func (r rule) apply(s object) object {
	s = slices.Clone(s)
	if r.pattern != "" {
		s.set("pattern", r.pattern)
	}
	if r.maxLength > 0 {
		s.set("maxLength", r.maxLength)
	}
	if r.minimum != nil {
		s.set("minimum", *r.minimum)
	}
	return s
}

// nullable lets a schema also accept null.
func nullable(s object) object {
	s = slices.Clone(s)
	if e, ok := s.get("enum").([]string); ok {
		vals := make([]any, 0, len(e)+1)
		for _, v := range e {
			vals = append(vals, v)
		}
		s.set("enum", append(vals, nil))
	}
	switch t := s.get("type").(type) {
	case string:
		s.set("type", []string{t, "null"})
	case []string:
		s.set("type", append(slices.Clone(t), "null"))
	}
	return s
}

// nonNull undoes nullable.
func nonNull(s object) object {
	s = slices.Clone(s)
	if t, ok := s.get("type").([]string); ok {
		s.set("type", slices.DeleteFunc(slices.Clone(t), func(x string) bool { return x == "null" })[0])
	}
	return s
}

// object is a JSON object that keeps its keys in order.
type object []kv

type kv struct {
	key string
	val any
}

func (o object) get(key string) any {
	for _, p := range o {
		if p.key == key {
			return p.val
		}
	}
	return nil
}

// set replaces the value of key, or appends it.
func (o *object) set(key string, val any) {
	for i, p := range *o {
		if p.key == key {
			(*o)[i].val = val
			return
		}
	}
	*o = append(*o, kv{key, val})
}

func (o object) without(key string) object {
	return slices.DeleteFunc(slices.Clone(o), func(p kv) bool { return p.key == key })
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(p.key)
		if err != nil {
			return nil, err
		}
		v, err := marshal(p.val)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Write generates the schemas into dir, removing schema files of kinds
// that no longer exist.
func Write(apiDir, dir string) error {
	files, err := Generate(apiDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if _, keep := files[filepath.Base(f)]; !keep {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
