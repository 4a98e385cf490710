package rules

import (
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
)

// GlobRegexp must match exactly what path.Match matches: the cluster's
// devices rule reads the tenant's spec.allow.devices through it.
func TestGlobRegexp(t *testing.T) {
	names := []string{"nvidia.com/A100", "nvidia.com/GA102GL_A10", "nvidia.com/a/b", "nvidiaxcom/A100", "amd.com/MI300", "intel.com/qat", "nvidia.com/", "x"}
	for _, glob := range []string{"nvidia.com/*", "nvidia.com/A?00", "*.com/*", "intel.com/qat", "nvidia.com/[AG]*", "nvidia.com/[^A]*", "*"} {
		re := regexp.MustCompile(GlobRegexp(glob))
		for _, n := range names {
			want, err := path.Match(glob, n)
			if err != nil {
				t.Fatal(err)
			}
			if got := re.MatchString(n); got != want {
				t.Errorf("glob %q (regexp %s) on %q: %v, path.Match says %v", glob, GlobRegexp(glob), n, got, want)
			}
		}
	}
}

// Every guardrail has a name of its own, says what it admits, names
// itself and the object in its message as the cluster's refusals do, and
// has both enforcers: the cluster's CEL and a compile-time check (of the
// intents, or of the objects the compile writes).
func TestGuardrailsHaveBothEnforcers(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range Guardrails {
		if seen[g.Name] {
			t.Errorf("guardrail %s twice", g.Name)
		}
		seen[g.Name] = true
		if g.What == "" || g.Source == "" || len(g.Resources) == 0 {
			t.Errorf("guardrail %s: no What, Source or Resources", g.Name)
		}
		if g.Expression == "" || g.Message == "" {
			t.Errorf("guardrail %s: no CEL: the cluster does not enforce it", g.Name)
		}
		if g.Intent == nil && g.Output == nil {
			t.Errorf("guardrail %s: no compile-time check: the compile does not enforce it", g.Name)
		}
		if !strings.HasPrefix(g.Message, "'virtc guardrail "+g.Name+": ' + variables.where") {
			t.Errorf("guardrail %s: the message does not start with its name and the object: %s", g.Name, g.Message)
		}
	}
}

func TestCELString(t *testing.T) {
	for in, want := range map[string]string{
		`a`:          `'a'`,
		`it's`:       `'it\'s'`,
		`\s+`:        `'\\s+'`,
		"two\nlines": `'two\nlines'`,
		`{"a":"b"}`:  `'{"a":"b"}'`,
	} {
		if got := celString(in); got != want {
			t.Errorf("celString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestGuardrailsDocumented: docs/guardrails.md has a row for every rule,
// with what the table says it holds.
func TestGuardrailsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/guardrails.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range Guardrails {
		if !strings.Contains(string(doc), "| `"+g.Name+"` | "+g.What+" |") {
			t.Errorf("docs/guardrails.md: no row for rule %s with what it holds (%s)", g.Name, g.What)
		}
	}
}
