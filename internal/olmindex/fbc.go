package olmindex

import (
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
		Replaces  string   `json:"replaces"`
		Skips     []string `json:"skips"`
		SkipRange string   `json:"skipRange"`
	} `json:"entries"`
	Properties []struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	} `json:"properties"`
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
