package decode

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// ParseOverhead parses a file system overhead share such as "0.055".
func ParseOverhead(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f >= 1 {
		return 0, fmt.Errorf("invalid overhead %q (a share from 0 to below 1, such as \"0.055\")", s)
	}
	return f, nil
}

// ParseRetention parses a retention duration: Go syntax (720h) or days and
// weeks (30d, 12w), which are what people write.
func ParseRetention(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if v, err := strconv.Atoi(n); err == nil && v > 0 {
			return time.Duration(v) * 24 * time.Hour, nil
		}
	}
	if n, ok := strings.CutSuffix(s, "w"); ok {
		if v, err := strconv.Atoi(n); err == nil && v > 0 {
			return time.Duration(v) * 7 * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid retention %q (a duration such as 720h, 30d or 12w)", s)
	}
	if d%time.Hour != 0 {
		return 0, fmt.Errorf("retention %q must be whole hours", s)
	}
	return d, nil
}

// cron field ranges: minute, hour, day of month, month, day of week.
var cronRanges = [5][2]int{{0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 7}}

// checkCron accepts standard five-field cron expressions, as Velero does.
func checkCron(expr string) error {
	f := strings.Fields(expr)
	if len(f) != 5 {
		return fmt.Errorf("invalid schedule %q: a cron expression has 5 fields (minute hour day month weekday), such as \"0 2 * * *\"", expr)
	}
	for i, part := range f {
		for _, item := range strings.Split(part, ",") {
			rng, step, hasStep := strings.Cut(item, "/")
			if hasStep {
				if n, err := strconv.Atoi(step); err != nil || n <= 0 {
					return fmt.Errorf("invalid schedule %q: bad step %q", expr, step)
				}
			}
			if rng == "*" {
				continue
			}
			lo, hi, isRange := strings.Cut(rng, "-")
			for _, v := range []string{lo, hi} {
				if v == "" && !isRange {
					continue
				}
				n, err := strconv.Atoi(v)
				if err != nil || n < cronRanges[i][0] || n > cronRanges[i][1] {
					return fmt.Errorf("invalid schedule %q: %q is outside %d-%d", expr, v, cronRanges[i][0], cronRanges[i][1])
				}
			}
		}
	}
	return nil
}
