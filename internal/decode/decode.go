package decode

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/par"
	"github.com/virtc/virtc/internal/source"
)

// Tenant is a decoded Tenant with the document it came from.
type Tenant struct {
	*api.Tenant
	Doc *source.Doc
}

// VM is a decoded VM with the document it came from.
type VM struct {
	*api.VM
	Doc *source.Doc
}

// Entry is a decoded catalog entry with the document it came from.
type Entry[T any] struct {
	Obj *T
	Doc *source.Doc
}

// Set is everything decoded from the inputs, in input order.
type Set struct {
	Tenants           []Tenant
	VMs               []VM
	Sizes             []Entry[api.Size]
	Images            []Entry[api.Image]
	ContainerDisks    []Entry[api.ContainerDisk]
	NetworkProfiles   []Entry[api.NetworkProfile]
	StorageProfiles   []Entry[api.StorageProfile]
	BackupPolicies    []Entry[api.BackupPolicy]
	Preferences       []Entry[api.Preference]
	Platforms         []Entry[api.Platform]
	WorkerPools       []Entry[api.WorkerPool]
	MigrationPolicies []Entry[api.MigrationPolicy]
	Evidence          []Entry[api.Evidence]
	PlatformFacts     []Entry[api.PlatformFacts]
	// OLMCatalog holds the documents of a file-based OLM catalog (schema
	// olm.package, olm.channel, olm.bundle …: `opm render -o yaml` of an
	// index image, or `virtc olm-graph` of it): the upgrade graph of the
	// catalog the Subscriptions install from (olmindex.FromDocs).
	OLMCatalog []*source.Doc
	// Other holds documents that are not virtc objects, for callers that pass
	// them through (the KRM function). The CLI reports them.
	Other []*source.Doc
	// Incomplete holds the documents of the other kinds (catalog entries,
	// Platforms) that were left out for structural errors, so that what
	// refers to them can say so rather than call them unknown.
	Incomplete []*source.Doc
}

// Kinds lists the virtc kinds in the order they are documented.
var Kinds = []string{"Tenant", "VM", "Platform", "Size", "Preference", "Image", "ContainerDisk", "NetworkProfile", "StorageProfile", "BackupPolicy", "WorkerPool", "MigrationPolicy", "Evidence", "PlatformFacts", "Compiler"}

// kindTypes maps each kind to its Go type.
var kindTypes = map[string]reflect.Type{
	"Tenant":          reflect.TypeFor[api.Tenant](),
	"VM":              reflect.TypeFor[api.VM](),
	"Size":            reflect.TypeFor[api.Size](),
	"Image":           reflect.TypeFor[api.Image](),
	"ContainerDisk":   reflect.TypeFor[api.ContainerDisk](),
	"NetworkProfile":  reflect.TypeFor[api.NetworkProfile](),
	"StorageProfile":  reflect.TypeFor[api.StorageProfile](),
	"BackupPolicy":    reflect.TypeFor[api.BackupPolicy](),
	"Preference":      reflect.TypeFor[api.Preference](),
	"Platform":        reflect.TypeFor[api.Platform](),
	"WorkerPool":      reflect.TypeFor[api.WorkerPool](),
	"MigrationPolicy": reflect.TypeFor[api.MigrationPolicy](),
	"Evidence":        reflect.TypeFor[api.Evidence](),
	"PlatformFacts":   reflect.TypeFor[api.PlatformFacts](),
	"Compiler":        reflect.TypeFor[api.Compiler](),
}

// Into decodes one document strictly into v (a pointer to an api type),
// with the same rules and messages as every other virtc document. It
// reports whether the document decoded without structural errors.
func Into(doc *source.Doc, v any, diags *diag.List) bool {
	_, kind := Header(doc.Node)
	d := &decoder{doc: doc, diags: diags, kind: kind}
	d.object(doc.Node, reflect.ValueOf(v).Elem(), "")
	doc.Broken = d.broken
	return !d.structural
}

// TypeOf returns the Go type of a virtc kind.
func TypeOf(kind string) (reflect.Type, bool) {
	t, ok := kindTypes[kind]
	return t, ok
}

// IsOLMCatalog reports whether a document is one of a file-based OLM
// catalog: no apiVersion or kind, and a schema of OLM's
// (operator-registry v1.65.0 alpha/declcfg/declcfg.go: olm.package,
// olm.channel, olm.bundle, olm.deprecations and others).
func IsOLMCatalog(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	s := source.Lookup(n, "schema")
	return s != nil && s.Kind == yaml.ScalarNode && strings.HasPrefix(s.Value, "olm.")
}

// ignoredKinds are virtc documents that configure virtc itself rather than
// describe the cluster: they may sit beside intents and are skipped.
var ignoredKinds = []string{"Compiler"}

// Header reads apiVersion and kind of a document without decoding it.
func Header(n *yaml.Node) (apiVersion, kind string) {
	if n.Kind != yaml.MappingNode {
		return "", ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "apiVersion":
			apiVersion = n.Content[i+1].Value
		case "kind":
			kind = n.Content[i+1].Value
		}
	}
	return apiVersion, kind
}

// IsVirtc reports whether a document claims to be a virtc object.
func IsVirtc(n *yaml.Node) bool {
	av, _ := Header(n)
	return strings.HasPrefix(av, api.Group+"/")
}

// Decode decodes every document into s. Documents that are not virtc
// objects are kept in s.Other when passThrough is set, and reported
// otherwise. Documents are decoded on all CPUs, each with its own
// diagnostics, and collected in input order.
func Decode(docs []*source.Doc, passThrough bool, diags *diag.List) *Set {
	s := &Set{}
	results := make([]decoded, len(docs))
	pieces, bounds := par.Chunks(len(docs), 64)
	par.For(pieces, func(c int) {
		lo, hi := bounds(c)
		for i := lo; i < hi; i++ {
			results[i] = decodeDoc(docs[i], passThrough)
		}
	})
	for i := range results {
		r := &results[i]
		diags.Append(&r.diags)
		if r.other {
			s.Other = append(s.Other, docs[i])
			continue
		}
		if r.olm {
			s.OLMCatalog = append(s.OLMCatalog, docs[i])
			continue
		}
		if r.obj != nil {
			s.add(r.obj, docs[i])
		} else if r.incomplete {
			s.Incomplete = append(s.Incomplete, docs[i])
		}
	}
	return s
}

// decoded is one document's outcome: an object, a pass-through document,
// or nothing (with diagnostics saying why).
type decoded struct {
	obj   any
	other bool
	// olm: a document of a file-based OLM catalog.
	olm bool
	// incomplete: a known kind left out for structural errors.
	incomplete bool
	diags      diag.List
}

func decodeDoc(doc *source.Doc, passThrough bool) (r decoded) {
	d := &decoder{doc: doc, diags: &r.diags}
	n := doc.Node
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "", "a document must be a mapping with apiVersion and kind, not %s", kindName(n))
		return
	}
	av, kind := Header(n)
	if av == "" && kind == "" && IsOLMCatalog(n) {
		r.olm = true
		return
	}
	if !strings.HasPrefix(av, api.Group+"/") {
		if passThrough {
			r.other = true
			return
		}
		switch {
		case av == "" && kind == "":
			d.errorf(n, "", "not a Kubernetes-style object: apiVersion and kind are missing")
		case av == "v1" && kind == "Secret":
			d.errorf(n, "kind", "Secrets must not be kept in Git beside intents (create them in the cluster, or through an external secrets operator, and name them in cloudInit.userDataSecret or sshKeySecrets)")
		case av == "":
			d.errorf(n, "apiVersion", "required field is missing (virtc objects use apiVersion %s)", api.APIVersion)
		default:
			d.errorf(source.Lookup(n, "apiVersion"), "apiVersion", "unknown apiVersion %q with kind %q: virtc reads only %s objects (%s)", av, kind, api.APIVersion, strings.Join(Kinds, ", "))
		}
		return
	}
	if av != api.APIVersion {
		d.errorf(source.Lookup(n, "apiVersion"), "apiVersion", "unsupported apiVersion %q (use %s)", av, api.APIVersion)
		return
	}
	if slices.Contains(ignoredKinds, kind) {
		return
	}
	t, ok := kindTypes[kind]
	if !ok {
		if kind == "" {
			d.errorf(n, "kind", "required field is missing (one of %s)", strings.Join(Kinds, ", "))
		} else {
			d.errorf(source.Lookup(n, "kind"), "kind", "%s", diag.UnknownName("kind", kind, Kinds))
		}
		return
	}
	d.kind = kind
	d.secrets(n)
	v := reflect.New(t)
	d.object(n, v.Elem(), "")
	// The values of a document with structural errors are half set: the
	// broken ones are zero. The rest is still validated, and the later
	// stages still check an intent, but nothing covered by a broken field
	// is reported (doc.Broken, diag.Covers), so that every problem of an
	// object shows at once and none is a mere consequence of another.
	doc.Broken = d.broken
	validate(d, v.Interface())
	if d.structural && !slices.Contains(partialKinds, kind) {
		r.incomplete = true
		return
	}
	r.obj = v.Interface()
	return
}

// partialKinds are the kinds whose objects go on to the later stages
// even with structural errors: intents, whose checks concern themselves
// (and their tenant's sums). A catalog entry or Platform with structural
// errors is left out, since every intent that uses it would be checked
// against its unset values.
var partialKinds = []string{"Tenant", "VM"}

// add puts a decoded object into its slot.
func (s *Set) add(obj any, doc *source.Doc) {
	switch o := obj.(type) {
	case *api.Tenant:
		s.Tenants = append(s.Tenants, Tenant{o, doc})
	case *api.VM:
		s.VMs = append(s.VMs, VM{o, doc})
	case *api.Size:
		s.Sizes = append(s.Sizes, Entry[api.Size]{o, doc})
	case *api.Image:
		s.Images = append(s.Images, Entry[api.Image]{o, doc})
	case *api.ContainerDisk:
		s.ContainerDisks = append(s.ContainerDisks, Entry[api.ContainerDisk]{o, doc})
	case *api.NetworkProfile:
		s.NetworkProfiles = append(s.NetworkProfiles, Entry[api.NetworkProfile]{o, doc})
	case *api.StorageProfile:
		s.StorageProfiles = append(s.StorageProfiles, Entry[api.StorageProfile]{o, doc})
	case *api.BackupPolicy:
		s.BackupPolicies = append(s.BackupPolicies, Entry[api.BackupPolicy]{o, doc})
	case *api.Preference:
		s.Preferences = append(s.Preferences, Entry[api.Preference]{o, doc})
	case *api.Platform:
		s.Platforms = append(s.Platforms, Entry[api.Platform]{o, doc})
	case *api.WorkerPool:
		s.WorkerPools = append(s.WorkerPools, Entry[api.WorkerPool]{o, doc})
	case *api.MigrationPolicy:
		s.MigrationPolicies = append(s.MigrationPolicies, Entry[api.MigrationPolicy]{o, doc})
	case *api.Evidence:
		s.Evidence = append(s.Evidence, Entry[api.Evidence]{o, doc})
	case *api.PlatformFacts:
		s.PlatformFacts = append(s.PlatformFacts, Entry[api.PlatformFacts]{o, doc})
	default:
		panic(fmt.Sprintf("decode: %T has no slot", obj))
	}
}
