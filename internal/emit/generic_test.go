package emit_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/fleet"
	"github.com/virtc/virtc/internal/source"
)

// referenceGeneric is what DecodeGeneric replaces: the JSON decoder with
// UseNumber.
func referenceGeneric(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v map[string]any
	err := dec.Decode(&v)
	return v, err
}

func sameAsDecoder(t *testing.T, data []byte) {
	t.Helper()
	got, gotErr := emit.DecodeGeneric(data)
	want, wantErr := referenceGeneric(data)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%q: error %v, want %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\ngot  %#v\nwant %#v", data, got, want)
	}
}

// DecodeGeneric gives the decoder's values and errors: on every object
// virtc renders for a fleet and the examples (as Generic hands it them),
// and on cases of each of its branches and of what it hands the decoder.
func TestDecodeGenericIsDecoder(t *testing.T) {
	for _, s := range []string{
		`{}`, `{"a":{}}`, `{"a":[]}`, `{"a":[{},[],"",0]}`, `{"a":null,"b":true,"c":false}`,
		`{"n":0,"m":-0,"f":1.5,"e":1e5,"E":-2.5E-3,"p":1e+2,"big":123456789012345678901234567890}`,
		`{"s":"plain","q":"\"quoted\" \\ \n\t\r\b\f","h":"\u003ctag\u003e \u0026","u":"\u00e9t\u00e9","raw":"été","ctl":"\u0001"}`,
		`{"surrogate":"\ud83d\ude00","lone":"\ud800","bad":"\x"}`,
		`{"dup":1,"dup":2}`, `{"a":1,}`, `{"a":1 }`, ` {"a":1}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":.5}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":"unterminated}`, `{"a"}`, `{"a":1}{"b":2}`, `{"a":1}   `, `[1]`, `null`, `"s"`, `1`, ``,
		"{\"a\":\"\xff\"}",
	} {
		sameAsDecoder(t, []byte(s))
	}
	_, file, _, _ := runtime.Caller(0)
	examples := filepath.Join(filepath.Dir(file), "..", "..", "examples")
	dir := t.TempDir()
	if _, err := fleet.Write(dir, fleet.Options{Tenants: 8, VMs: 200, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, inputs := range [][]string{{dir}, {filepath.Join(examples, "platform")}, {filepath.Join(examples, "quickstart")}} {
		diags := &diag.List{}
		res := compile.Compile(source.Read(inputs, source.Options{}, diags), compile.Options{ObjectsOnly: true}, diags)
		if diags.HasErrors() {
			t.Fatalf("%v: %s", inputs, diag.Format(diags.Errors()))
		}
		for _, o := range res.Objects {
			data, err := json.Marshal(o.Body)
			if err != nil {
				t.Fatal(err)
			}
			sameAsDecoder(t, data)
			n++
		}
	}
	if n < 500 {
		t.Errorf("only %d objects compared", n)
	}
}

func FuzzDecodeGeneric(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,-2.5e3,"x\n",true,null,{}]}`, `{"a":"\u003c"}`, `{"a":01}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsDecoder(t, data)
	})
}
