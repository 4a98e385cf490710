package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/virtc/virtc/internal/par"
)

// chunkSize is how many objects one goroutine writes at a time.
const chunkSize = 128

// chunkBuffers are reused between chunks, so that a chunk's buffer grows
// once rather than by doubling from scratch each time.
var chunkBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Write serializes objects in order as a multi-document YAML stream.
// Chunks of objects are written on all CPUs and joined in order; the
// error reported is the first object's that fails.
func Write(objs []Object) ([]byte, error) {
	chunks, err := WriteChunks(objs, false)
	if err != nil {
		return nil, err
	}
	size := 0
	for _, c := range chunks {
		size += len(c)
	}
	out := make([]byte, 0, size)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out, nil
}

// WriteChunks is Write's output in pieces of a few objects each, in
// order: joined, they are Write's stream. A caller that writes them one
// by one (virtc build) never holds a second copy of the output. With
// release, each object's Body is set to nil once it is serialized, so
// that the typed objects can be collected while the rest are written.
func WriteChunks(objs []Object, release bool) ([][]byte, error) {
	return inChunks(len(objs), func(lo, hi int, b *bytes.Buffer) ([]byte, error) {
		for i := lo; i < hi; i++ {
			if i > 0 {
				b.WriteString("---\n")
			}
			if err := writeObject(b, objs[i]); err != nil {
				return nil, err
			}
			if release {
				objs[i].Body = nil
			}
		}
		return bytes.Clone(b.Bytes()), nil
	})
}

// WriteEach serializes each object on its own, as Write writes it but
// without the document separators: Write(objs) is WriteEach's pieces
// joined with "---\n". Comparing two trees object by object (virtc diff)
// then needs no second encoding. The error reported is the first
// object's that fails.
func WriteEach(objs []Object) ([][]byte, error) {
	out := make([][]byte, len(objs))
	_, err := inChunks(len(objs), func(lo, hi int, b *bytes.Buffer) ([]byte, error) {
		ends := make([]int, 0, hi-lo)
		for i := lo; i < hi; i++ {
			if err := writeObject(b, objs[i]); err != nil {
				return nil, err
			}
			ends = append(ends, b.Len())
		}
		// One allocation per chunk; each object's piece is a slice of it.
		all := bytes.Clone(b.Bytes())
		start := 0
		for j, end := range ends {
			out[lo+j] = all[start:end:end]
			start = end
		}
		return all, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// inChunks runs write on all CPUs for the chunks of n objects, chunkSize
// at a time: it gets a chunk's bounds and an empty buffer (reused between
// chunks) and returns the chunk's bytes. The error reported is the first
// chunk's that fails.
func inChunks(n int, write func(lo, hi int, b *bytes.Buffer) ([]byte, error)) ([][]byte, error) {
	pieces, bounds := par.Chunks(n, chunkSize)
	chunks := make([][]byte, pieces)
	errs := make([]error, pieces)
	par.For(pieces, func(c int) {
		lo, hi := bounds(c)
		b := chunkBuffers.Get().(*bytes.Buffer)
		defer chunkBuffers.Put(b)
		b.Reset()
		chunks[c], errs[c] = write(lo, hi, b)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return chunks, nil
}

// writeObject serializes o, its error naming o.
func writeObject(b *bytes.Buffer, o Object) error {
	if err := writeBody(b, o.Body); err != nil {
		return fmt.Errorf("%s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
	}
	return nil
}

// Generic converts a typed object to plain maps and lists through its JSON
// form, and drops what the API types serialize but no one writes: status,
// null creation timestamps, and empty structs the types cannot omit.
func Generic(body any) (map[string]any, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	v, err := DecodeGeneric(data)
	if err != nil {
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

var yamlWords = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
	"null": true, "Null": true, "NULL": true, "~": true,
}

// Byte classes of plain scalars: what may start one, what may follow, and
// what YAML numbers and timestamps are made of.
var plainFirst, plainRest, numberChars [256]bool

func init() {
	set := func(t *[256]bool, chars string) {
		for i := range len(chars) {
			t[chars[i]] = true
		}
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	set(&plainFirst, alnum+"_./")
	set(&plainRest, alnum+" _./:@+=()~,-")
	set(&numberChars, "0123456789._:+-abcdefABCDEFxXoO")
}

// needsQuotes reports whether s cannot be written as a plain scalar. It
// runs for every key and string of the output, so it decides byte by byte
// (the tests hold it to the regular expressions that define it).
func needsQuotes(s string) bool {
	if s == "" || !plainFirst[s[0]] {
		return true
	}
	// One pass for the characters, ": " and " #".
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !plainRest[c] || c == ' ' && s[i-1] == ':' || c == '#' && s[i-1] == ' ' {
			return true
		}
	}
	if len(s) <= 5 && yamlWords[s] {
		return true
	}
	if last := s[len(s)-1]; last == ' ' || last == ':' {
		return true
	}
	if c := s[0]; c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-' {
		return !dottedNumber(s) && couldBeNumber(s)
	}
	return false
}

// dottedNumber reports versions such as 4.22.3 ([0-9]+(\.[0-9]+){2,}),
// which no YAML version reads as a number.
func dottedNumber(s string) bool {
	groups, digits := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && digits > 0:
			groups++
			digits = 0
		default:
			return false
		}
	}
	return digits > 0 && groups >= 2
}

// couldBeNumber reports whether YAML 1.1 or 1.2 might read s as a number
// or a timestamp: it is made only of what numbers are made of (digits,
// signs, '.', '_', ':', exponents, hex digits and base prefixes). A UUID,
// a CIDR or a quantity such as 40Gi has something else, so it stays plain;
// anything doubtful is quoted, which costs nothing.
func couldBeNumber(s string) bool {
	if looksLikeTimestamp(s) {
		return true
	}
	t := s
	for len(t) > 0 && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	if len(t) == 4 && t[0] == '.' && (strings.EqualFold(t, ".inf") || strings.EqualFold(t, ".nan")) {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !numberChars[c] {
			return false
		}
		if (c == '+' || c == '-') && i != 0 && s[i-1] != 'e' && s[i-1] != 'E' {
			return false
		}
	}
	return true
}

// looksLikeTimestamp matches the start of a YAML timestamp:
// [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.
func looksLikeTimestamp(s string) bool {
	digit := func(i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	for i := range 4 {
		if !digit(i) {
			return false
		}
	}
	i := 4
	for part := range 2 {
		if i >= len(s) || s[i] != '-' {
			return false
		}
		i++
		if !digit(i) {
			return false
		}
		i++
		if part == 0 && digit(i) {
			i++
		}
	}
	return true
}

// writeScalarString writes a string as a plain or double-quoted scalar.
// Invalid UTF-8 bytes become U+FFFD, as they do through encoding/json (a
// plain scalar is ASCII, so only quoted strings need the check).
func writeScalarString(b *bytes.Buffer, s string) {
	if !needsQuotes(s) {
		b.WriteString(s)
		return
	}
	// A Go-quoted string is a valid YAML double-quoted scalar: YAML knows
	// every escape strconv writes.
	b.Write(strconv.AppendQuote(b.AvailableBuffer(), validUTF8(s)))
}
