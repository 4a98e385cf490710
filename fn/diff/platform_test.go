package diff

import (
	"testing"

	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/versions"
)

func platformAt(t *testing.T, version string) *resolve.Platform {
	t.Helper()
	r, v, err := versions.Lookup(version)
	if err != nil {
		t.Fatal(err)
	}
	return &resolve.Platform{Name: "lab", Version: v, Release: r}
}

func TestPlatformVersion(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		rule           string // the refusal, "" when allowed
	}{
		{"z-stream", "4.22.2", "4.22.5", ""},
		{"next minor", "4.21.7", "4.22.0", ""},
		{"4.20 to 4.21", "4.20.5", "4.21.3", ""},
		{"skips a minor", "4.20.5", "4.22.3", "platform-upgrade-skip"},
		{"z-stream down", "4.22.3", "4.22.1", "platform-downgrade"},
		{"minor down", "4.22.0", "4.21.8", "platform-downgrade"},
		{"unchanged", "4.22.3", "4.22.3", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &comparison{report: &Report{}}
			c.version(platformAt(t, tc.from), platformAt(t, tc.to))
			var got string
			if len(c.report.Refusals) > 0 {
				got = c.report.Refusals[0].Rule
			}
			if got != tc.rule || len(c.report.Refusals) > 1 {
				t.Errorf("refusals %+v, want rule %q", c.report.Refusals, tc.rule)
			}
		})
	}
}
