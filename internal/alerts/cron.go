package alerts

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cronFields are the ranges of the five fields of a cron expression:
// minute, hour, day of month, month, day of week (0 and 7 are Sunday).
var cronFields = [5][2]int{{0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 7}}

// cronSpan is how far cronInterval looks: four years and a day hold two
// firings of any expression that fires at all (a yearly one, and one on
// 29 February in a leap year).
const cronSpan = 4*366*24*time.Hour + 24*time.Hour

// cronStart is where cronInterval starts looking: a fixed instant, so the
// interval depends on the expression alone.
var cronStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// cronInterval is the longest time between two consecutive firings of a
// five-field cron expression (UTC), as Velero's Schedule controller runs
// it (github.com/robfig/cron/v3's standard parser: when both day of month
// and day of week are restricted, either matches). A Schedule that fires
// on time is never longer than this without a new backup.
func cronInterval(expr string) (time.Duration, error) {
	f := strings.Fields(expr)
	if len(f) != 5 {
		return 0, fmt.Errorf("cron expression %q: want 5 fields", expr)
	}
	var sets [5][]bool
	for i, field := range f {
		set, err := cronSet(field, cronFields[i][0], cronFields[i][1])
		if err != nil {
			return 0, fmt.Errorf("cron expression %q: %v", expr, err)
		}
		sets[i] = set
	}
	if sets[4][7] {
		sets[4][0] = true
	}
	domAny, dowAny := f[2] == "*", f[4] == "*"
	// The times of day it fires at, then day by day.
	var times []time.Duration
	for h := 0; h < 24; h++ {
		for m := 0; m < 60; m++ {
			if sets[1][h] && sets[0][m] {
				times = append(times, time.Duration(h)*time.Hour+time.Duration(m)*time.Minute)
			}
		}
	}
	var prev time.Time
	var longest time.Duration
	for day := cronStart; day.Before(cronStart.Add(cronSpan)); day = day.AddDate(0, 0, 1) {
		if !sets[3][int(day.Month())] {
			continue
		}
		dom, dow := sets[2][day.Day()], sets[4][int(day.Weekday())]
		if domAny || dowAny {
			if !dom || !dow {
				continue
			}
		} else if !dom && !dow {
			continue
		}
		for _, at := range times {
			t := day.Add(at)
			if !prev.IsZero() && t.Sub(prev) > longest {
				longest = t.Sub(prev)
			}
			prev = t
		}
	}
	if longest == 0 {
		return 0, fmt.Errorf("cron expression %q never fires twice in four years", expr)
	}
	return longest, nil
}

// cronSet is the values a cron field selects, indexed by value.
func cronSet(field string, lo, hi int) ([]bool, error) {
	set := make([]bool, hi+1)
	for item := range strings.SplitSeq(field, ",") {
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("bad step %q", stepText)
			}
			step = n
		}
		from, to := lo, hi
		if rng != "*" {
			a, b, isRange := strings.Cut(rng, "-")
			n, err := strconv.Atoi(a)
			if err != nil || n < lo || n > hi {
				return nil, fmt.Errorf("%q is outside %d-%d", a, lo, hi)
			}
			from, to = n, n
			if isRange {
				m, err := strconv.Atoi(b)
				if err != nil || m < n || m > hi {
					return nil, fmt.Errorf("bad range %q", rng)
				}
				to = m
			} else if hasStep {
				to = hi
			}
		}
		for v := from; v <= to; v += step {
			set[v] = true
		}
	}
	return set, nil
}
