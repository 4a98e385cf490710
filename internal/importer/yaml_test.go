package importer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/fleet"
	"github.com/virtc/virtc/internal/yamlorder"
)

// yamlorder.JSONToYAML writes what sigs.k8s.io/yaml's JSONToYAML writes: for every
// intent and catalog entry an import writes (every golden import scenario
// and a generated fleet), for numbers of every form and strings that look
// like other values, and for random documents.
func TestJSONToYAMLIsSigsYAML(t *testing.T) {
	check := func(name string, js []byte) {
		t.Helper()
		if !definedOrder(t, js) {
			// yaml.v2's own order of some map's keys depends on the
			// order it is given them (golden import/mixed-key-order):
			// internal/yamlorder's tests cover those.
			return
		}
		want, werr := sigsyaml.JSONToYAML(js)
		got, gerr := yamlorder.JSONToYAML(js)
		if (werr == nil) != (gerr == nil) || string(got) != string(want) {
			t.Errorf("%s: %s\nyamlorder.JSONToYAML (%v):\n%s\nJSONToYAML (%v):\n%s", name, js, gerr, got, werr, want)
		}
	}
	files := 0
	for name, sc := range goldenImports(t) {
		res := Import(sc.objs, sc.catalog, catalog.Options{}, sc.mode)
		for _, f := range res.Files {
			js, err := sigsyaml.YAMLToJSON(f.Data)
			if err != nil {
				t.Fatal(err)
			}
			check(name+"/"+f.Path, js)
			files++
		}
	}
	for _, f := range Import(fleetExport(t, fleet.Options{Tenants: 3, VMs: 40, Seed: 3}), nil, catalog.Options{}, Options{}).Files {
		js, _ := sigsyaml.YAMLToJSON(f.Data)
		check("fleet/"+f.Path, js)
		files++
	}
	if files < 50 {
		t.Errorf("only %d files", files)
	}
	for _, js := range []string{
		`{}`, `{"a":{}}`, `{"a":[]}`, `{"a":null}`, `{"a":[null,true,false]}`,
		`{"n":0,"m":-1,"i":9223372036854775807,"j":-9223372036854775808,"u":18446744073709551615,"b":18446744073709551616}`,
		`{"f":1.5,"g":-0.0,"h":1e3,"k":1E-7,"l":12345678901234567890123,"z":0.1}`,
		`{"s":"yes","t":"no","u":"on","v":"null","w":"~","x":"1","y":"1.5","z":"0x1F","a":"1e3","b":"true","c":"","d":" x ","e":"a: b","f":"- x","g":"#c","h":"\u003cx\u003e\u0026","i":"line\nbreak\ttab","j":"\u2028","k":"ü","l":"'q'","m":"\"d\""}`,
		`{"10":1,"9":2,"a10":3,"a9":4,"B":5,"a":6,"":7,"-":8}`,
		`{"list":[{"b":1,"a":2},[1,[2,[3]]],"x"]}`,
	} {
		check("case", []byte(js))
	}
	r := rand.New(rand.NewPCG(1, 2))
	var value func(depth int) any
	value = func(depth int) any {
		switch k := r.IntN(9); {
		case k == 0 && depth < 4:
			m := map[string]any{}
			for range r.IntN(4) {
				// Keys of letters: yaml.v2 orders keys with digits in them
				// by a comparison that is not transitive ("16b", "1c",
				// "6b"), so JSONToYAML itself writes those in an order
				// that changes from run to run (internal/yamlorder's tests compare
				// such keys wherever yaml.v2's order is defined).
				m[string(rune('a'+r.IntN(6)))+string(rune('A'+r.IntN(3)))] = value(depth + 1)
			}
			return m
		case k == 1 && depth < 4:
			var l []any
			for range r.IntN(4) {
				l = append(l, value(depth+1))
			}
			return l
		case k == 2:
			return r.Int64() - r.Int64()
		case k == 3:
			return r.NormFloat64() * float64(r.IntN(1000000))
		case k == 4:
			return r.IntN(2) == 0
		case k == 5:
			return nil
		case k == 6:
			return fmt.Sprint(r.IntN(100000))
		default:
			words := []string{"x", "yes", "1.0", "null", "a b", "a: b", "#", "-", "0o17", "+1", ".5", "1_0", "∞", "\n", ""}
			return words[r.IntN(len(words))]
		}
	}
	for i := range 2000 {
		js, err := json.Marshal(map[string]any{"doc": value(0)})
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprint("random ", i), js)
	}
}

// definedOrder reports whether yaml.v2's key order is defined for every
// object in the JSON document (yamlorder.Defined).
func definedOrder(t *testing.T, js []byte) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k, e := range x {
				if !walk(e) {
					return false
				}
				keys = append(keys, k)
			}
			return yamlorder.Defined(keys)
		case []any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		}
		return true
	}
	return walk(v)
}
