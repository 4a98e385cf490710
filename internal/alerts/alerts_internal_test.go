package alerts

import (
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/api"
)

func TestCronInterval(t *testing.T) {
	day := 24 * time.Hour
	for _, c := range []struct {
		expr string
		want time.Duration
	}{
		{"0 2 * * *", day},
		{"0 3 * * 0", 7 * day},
		{"0 3 * * 7", 7 * day},
		{"*/15 * * * *", 15 * time.Minute},
		{"30 1,13 * * *", 12 * time.Hour},
		{"0 2 * * 1-5", 3 * day},      // Friday to Monday
		{"0 0 1 * *", 31 * day},       // the longest month
		{"0 0 1,15 * 1", 7 * day},     // day of month or Monday (both restricted: either)
		{"0 4 1 1,7 *", 184 * day},    // 1 July to 1 January
		{"0 22 * * 6", 7 * day},       // Saturdays
		{"5 4 */10 * *", 10 * day},    // 1, 11, 21, 31: the 21st to the 1st of a 30-day month
		{"0 0 * 2 *", 338 * day},      // 28 February to 1 February
		{"0 12 * * 0,3", 4 * day},     // Wednesday to Sunday
		{"59 23 31 12 *", 366 * day},  // New Year's Eve, across 29 February 2028
		{"0 0 28-31 * *", 28*day + 0}, // end of February to the 28th of March
	} {
		got, err := cronInterval(c.expr)
		if err != nil || got != c.want {
			t.Errorf("cronInterval(%q) = %v, %v; want %v", c.expr, got, err, c.want)
		}
	}
	for _, expr := range []string{"0 0 29 2 *", "0 0 31 2 *", "0 0 * *", "0 25 * * *"} {
		if got, err := cronInterval(expr); err == nil {
			t.Errorf("cronInterval(%q) = %v, want an error", expr, got)
		}
	}
}

func TestDurations(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"5m": 5 * time.Minute, "1h30m": 90 * time.Minute, "14d": 14 * 24 * time.Hour, "1w": 7 * 24 * time.Hour,
		"1y": 365 * 24 * time.Hour, "30s": 30 * time.Second,
	} {
		if got, err := ParseDuration(s); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "5", "5m5m", "1m1h", "-5m", "5 m"} {
		if _, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q): want an error", s)
		}
	}
	for d, want := range map[time.Duration]string{30 * time.Hour: "1d6h", 8 * 24 * time.Hour: "8d", 90 * time.Second: "1m30s", 0: "0s"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// The default catalog's alerting is complete, and a Platform's override
// replaces only the fields it sets.
func TestSettings(t *testing.T) {
	d, err := Defaults()
	if err != nil {
		t.Fatal(err)
	}
	for _, ta := range d.Tiers {
		for name, v := range map[string]string{"severity": ta.Severity, "notRunningFor": ta.NotRunningFor, "guestAgentMissingFor": ta.GuestAgentMissingFor,
			"migrationStuckAfter": ta.MigrationStuckAfter, "backupGrace": ta.BackupGrace, "drillWarning": ta.DrillWarning} {
			if v == "" {
				t.Errorf("tier %s: %s is empty", ta.Tier, name)
			} else if name != "severity" {
				if _, err := ParseDuration(v); err != nil {
					t.Errorf("tier %s: %s: %v", ta.Tier, name, err)
				}
			}
		}
	}
	if d.Tier("production").Severity != "critical" || d.Tier("standard").Severity != "warning" {
		t.Errorf("severities: production %s, standard %s", d.Tier("production").Severity, d.Tier("standard").Severity)
	}
	s, err := Load(&api.Monitoring{
		Tiers:    []api.TierAlerting{{Tier: "standard", NotRunningFor: "1h"}},
		Platform: &api.PlatformAlerting{Severity: "warning"},
	})
	if err != nil {
		t.Fatal(err)
	}
	std := s.Tier("standard")
	if std.NotRunningFor != "1h" || std.Severity != d.Tier("standard").Severity || std.BackupGrace != d.Tier("standard").BackupGrace {
		t.Errorf("standard after override: %+v", std)
	}
	if s.Platform.Severity != "warning" || s.Platform.UpgradeFor != d.Platform.UpgradeFor {
		t.Errorf("platform after override: %+v", s.Platform)
	}
	if s.Tier("production") != d.Tier("production") {
		t.Errorf("production changed: %+v", s.Tier("production"))
	}
}

func TestPromString(t *testing.T) {
	if got := promString(nameRegex([]string{"a.b", "c"})); got != `"a\\.b|c"` {
		t.Errorf("got %s", got)
	}
	if !strings.Contains(promString(`x"y`), `\"`) {
		t.Error("quote not escaped")
	}
}
