package importer

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/virtc/virtc/internal/fleet"
	"github.com/virtc/virtc/internal/live"
)

func sameAsMarshal(t *testing.T, name string, v any) {
	t.Helper()
	got, gerr := marshalGeneric(v)
	want, werr := json.Marshal(v)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() || !bytes.Equal(got, want) {
		t.Errorf("%s: marshalGeneric (%v):\n%s\njson.Marshal (%v):\n%s", name, gerr, got, werr, want)
	}
}

// marshalGeneric writes json.Marshal's bytes and errors: on every live
// object of the golden import scenarios and of a generated fleet's export,
// and on values of each of its branches.
func TestMarshalGenericIsMarshal(t *testing.T) {
	n := 0
	check := func(objs []live.Object) {
		for _, o := range objs {
			sameAsMarshal(t, o.Kind+" "+o.Namespace+"/"+o.Name, o.Body)
			n++
		}
	}
	for _, sc := range goldenImports(t) {
		check(sc.objs)
	}
	check(fleetExport(t, fleet.Options{Tenants: 3, VMs: 40, Seed: 3}))
	if n < 100 {
		t.Errorf("only %d objects", n)
	}
	for _, v := range []any{
		map[string]any{}, map[string]any{"b": 1, "a": []any{}, "c": nil, "d": []any(nil), "": map[string]any{}},
		map[string]any{"s": "plain", "q": `"quoted"`, "h": "<tag> & x", "u": "été", "c": "\x01", "bad": "\xff", "ls": "\u2028", "bs": `a\b`},
		map[string]any{"n": json.Number("12"), "m": json.Number("-0"), "f": json.Number("1.5e-3"), "bad": json.Number("007")},
		map[string]any{"n": json.Number("1.")}, map[string]any{"n": json.Number("")}, map[string]any{"n": json.Number("-")},
		map[string]any{"t": true, "f": false, "i": 3, "x": 1.5, "big": 1e21, "small": 1e-7, "i64": int64(-4)},
		map[string]any{"<": 1, "é": 2, "a\"b": 3},
		[]any{"a", json.Number("1"), []any{map[string]any{"k": "v"}}},
	} {
		sameAsMarshal(t, "case", v)
	}
}

func FuzzMarshalGeneric(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,"x\n",true,null,{}]}`, `{"<":"\u2028","b":"é"}`, `[1,"a",{"z":0,"a":1}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		sameAsMarshal(t, string(data), v)
	})
}
