package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGeneratedCatalogIsCurrent holds catalog/common-instancetypes.yaml to
// what the generator makes of the bundle in kubevirt.io/kubevirt@Version:
// run `make generate` after changing either.
func TestGeneratedCatalogIsCurrent(t *testing.T) {
	dir, ok := CachedBundle()
	if !ok {
		if os.Getenv("VIRTC_REQUIRE_TOOLS") == "" {
			t.Skipf("%s@%s is not in the module cache (go mod download %s@%s, or set VIRTC_REQUIRE_TOOLS=1)", Module, Version, Module, Version)
		}
		var err error
		if dir, err = Download(); err != nil {
			t.Fatal(err)
		}
	}
	want, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", Output))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is not what cmd/instancetypegen generates from %s@%s; run `make generate` (-generated +file):\n%s", Output, Module, Version, diff)
	}
	// The bundle KubeVirt v1.8.4 deploys: 65 instance types, 54 preferences.
	if n := strings.Count(string(want), "\nkind: Size\n"); n != 65 {
		t.Errorf("%d sizes generated, want the bundle's 65", n)
	}
	if n := strings.Count(string(want), "\nkind: Preference\n"); n != 54 {
		t.Errorf("%d preferences generated, want the bundle's 54", n)
	}
}
