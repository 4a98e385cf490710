package rules

import (
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

// Every rule has a name of its own, says what it admits, and its message
// names it as the cluster's refusals do.
func TestRules(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if seen[r.Name] {
			t.Errorf("rule %s twice", r.Name)
		}
		seen[r.Name] = true
		if r.What == "" || r.Expression == "" {
			t.Errorf("rule %s: no What or Expression", r.Name)
		}
		if !strings.HasPrefix(r.Message, "'virtc guardrail "+r.Name+": ' + variables.where") {
			t.Errorf("rule %s: the message does not start with its name and the object: %s", r.Name, r.Message)
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
