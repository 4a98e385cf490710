// Package catalog merges the embedded default catalog with the platform
// team's entries and answers lookups by name. Entries are data: renderers and
// policies read their fields, never their names.
package catalog

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/jsonnet"
	"github.com/virtc/virtc/internal/olmindex"
	"github.com/virtc/virtc/internal/source"

	defaults "github.com/virtc/virtc/catalog"
)

// DefaultGoldenImageNamespace is where OpenShift Virtualization keeps its
// golden images.
const DefaultGoldenImageNamespace = "openshift-virtualization-os-images"

// Table is one kind of catalog entry, by name.
type Table[T any] struct {
	kind    string
	entries map[string]decode.Entry[T]
	names   []string
	// incomplete are entries left out for structural errors, by name.
	incomplete map[string]diag.Pos
}

func newTable[T any](kind string) *Table[T] {
	return &Table[T]{kind: kind, entries: map[string]decode.Entry[T]{}, incomplete: map[string]diag.Pos{}}
}

// Get returns the entry called name.
func (t *Table[T]) Get(name string) (*T, bool) {
	e, ok := t.entries[name]
	return e.Obj, ok
}

// Entry returns the entry called name with its source.
func (t *Table[T]) Entry(name string) (decode.Entry[T], bool) {
	e, ok := t.entries[name]
	return e, ok
}

// Names lists the entries' names in order.
func (t *Table[T]) Names() []string { return t.names }

// Unknown phrases the error for a name not in the table. An entry that
// is defined but was left out for its own errors is not called unknown:
// the message points to it instead of suggesting another.
func (t *Table[T]) Unknown(what, name string) string {
	if p, ok := t.incomplete[name]; ok {
		return fmt.Sprintf("%s %q cannot be used: its definition at %s:%d has errors", what, name, p.File, p.Line)
	}
	return diag.Unknown(what, name, t.names)
}

// kindTable is a Table whatever its entry type, for what Build does to
// every table alike.
type kindTable interface {
	leftOut(kind string, doc *source.Doc)
}

// leftOut records an entry that decoding left out, if it is of this kind.
func (t *Table[T]) leftOut(kind string, doc *source.Doc) {
	if kind != t.kind {
		return
	}
	name := source.Lookup(doc.Node, "metadata.name")
	if name.Kind != yaml.ScalarNode || name.Value == "" {
		return
	}
	if _, ok := t.incomplete[name.Value]; !ok {
		t.incomplete[name.Value] = doc.Pos("metadata.name")
	}
}

func (t *Table[T]) seal() { t.names = slices.Sorted(maps.Keys(t.entries)) }

// Catalog is the merged catalog.
type Catalog struct {
	Sizes  *Table[api.Size]
	Images *Table[api.Image]
	// ContainerDisks are the container disks VMs may mount as CD-ROMs.
	ContainerDisks  *Table[api.ContainerDisk]
	NetworkProfiles *Table[api.NetworkProfile]
	StorageProfiles *Table[api.StorageProfile]
	BackupPolicies  *Table[api.BackupPolicy]
	Preferences     *Table[api.Preference]
	WorkerPools     *Table[api.WorkerPool]
	// MigrationPolicies are emitted as KubeVirt MigrationPolicies.
	MigrationPolicies *Table[api.MigrationPolicy]

	// Platform is the cluster's Platform, if the inputs have one.
	Platform *decode.Entry[api.Platform]
	// OLM is the upgrade graph of the operator catalog the Subscriptions
	// install from, when the inputs hold it as a file-based catalog (nil
	// otherwise: the graph is then the version table's).
	OLM *olmindex.Index

	// DefaultStorage names the storage profile of disks that name none
	// (empty when the catalog has no default).
	DefaultStorage string
	// DefaultPool names the worker pool of VMs that name none: the pool
	// marked default, or the only pool (empty without pools).
	DefaultPool string
	// DefaultBackup names the backup policy of tenants that name none.
	DefaultBackup string
	// DefaultNetworks are the networks of VMs that name none.
	DefaultNetworks []string
	// GoldenImageNamespace holds the golden-image DataSources.
	GoldenImageNamespace string
}

// Embedded decodes the default catalog shipped in the binary.
func Embedded(diags *diag.List) *decode.Set {
	var docs []*source.Doc
	names, _ := fs.Glob(defaults.Files, "*")
	for _, name := range names {
		data, _ := defaults.Files.ReadFile(name)
		// rel is what objects of the embedded catalog record in
		// virtc.dev/source: a name no repository file can have, so that a
		// reviewer never looks for it in Git.
		file, rel := "<embedded>/catalog/"+name, "virtc:catalog/"+name
		if path.Ext(name) == ".jsonnet" {
			docs = append(docs, jsonnet.EvaluateEmbedded(file, rel, data, diags)...)
			continue
		}
		docs = append(docs, parseEmbedded(file, rel, data, diags)...)
	}
	return decode.Decode(docs, false, diags)
}

// embeddedDocs are the parsed YAML files of the embedded catalog, by file
// name: a process that compiles many times (virtc import compiles each
// adopted VM) parses them once. The YAML nodes are shared, never changed
// after parsing; each call gets its own Doc values, since decoding records
// what it found broken in them.
var embeddedDocs struct {
	sync.Mutex
	byFile map[string][]source.Doc
}

// parseEmbedded is source.Parse of an embedded catalog file, parsed once.
// A file that parses with diagnostics is parsed again on every call, so
// that each call reports them.
func parseEmbedded(file, rel string, data []byte, diags *diag.List) []*source.Doc {
	embeddedDocs.Lock()
	defer embeddedDocs.Unlock()
	cached, ok := embeddedDocs.byFile[file]
	if !ok {
		parsed := &diag.List{}
		docs := source.Parse(file, rel, data, parsed)
		if parsed.Len() > 0 {
			diags.Append(parsed)
			return docs
		}
		for _, d := range docs {
			cached = append(cached, *d)
		}
		if embeddedDocs.byFile == nil {
			embeddedDocs.byFile = map[string][]source.Doc{}
		}
		embeddedDocs.byFile[file] = cached
	}
	out := make([]*source.Doc, len(cached))
	for i := range cached {
		d := cached[i]
		out[i] = &d
	}
	return out
}

// Options say how the catalog is assembled.
type Options struct {
	// NoDefaults leaves the embedded default catalog out: only entries from
	// the inputs count.
	NoDefaults bool
}

// Build merges the embedded catalog (unless opts.NoDefaults) with the
// entries of user. A user entry replaces the default entry of the same kind
// and name; two user entries of the same kind and name are an error.
func Build(user *decode.Set, opts Options, diags *diag.List) *Catalog {
	c := &Catalog{
		Sizes:                newTable[api.Size]("Size"),
		Images:               newTable[api.Image]("Image"),
		ContainerDisks:       newTable[api.ContainerDisk]("ContainerDisk"),
		NetworkProfiles:      newTable[api.NetworkProfile]("NetworkProfile"),
		StorageProfiles:      newTable[api.StorageProfile]("StorageProfile"),
		BackupPolicies:       newTable[api.BackupPolicy]("BackupPolicy"),
		Preferences:          newTable[api.Preference]("Preference"),
		WorkerPools:          newTable[api.WorkerPool]("WorkerPool"),
		MigrationPolicies:    newTable[api.MigrationPolicy]("MigrationPolicy"),
		DefaultNetworks:      []string{"default"},
		GoldenImageNamespace: DefaultGoldenImageNamespace,
	}
	var base *decode.Set
	if !opts.NoDefaults {
		base = Embedded(diags)
	} else {
		base = &decode.Set{}
	}
	merge(c.Sizes, base.Sizes, user.Sizes, sizeName, diags)
	merge(c.Images, base.Images, user.Images, imageName, diags)
	merge(c.ContainerDisks, base.ContainerDisks, user.ContainerDisks, containerDiskName, diags)
	merge(c.NetworkProfiles, base.NetworkProfiles, user.NetworkProfiles, networkName, diags)
	merge(c.StorageProfiles, base.StorageProfiles, user.StorageProfiles, storageName, diags)
	merge(c.BackupPolicies, base.BackupPolicies, user.BackupPolicies, backupName, diags)
	merge(c.Preferences, base.Preferences, user.Preferences, preferenceName, diags)
	merge(c.WorkerPools, base.WorkerPools, user.WorkerPools, poolName, diags)
	merge(c.MigrationPolicies, base.MigrationPolicies, user.MigrationPolicies, migrationPolicyName, diags)
	tables := []kindTable{c.Sizes, c.Images, c.ContainerDisks, c.NetworkProfiles, c.StorageProfiles,
		c.BackupPolicies, c.Preferences, c.WorkerPools, c.MigrationPolicies}
	for _, doc := range user.Incomplete {
		_, kind := decode.Header(doc.Node)
		for _, t := range tables {
			t.leftOut(kind, doc)
		}
	}

	c.OLM = olmindex.FromDocs(user.OLMCatalog, diags)
	for i, p := range user.Platforms {
		if i == 0 {
			c.Platform = &user.Platforms[0]
			if ns := p.Obj.Spec.GoldenImageNamespace; ns != "" {
				c.GoldenImageNamespace = ns
			}
			continue
		}
		first := user.Platforms[0].Doc.Pos("metadata.name")
		diags.Errorf(p.Doc.Pos("metadata.name"), "metadata.name", "a second Platform (the first is at %s:%d): compile one cluster at a time", first.File, first.Line)
	}

	c.check(diags)
	c.DefaultStorage = pickDefault(c.StorageProfiles, user.StorageProfiles, storageName,
		func(s *api.StorageProfile) bool { return s.Spec.Default }, diags)
	c.DefaultPool = pickDefault(c.WorkerPools, user.WorkerPools, poolName,
		func(p *api.WorkerPool) bool { return p.Spec.Default }, diags)
	if c.DefaultPool == "" && len(c.WorkerPools.Names()) == 1 {
		c.DefaultPool = c.WorkerPools.Names()[0]
	}
	c.DefaultBackup = pickDefault(c.BackupPolicies, user.BackupPolicies, backupName,
		func(b *api.BackupPolicy) bool { return b.Spec.Default }, diags)
	c.warm()
	return c
}

func sizeName(s *api.Size) string   { return s.Metadata.Name }
func imageName(s *api.Image) string { return s.Metadata.Name }
func containerDiskName(s *api.ContainerDisk) string {
	return s.Metadata.Name
}
func networkName(s *api.NetworkProfile) string { return s.Metadata.Name }
func storageName(s *api.StorageProfile) string { return s.Metadata.Name }
func backupName(s *api.BackupPolicy) string    { return s.Metadata.Name }
func preferenceName(s *api.Preference) string  { return s.Metadata.Name }
func poolName(s *api.WorkerPool) string        { return s.Metadata.Name }
func migrationPolicyName(s *api.MigrationPolicy) string {
	return s.Metadata.Name
}

// merge fills t with the base entries, then the user's over them.
func merge[T any](t *Table[T], base, user []decode.Entry[T], name func(*T) string, diags *diag.List) {
	for _, e := range base {
		t.entries[name(e.Obj)] = e
	}
	fromUser := map[string]decode.Entry[T]{}
	for _, e := range user {
		n := name(e.Obj)
		if prev, dup := fromUser[n]; dup {
			p := prev.Doc.Pos("metadata.name")
			diags.Errorf(e.Doc.Pos("metadata.name"), "metadata.name", "duplicate %s %q (also defined at %s:%d)", t.kind, n, p.File, p.Line)
			continue
		}
		fromUser[n] = e
		t.entries[n] = e
	}
	t.seal()
}

// pickDefault finds the entry marked default. User entries marked default
// win over the embedded one; more than one user default is an error.
func pickDefault[T any](t *Table[T], user []decode.Entry[T], name func(*T) string, isDefault func(*T) bool, diags *diag.List) string {
	var first string
	for _, e := range user {
		if !isDefault(e.Obj) {
			continue
		}
		if first != "" {
			diags.Errorf(e.Doc.Pos("spec.default"), "spec.default", "only one %s may be the default (%q is already)", t.kind, first)
			continue
		}
		first = name(e.Obj)
	}
	if first != "" {
		return first
	}
	for _, n := range t.names {
		if isDefault(t.entries[n].Obj) {
			return n
		}
	}
	return ""
}

// check verifies references between catalog entries, whether or not a VM
// uses them.
func (c *Catalog) check(diags *diag.List) {
	c.checkPlacement(diags)
	for _, name := range c.Images.Names() {
		e, _ := c.Images.Entry(name)
		if _, ok := c.Preferences.Get(e.Obj.Spec.Preference); !ok {
			diags.Errorf(e.Doc.Pos("spec.preference"), "spec.preference", "image %q: %s", name, c.Preferences.Unknown("preference", e.Obj.Spec.Preference))
		}
	}
}
