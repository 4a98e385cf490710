package alerts

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/virtc/virtc/api"
	defaults "github.com/virtc/virtc/catalog"
)

// Settings are the thresholds and severities in force: the default
// catalog's (catalog/monitoring/alerting.yaml), with the Platform's
// spec.monitoring over them field by field.
type Settings struct {
	// Tiers in the order of the default catalog (production first).
	Tiers    []api.TierAlerting
	Platform api.PlatformAlerting
}

// Tier is the alerting of a tier (the last one's, standard, for a tier
// the settings do not hold).
func (s Settings) Tier(name string) api.TierAlerting {
	for _, t := range s.Tiers {
		if t.Tier == name {
			return t
		}
	}
	return s.Tiers[len(s.Tiers)-1]
}

// rank orders tiers: the lower, the more important (the default catalog's
// order).
func (s Settings) rank(tier string) int {
	for i, t := range s.Tiers {
		if t.Tier == tier {
			return i
		}
	}
	return len(s.Tiers)
}

// Defaults decodes the default catalog's alerting.
func Defaults() (Settings, error) {
	var m api.Monitoring
	if err := yaml.UnmarshalStrict(defaults.Alerting, &m); err != nil {
		return Settings{}, fmt.Errorf("catalog/monitoring/alerting.yaml: %v", err)
	}
	if m.Platform == nil || len(m.Tiers) == 0 {
		return Settings{}, fmt.Errorf("catalog/monitoring/alerting.yaml: needs tiers and platform")
	}
	return Settings{Tiers: m.Tiers, Platform: *m.Platform}, nil
}

// Load is the default catalog's alerting with a Platform's overrides.
func Load(over *api.Monitoring) (Settings, error) {
	s, err := Defaults()
	if err != nil {
		return s, err
	}
	if over == nil {
		return s, nil
	}
	for _, o := range over.Tiers {
		i := slices.IndexFunc(s.Tiers, func(t api.TierAlerting) bool { return t.Tier == o.Tier })
		if i < 0 {
			s.Tiers = append(s.Tiers, o)
			continue
		}
		t := &s.Tiers[i]
		for _, f := range []struct{ to, from *string }{
			{&t.Severity, &o.Severity}, {&t.NotRunningFor, &o.NotRunningFor},
			{&t.GuestAgentMissingFor, &o.GuestAgentMissingFor}, {&t.MigrationStuckAfter, &o.MigrationStuckAfter},
			{&t.BackupGrace, &o.BackupGrace}, {&t.DrillWarning, &o.DrillWarning},
		} {
			if *f.from != "" {
				*f.to = *f.from
			}
		}
	}
	if p := over.Platform; p != nil {
		for _, f := range []struct{ to, from *string }{
			{&s.Platform.Severity, &p.Severity}, {&s.Platform.UnhealthyFor, &p.UnhealthyFor}, {&s.Platform.UpgradeFor, &p.UpgradeFor},
		} {
			if *f.from != "" {
				*f.to = *f.from
			}
		}
	}
	return s, nil
}

// promDurationRE is a Prometheus duration: units from years down to
// seconds, each at most once, in that order.
var promDurationRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?$`)
})

// ParseDuration parses a Prometheus duration (5m, 1h30m, 14d, 1w, 1y):
// a day is 24h, a week 7d, a year 365d, as Prometheus counts them
// (github.com/prometheus/common model.ParseDuration).
func ParseDuration(s string) (time.Duration, error) {
	m := promDurationRE().FindStringSubmatch(s)
	if s == "" || m == nil {
		return 0, fmt.Errorf("%q is not a Prometheus duration (such as 5m, 1h30m or 14d)", s)
	}
	units := []time.Duration{365 * 24 * time.Hour, 7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute, time.Second}
	var d time.Duration
	for i, u := range units {
		if v := m[2+2*i]; v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%q: %v", s, err)
			}
			d += time.Duration(n) * u
		}
	}
	return d, nil
}

// FormatDuration writes d (whole seconds) as a Prometheus duration in
// days, hours, minutes and seconds (30h is 1d6h).
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String()
}
