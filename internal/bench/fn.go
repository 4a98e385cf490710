package bench

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// FnRow is one fleet of the function-against-build comparison: virtc build
// of the fleet's directory, and virtc fn alone on the ResourceList
// kustomize would hand it, in generator form (a Compiler naming the
// directory, the only item) and in transformer form (every intent an item,
// with the annotations kustomize adds).
type FnRow struct {
	VMs, Tenants        int
	Build               Summary
	Generator           Summary
	Transformer         Summary
	InputBytes          int64 // the transformer form's ResourceList
	LoadBefore, LoadAft string
}

// RunFn measures the fleets of cfg.Sizes with virtc build, virtc fn in
// generator form and virtc fn in transformer form, in turn, cfg.Runs(n)
// times each.
func RunFn(cfg Config, sizes []int) ([]FnRow, error) {
	var rows []FnRow
	noLimit := 24 * time.Hour
	for _, n := range sizes {
		opts, dir, intents, err := cfg.writeFleet("fn", "fn: ", n)
		if err != nil {
			return rows, err
		}
		row := FnRow{VMs: n, Tenants: opts.Tenants}
		gdir, grl, err := KRMGenerator(cfg.Virtc, intents, filepath.Join(dir, "generator"))
		if err != nil {
			return rows, err
		}
		trl := filepath.Join(dir, "transformer.yaml")
		size, err := WriteTransformerList(intents, trl)
		if err != nil {
			return rows, err
		}
		row.InputBytes = size
		build := &series{cmd: Command{Name: cfg.Virtc, Args: []string{"build", intents}}, limit: noLimit}
		gen := &series{cmd: Command{Name: cfg.Virtc, Args: []string{"fn"}, Dir: gdir, Stdin: grl}, limit: noLimit}
		tr := &series{cmd: Command{Name: cfg.Virtc, Args: []string{"fn"}, Dir: intents, Stdin: trl}, limit: noLimit}
		row.LoadBefore = LoadAverage()
		runs := cfg.Runs(n)
		for r := range runs {
			for _, s := range []*series{build, gen, tr} {
				if err := s.run(); err != nil {
					return rows, err
				}
			}
			cfg.logf("  run %d/%d: virtc build %s, fn generator %s, fn transformer %s (load %s)", r+1, runs, last(build), last(gen), last(tr), LoadAverage())
		}
		row.LoadAft = LoadAverage()
		row.Build, row.Generator, row.Transformer = build.summary(), gen.summary(), tr.summary()
		rows = append(rows, row)
		os.RemoveAll(dir)
	}
	return rows, nil
}

// WriteTransformerList writes the ResourceList of the transformer form for
// the fleet in dir: every document of its YAML files as an item, marked
// local-config, with kustomize's path and index annotations, and a
// Compiler with no paths as the functionConfig. It returns the list's size.
func WriteTransformerList(dir, file string) (int64, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	sort.Strings(files)
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for i := 0; ; i++ {
			var n yaml.Node
			if err := dec.Decode(&n); err == io.EOF {
				break
			} else if err != nil {
				return 0, fmt.Errorf("%s: %v", f, err)
			}
			if len(n.Content) == 0 {
				continue
			}
			annotate(n.Content[0], map[string]string{
				"config.kubernetes.io/local-config":   "true",
				"internal.config.kubernetes.io/path":  filepath.ToSlash(rel),
				"internal.config.kubernetes.io/index": fmt.Sprint(i),
			})
			var doc bytes.Buffer
			enc := yaml.NewEncoder(&doc)
			enc.SetIndent(2)
			if err := enc.Encode(n.Content[0]); err != nil {
				return 0, err
			}
			for j, l := range strings.Split(strings.TrimSuffix(doc.String(), "\n"), "\n") {
				switch {
				case j == 0:
					b.WriteString("- ")
				case l != "":
					b.WriteString("  ")
				}
				b.WriteString(l + "\n")
			}
		}
	}
	b.WriteString("functionConfig:\n  apiVersion: virtc.dev/v1alpha1\n  kind: Compiler\n  metadata:\n    name: virtc\n")
	return int64(b.Len()), os.WriteFile(file, b.Bytes(), 0o644)
}

// annotate sets annotations on an object's metadata, in key order.
func annotate(obj *yaml.Node, ann map[string]string) {
	meta := field(obj, "metadata")
	if meta == nil {
		meta = &yaml.Node{Kind: yaml.MappingNode}
		obj.Content = append(obj.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "metadata"}, meta)
	}
	a := field(meta, "annotations")
	if a == nil {
		a = &yaml.Node{Kind: yaml.MappingNode}
		meta.Content = append(meta.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "annotations"}, a)
	}
	a.Style = 0
	keys := make([]string, 0, len(ann))
	for k := range ann {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a.Content = append(a.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Value: ann[k], Style: yaml.SingleQuotedStyle})
	}
}

func field(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// FnTable writes the function-against-build rows as a Markdown table.
func FnTable(w io.Writer, rows []FnRow) {
	fmt.Fprintln(w, "| VMs | tenants | virtc build | peak RSS | fn generator | peak RSS | time / build | RSS / build | fn transformer (input) | peak RSS | time / build | RSS / build | runs | load 1 min |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s | %d | %s → %s |\n",
			r.VMs, r.Tenants, wall(r.Build), rss(r.Build),
			wall(r.Generator), rss(r.Generator), timeRatio(r.Generator, r.Build), rssRatio(r.Generator, r.Build),
			wall(r.Transformer), formatBytes(r.InputBytes), rss(r.Transformer), timeRatio(r.Transformer, r.Build), rssRatio(r.Transformer, r.Build),
			r.Build.Runs, r.LoadBefore, r.LoadAft)
	}
}

func timeRatio(a, b Summary) string {
	if !measured(a) || !measured(b) || b.Wall == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a.Wall.Seconds()/b.Wall.Seconds())
}

func rssRatio(a, b Summary) string {
	if !measured(a) || !measured(b) || b.PeakRSS == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", float64(a.PeakRSS)/float64(b.PeakRSS))
}
