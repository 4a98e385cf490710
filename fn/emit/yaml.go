package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Write serializes objects in order as a multi-document YAML stream.
func Write(objs []Object) ([]byte, error) {
	var b bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		v, err := Generic(o.Body)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
		writeMap(&b, v, 0)
	}
	return b.Bytes(), nil
}

// Generic converts a typed object to plain maps and lists through its JSON
// form, and drops what the API types serialize but no one writes: status,
// null creation timestamps, and empty structs the types cannot omit.
func Generic(body any) (map[string]any, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	delete(v, "status")
	prune(v)
	return v, nil
}

// emptyStructKeys are fields whose Go types are structs without omitzero:
// json writes {} for them even when unset, and {} means nothing there.
var emptyStructKeys = map[string]bool{"resources": true, "metadata": true, "spec": true, "status": true}

func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if k == "creationTimestamp" && c == nil {
				delete(t, k)
				continue
			}
			prune(c)
			if m, ok := c.(map[string]any); ok && len(m) == 0 && emptyStructKeys[k] {
				delete(t, k)
			}
		}
	case []any:
		for _, c := range t {
			prune(c)
		}
	}
}

func indent(b *bytes.Buffer, n int) {
	for range n {
		b.WriteString("  ")
	}
}

// writeMap writes a mapping in block style at the given depth.
func writeMap(b *bytes.Buffer, m map[string]any, depth int) {
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		indent(b, depth)
		writeEntry(b, k, m[k], depth)
	}
}

func writeEntry(b *bytes.Buffer, k string, v any, depth int) {
	writeScalarString(b, k)
	b.WriteByte(':')
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteByte('\n')
		writeMap(b, t, depth+1)
	case []any:
		if len(t) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteByte('\n')
		writeList(b, t, depth)
	default:
		b.WriteByte(' ')
		writeScalar(b, v)
		b.WriteByte('\n')
	}
}

// writeList writes a sequence with its dashes at the parent key's depth, as
// kubectl and kustomize do.
func writeList(b *bytes.Buffer, l []any, depth int) {
	for _, item := range l {
		indent(b, depth)
		b.WriteString("- ")
		switch t := item.(type) {
		case map[string]any:
			if len(t) == 0 {
				b.WriteString("{}\n")
				continue
			}
			keys := slices.Sorted(maps.Keys(t))
			for i, k := range keys {
				if i > 0 {
					indent(b, depth+1)
				}
				writeEntry(b, k, t[k], depth+1)
			}
		case []any:
			if len(t) == 0 {
				b.WriteString("[]\n")
				continue
			}
			// A list in a list: write it in flow style, which is rare
			// enough in Kubernetes objects not to deserve more.
			data, _ := json.Marshal(t)
			b.Write(data)
			b.WriteByte('\n')
		default:
			writeScalar(b, item)
			b.WriteByte('\n')
		}
	}
}

func writeScalar(b *bytes.Buffer, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case json.Number:
		b.WriteString(t.String())
	case string:
		writeScalarString(b, t)
	default:
		panic(fmt.Sprintf("emit: unexpected %T", v))
	}
}

var (
	plainChars = regexp.MustCompile(`^[A-Za-z0-9_./][A-Za-z0-9 _./:@+=()~,-]*$`)
	// YAML 1.1 and 1.2 resolve these as numbers, booleans, nulls or
	// timestamps: such strings must be quoted to stay strings.
	yamlTime  = regexp.MustCompile(`^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}`)
	yamlWords = map[string]bool{
		"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true, "no": true, "No": true, "NO": true,
		"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
		"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
		"null": true, "Null": true, "NULL": true, "~": true,
	}
)

// needsQuotes reports whether s cannot be written as a plain scalar.
func needsQuotes(s string) bool {
	if s == "" || !plainChars.MatchString(s) || yamlWords[s] {
		return true
	}
	if strings.HasSuffix(s, " ") || strings.HasSuffix(s, ":") || strings.Contains(s, ": ") || strings.Contains(s, " #") {
		return true
	}
	if c := s[0]; c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-' {
		return !numberLikeString(s)
	}
	return false
}

// dottedNumber matches versions such as 4.22.3, which no YAML version
// reads as a number.
var dottedNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+){2,}$`)

// numberLikeString reports whether a string that starts like a number is
// still safe to write plain.
func numberLikeString(s string) bool {
	return dottedNumber.MatchString(s) || !couldBeNumber(s)
}

// couldBeNumber reports whether YAML 1.1 or 1.2 might read s as a number
// or a timestamp: it is made only of what numbers are made of (digits,
// signs, '.', '_', ':', exponents, hex digits and base prefixes). A UUID,
// a CIDR or a quantity such as 40Gi has something else, so it stays plain;
// anything doubtful is quoted, which costs nothing.
func couldBeNumber(s string) bool {
	if yamlTime.MatchString(s) {
		return true
	}
	if t := strings.ToLower(strings.TrimLeft(s, "+-")); t == ".inf" || t == ".nan" {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c == '.', c == '_', c == ':':
		case c == '+' || c == '-':
			if i != 0 && s[i-1] != 'e' && s[i-1] != 'E' {
				return false
			}
		case strings.IndexByte("abcdefABCDEFxXoO", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func writeScalarString(b *bytes.Buffer, s string) {
	if !needsQuotes(s) {
		b.WriteString(s)
		return
	}
	// A Go-quoted string is a valid YAML double-quoted scalar: YAML knows
	// every escape strconv writes.
	b.WriteString(strconv.Quote(s))
}
