package conformance

import (
	"context"
	"testing"
	"time"
)

// Until polls done every 2 seconds (each round after step, if not nil)
// until it reports true, and logs how long that took; it fails the test
// after limit, or when ctx ends, with what done last said.
func Until(ctx context.Context, t testing.TB, limit time.Duration, what string, step func(context.Context) error, done func() (bool, string)) {
	t.Helper()
	began := time.Now()
	for {
		if step != nil {
			if err := step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		ok, last := done()
		if ok {
			t.Logf("%s after %v", what, time.Since(began).Round(time.Second))
			return
		}
		if time.Since(began) > limit {
			t.Fatalf("no %s after %v: %s", what, limit, last)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %s: %v (%s)", what, ctx.Err(), last)
		case <-time.After(2 * time.Second):
		}
	}
}
