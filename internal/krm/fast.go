package krm

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/par"
	"github.com/virtc/virtc/internal/source"
)

// The fast path of the protocol. kyaml's framework.Execute parses the whole
// ResourceList into RNodes, copies every item, and encodes the list again,
// the generated objects included, which at 10,000 VMs took 20 times the
// compile itself (28 s and 7.8 GiB against 1.1 s and 378 MiB). A function
// that leaves its input items alone does not need that: the list is parsed
// once, the input's own lines are written back for everything but the
// results, and the generated objects are appended as the bytes the compiler
// wrote (the same bytes `virtc build` prints), indented into the items
// sequence. Inputs this does not lay out safely (flow style, several
// documents, an items sequence whose entries do not start on their dash
// line, ...) go through framework.Execute as before; both produce the same
// ResourceList (TestFastEqualsFramework).

// listLayout is a ResourceList as lines of its input.
type listLayout struct {
	lines [][]byte // each with its newline
	// keys are the top-level keys in input order, each with the first line
	// (0-based) of its span; a span runs to the next key's first line.
	keys []layoutKey
	// prefix is the number of lines before the first key (a "---" line,
	// comments).
	prefix int
	// dash is the column of the items' dashes; -1 without items.
	dash int
	// itemsFlowEmpty: the list has `items: []`.
	itemsFlowEmpty bool
	root           *yaml.Node
	items          []*yaml.Node
	functionConfig *yaml.Node
}

type layoutKey struct {
	name  string
	first int
}

// parseLayout parses a ResourceList and decides whether its lines can be
// written back as they are. ok is false when the fast path does not apply;
// err when the input is not a ResourceList at all.
func parseLayout(data []byte) (l *listLayout, ok bool, err error) {
	if l, ok := parseChunked(data); ok {
		return l, true, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrNoResourceList, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, false, fmt.Errorf("%w; the input is empty", ErrNoResourceList)
		}
		return nil, false, fmt.Errorf("%w; the input is not a mapping", ErrNoResourceList)
	}
	root := doc.Content[0]
	l = &listLayout{root: root, dash: -1}
	kind := ""
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch k, v := root.Content[i], root.Content[i+1]; k.Value {
		case "kind":
			kind = v.Value
		case "items":
			if v.Kind == yaml.SequenceNode {
				l.items = v.Content
			}
		case "functionConfig":
			l.functionConfig = v
		}
	}
	if kind != kio.ResourceListKind {
		return nil, false, fmt.Errorf("%w; got kind %q", ErrNoResourceList, kind)
	}
	// Several documents, or "..." ends: the framework's reader decides.
	if bytes.Contains(data, []byte("\n---")) || bytes.Contains(data, []byte("\n...")) || bytes.Contains(data, []byte("\r")) {
		return l, false, nil
	}
	if root.Style&yaml.FlowStyle != 0 {
		return l, false, nil
	}
	l.lines = splitLines(data)
	prev := -1
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Kind != yaml.ScalarNode || k.Column != 1 || k.Line-1 <= prev {
			return l, false, nil
		}
		prev = k.Line - 1
		l.keys = append(l.keys, layoutKey{name: k.Value, first: prev})
	}
	if len(l.keys) == 0 {
		return l, false, nil
	}
	l.prefix = l.keys[0].first
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "items" {
			continue
		}
		if v.Kind != yaml.SequenceNode {
			return l, false, nil
		}
		if v.Style&yaml.FlowStyle != 0 {
			if len(v.Content) > 0 {
				return l, false, nil
			}
			l.itemsFlowEmpty = true
			continue
		}
		if !l.itemsLaidOut(k, v, i/2) {
			return l, false, nil
		}
	}
	return l, true, nil
}

// itemsLaidOut checks that every item is a block mapping whose first key
// stands on its dash's line, all dashes in one column, and that every other
// line of an item's span is indented under it (or blank, or a comment).
func (l *listLayout) itemsLaidOut(key, seq *yaml.Node, keyIndex int) bool {
	end := len(l.lines)
	if keyIndex+1 < len(l.keys) {
		end = l.keys[keyIndex+1].first
	}
	if len(seq.Content) == 0 {
		return false
	}
	if bytes.TrimSpace(l.lines[key.Line-1]) == nil || string(bytes.TrimRight(l.lines[key.Line-1], " \n")) != "items:" {
		return false
	}
	prevEnd := key.Line // the line after "items:"
	for j, it := range seq.Content {
		if it.Kind != yaml.MappingNode || it.Style&yaml.FlowStyle != 0 || it.Column < 3 {
			return false
		}
		dash := it.Column - 3
		if l.dash < 0 {
			l.dash = dash
		}
		first := l.dashLine(it, prevEnd)
		if dash != l.dash || first != prevEnd || !dashAt(l.lines[first], dash) {
			return false
		}
		last := end
		if j+1 < len(seq.Content) {
			last = l.dashLine(seq.Content[j+1], first)
		}
		if last <= first {
			return false
		}
		prevEnd = last
		for _, ln := range l.lines[first+1 : last] {
			t := bytes.TrimLeft(ln, " ")
			if len(t) == 0 || t[0] == '\n' || t[0] == '#' {
				continue
			}
			if len(ln)-len(t) < dash+2 {
				return false
			}
		}
	}
	return true
}

// dashLine is the line of an item's dash: its first key's, or the first
// line of its head comment.
func (l *listLayout) dashLine(it *yaml.Node, floor int) int {
	i := it.Line - 1
	if dashAt(l.lines[i], it.Column-3) {
		return i
	}
	for i--; i > floor && isComment(l.lines[i]); i-- {
	}
	return i
}

// dashAt: line has a sequence entry's "- " in column dash.
func dashAt(line []byte, dash int) bool {
	return len(line) >= dash+2 && string(line[dash:dash+2]) == "- " && allSpaces(line[:dash])
}

func isComment(line []byte) bool {
	t := bytes.TrimLeft(line, " ")
	return len(t) > 0 && t[0] == '#'
}

func allSpaces(b []byte) bool {
	for _, c := range b {
		if c != ' ' {
			return false
		}
	}
	return true
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, append(append([]byte{}, data...), '\n'))
			break
		}
		out = append(out, data[:i+1])
		data = data[i+1:]
	}
	return out
}

// write writes the list: the input's lines, the generated objects (the
// compiler's bytes) at the end of items, and the results in place of the
// input's when there are any.
func (l *listLayout) write(w io.Writer, generated []byte, results framework.Results) error {
	var res []byte
	if len(results) > 0 {
		b, err := kyaml.Marshal(results)
		if err != nil {
			return err
		}
		res = indentBlock(b, 2)
	}
	var buf bytes.Buffer
	buf.Grow(len(generated) + len(generated)/8 + 4096)
	for _, ln := range l.lines[:l.prefix] {
		buf.Write(ln)
	}
	wroteItems, wroteResults := false, false
	for i, k := range l.keys {
		end := len(l.lines)
		if i+1 < len(l.keys) {
			end = l.keys[i+1].first
		}
		switch {
		case k.name == "results" && res != nil:
			buf.WriteString("results:\n")
			buf.Write(res)
			wroteResults = true
		case k.name == "items":
			if l.itemsFlowEmpty {
				buf.WriteString("items:\n")
			} else {
				for _, ln := range l.lines[k.first:end] {
					buf.Write(ln)
				}
			}
			appendItems(&buf, generated, max(l.dash, 0))
			wroteItems = true
		default:
			for _, ln := range l.lines[k.first:end] {
				buf.Write(ln)
			}
		}
	}
	if !wroteItems {
		if len(generated) > 0 {
			buf.WriteString("items:\n")
			appendItems(&buf, generated, 0)
		} else {
			buf.WriteString("items: []\n")
		}
	}
	if res != nil && !wroteResults {
		buf.WriteString("results:\n")
		buf.Write(res)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// appendItems writes the documents of a YAML stream (virtc's output: one
// object a document, "---" lines between them) as entries of a block
// sequence whose dashes stand in column dash.
func appendItems(buf *bytes.Buffer, stream []byte, dash int) {
	pad := bytes.Repeat([]byte{' '}, dash+2)
	first := true
	for ln := range bytes.Lines(stream) {
		ln = bytes.TrimSuffix(ln, []byte{'\n'})
		if string(ln) == "---" {
			first = true
			continue
		}
		switch {
		case first:
			buf.Write(pad[:dash])
			buf.WriteString("- ")
			first = false
		case len(ln) > 0:
			buf.Write(pad)
		}
		buf.Write(ln)
		buf.WriteByte('\n')
	}
}

// indentBlock indents every non-empty line of b by n spaces.
func indentBlock(b []byte, n int) []byte {
	var out bytes.Buffer
	appendIndented(&out, b, n)
	return out.Bytes()
}

func appendIndented(out *bytes.Buffer, b []byte, n int) {
	pad := bytes.Repeat([]byte{' '}, n)
	for ln := range bytes.Lines(b) {
		ln = bytes.TrimSuffix(ln, []byte{'\n'})
		if len(ln) > 0 {
			out.Write(pad)
		}
		out.Write(ln)
		out.WriteByte('\n')
	}
}

// runFast is Run on a list the fast path can write back.
func runFast(l *listLayout, out io.Writer) (*diag.List, error) {
	diags := &diag.List{}
	rns := make([]*kyaml.RNode, len(l.items))
	for i, it := range l.items {
		rns[i] = kyaml.NewRNode(it)
	}
	var fc *kyaml.RNode
	if l.functionConfig != nil {
		fc = kyaml.NewRNode(l.functionConfig)
	}
	generated, results := compileList(rns, fc, diags)
	if diags.HasErrors() {
		generated = nil
	}
	if err := l.write(out, generated, results); err != nil {
		return diags, err
	}
	if diags.HasErrors() {
		return diags, results
	}
	return diags, nil
}

// keyLine is a top-level key of a ResourceList as kustomize and kpt write
// it.
var keyLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*:( .*)?\n$`) })

// parseChunked parses the list kustomize writes — top-level keys in column
// 0, items a compact block sequence whose entries are indented under their
// dashes — by pieces: the list without its items, then each item on its
// own, all CPUs at once (one yaml.v3 parse of a 10,000-intent list was a
// fifth of the function's time). An entry indented under its dash is the
// same node parsed alone (dedented) as in the list. ok is false when the
// input is laid out otherwise, or a piece does not parse: parseLayout then
// parses the list whole, which also words the errors.
func parseChunked(data []byte) (*listLayout, bool) {
	if bytes.Contains(data, []byte("\n---")) || bytes.Contains(data, []byte("\n...")) || bytes.Contains(data, []byte("\r")) || bytes.HasPrefix(data, []byte("---")) {
		return nil, false
	}
	l := &listLayout{lines: splitLines(data), dash: 0}
	itemsKey, itemsEnd := -1, -1
	var dashes []int
	for i, ln := range l.lines {
		switch c := ln[0]; {
		case c == ' ' || c == '\n':
			// inside a value
		case c == '#':
			if itemsKey >= 0 && itemsEnd < 0 {
				return nil, false // a comment between items: left to the whole parse
			}
		case c == '-':
			if itemsKey < 0 || itemsEnd >= 0 {
				if len(l.keys) == 0 {
					return nil, false
				}
				continue // a sequence in another key's value (results)
			}
			if !bytes.HasPrefix(ln, []byte("- ")) {
				return nil, false
			}
			dashes = append(dashes, i)
		default:
			if !keyLine().Match(ln) {
				return nil, false
			}
			if itemsKey >= 0 && itemsEnd < 0 {
				itemsEnd = i
			}
			name := string(ln[:bytes.IndexByte(ln, ':')])
			l.keys = append(l.keys, layoutKey{name: name, first: i})
			if name == "items" {
				switch strings.TrimRight(string(ln), " \n") {
				case "items:":
					itemsKey = i
				case "items: []":
					l.itemsFlowEmpty = true
				default:
					return nil, false
				}
			}
		}
	}
	if len(l.keys) == 0 {
		return nil, false
	}
	l.prefix = l.keys[0].first
	if itemsKey >= 0 && itemsEnd < 0 {
		itemsEnd = len(l.lines)
	}
	// The list without its items' lines.
	var rest bytes.Buffer
	for i, ln := range l.lines {
		if itemsKey < 0 || i <= itemsKey || i >= itemsEnd {
			rest.Write(ln)
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(rest.Bytes(), &doc); err != nil || len(doc.Content) != 1 {
		return nil, false
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 || len(root.Content) != 2*len(l.keys) {
		return nil, false
	}
	kind := ""
	for i, k := range l.keys {
		kn, v := root.Content[2*i], root.Content[2*i+1]
		if kn.Value != k.name || kn.Column != 1 {
			return nil, false
		}
		switch k.name {
		case "kind":
			kind = v.Value
		case "functionConfig":
			l.functionConfig = v
		}
	}
	if kind != kio.ResourceListKind {
		return nil, false
	}
	l.root = root
	if itemsKey < 0 {
		return l, true
	}
	if len(dashes) == 0 || dashes[0] != itemsKey+1 {
		return nil, false
	}
	chunks := make([][]byte, len(dashes))
	for j, first := range dashes {
		last := itemsEnd
		if j+1 < len(dashes) {
			last = dashes[j+1]
		}
		var b bytes.Buffer
		b.Write(l.lines[first][2:])
		for _, ln := range l.lines[first+1 : last] {
			switch {
			case len(bytes.TrimSpace(ln)) == 0:
				b.WriteByte('\n')
			case len(ln) < 3 || ln[0] != ' ' || ln[1] != ' ':
				return nil, false
			default:
				b.Write(ln[2:])
			}
		}
		chunks[j] = b.Bytes()
	}
	l.items = make([]*yaml.Node, len(chunks))
	bad := make([]bool, len(chunks))
	par.For(len(chunks), func(j int) {
		// Intents in the subset of YAML they are written in (with the
		// orchestrator's quoted annotations) take the project's fast
		// parser, as in virtc build; anything else yaml.v3.
		if docs, ok := source.FastParse(chunks[j]); ok && len(docs) == 1 && docs[0].Kind == yaml.MappingNode {
			l.items[j] = docs[0]
			return
		}
		var d yaml.Node
		if err := yaml.Unmarshal(chunks[j], &d); err != nil || len(d.Content) != 1 ||
			d.Content[0].Kind != yaml.MappingNode || d.Content[0].Style&yaml.FlowStyle != 0 {
			bad[j] = true
			return
		}
		l.items[j] = d.Content[0]
	})
	for _, b := range bad {
		if b {
			return nil, false
		}
	}
	return l, true
}
