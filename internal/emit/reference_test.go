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

// The reference writer is how virtc wrote YAML before the direct encoder:
// through encoding/json (Generic), maps and regular expressions. It is
// slow and simple, and the tests hold the encoder to its bytes.

func referenceWrite(objs []Object) ([]byte, error) {
	var b bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		v, err := Generic(o.Body)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
		refWriteMap(&b, v, 0)
	}
	return b.Bytes(), nil
}

// The regular expressions that define which strings are written quoted
// (needsQuotes decides the same byte by byte).
var (
	refPlainChars   = regexp.MustCompile(`^[A-Za-z0-9_./][A-Za-z0-9 _./:@+=()~,-]*$`)
	refYAMLTime     = regexp.MustCompile(`^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}`)
	refDottedNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+){2,}$`)
)

func refNeedsQuotes(s string) bool {
	if s == "" || !refPlainChars.MatchString(s) || yamlWords[s] {
		return true
	}
	if strings.HasSuffix(s, " ") || strings.HasSuffix(s, ":") || strings.Contains(s, ": ") || strings.Contains(s, " #") {
		return true
	}
	if c := s[0]; c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-' {
		return !(refDottedNumber.MatchString(s) || !refCouldBeNumber(s))
	}
	return false
}

func refCouldBeNumber(s string) bool {
	if refYAMLTime.MatchString(s) {
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

func refWriteScalarString(b *bytes.Buffer, s string) {
	if !refNeedsQuotes(s) {
		b.WriteString(s)
		return
	}
	b.WriteString(strconv.Quote(s))
}

func refIndent(b *bytes.Buffer, n int) {
	for range n {
		b.WriteString("  ")
	}
}

// writeMap writes a mapping in block style at the given depth.
func refWriteMap(b *bytes.Buffer, m map[string]any, depth int) {
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		refIndent(b, depth)
		refWriteEntry(b, k, m[k], depth)
	}
}

func refWriteEntry(b *bytes.Buffer, k string, v any, depth int) {
	refWriteScalarString(b, k)
	b.WriteByte(':')
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteByte('\n')
		refWriteMap(b, t, depth+1)
	case []any:
		if len(t) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteByte('\n')
		refWriteList(b, t, depth)
	default:
		b.WriteByte(' ')
		refWriteScalar(b, v)
		b.WriteByte('\n')
	}
}

// writeList writes a sequence with its dashes at the parent key's depth, as
// kubectl and kustomize do.
func refWriteList(b *bytes.Buffer, l []any, depth int) {
	for _, item := range l {
		refIndent(b, depth)
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
					refIndent(b, depth+1)
				}
				refWriteEntry(b, k, t[k], depth+1)
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
			refWriteScalar(b, item)
			b.WriteByte('\n')
		}
	}
}

func refWriteScalar(b *bytes.Buffer, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case json.Number:
		b.WriteString(t.String())
	case string:
		refWriteScalarString(b, t)
	default:
		panic(fmt.Sprintf("emit: unexpected %T", v))
	}
}
