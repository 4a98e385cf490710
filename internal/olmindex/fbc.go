package olmindex

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

// The file-based catalog format (operator-registry v1.65.0
// alpha/declcfg/declcfg.go): a stream of JSON or YAML documents, each with
// a schema. What the graph needs of them:
//
//   - olm.package: name, defaultChannel;
//   - olm.channel: package, name, entries[] {name, replaces, skips,
//     skipRange} (declcfg_to_model.go takes a bundle's edges from its
//     channel entry, per channel);
//   - olm.bundle: name, package, and the version of its one olm.package
//     property (declcfg_to_model.go: "must have exactly 1 olm.package
//     property").
//
// Other schemas (olm.deprecations, olm.csv.metadata, custom ones) and
// other properties are ignored, as this reads only the graph.
type meta struct {
	Schema         string `json:"schema"`
	Name           string `json:"name"`
	Package        string `json:"package"`
	DefaultChannel string `json:"defaultChannel"`
	Entries        []struct {
		Name      string   `json:"name"`
		Replaces  string   `json:"replaces,omitempty"`
		Skips     []string `json:"skips,omitempty"`
		SkipRange string   `json:"skipRange,omitempty"`
	} `json:"entries"`
	Properties []property `json:"properties"`
}

// property is an olm.bundle property, its value left encoded.
type property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// ReadFBC reads a file-based catalog: one file (the output of `opm render`
// of an index image, JSON or YAML) or a directory of them (a catalog
// directory, read as `opm serve` reads it: every .json, .yaml and .yml
// file below it, in lexical order). Source is the path and the sha256 of
// the bytes read, so a build can say which catalog its route came from.
func ReadFBC(path string) (*Index, error) {
	files, err := catalogFiles(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.New()
	var metas []meta
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(sum, "%s\x00%d\x00", filepath.ToSlash(strings.TrimPrefix(f, path)), len(data))
		sum.Write(data)
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
		for {
			var m meta
			if err := dec.Decode(&m); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %v", f, err)
			}
			metas = append(metas, m)
		}
	}
	return fromMetas(fmt.Sprintf("%s (sha256:%x)", path, sum.Sum(nil)), metas)
}

func catalogFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".json", ".yaml", ".yml":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	slices.Sort(files)
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s: no .json, .yaml or .yml file of a file-based catalog", path)
	}
	return files, err
}

func fromMetas(source string, metas []meta) (*Index, error) {
	ix := newIndex(source)
	version := map[[2]string]string{} // package, bundle → version
	var errs []error
	for _, m := range metas {
		switch m.Schema {
		case "olm.package":
			ix.pkg(m.Name).DefaultChannel = m.DefaultChannel
		case "olm.bundle":
			n := 0
			for _, p := range m.Properties {
				if p.Type != "olm.package" {
					continue
				}
				var v struct {
					PackageName string `json:"packageName"`
					Version     string `json:"version"`
				}
				if err := json.Unmarshal(p.Value, &v); err != nil {
					errs = append(errs, fmt.Errorf("%s: bundle %s: olm.package property: %v", source, m.Name, err))
				}
				version[[2]string{m.Package, m.Name}] = v.Version
				n++
			}
			if n != 1 {
				errs = append(errs, fmt.Errorf("%s: package %q bundle %q must have exactly 1 \"olm.package\" property, found %d", source, m.Package, m.Name, n))
			}
		}
	}
	for _, m := range metas {
		if m.Schema != "olm.channel" {
			continue
		}
		if _, ok := ix.Packages[m.Package]; !ok {
			errs = append(errs, fmt.Errorf("%s: channel %q names package %q, which has no olm.package", source, m.Name, m.Package))
			continue
		}
		for _, e := range m.Entries {
			v, ok := version[[2]string{m.Package, e.Name}]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: package %q channel %q: entry %q has no olm.bundle", source, m.Package, m.Name, e.Name))
				continue
			}
			if err := ix.add(Entry{Package: m.Package, Channel: m.Name, Name: e.Name, Version: v, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ix, nil
}

// FromDocs is the graph of the file-based catalog documents among a
// build's inputs (decode.Set.OLMCatalog), reported at their files and
// lines; nil without any. Source names the files and the sha256 of the
// documents in file order, so the same catalog gives the same digest
// whatever the order the files were read in and wherever the build runs.
func FromDocs(docs []*source.Doc, diags *diag.List) *Index {
	if len(docs) == 0 {
		return nil
	}
	docs = slices.Clone(docs)
	slices.SortStableFunc(docs, func(a, b *source.Doc) int {
		return cmp.Or(cmp.Compare(a.Rel, b.Rel), cmp.Compare(a.Index, b.Index))
	})
	sum := sha256.New()
	var files []string
	metas := make([]meta, len(docs))
	ok := true
	for i, d := range docs {
		var v any
		var data []byte
		err := d.Node.Decode(&v)
		if err == nil {
			data, err = json.Marshal(v)
		}
		if err == nil {
			err = json.Unmarshal(data, &metas[i])
		}
		if err != nil {
			diags.Errorf(d.Pos("schema"), "", "a file-based catalog document (schema %s) that is not of operator-registry's form: %v", source.Lookup(d.Node, "schema").Value, err)
			ok = false
			continue
		}
		// The documents' content only: the same catalog has the same
		// digest wherever the build runs from.
		fmt.Fprintf(sum, "%d\x00", len(data))
		sum.Write(data)
		if len(files) == 0 || files[len(files)-1] != d.Rel {
			files = append(files, d.Rel)
		}
	}
	if !ok {
		return nil
	}
	ix, err := fromMetas(fmt.Sprintf("the file-based catalog %s (sha256:%x)", strings.Join(files, ", "), sum.Sum(nil)[:8]), metas)
	if err != nil {
		for _, e := range unjoin(err) {
			diags.Errorf(docs[0].Pos("schema"), "", "%v", e)
		}
		return nil
	}
	return ix
}

// unjoin splits an errors.Join.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// VirtcPackages are the OLM packages virtc installs: what `virtc
// olm-graph` keeps of a catalog by default.
var VirtcPackages = []string{"kubevirt-hyperconverged", "redhat-oadp-operator"}

// WriteGraph writes the graph of packages in a file-based catalog (a file
// or a catalog directory, of any size: `opm render` of a whole index) as
// a small file-based catalog of its own, in YAML: for each package its
// olm.package, its olm.channel documents with each entry's name,
// replaces, skips and skipRange, and its olm.bundle documents with their
// name, image and olm.package property only (operator-registry v1.65.0
// alpha/declcfg/declcfg.go). That is all OLM's resolver reads to choose
// an upgrade, and a file a build can hold among its inputs (source's
// MaxFileSize). Packages, channels and bundles are written in a fixed
// order whatever the input's.
func WriteGraph(w io.Writer, path string, r io.Reader, packages []string) error {
	keep := map[string]bool{}
	for _, p := range packages {
		keep[p] = true
	}
	type bundle struct {
		Schema     string     `json:"schema"`
		Name       string     `json:"name"`
		Package    string     `json:"package"`
		Image      string     `json:"image,omitempty"`
		Properties []property `json:"properties"`
	}
	var pkgs, channels []map[string]any
	var bundles []bundle
	sum := sha256.New()
	walk := func(rd io.Reader) error {
		dec := utilyaml.NewYAMLOrJSONDecoder(io.TeeReader(rd, sum), 1<<16)
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			var head struct{ Schema, Name, Package string }
			if err := json.Unmarshal(raw, &head); err != nil {
				return err
			}
			switch head.Schema {
			case "olm.package":
				if keep[head.Name] {
					var m map[string]any
					json.Unmarshal(raw, &m)
					pkgs = append(pkgs, map[string]any{"schema": m["schema"], "name": m["name"], "defaultChannel": m["defaultChannel"]})
				}
			case "olm.channel":
				if keep[head.Package] {
					var c meta
					json.Unmarshal(raw, &c)
					var entries []any
					for _, e := range c.Entries {
						entries = append(entries, e)
					}
					channels = append(channels, map[string]any{"schema": c.Schema, "package": c.Package, "name": c.Name, "entries": entries})
				}
			case "olm.bundle":
				if keep[head.Package] {
					var b bundle
					json.Unmarshal(raw, &b)
					b.Properties = slices.DeleteFunc(b.Properties, func(p property) bool { return p.Type != "olm.package" })
					bundles = append(bundles, b)
				}
			}
		}
	}
	if r != nil {
		if err := walk(r); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
	} else {
		files, err := catalogFiles(path)
		if err != nil {
			return err
		}
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				return err
			}
			err = walk(fh)
			fh.Close()
			if err != nil {
				return fmt.Errorf("%s: %v", f, err)
			}
		}
	}
	if len(pkgs) == 0 {
		return fmt.Errorf("%s holds none of the packages %s", path, strings.Join(packages, ", "))
	}
	key := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	slices.SortFunc(pkgs, func(a, b map[string]any) int { return cmp.Compare(key(a, "name"), key(b, "name")) })
	slices.SortFunc(channels, func(a, b map[string]any) int {
		return cmp.Or(cmp.Compare(key(a, "package"), key(b, "package")), cmp.Compare(key(a, "name"), key(b, "name")))
	})
	slices.SortFunc(bundles, func(a, b bundle) int {
		return cmp.Or(cmp.Compare(a.Package, b.Package), cmp.Compare(a.Name, b.Name))
	})
	var found []string
	for _, p := range pkgs {
		found = append(found, p["name"].(string))
	}
	fmt.Fprintf(w, "# The upgrade graph of %s in %s (sha256:%x),\n# written by virtc olm-graph: what OLM's resolver reads of the catalog.\n", strings.Join(found, ", "), filepath.Base(path), sum.Sum(nil)[:8])
	var docs []any
	for _, p := range pkgs {
		docs = append(docs, p)
		for _, c := range channels {
			if c["package"] == p["name"] {
				docs = append(docs, c)
			}
		}
		for _, b := range bundles {
			if b.Package == p["name"] {
				docs = append(docs, b)
			}
		}
	}
	for i, d := range docs {
		data, err := json.Marshal(d)
		if err != nil {
			return err
		}
		y, err := sigsyaml.JSONToYAML(data)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if _, err := w.Write(y); err != nil {
			return err
		}
	}
	return nil
}
