package decode

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The byte tests accept exactly what Kubernetes' regular expressions
// accept, on every string of up to four characters from the alphabet that
// matters, and on lengths around the limits.
func TestNameChecksMatchKubernetes(t *testing.T) {
	check := func(s string) {
		for _, c := range []struct {
			name      string
			got, want []string
		}{
			{"IsDNS1123Label", isDNS1123Label(s), validation.IsDNS1123Label(s)},
			{"IsDNS1123Subdomain", isDNS1123Subdomain(s), validation.IsDNS1123Subdomain(s)},
			{"IsQualifiedName", isQualifiedName(s), validation.IsQualifiedName(s)},
			{"IsValidLabelValue", isValidLabelValue(s), validation.IsValidLabelValue(s)},
		} {
			if strings.Join(c.got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("%s(%q) = %q, Kubernetes says %q", c.name, s, c.got, c.want)
			}
		}
	}
	const alphabet = "aZ0-._/ \xff"
	var rec func(prefix string, n int)
	rec = func(prefix string, n int) {
		check(prefix)
		if n == 0 {
			return
		}
		for i := range len(alphabet) {
			rec(prefix+alphabet[i:i+1], n-1)
		}
	}
	rec("", 4)
	for _, n := range []int{62, 63, 64, 252, 253, 254} {
		for _, s := range []string{strings.Repeat("a", n), "x/" + strings.Repeat("a", n), strings.Repeat("a", n) + "/x",
			strings.Repeat("a.", n/2) + "b", strings.Repeat("a", n-2) + ".b"} {
			check(s)
		}
	}
}

func FuzzNameChecks(f *testing.F) {
	for _, s := range []string{"web-01", "app.kubernetes.io/name", "a_b", "-a", "a..b", "x/y/z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if (isDNS1123Label(s) == nil) != (validation.IsDNS1123Label(s) == nil) ||
			(isDNS1123Subdomain(s) == nil) != (validation.IsDNS1123Subdomain(s) == nil) ||
			(isQualifiedName(s) == nil) != (validation.IsQualifiedName(s) == nil) ||
			(isValidLabelValue(s) == nil) != (validation.IsValidLabelValue(s) == nil) {
			t.Fatalf("%q: byte tests and Kubernetes disagree", s)
		}
	})
}
