package importer

import (
	"encoding/json"
	"slices"
	"strings"
)

// marshalGeneric is json.Marshal of a live object's value (maps, lists,
// strings, json.Numbers, booleans and nulls, as internal/live reads an export):
// the same bytes, written directly for what it can write plainly (keys
// sorted as json.Marshal sorts a map's; strings of printable ASCII that
// json.Marshal does not escape; numbers in JSON's grammar), each other
// value by json.Marshal itself, so bytes and errors stay json.Marshal's.
// decodeInto marshalled every live VM, DataVolume and claim, a tenth of an
// import's CPU; TestMarshalGenericIsMarshal and FuzzMarshalGeneric hold it
// to json.Marshal.
func marshalGeneric(v any) ([]byte, error) {
	return appendGeneric(make([]byte, 0, 4096), v)
}

func appendGeneric(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendString(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = appendGeneric(b, t[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if t == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendGeneric(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return appendString(b, t)
	case bool:
		if t {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case nil:
		return append(b, "null"...), nil
	case json.Number:
		if jsonNumber(string(t)) {
			return append(b, t...), nil
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, data...), nil
}

func appendString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			data, err := json.Marshal(s)
			if err != nil {
				return nil, err
			}
			return append(b, data...), nil
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// jsonNumber reports whether s is a number in JSON's grammar
// (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?), as json.Marshal
// requires of a json.Number.
func jsonNumber(s string) bool {
	s, _ = strings.CutPrefix(s, "-")
	digits := func() bool {
		n := len(s)
		s = strings.TrimLeft(s, "0123456789")
		return len(s) < n
	}
	switch {
	case strings.HasPrefix(s, "0"):
		s = s[1:]
	case !digits():
		return false
	}
	if r, ok := strings.CutPrefix(s, "."); ok {
		if s = r; !digits() {
			return false
		}
	}
	if len(s) > 0 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		if !digits() {
			return false
		}
	}
	return s == ""
}
