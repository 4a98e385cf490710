package emit

import (
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Whatever a string holds, the YAML written for it reads back as the same
// string, under both YAML 1.1 and 1.2 rules (yaml.v3 reads 1.2 but still
// resolves the 1.1 booleans for safety).
func TestScalarsRoundTrip(t *testing.T) {
	for _, s := range []string{
		"", "plain", "40Gi", "4.22.3", "0.055", "1", "-1", "+1", "1e3", "0x1F", "0o17", "017", "1_000", "12:30",
		"2026-12-01", "true", "False", "yes", "No", "on", "OFF", "y", "n", "null", "~", ".inf", "-.Inf", ".nan",
		"a: b", "a #b", "trailing ", " leading", "key:", "docker://registry/x@sha256:ab", "k8s.io/name",
		"#cloud-config\npassword: x\n", "tab\there", "quote\"d", "back\\slash", "ünïcödé", "-", "- a", "?", "[x]", "{x}",
		"*alias", "&anchor", "!tag", "%directive", "@at", "`tick`", "|", ">", "'single'", "0", ".", "..",
	} {
		m := map[string]any{"k": s, s: "v"}
		if s == "" {
			delete(m, s)
		}
		out, err := Write([]Object{{Body: m}})
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := yaml.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q: output does not parse: %v\n%s", s, err, out)
		}
		if back["k"] != s {
			t.Errorf("%q read back as %#v (%T) from\n%s", s, back["k"], back["k"], out)
		}
		if s != "" && back[s] != "v" {
			t.Errorf("key %q did not read back; got %v from\n%s", s, back, out)
		}
	}
}

func FuzzScalarRoundTrip(f *testing.F) {
	for _, s := range []string{"a", "1", "true", "a: b", "x\ny"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("inputs are checked to be UTF-8 before they reach the emitter")
		}
		out, err := Write([]Object{{Body: map[string]any{"k": s}}})
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := yaml.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q: %v\n%s", s, err, out)
		}
		if back["k"] != s {
			t.Fatalf("%q read back as %#v", s, back["k"])
		}
	})
}

func TestNestedLayout(t *testing.T) {
	out, err := Write([]Object{{Body: map[string]any{
		"b": []any{map[string]any{"y": "1x", "x": []any{}}, "s", map[string]any{}},
		"a": map[string]any{"empty": map[string]any{}, "list": []any{"one", "two"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `a:
  empty: {}
  list:
  - one
  - two
b:
- x: []
  "y": "1x"
- s
- {}
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
