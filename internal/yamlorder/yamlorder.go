// Package yamlorder writes JSON as YAML the way sigs.k8s.io/yaml's
// JSONToYAML (v1.6.0 yaml.go) does, with yaml.v2, but with mapping keys in
// an order that does not depend on Go's map iteration order.
//
// yaml.v2 sorts a map's keys with keyList.Less (go.yaml.in/yaml/v2 v2.4.4
// sorter.go, the same in gopkg.in/yaml.v2 v2.4.0), a "natural" order that
// compares runs of digits as numbers. It is not a strict weak ordering for
// keys that mix digits and letters: for net1b, net6 and net16 it says
// net1b < net6 < net16 but net16 < net1b (the fourth runes are equal,
// and in the fifth 'b', a letter, sorts after the digit '6'), and 16b < 1c, 1c < 6b,
// 6b < 16b. sort.Sort then returns an order that depends on the order it
// was given the keys in, which for a Go map is random: the same map was
// written five different ways in 200 runs. Labels, annotations,
// nodeSelector and network names carry such keys.
//
// Here the keys are first sorted by their bytes (a total order), then
// stably by yaml.v2's Less, and the map is written as a yaml.v2 MapSlice,
// whose order yaml.v2 keeps. Where Less is a strict weak ordering on a
// map's keys (every map of ordinary keys) its order is the only one
// sorting by it can give, so the output is byte for byte what yaml.v2
// writes; where it is not, the stable sort of one fixed input order gives
// one fixed output.
package yamlorder

import (
	"bytes"
	"encoding/json"
	"sort"
	"sync"
	"unicode"

	yamlv2 "go.yaml.in/yaml/v2"
)

// JSONToYAML is sigs.k8s.io/yaml's JSONToYAML with keys in the fixed order
// of Keys. It reads the JSON with encoding/json rather than with yaml.v2:
// for JSON that encoding/json wrote (valid UTF-8, no duplicate keys) both
// read the same value, and encoding/json faster. Objects become MapSlices
// (keys in Keys' order), arrays []interface{}, strings (quoted in JSON:
// yaml.v2 never resolves them) strings, true, false and null themselves,
// and each number the value yaml.v2 resolves its text to (int, int64,
// uint64 or float64: resolveNumber asks yaml.v2).
func JSONToYAML(js []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return yamlv2.Marshal(yamlValue(v))
}

// Marshal is sigs.k8s.io/yaml's Marshal (json.Marshal, then JSONToYAML)
// with keys in the fixed order of Keys.
func Marshal(v any) ([]byte, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return JSONToYAML(js)
}

// Keys sorts string mapping keys in place: by their bytes, then stably by
// yaml.v2's keyList.Less (see the package comment).
func Keys(keys []string) {
	sort.Strings(keys)
	sort.SliceStable(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
}

// Defined reports whether yaml.v2's order of keys is defined: whether its
// keyList.Less is a strict weak ordering on them (irreflexive, transitive,
// and incomparability transitive), so that sorting by it gives one order
// whatever order the keys came in. Keys then writes that order. It costs
// len(keys)³ comparisons: it is for tests.
func Defined(keys []string) bool {
	inc := func(x, y string) bool { return !less(x, y) && !less(y, x) }
	for _, a := range keys {
		if less(a, a) {
			return false
		}
		for _, b := range keys {
			for _, c := range keys {
				if less(a, b) && less(b, c) && !less(a, c) {
					return false
				}
				if inc(a, b) && inc(b, c) && !inc(a, c) {
					return false
				}
			}
		}
	}
	return true
}

func yamlValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		Keys(keys)
		m := make(yamlv2.MapSlice, len(keys))
		for i, k := range keys {
			m[i] = yamlv2.MapItem{Key: k, Value: yamlValue(t[k])}
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = yamlValue(x)
		}
		return t
	case json.Number:
		return resolveNumber(string(t))
	}
	return v
}

// numbers caches what yaml.v2 reads a number's text as.
var numbers sync.Map

func resolveNumber(text string) any {
	if v, ok := numbers.Load(text); ok {
		return v
	}
	var v any
	if err := yamlv2.Unmarshal([]byte(text), &v); err != nil {
		v = text
	}
	numbers.Store(text, v)
	return v
}

// less is keyList.Less of go.yaml.in/yaml/v2 v2.4.4 sorter.go (identical
// in gopkg.in/yaml.v2 v2.4.0) for two string keys: the branches for
// numeric and other non-string keys are left out, as JSON object keys are
// strings.
func less(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al := unicode.IsLetter(ar[i])
		bl := unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an = 1
					bn = 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}
