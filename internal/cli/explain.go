package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/schema"
	"github.com/virtc/virtc/schemas"
)

// jsonSchema is the part of a generated JSON Schema (schemas/, the files
// editors use) that explain reads.
type jsonSchema struct {
	Description          string                 `json:"description"`
	Type                 any                    `json:"type"` // a name or a list of names
	Required             []string               `json:"required"`
	Properties           map[string]*jsonSchema `json:"properties"`
	Items                *jsonSchema            `json:"items"`
	AdditionalProperties any                    `json:"additionalProperties"`
	Enum                 []any                  `json:"enum"`
	Const                any                    `json:"const"`
	Pattern              string                 `json:"pattern"`
	Minimum              *float64               `json:"minimum"`
	Maximum              *float64               `json:"maximum"`
}

// types are the schema's type names without null (an optional field).
func (s *jsonSchema) types() []string {
	var out []string
	switch t := s.Type.(type) {
	case string:
		out = []string{t}
	case []any:
		for _, x := range t {
			if n, ok := x.(string); ok && n != "null" {
				out = append(out, n)
			}
		}
	}
	return out
}

// typeText is the field's type as kubectl explain writes it: <string>,
// <[]object>, <map[string]string>, <string|integer>.
func (s *jsonSchema) typeText() string {
	var names []string
	for _, t := range s.types() {
		switch {
		case t == "array" && s.Items != nil:
			names = append(names, "[]"+strings.TrimSuffix(strings.TrimPrefix(s.Items.typeText(), "<"), ">"))
		case t == "object" && s.Properties == nil && s.mapValue() != nil:
			names = append(names, "map[string]"+strings.TrimSuffix(strings.TrimPrefix(s.mapValue().typeText(), "<"), ">"))
		default:
			names = append(names, t)
		}
	}
	if len(names) == 0 {
		if s.Const != nil {
			return fmt.Sprintf("<%v>", s.Const)
		}
		return "<any>"
	}
	return "<" + strings.Join(names, "|") + ">"
}

// mapValue is the schema of a map's values, nil for a closed object.
func (s *jsonSchema) mapValue() *jsonSchema {
	m, ok := s.AdditionalProperties.(map[string]any)
	if !ok {
		return nil
	}
	data, _ := json.Marshal(m)
	var v jsonSchema
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	return &v
}

// fields is the object the field holds: itself, its items' for a list.
func (s *jsonSchema) fields() *jsonSchema {
	if s.Items != nil && slices.Contains(s.types(), "array") {
		return s.Items.fields()
	}
	return s
}

func runExplain(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("explain", "KIND[.field.path]", stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: virtc explain KIND[.field.path]\n\nDescribes a kind of virtc (%s) or one of its fields, as kubectl explain\ndoes: its type, its documentation and its fields, from the JSON Schema\neditors use (virtc schema KIND). Lists are entered without an index\n(VM.spec.disks.size).\n", strings.Join(decode.Kinds, ", "))
	}
	rest, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		fmt.Fprintln(stderr, "virtc explain: name one kind or field, such as VM or VM.spec.disks")
		fs.Usage()
		return ExitUsage
	}
	path := strings.Split(rest[0], ".")
	kind, ok := kindNamed("explain", path[0], stderr)
	if !ok {
		return ExitUsage
	}
	data, err := schemas.Files.ReadFile(schema.FileName(kind))
	if err != nil {
		fmt.Fprintf(stderr, "virtc explain: %v\n", err)
		return ExitFailed
	}
	var s *jsonSchema
	if err := json.Unmarshal(data, &s); err != nil {
		fmt.Fprintf(stderr, "virtc explain: %s: %v\n", schema.FileName(kind), err)
		return ExitFailed
	}
	required := false
	for i, name := range path[1:] {
		obj := s.fields()
		next, ok := obj.Properties[name]
		if !ok {
			fmt.Fprintf(stderr, "virtc explain: %s: %s\n", strings.Join(append([]string{kind}, path[1:i+1]...), "."),
				diag.UnknownName("field", name, slices.Sorted(maps.Keys(obj.Properties))))
			return ExitUsage
		}
		required = slices.Contains(obj.Required, name)
		s = next
	}
	writeExplain(stdout, kind, path[1:], s, required)
	return ExitOK
}

// writeExplain prints a kind or field in kubectl explain's layout.
func writeExplain(w io.Writer, kind string, path []string, s *jsonSchema, required bool) {
	fmt.Fprintf(w, "KIND:     %s\nVERSION:  %s\n\n", kind, api.APIVersion)
	if len(path) > 0 {
		req := ""
		if required {
			req = " -required-"
		}
		fmt.Fprintf(w, "FIELD:    %s %s%s\n\n", path[len(path)-1], s.typeText(), req)
	}
	fmt.Fprintln(w, "DESCRIPTION:")
	writeWrapped(w, "    ", s.Description)
	if c := s.constraints(); c != "" {
		writeWrapped(w, "    ", c)
	}
	obj := s.fields()
	if len(obj.Properties) == 0 {
		return
	}
	fmt.Fprintln(w, "\nFIELDS:")
	names := slices.Sorted(maps.Keys(obj.Properties))
	// apiVersion, kind, metadata, spec first, as in the files
	order := map[string]int{"apiVersion": 1, "kind": 2, "metadata": 3, "spec": 4}
	slices.SortStableFunc(names, func(a, b string) int { return cmpOrder(order[a], order[b]) })
	for i, name := range names {
		f := obj.Properties[name]
		req := ""
		if slices.Contains(obj.Required, name) {
			req = " -required-"
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "  %s\t%s%s\n", name, f.typeText(), req)
		writeWrapped(w, "    ", f.Description)
	}
}

// cmpOrder sorts the ranked names (1 first) before the unranked (0).
func cmpOrder(a, b int) int {
	switch {
	case a == b:
		return 0
	case a == 0:
		return 1
	case b == 0:
		return -1
	case a < b:
		return -1
	}
	return 1
}

// constraints are a field's allowed values, pattern and bounds.
func (s *jsonSchema) constraints() string {
	var out []string
	if len(s.Enum) > 0 {
		var vals []string
		for _, v := range s.Enum {
			vals = append(vals, fmt.Sprint(v))
		}
		out = append(out, "One of: "+strings.Join(vals, ", ")+".")
	}
	if s.Const != nil {
		out = append(out, fmt.Sprintf("Always %v.", s.Const))
	}
	if s.Pattern != "" {
		out = append(out, "Matches "+s.Pattern+".")
	}
	if s.Minimum != nil && s.Maximum != nil {
		out = append(out, fmt.Sprintf("From %v to %v.", *s.Minimum, *s.Maximum))
	} else if s.Minimum != nil {
		out = append(out, fmt.Sprintf("At least %v.", *s.Minimum))
	}
	return strings.Join(out, " ")
}

// writeWrapped writes text in lines of at most 80 columns after indent.
func writeWrapped(w io.Writer, indent, text string) {
	if text == "" {
		fmt.Fprintf(w, "%s<empty>\n", indent)
		return
	}
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > 80 {
			fmt.Fprintln(w, line)
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	fmt.Fprintln(w, line)
}
