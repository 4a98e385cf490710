package catalog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
)

func embedded(t *testing.T) *decode.Set {
	t.Helper()
	diags := &diag.List{}
	set := Embedded(diags)
	if n := diags.Len(); n != 0 {
		t.Fatalf("the embedded catalog has %d diagnostics:\n%s", n, diag.Format(diags.Sorted()))
	}
	return set
}

// TestEmbeddedSizes proves that the generated catalog/common-instancetypes.yaml
// yields exactly the u1 series of KubeVirt's common-instancetypes (names,
// vCPUs, memory, builtin, no extra properties), and that sizes come from
// nowhere else.
func TestEmbeddedSizes(t *testing.T) {
	type size struct {
		Name    string
		CPU     int64
		Memory  string
		Builtin bool
	}
	want := []size{
		{"u1.2xlarge", 8, "32Gi", true},
		{"u1.2xmedium", 2, "4Gi", true},
		{"u1.4xlarge", 16, "64Gi", true},
		{"u1.8xlarge", 32, "128Gi", true},
		{"u1.large", 2, "8Gi", true},
		{"u1.medium", 1, "4Gi", true},
		{"u1.micro", 1, "1Gi", true},
		{"u1.nano", 1, "512Mi", true},
		{"u1.small", 1, "2Gi", true},
		{"u1.xlarge", 4, "16Gi", true},
	}
	var got []size
	for _, e := range embedded(t).Sizes {
		if e.Doc.Rel != "virtc:catalog/common-instancetypes.yaml" {
			t.Errorf("%s comes from %s, want the generated catalog/common-instancetypes.yaml", e.Obj.Metadata.Name, e.Doc.Rel)
		}
		if s := e.Obj.Spec; strings.HasPrefix(e.Obj.Metadata.Name, "u1.") {
			if s.DedicatedCPU || s.Hugepages != "" || len(s.GPUs) > 0 || s.MemoryOvercommitPercent != 0 {
				t.Errorf("%s: the u1 series is plain, got %+v", e.Obj.Metadata.Name, s)
			}
			got = append(got, size{e.Obj.Metadata.Name, s.CPU, s.Memory.String(), s.Builtin})
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("embedded sizes differ from the documented u1 series (-want +got):\n%s", diff)
	}
}

// sizeOrder is the order of common-instancetypes' size names within a series.
var sizeOrder = []string{"nano", "micro", "small", "medium", "2xmedium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge"}

// TestSeriesInvariants checks the generated sizes the way
// common-instancetypes' own tests check its bundle: every size is builtin
// and named <series>.<size>; within a series the sizes grow (vCPUs and
// memory never shrink from nano to 8xlarge) and share their properties
// (dedicated CPUs, huge pages, overcommit), the *1gi variants differing
// only in 1Gi huge pages; and the properties that need prepared nodes are
// where the platform baseline expects them.
func TestSeriesInvariants(t *testing.T) {
	type props struct {
		Dedicated  bool
		Hugepages  string
		Overcommit int64
	}
	seriesProps := map[string]props{}
	type point struct{ cpu, mem int64 }
	bySeries := map[string]map[int]point{}
	for _, e := range embedded(t).Sizes {
		name, s := e.Obj.Metadata.Name, e.Obj.Spec
		if !s.Builtin {
			t.Errorf("%s: not builtin", name)
		}
		series, sz, ok := strings.Cut(name, ".")
		if !ok {
			t.Errorf("%s: not <series>.<size>", name)
			continue
		}
		p := props{s.DedicatedCPU, s.Hugepages, s.MemoryOvercommitPercent}
		if base, ok := strings.CutSuffix(sz, "1gi"); ok {
			if p.Hugepages != "1Gi" {
				t.Errorf("%s: a 1gi variant without 1Gi huge pages", name)
			}
			sz, p.Hugepages = base, "1gi-variant"
		}
		key := series
		if p.Hugepages == "1gi-variant" {
			key += "/1gi"
		}
		if prev, seen := seriesProps[key]; seen && prev != p {
			t.Errorf("%s: properties %+v differ from the rest of series %s (%+v)", name, p, key, prev)
		}
		seriesProps[key] = p
		idx := -1
		for i, o := range sizeOrder {
			if o == sz {
				idx = i
			}
		}
		if idx < 0 {
			t.Errorf("%s: unknown size name %q", name, sz)
			continue
		}
		if bySeries[key] == nil {
			bySeries[key] = map[int]point{}
		}
		bySeries[key][idx] = point{s.CPU, s.Memory.Value()}
	}
	for key, pts := range bySeries {
		var last *point
		for i := range sizeOrder {
			p, ok := pts[i]
			if !ok {
				continue
			}
			if last != nil && (p.cpu < last.cpu || p.mem < last.mem) {
				t.Errorf("series %s: %s (%d vCPU, %d bytes) is smaller than the size before it", key, sizeOrder[i], p.cpu, p.mem)
			}
			last = &p
		}
	}
	// What virtc's baseline and launcher model rely on, per series.
	want := map[string]props{
		"u1":      {},
		"o1":      {Overcommit: 50},
		"d1":      {Dedicated: true},
		"m1":      {Hugepages: "2Mi"},
		"cx1":     {Dedicated: true, Hugepages: "2Mi"},
		"n1":      {Dedicated: true, Hugepages: "1Gi"},
		"rt1":     {Dedicated: true, Hugepages: "1Gi"},
		"m1/1gi":  {Hugepages: "1gi-variant"},
		"cx1/1gi": {Dedicated: true, Hugepages: "1gi-variant"},
	}
	if diff := cmp.Diff(want, seriesProps); diff != "" {
		t.Errorf("series properties (-want +got):\n%s", diff)
	}
}

// TestPreferenceInvariants checks the generated preferences: every one is
// builtin; persistent EFI and Secure Boot only with EFI firmware; the
// preferences the issue names are there; every requirement is met by some
// size of the u1 series (so a VM can always be given one), and the
// Windows releases that need a persistent TPM and NVRAM have them.
func TestPreferenceInvariants(t *testing.T) {
	set := embedded(t)
	var u1 []api.SizeSpec
	for _, e := range set.Sizes {
		if strings.HasPrefix(e.Obj.Metadata.Name, "u1.") {
			u1 = append(u1, e.Obj.Spec)
		}
	}
	prefs := map[string]api.PreferenceSpec{}
	for _, e := range set.Preferences {
		name, p := e.Obj.Metadata.Name, e.Obj.Spec
		prefs[name] = p
		if !p.Builtin {
			t.Errorf("%s: not builtin", name)
		}
		if p.PersistentEFI && !strings.HasPrefix(p.Firmware, "efi") {
			t.Errorf("%s: persistent EFI with firmware %q", name, p.Firmware)
		}
		if r := p.Requirements; r != nil {
			fits := false
			for _, s := range u1 {
				if s.CPU >= r.CPU && (r.Memory == nil || s.Memory.Cmp(*r.Memory) >= 0) {
					fits = true
				}
			}
			if !fits {
				t.Errorf("%s: no u1 size meets its requirements %+v", name, *r)
			}
		}
		if strings.HasPrefix(name, "windows.") && p.Requirements == nil {
			t.Errorf("%s: a Windows preference without requirements", name)
		}
	}
	if len(prefs) != 54 {
		t.Errorf("%d preferences, want the bundle's 54", len(prefs))
	}
	for _, name := range []string{"windows.2k25", "windows.2k25.virtio", "debian", "ubuntu", "opensuse.leap", "sles", "rhel.10", "windows.11.virtio", "rhel.9.arm64"} {
		if _, ok := prefs[name]; !ok {
			t.Errorf("preference %s missing", name)
		}
	}
	for _, name := range []string{"windows.11", "windows.11.virtio", "windows.2k22", "windows.2k22.virtio", "windows.2k25", "windows.2k25.virtio"} {
		p := prefs[name]
		if !p.PersistentEFI || p.TPM != api.TPMPersistent || p.Firmware != "efi-secureboot" || !p.NeedsBackendStorage() {
			t.Errorf("%s: want persistent EFI with Secure Boot and a persistent TPM, got %+v", name, p)
		}
	}
	for name, want := range map[string]string{"rhel.9": "1536Mi", "fedora": "2Gi", "centos.stream9": "1536Mi", "windows.11": "4Gi"} {
		if r := prefs[name].Requirements; r == nil || r.Memory == nil || r.Memory.String() != want {
			t.Errorf("%s: memory requirement %v, want %s", name, r, want)
		}
	}
	if a := prefs["rhel.9.arm64"].Architecture; a != "arm64" {
		t.Errorf("rhel.9.arm64: architecture %q", a)
	}
}
