package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	defer func(v, c, m string) { Version, Commit, Modified = v, c, m }(Version, Commit, Modified)
	Version, Commit, Modified = "v1.4.2", "0123456789abcdef0123456789abcdef01234567", ""
	code, stdout, _ := runMain("version")
	if code != ExitOK || !strings.HasPrefix(stdout, "virtc v1.4.2 (commit 0123456789abcdef0123456789abcdef01234567, go") {
		t.Errorf("version: exit %d, %q", code, stdout)
	}
	code, stdout, _ = runMain("version", "-o", "json")
	var b buildInfo
	if err := json.Unmarshal([]byte(stdout), &b); code != ExitOK || err != nil || b.Version != "v1.4.2" || b.Commit != Commit || b.Platform == "" {
		t.Errorf("version -o json: exit %d, %v, %q", code, err, stdout)
	}
	if code, _, stderr := runMain("version", "-o", "yaml"); code != ExitUsage || !strings.Contains(stderr, `unknown -o "yaml"`) {
		t.Errorf("version -o yaml: exit %d, %q", code, stderr)
	}

	// What virtc init pins its workflow to: the release, else a clean
	// commit, else nothing.
	for _, c := range []struct {
		b    buildInfo
		want string
	}{
		{buildInfo{Version: "v1.4.2", Commit: "abc", Modified: true}, "v1.4.2"},
		{buildInfo{Version: "v2.0.0-rc.1"}, "v2.0.0-rc.1"},
		{buildInfo{Version: "be2319d", Commit: "be2319dc8fb5fd86b106a7c308f26f8c6f597e5f"}, "be2319dc8fb5fd86b106a7c308f26f8c6f597e5f"},
		{buildInfo{Version: "be2319d-dirty", Commit: "be2319dc8fb5fd86b106a7c308f26f8c6f597e5f", Modified: true}, ""},
		{buildInfo{Version: "dev"}, ""},
		{buildInfo{Version: "v01.2.3"}, ""},
	} {
		if got := c.b.pin(); got != c.want {
			t.Errorf("pin of %+v = %q, want %q", c.b, got, c.want)
		}
	}
}
