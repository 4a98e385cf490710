package emit

import (
	"bytes"
	"encoding/json"
)

// DecodeGeneric is what a json.Decoder with UseNumber decodes data (one
// JSON object, as json.Marshal writes it) into as a map[string]any:
// objects as map[string]any, arrays as []any, numbers as json.Number
// (their text), strings, booleans and nil. It reads json.Marshal's
// compact form directly, several times faster than the decoder (which
// was most of Generic's cost: import compares every live VM and every
// compiled object as such values); strings with escapes are unquoted by
// encoding/json itself, and anything else it does not expect (spaces,
// malformed input) sends the whole input to the decoder, so values and
// errors are the decoder's. TestDecodeGenericIsDecoder and
// FuzzDecodeGeneric hold it to the decoder.
func DecodeGeneric(data []byte) (map[string]any, error) {
	d := genericDecoder{data: data}
	if v, ok := d.value(); ok && d.i == len(data) {
		if m, isMap := v.(map[string]any); isMap {
			return m, nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

type genericDecoder struct {
	data []byte
	i    int
}

func (d *genericDecoder) value() (any, bool) {
	if d.i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '{':
		d.i++
		m := map[string]any{}
		if d.i < len(d.data) && d.data[d.i] == '}' {
			d.i++
			return m, true
		}
		for {
			k, ok := d.str()
			if !ok || d.i >= len(d.data) || d.data[d.i] != ':' {
				return nil, false
			}
			d.i++
			v, ok := d.value()
			if !ok || d.i >= len(d.data) {
				return nil, false
			}
			m[k] = v
			switch d.data[d.i] {
			case ',':
				d.i++
			case '}':
				d.i++
				return m, true
			default:
				return nil, false
			}
		}
	case c == '[':
		d.i++
		l := []any{}
		if d.i < len(d.data) && d.data[d.i] == ']' {
			d.i++
			return l, true
		}
		for {
			v, ok := d.value()
			if !ok || d.i >= len(d.data) {
				return nil, false
			}
			l = append(l, v)
			switch d.data[d.i] {
			case ',':
				d.i++
			case ']':
				d.i++
				return l, true
			default:
				return nil, false
			}
		}
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case bytes.HasPrefix(d.data[d.i:], []byte("true")):
		d.i += 4
		return true, true
	case bytes.HasPrefix(d.data[d.i:], []byte("false")):
		d.i += 5
		return false, true
	case bytes.HasPrefix(d.data[d.i:], []byte("null")):
		d.i += 4
		return nil, true
	}
	return nil, false
}

// str reads a string. Without escapes its bytes are the value when they
// are valid UTF-8 without control characters (what json.Marshal writes);
// otherwise encoding/json unquotes it.
func (d *genericDecoder) str() (string, bool) {
	if d.i >= len(d.data) || d.data[d.i] != '"' {
		return "", false
	}
	start := d.i
	plain := true
	j := d.i + 1
	for ; j < len(d.data); j++ {
		c := d.data[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			j++
			continue
		}
		if c < 0x20 || c >= 0x80 {
			plain = false
		}
	}
	if j >= len(d.data) {
		return "", false
	}
	d.i = j + 1
	if plain {
		return string(d.data[start+1 : j]), true
	}
	var s string
	if json.Unmarshal(d.data[start:d.i], &s) != nil {
		return "", false
	}
	return s, true
}

// number reads a number in JSON's grammar: its text is the json.Number.
func (d *genericDecoder) number() (any, bool) {
	start := d.i
	i := d.i
	if d.data[i] == '-' {
		i++
	}
	digits := func() bool {
		n := i
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
		return i > n
	}
	switch {
	case i < len(d.data) && d.data[i] == '0':
		i++
	case !digits():
		return nil, false
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if !digits() {
			return nil, false
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if !digits() {
			return nil, false
		}
	}
	d.i = i
	return json.Number(d.data[start:i]), true
}
