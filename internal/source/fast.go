package source

import (
	"bytes"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// FastParse is fastParse for other packages: the KRM function parses the
// items of a ResourceList with it.
func FastParse(data []byte) ([]*yaml.Node, bool) { return fastParse(data) }

// fastParse reads files written in the plain subset of YAML that intents
// use — block mappings and sequences, single-line plain scalars, quoted
// scalars without escapes, one-line
// flow lists of plain words, {} — into the nodes yaml.v3 would build, in a
// fraction of yaml.v3's time (parsing was the largest cost of a build).
// Anything outside the subset (quotes with escapes, comments, anchors, tags, block
// scalars, multi-line values, tabs, non-ASCII text, empty values or
// documents, odd indentation) returns ok false, and the caller parses the
// file with yaml.v3, which also reports the errors. The tests hold it to
// yaml.v3's nodes, field by field.
func fastParse(data []byte) (docs []*yaml.Node, ok bool) {
	p := fastParser{}
	if !p.lines(data) {
		return nil, false
	}
	for _, d := range p.docs {
		if d.lo == d.hi {
			return nil, false // an empty document: yaml.v3 decides what it is
		}
		p.i, p.end = d.lo, d.hi
		l := p.ls[p.i]
		if l.indent != 0 {
			return nil, false
		}
		n, ok := p.block(l.indent)
		if !ok || p.i != p.end {
			return nil, false
		}
		docs = append(docs, n)
	}
	return docs, true
}

// line is a logical line: a physical line, or the part of one after a
// sequence dash ("- key: v" is a dash at the dash's column and "key: v" at
// the column after it, on the same line number).
type line struct {
	no     int // 1-based
	indent int // 0-based column of text
	dash   bool
	text   string
	// literal is the value of a literal block scalar ("key: |" or
	// "key: |-") whose content lines follow the line: they are not lines
	// of their own.
	literal    string
	hasLiteral bool
}

type docRange struct{ lo, hi int }

type fastParser struct {
	ls   []line
	docs []docRange
	i    int
	end  int
	// slab hands out nodes from blocks, fewer allocations than one each.
	slab []yaml.Node
	// stack collects the children of the collections being parsed, so
	// that each gets its Content in one allocation of the right size.
	stack []*yaml.Node
}

// children moves the nodes collected since start into an exact-size
// Content slice.
func (p *fastParser) children(start int) []*yaml.Node {
	c := slices.Clone(p.stack[start:])
	clear(p.stack[start:])
	p.stack = p.stack[:start]
	return c
}

func (p *fastParser) node() *yaml.Node {
	if len(p.slab) == 0 {
		p.slab = make([]yaml.Node, 64)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	return n
}

// lines splits data into logical lines and documents. A "---" line ends
// the open document, if any, and opens the next; the first content line
// opens a document when none is open.
func (p *fastParser) lines(data []byte) bool {
	// One copy of the file; keys and values are slices of it.
	src := string(data)
	p.ls = make([]line, 0, bytes.Count(data, []byte{'\n'})+1)
	open, lo := false, 0
	// skip is the number of physical lines a literal block scalar's
	// content took.
	for no, skip := 1, 0; len(src) > 0; no++ {
		end := strings.IndexByte(src, '\n')
		var text string
		if end < 0 {
			text, src = src, ""
		} else {
			text, src = src[:end], src[end+1:]
		}
		if skip > 0 {
			skip--
			continue
		}
		if len(text) == 0 {
			continue
		}
		for i := range len(text) {
			if c := text[i]; c < ' ' || c > '~' || c == '#' {
				return false // tabs, CR, control and non-ASCII bytes, comments
			}
		}
		if text[len(text)-1] == ' ' {
			return false
		}
		if text == "---" {
			if open {
				p.docs = append(p.docs, docRange{lo, len(p.ls)})
			}
			open, lo = true, len(p.ls)
			continue
		}
		if text[0] == '%' || len(text) >= 3 && (text[:3] == "---" || text[:3] == "...") {
			return false
		}
		if !open {
			open, lo = true, len(p.ls)
		}
		indent := 0
		for indent < len(text) && text[indent] == ' ' {
			indent++
		}
		if indent == len(text) {
			return false // a line of spaces
		}
		// Split a sequence dash off; "- - x", "- -1" and "-" alone are left
		// to yaml.v3.
		if rest := text[indent:]; rest == "-" {
			return false
		} else if len(rest) >= 2 && rest[0] == '-' && rest[1] == ' ' {
			p.ls = append(p.ls, line{no: no, indent: indent, dash: true})
			next := indent + 2
			for next < len(text) && text[next] == ' ' {
				next++
			}
			if text[next] == '-' {
				return false
			}
			indent = next
		}
		l := line{no: no, indent: indent, text: text[indent:]}
		if strings.HasSuffix(l.text, ": |") || strings.HasSuffix(l.text, ": |-") {
			value, n, ok := literalBlock(src, indent, strings.HasSuffix(l.text, "-"))
			if !ok {
				return false
			}
			l.literal, l.hasLiteral, skip = value, true, n
		}
		p.ls = append(p.ls, l)
	}
	if open {
		p.docs = append(p.docs, docRange{lo, len(p.ls)})
	}
	return true
}

// literalBlock reads the content of a literal block scalar from src, the
// text after its header line ("key: |", clip, or "key: |-", strip) whose
// text is at column parent: the lines after it indented more than parent,
// with the indentation of the first removed from each. It returns the
// scalar's value as yaml.v3 makes it and the number of lines it took
// (empty lines at its end included). It declines (false) what it leaves
// to yaml.v3: no content, empty lines before the content, a line of
// spaces, trailing spaces, tabs, control and non-ASCII bytes, and a line
// indented less than the first but more than parent.
func literalBlock(src string, parent int, strip bool) (value string, n int, ok bool) {
	indent := -1
	var b strings.Builder
	taken, empty := 0, 0
	// broken: the last content line ends with a line break (the end of
	// the file may end it).
	broken := false
	for len(src) > 0 {
		end := strings.IndexByte(src, '\n')
		var text string
		if end < 0 {
			text = src
			src = ""
		} else {
			text, src = src[:end], src[end+1:]
		}
		if len(text) == 0 {
			if indent < 0 {
				return "", 0, false
			}
			empty++
			taken++
			continue
		}
		spaces := 0
		for spaces < len(text) && text[spaces] == ' ' {
			spaces++
		}
		if spaces == len(text) || text[len(text)-1] == ' ' {
			return "", 0, false
		}
		if indent < 0 {
			if spaces <= parent {
				return "", 0, false
			}
			indent = spaces
		}
		if spaces < indent {
			if spaces > parent {
				return "", 0, false
			}
			break
		}
		for i := range len(text) {
			if c := text[i]; c < ' ' || c > '~' {
				return "", 0, false
			}
		}
		for ; empty > 0; empty-- {
			b.WriteByte('\n')
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(text[indent:])
		taken++
		broken = end >= 0
	}
	if indent < 0 {
		return "", 0, false
	}
	// Empty lines at the end are the block's, and chomped; clipping keeps
	// the last line's break.
	if !strip && broken {
		b.WriteByte('\n')
	}
	return b.String(), taken, true
}

// block parses the mapping or sequence that starts at the current line.
func (p *fastParser) block(indent int) (*yaml.Node, bool) {
	if p.ls[p.i].dash {
		return p.sequence(indent)
	}
	return p.mapping(indent)
}

func (p *fastParser) sequence(indent int) (*yaml.Node, bool) {
	first := p.ls[p.i]
	n := p.node()
	*n = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: first.no, Column: indent + 1}
	start := len(p.stack)
	defer func() { n.Content = p.children(start) }()
	for p.i < p.end && p.ls[p.i].dash && p.ls[p.i].indent == indent {
		p.i++ // the dash; its item is the next logical line, on the same line
		if p.i >= p.end {
			return nil, false
		}
		item := p.ls[p.i]
		var child *yaml.Node
		var ok bool
		switch {
		case item.dash:
			return nil, false
		case isKeyLine(item.text):
			child, ok = p.mapping(item.indent)
		default:
			child, ok = p.inline(item.text, item.no, item.indent)
			p.i++
			if ok && p.i < p.end && p.ls[p.i].indent > indent && !(p.ls[p.i].dash && p.ls[p.i].indent == indent) {
				// A scalar item continued on the next line.
				return nil, false
			}
		}
		if !ok {
			return nil, false
		}
		p.stack = append(p.stack, child)
	}
	if p.i < p.end && p.ls[p.i].indent > indent {
		return nil, false
	}
	return n, true
}

func (p *fastParser) mapping(indent int) (*yaml.Node, bool) {
	first := p.ls[p.i]
	n := p.node()
	*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: first.no, Column: indent + 1}
	start := len(p.stack)
	defer func() { n.Content = p.children(start) }()
	for p.i < p.end {
		l := p.ls[p.i]
		if l.indent < indent || l.dash && l.indent == indent {
			break
		}
		if l.indent > indent || l.dash {
			return nil, false
		}
		colon := keyEnd(l.text)
		if colon < 0 {
			return nil, false
		}
		key, ok := p.scalar(l.text[:colon], l.no, l.indent)
		if !ok {
			return nil, false
		}
		rest := l.text[colon+1:]
		var value *yaml.Node
		if rest != "" {
			col := colon + 1
			for col < len(l.text) && l.text[col] == ' ' {
				col++
			}
			if l.hasLiteral {
				if r := l.text[col:]; col != colon+2 || r != "|" && r != "|-" {
					return nil, false
				}
				value = p.node()
				*value = yaml.Node{Kind: yaml.ScalarNode, Style: yaml.LiteralStyle, Tag: "!!str", Value: l.literal, Line: l.no, Column: l.indent + col + 1}
				p.i++
				p.stack = append(p.stack, key, value)
				continue
			}
			value, ok = p.inline(l.text[col:], l.no, l.indent+col)
			p.i++
			if ok && p.i < p.end && p.ls[p.i].indent > indent {
				return nil, false // a value continued on the next line
			}
		} else {
			p.i++
			if p.i >= p.end {
				return nil, false // an empty value
			}
			next := p.ls[p.i]
			switch {
			case next.indent > indent:
				value, ok = p.block(next.indent)
			case next.indent == indent && next.dash:
				value, ok = p.sequence(indent)
			default:
				return nil, false // an empty value
			}
		}
		if !ok {
			return nil, false
		}
		p.stack = append(p.stack, key, value)
	}
	return n, true
}

// isKeyLine reports whether text is "key:" or "key: value".
func isKeyLine(text string) bool { return keyEnd(text) >= 0 }

// keyEnd returns the index of the colon that ends a plain key, or -1.
// YAML bounds implicit keys to 1024 characters; longer ones are left to
// yaml.v3 (which refuses them).
func keyEnd(text string) int {
	for i := 0; i < len(text) && i < 512; i++ {
		c := text[i]
		if c == ':' {
			if i == 0 || i+1 < len(text) && text[i+1] != ' ' {
				return -1
			}
			return i
		}
		if !keyChar[c] || i == 0 && c == '-' {
			return -1
		}
	}
	return -1
}

// inline parses a value on the rest of a line: a plain scalar, a flow
// list of plain words, or {}.
func (p *fastParser) inline(text string, no, col int) (*yaml.Node, bool) {
	switch {
	case text == "{}":
		n := p.node()
		*n = yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Tag: "!!map", Line: no, Column: col + 1}
		return n, true
	case text[0] == '[':
		return p.flowList(text, no, col)
	case text[0] == '\'' || text[0] == '"':
		return p.quoted(text, no, col)
	}
	return p.scalar(text, no, col)
}

// quoted parses a single- or double-quoted scalar without escapes: no
// quote of its kind inside (and no backslash in double quotes). Orchestrators
// quote annotation values this way ('true', '0', 'path/file.yaml').
func (p *fastParser) quoted(text string, no, col int) (*yaml.Node, bool) {
	q := text[0]
	if len(text) < 2 || text[len(text)-1] != q {
		return nil, false
	}
	inner := text[1 : len(text)-1]
	if strings.IndexByte(inner, q) >= 0 || q == '"' && strings.IndexByte(inner, '\\') >= 0 {
		return nil, false
	}
	style := yaml.SingleQuotedStyle
	if q == '"' {
		style = yaml.DoubleQuotedStyle
	}
	n := p.node()
	*n = yaml.Node{Kind: yaml.ScalarNode, Style: style, Tag: "!!str", Value: inner, Line: no, Column: col + 1}
	return n, true
}

func (p *fastParser) flowList(text string, no, col int) (*yaml.Node, bool) {
	if text[len(text)-1] != ']' {
		return nil, false
	}
	n := p.node()
	*n = yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Tag: "!!seq", Line: no, Column: col + 1}
	inner := text[1 : len(text)-1]
	if inner == "" {
		return n, true
	}
	start := 1
	for i := 1; i <= len(text)-1; i++ {
		if i < len(text)-1 && text[i] != ',' {
			continue
		}
		lo, hi := start, i
		for lo < hi && text[lo] == ' ' {
			lo++
		}
		for hi > lo && text[hi-1] == ' ' {
			hi--
		}
		if lo == hi {
			return nil, false // [a, , b] or a trailing comma
		}
		item, ok := p.scalar(text[lo:hi], no, col+lo)
		if !ok || item.Value != text[lo:hi] {
			return nil, false
		}
		for _, c := range []byte(item.Value) {
			if c == ' ' {
				return nil, false
			}
		}
		n.Content = append(n.Content, item)
		start = i + 1
	}
	return n, true
}

// scalar makes a plain scalar node, or refuses text that is not plainly a
// single-line plain scalar.
func (p *fastParser) scalar(text string, no, col int) (*yaml.Node, bool) {
	if text == "" || !plainStart[text[0]] || text[0] == '-' && (len(text) == 1 || !plainChar[text[1]] || text[1] == ' ') {
		return nil, false
	}
	for i := 1; i < len(text); i++ {
		if !plainChar[text[i]] {
			return nil, false
		}
	}
	tag, ok := resolveTag(text)
	if !ok {
		return nil, false
	}
	n := p.node()
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: text, Line: no, Column: col + 1}
	return n, true
}

// Byte classes: keys are names; plain scalars avoid every YAML indicator
// (in any position, for simplicity) except a leading '-' before a digit or
// letter and a comma after the first byte.
var keyChar, plainStart, plainChar [256]bool

func init() {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for _, c := range []byte(alnum + "_./-") {
		keyChar[c] = true
	}
	for _, c := range []byte(alnum + "_./~+-=()$^;\\") {
		plainStart[c] = true
		plainChar[c] = true
	}
	plainChar[' '] = true
	// A comma inside a plain scalar is text in block context (Argo CD's
	// "Prune=confirm,Delete=confirm"); flow lists are split at commas
	// before their items are read (flowList).
	plainChar[','] = true
}

// resolveTag is the tag yaml.v3 gives a plain scalar. Most values start
// with a letter that cannot begin anything but a string; the others are
// resolved by yaml.v3 itself, once per distinct value.
func resolveTag(v string) (string, bool) {
	switch c := v[0]; {
	case c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.':
		return delegated(v)
	case c == '~':
		if v == "~" {
			return "!!null", true
		}
	case c == 'y' || c == 'Y' || c == 'n' || c == 'N' || c == 't' || c == 'T' || c == 'f' || c == 'F' || c == 'o' || c == 'O':
		switch v {
		case "true", "True", "TRUE", "false", "False", "FALSE":
			return "!!bool", true
		case "null", "Null", "NULL":
			return "!!null", true
		}
	}
	return "!!str", true
}

var resolved sync.Map // plain scalar -> tag, from yaml.v3

func delegated(v string) (string, bool) {
	if t, ok := resolved.Load(v); ok {
		return t.(string), t.(string) != ""
	}
	var doc yaml.Node
	tag := ""
	if err := yaml.Unmarshal([]byte(v), &doc); err == nil && len(doc.Content) == 1 {
		if n := doc.Content[0]; n.Kind == yaml.ScalarNode && n.Style == 0 && n.Value == v {
			tag = n.Tag
		}
	}
	resolved.Store(v, tag)
	return tag, tag != ""
}
