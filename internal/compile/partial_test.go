package compile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

// TestStructuralErrorsInIntents breaks every field of the Tenants and VMs
// of complete inputs, one at a time (a value of the wrong type, or the key
// removed), and compiles. An intent with a structural error still goes
// through the later checks (see decode.partialKinds); this pins that they
// neither crash on its unset values nor report them: the structural error
// is reported, no output is written, and no message speaks of an empty
// name (""), the sign of a check reading an unset value.
func TestStructuralErrorsInIntents(t *testing.T) {
	golden := filepath.Join(examplesDir(""), "..", "golden")
	var paths []string
	for _, dir := range []string{filepath.Join(golden, "full-vm"), filepath.Join(golden, "platform-full")} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "expected.yaml" && e.Name() != "warnings.txt" {
				paths = append(paths, filepath.Join(dir, e.Name()))
			}
		}
	}
	read := func() []*source.Doc {
		diags := &diag.List{}
		docs := source.Read(paths, source.Options{}, diags)
		if diags.HasErrors() {
			t.Fatal(diag.Format(diags.Sorted()))
		}
		return docs
	}
	// mutation names a node of an intent and how to break it.
	type mutation struct {
		doc    int
		path   []int // indexes into Content, from the document's node
		remove bool  // remove the key (path ends at a mapping value)
	}
	var muts []mutation
	var walk func(doc int, n *yaml.Node, path []int, depth int)
	walk = func(doc int, n *yaml.Node, path []int, depth int) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 1; i < len(n.Content); i += 2 {
				if depth == 0 && (n.Content[i-1].Value == "apiVersion" || n.Content[i-1].Value == "kind") {
					continue
				}
				p := append(slices.Clone(path), i)
				muts = append(muts, mutation{doc: doc, path: p}, mutation{doc: doc, path: p, remove: true})
				walk(doc, n.Content[i], p, depth+1)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := append(slices.Clone(path), i)
				muts = append(muts, mutation{doc: doc, path: p})
				walk(doc, c, p, depth+1)
			}
		}
	}
	for i, doc := range read() {
		if _, kind := decode.Header(doc.Node); kind == "Tenant" || kind == "VM" {
			walk(i, doc.Node, nil, 0)
		}
	}
	if len(muts) < 50 {
		t.Fatalf("only %d mutations", len(muts))
	}
	for _, m := range muts {
		docs := read()
		parent, n := (*yaml.Node)(nil), docs[m.doc].Node
		for _, i := range m.path {
			parent, n = n, n.Content[i]
		}
		what := fmt.Sprintf("%s line %d", docs[m.doc].File, n.Line)
		switch {
		case m.remove:
			i := m.path[len(m.path)-1]
			what = "without " + parent.Content[i-1].Value + " at " + what
			parent.Content = slices.Delete(parent.Content, i-1, i+1)
		case n.Kind == yaml.SequenceNode:
			what = "a string for a list at " + what
			*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "x", Line: n.Line, Column: n.Column}
		default:
			what = "a list for a value at " + what
			*n = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: n.Line, Column: n.Column, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!int", Value: "1"}}}
		}
		diags := &diag.List{}
		res := Compile(docs, Options{}, diags)
		if !diags.HasErrors() {
			// Removing an optional field is no mistake.
			if !m.remove {
				t.Errorf("%s: no error", what)
			}
			continue
		}
		if len(res.YAML) != 0 {
			t.Errorf("%s: errors and output", what)
		}
		for _, d := range diags.Errors() {
			if d.File == "" || strings.Contains(d.Message, `""`) {
				t.Errorf("%s: %s", what, d)
			}
		}
	}
	t.Logf("%d mutations", len(muts))
}
