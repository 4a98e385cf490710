package cli

import (
	"strings"
	"testing"
)

// TestAsOfSourceDateEpoch: without --as-of, SOURCE_DATE_EPOCH (the
// reproducible-builds variable CI sets to the commit's time) is the day
// evidence expiry is judged on; --as-of wins over it; a malformed value is
// refused rather than ignored.
func TestAsOfSourceDateEpoch(t *testing.T) {
	const dir = "../../golden/report-evidence"
	const expired = "weekly-restore-drill-2026-08 of 2026-08-01 counted until 2026-10-30, and has expired"
	for _, c := range []struct {
		name, epoch string
		args        []string
		expired     bool
		code        int
	}{
		// hr's newest Evidence (platform-wide) is of 2026-11-03: the drill
		// of 2026-08-01 (90d) has expired by then.
		{name: "no date: the tenant's newest evidence", expired: true},
		// 2026-10-15T12:00:00Z: the drill still counts.
		{name: "SOURCE_DATE_EPOCH", epoch: "1792065600"},
		{name: "--as-of wins", epoch: "1792065600", args: []string{"--as-of", "2026-12-01"}, expired: true},
		{name: "malformed", epoch: "yesterday", code: ExitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("SOURCE_DATE_EPOCH", c.epoch)
			code, out, errOut := run(append(append([]string{"report"}, c.args...), dir)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, c.code, errOut)
			}
			if code != ExitOK {
				if !strings.Contains(errOut, "SOURCE_DATE_EPOCH") {
					t.Errorf("stderr %q does not name SOURCE_DATE_EPOCH", errOut)
				}
				return
			}
			if got := strings.Contains(out, expired); got != c.expired {
				t.Errorf("drill expired = %v, want %v:\n%s", got, c.expired, out)
			}
		})
	}
}
