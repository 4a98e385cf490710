package catalog

import (
	"sync"
	"testing"

	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
)

// TestQuantitiesReadOnlyAfterBuild formats every size's memory from many
// goroutines at once, as render.Groups does for tenants: under `go test
// -race` (make test) it fails unless Build cached each Quantity's text
// (warm), since Quantity.String writes that cache on first use.
func TestQuantitiesReadOnlyAfterBuild(t *testing.T) {
	diags := &diag.List{}
	c := Build(&decode.Set{}, Options{}, diags)
	if n := diags.Len(); n != 0 {
		t.Fatalf("%d diagnostics:\n%s", n, diag.Format(diags.Sorted()))
	}
	names := c.Sizes.Names()
	if len(names) == 0 {
		t.Fatal("no sizes in the embedded catalog")
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, name := range names {
				s, _ := c.Sizes.Get(name)
				if s.Spec.Memory.String() == "" {
					t.Errorf("size %s: empty memory", name)
				}
			}
		})
	}
	wg.Wait()
}
