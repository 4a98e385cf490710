package source_test

import (
	"testing"

	"github.com/virtc/virtc/internal/fleet"
	"github.com/virtc/virtc/internal/source"
)

// Generated fleets are what the fast parser is for: it takes every tenant
// file, and matches yaml.v3 on each.
func TestFastParseTakesFleets(t *testing.T) {
	for seed := range uint64(4) {
		files, err := fleet.Generate(fleet.Options{Tenants: 5, VMs: 60, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if !source.SameAsV3(t, f.Path, f.Data) && f.Path != fleet.CatalogFile {
				t.Errorf("seed %d: the fast parser declined %s", seed, f.Path)
			}
		}
	}
}
