package diff

import (
	"strings"
	"testing"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/versions"
)

func platformAt(t *testing.T, version string) *resolve.Platform {
	t.Helper()
	r, v, err := versions.Lookup(version)
	if err != nil {
		t.Fatal(err)
	}
	p := &resolve.Platform{Name: "lab", Version: v, Release: r, CatalogHead: versions.DefaultHead(v), Graph: resolve.GraphTable}
	p.Obj = &api.Platform{}
	p.Channel = channel(t, p.CatalogHead)
	return p
}

func channel(t *testing.T, head versions.Version) *versions.Channel {
	t.Helper()
	ch, err := versions.HCOChannel(head)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// The upgrades are refused in the default catalog (OLM passes the
// pin: operator-lifecycle-manager v0.42.0 resolver.go offers the bundle
// nearest the channel head) and land with a catalog whose head is the pin.
func TestPlatformVersion(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		head           string // the pinned catalog's head; "": the default catalog
		rule           string // the refusal, "" when allowed
	}{
		{"z-stream to the head", "4.22.2", "4.22.6", "", ""},
		{"z-stream OLM passes", "4.22.2", "4.22.5", "", "platform-upgrade-unreachable"},
		{"z-stream in a pinned catalog", "4.22.2", "4.22.5", "4.22.5", ""},
		{"next minor", "4.21.7", "4.22.0", "", ""},
		{"next minor OLM passes", "4.21.8", "4.22.3", "", "platform-upgrade-unreachable"},
		{"next minor in a pinned catalog", "4.21.8", "4.22.3", "4.22.3", ""},
		{"4.20 to 4.21's head", "4.20.5", "4.21.8", "", ""},
		{"4.20 to 4.21 OLM passes", "4.20.5", "4.21.3", "", "platform-upgrade-unreachable"},
		{"4.20 to 4.21 in a pinned catalog", "4.20.5", "4.21.3", "4.21.3", ""},
		{"skips a minor", "4.20.5", "4.22.3", "", "platform-upgrade-skip"},
		{"z-stream down", "4.22.3", "4.22.1", "", "platform-downgrade"},
		{"minor down", "4.22.0", "4.21.8", "", "platform-downgrade"},
		{"unchanged", "4.22.3", "4.22.3", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &comparison{report: &Report{}}
			to := platformAt(t, tc.to)
			if tc.head != "" {
				to.CatalogHead, _ = versions.Parse(tc.head)
				to.Channel = channel(t, to.CatalogHead)
				to.Obj.Spec.CatalogSource = &api.CatalogSource{Image: "registry.example/index@sha256:" + strings.Repeat("c", 64), Head: tc.head}
			}
			c.version(platformAt(t, tc.from), to)
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
