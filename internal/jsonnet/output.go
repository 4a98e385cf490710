package jsonnet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

// docs splits the JSON output of a file into documents: the object, or each
// object of the array. Their node positions are not the file's, so they are
// marked NoLines; an array element is named file[i] in messages.
func docs(file, rel, out string, diags *diag.List) []*source.Doc {
	n, err := parseJSON(out)
	if err != nil {
		diags.Errorf(diag.Pos{File: file}, "", "cannot read the evaluation's output: %v", err)
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		return []*source.Doc{{File: file, Rel: rel, Node: n, NoLines: true}}
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			diags.Warnf(diag.Pos{File: file}, "", "evaluates to an empty array: no objects")
			return nil
		}
		var out []*source.Doc
		for i, el := range n.Content {
			name := fmt.Sprintf("%s[%d]", file, i)
			if el.Kind != yaml.MappingNode {
				diags.Errorf(diag.Pos{File: name}, "", "must be an object with apiVersion and kind, not %s (a Jsonnet file yields an object or an array of objects)", describe(el))
				continue
			}
			out = append(out, &source.Doc{File: name, Rel: rel, Index: i, Node: el, NoLines: true})
		}
		return out
	}
	diags.Errorf(diag.Pos{File: file}, "", "evaluates to %s: a Jsonnet file must yield an object or an array of objects", describe(n))
	return nil
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "an array"
	}
	switch n.Tag {
	case "!!str":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	}
	return "null"
}

// parseJSON reads JSON into a YAML node tree, keeping the order of keys and
// the exact text of numbers (whole numbers are !!int, others !!float).
func parseJSON(s string) (*yaml.Node, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("trailing data after the value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k.(string)}, v)
			}
			_, err := dec.Token() // }
			return n, err
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			_, err := dec.Token() // ]
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}, nil
	case json.Number:
		tag := "!!float"
		if _, err := strconv.ParseInt(t.String(), 10, 64); err == nil {
			tag = "!!int"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// trace is one std.trace message.
type trace struct {
	pos diag.Pos
	msg string
}

// traceWriter receives go-jsonnet's std.trace lines ("TRACE: file:line
// message") and keeps them as warnings.
type traceWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *traceWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() > maxTrace {
		return len(p), nil
	}
	return w.buf.Write(p)
}

// maxTrace bounds the trace text kept from one evaluation.
const maxTrace = 1 << 20

var traceLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^TRACE: (.*):(\d+) (.*)$`) })

func (w *traceWriter) done() []trace {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []trace
	for _, l := range strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n") {
		if l == "" {
			continue
		}
		m := traceLine().FindStringSubmatch(l)
		if m == nil {
			// A message with newlines continues the previous trace.
			if len(out) > 0 {
				out[len(out)-1].msg += "\n" + l
			}
			continue
		}
		line, _ := strconv.Atoi(m[2])
		out = append(out, trace{pos: diag.Pos{File: m[1], Line: line, Col: 1}, msg: m[3]})
	}
	return out
}
