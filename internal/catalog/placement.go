package catalog

import (
	"fmt"

	"github.com/virtc/virtc/internal/diag"
)

// checkPlacement verifies that worker pools name profiles of the catalog
// and that migration policies name pools of it.
func (c *Catalog) checkPlacement(diags *diag.List) {
	for _, name := range c.WorkerPools.Names() {
		e, _ := c.WorkerPools.Entry(name)
		for i, n := range e.Obj.Spec.Networks {
			if _, ok := c.NetworkProfiles.Get(n); !ok {
				f := fmt.Sprintf("spec.networks[%d]", i)
				diags.Errorf(e.Doc.Pos(f), f, "pool %q: %s", name, c.NetworkProfiles.Unknown("network profile", n))
			}
		}
		for i, n := range e.Obj.Spec.Storage {
			if _, ok := c.StorageProfiles.Get(n); !ok {
				f := fmt.Sprintf("spec.storage[%d]", i)
				diags.Errorf(e.Doc.Pos(f), f, "pool %q: %s", name, c.StorageProfiles.Unknown("storage profile", n))
			}
		}
	}
	for _, name := range c.MigrationPolicies.Names() {
		e, _ := c.MigrationPolicies.Entry(name)
		if p := e.Obj.Spec.Selector.Pool; p != "" {
			if _, ok := c.WorkerPools.Get(p); !ok {
				diags.Errorf(e.Doc.Pos("spec.selector.pool"), "spec.selector.pool", "migration policy %q: %s", name, c.WorkerPools.Unknown("worker pool", p))
			}
		}
	}
}
