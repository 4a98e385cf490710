package diff

import (
	"testing"

	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/versions"
)

func platformAt(t *testing.T, version string, upgradesFrom ...string) *resolve.Platform {
	t.Helper()
	v, err := versions.Parse(version)
	if err != nil {
		t.Fatal(err)
	}
	p := &resolve.Platform{Name: "lab", Version: v}
	p.Release.Minor = v.MinorString()
	p.Release.UpgradesFrom = upgradesFrom
	return p
}

func TestPlatformVersion(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		upgradesFrom   []string
		rule           string // the refusal, "" when allowed
	}{
		{"z-stream", "4.22.2", "4.22.5", []string{"4.21"}, ""},
		{"next minor", "4.21.7", "4.22.0", []string{"4.21"}, ""},
		{"skips a minor", "4.20.5", "4.22.3", []string{"4.21"}, "platform-upgrade-skip"},
		{"z-stream down", "4.22.3", "4.22.1", []string{"4.21"}, "platform-downgrade"},
		{"minor down", "4.22.0", "4.21.9", []string{"4.20"}, "platform-downgrade"},
		{"unchanged", "4.22.3", "4.22.3", []string{"4.21"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &comparison{report: &Report{}}
			c.version(platformAt(t, tc.from), platformAt(t, tc.to, tc.upgradesFrom...))
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
