package krm

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/source"
)

// maxKustomizationDepth bounds how far the locator follows directory
// resources (bases, overlays of overlays) from the working directory.
const maxKustomizationDepth = 8

// kustomizationFiles are the names kustomize reads a kustomization from
// (kustomize api v0.21 konfig.RecognizedKustomizationFileNames).
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// written is a virtc document as it stands in a file of this machine.
type written struct {
	file string // as found: relative to the working directory, or absolute
	node *yaml.Node
}

// locator finds where an item of the ResourceList is written, so that
// messages name its file and line even when the orchestrator said nothing
// (kustomize without `buildMetadata: [originAnnotations]`) or named only the
// file (the origin annotation carries no line). Files are parsed once.
type locator struct {
	files map[string][]*yaml.Node
	// indexes hold each file's documents by kind/namespace/name and by
	// kind/name (the keys cannot collide: names hold no slash).
	indexes map[string]map[string][]*yaml.Node
	// listed are the virtc documents of the resources the kustomization in
	// the working directory lists (kustomize runs an exec function there),
	// read on first use.
	// listed are indexed by kind/namespace/name, byName by kind/name.
	listed     map[string][]written
	byName     map[string][]written
	listedRead bool
}

func newLocator() *locator {
	return &locator{files: map[string][]*yaml.Node{}, indexes: map[string]map[string][]*yaml.Node{}, listed: map[string][]written{}, byName: map[string][]written{}}
}

// docs are the YAML documents of a file, nil when it cannot be read.
func (l *locator) docs(file string) []*yaml.Node {
	if d, ok := l.files[file]; ok {
		return d
	}
	var out []*yaml.Node
	data, err := source.ReadFile(file)
	if err == nil {
		// Intents in the subset the fast parser takes (most) are read as
		// virtc build reads them: the same nodes and positions as yaml.v3,
		// in a fraction of its time (a fleet's files are read again here).
		if docs, ok := source.FastParse(data); ok {
			l.files[file] = docs
			return docs
		}
	}
	if err == nil {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var n yaml.Node
			if err := dec.Decode(&n); err != nil {
				break
			}
			if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
				out = append(out, n.Content[0])
			}
		}
	}
	l.files[file] = out
	return out
}

// inFile is the document of file that holds the object ref: the same kind,
// name and namespace, or, when an overlay changed the namespace, the only
// document of that kind and name.
func (l *locator) inFile(file string, ref *kyaml.ResourceIdentifier) *yaml.Node {
	idx, ok := l.indexes[file]
	if !ok {
		idx = map[string][]*yaml.Node{}
		for _, n := range l.docs(file) {
			kind, name, ns := identity(n)
			idx[kind+"/"+ns+"/"+name] = append(idx[kind+"/"+ns+"/"+name], n)
			idx[kind+"/"+name] = append(idx[kind+"/"+name], n)
		}
		l.indexes[file] = idx
	}
	if ns := idx[ref.Kind+"/"+ref.Namespace+"/"+ref.Name]; len(ns) > 0 {
		return ns[0]
	}
	if byName := idx[ref.Kind+"/"+ref.Name]; len(byName) == 1 {
		return byName[0]
	}
	return nil
}

// listedIn finds ref among the resources the kustomization of the working
// directory lists, following directory resources to their kustomizations:
// the same kind, namespace and name, or, when an overlay changed the
// namespace, the only resource of that kind and name.
func (l *locator) listedIn(ref *kyaml.ResourceIdentifier) (written, bool) {
	if !l.listedRead {
		l.listedRead = true
		l.walk(".", 0, map[string]bool{})
	}
	if ws := l.listed[ref.Kind+"/"+ref.Namespace+"/"+ref.Name]; len(ws) > 0 {
		return ws[0], true
	}
	if ws := l.byName[ref.Kind+"/"+ref.Name]; len(ws) == 1 {
		return ws[0], true
	}
	return written{}, false
}

func (l *locator) walk(dir string, depth int, seen map[string]bool) {
	abs, err := filepath.Abs(dir)
	if err != nil || seen[abs] || depth > maxKustomizationDepth {
		return
	}
	seen[abs] = true
	var k struct {
		Resources []string `yaml:"resources"`
		Bases     []string `yaml:"bases"`
	}
	found := false
	for _, name := range kustomizationFiles {
		if data, err := source.ReadFile(filepath.Join(dir, name)); err == nil {
			found = yaml.Unmarshal(data, &k) == nil
			break
		}
	}
	if !found {
		return
	}
	for _, r := range append(k.Resources, k.Bases...) {
		if remote(r) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(r))
		info, err := os.Stat(p)
		switch {
		case err != nil:
		case info.IsDir():
			l.walk(p, depth+1, seen)
		default:
			for _, n := range l.docs(p) {
				if decode.IsVirtc(n) {
					kind, name, ns := identity(n)
					w := written{file: p, node: n}
					l.listed[kind+"/"+ns+"/"+name] = append(l.listed[kind+"/"+ns+"/"+name], w)
					l.byName[kind+"/"+name] = append(l.byName[kind+"/"+name], w)
				}
			}
		}
	}
}

// remote reports a kustomization resource that is fetched, not a local path.
func remote(r string) bool {
	return strings.Contains(r, "://") || strings.HasPrefix(r, "git@") || strings.Contains(r, "?ref=") ||
		strings.HasPrefix(r, "github.com/") || strings.HasPrefix(r, "gitlab.com/")
}

func identity(n *yaml.Node) (kind, name, namespace string) {
	_, kind = decode.Header(n)
	if md := mapValue(n, "metadata"); md != nil {
		if v := mapValue(md, "name"); v != nil {
			name = v.Value
		}
		if v := mapValue(md, "namespace"); v != nil {
			namespace = v.Value
		}
	}
	return kind, name, namespace
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
