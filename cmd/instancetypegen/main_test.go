package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/virtc/virtc/internal/versions"
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

// What virtc's Size cannot model is an error, not a silently cheaper size;
// a preference's persistent EFI, TPM, architecture and requirements come
// through.
func TestGenerateFromBundle(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(preferencesFile, `---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterPreference
metadata:
  name: win
  labels:
    instancetype.kubevirt.io/arch: amd64
spec:
  devices:
    preferredTPM:
      persistent: true
  firmware:
    preferredEfi:
      persistent: true
      secureBoot: false
  requirements:
    cpu:
      guest: 2
    memory:
      guest: 1.5Gi
`)
	write(instancetypesFile, `---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  name: x1.small
spec:
  cpu:
    guest: 1
  memory:
    guest: 2Gi
    overcommitPercent: 25
`)
	out, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  memoryOvercommitPercent: 25\n", "  firmware: efi\n  persistentEFI: true\n  tpm: persistent\n",
		"  architecture: amd64\n  requirements:\n    cpu: 2\n    memory: 1536Mi\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	write(instancetypesFile, `---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  name: h1.small
spec:
  cpu:
    guest: 1
  memory:
    guest: 2Gi
  hostDevices:
    - name: fpga
      deviceName: intel.com/fpga
`)
	if _, err := Generate(dir); err == nil || !strings.Contains(err.Error(), "h1.small: host devices") {
		t.Errorf("an instance type with host devices: err %v", err)
	}
}

// The newest supported release in catalog/versions/versions.yaml is the
// one the catalog is generated for: its KubeVirt is Version and its
// commonInstancetypes the bundle's release.
func TestNewestReleaseIsTheBundles(t *testing.T) {
	rels := versions.Releases()
	newest := rels[0]
	for _, r := range rels {
		if v, _ := versions.Parse(r.Minor + ".0"); v.Compare(mustParse(t, newest.Minor+".0")) > 0 {
			newest = r
		}
	}
	if newest.KubeVirt != Version {
		t.Errorf("the newest release %s has KubeVirt %s, the generator reads %s@%s", newest.Minor, newest.KubeVirt, Module, Version)
	}
	if len(newest.AbsentBuiltinSizes) > 0 {
		t.Errorf("the newest release %s lacks builtin sizes %v: the catalog is generated from its bundle", newest.Minor, newest.AbsentBuiltinSizes)
	}
	dir, ok := CachedBundle()
	if !ok {
		t.Skipf("%s@%s is not in the module cache", Module, Version)
	}
	data, err := os.ReadFile(filepath.Join(dir, preferencesFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "instancetype.kubevirt.io/common-instancetypes-version: " + newest.CommonInstancetypes + "\n"; !strings.Contains(string(data), want) {
		t.Errorf("the bundle of %s@%s is not common-instancetypes %s (versions.yaml)", Module, Version, newest.CommonInstancetypes)
	}
}

func mustParse(t *testing.T, s string) versions.Version {
	v, err := versions.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
