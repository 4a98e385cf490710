package catalog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/virtc/virtc/fn/diag"
)

// TestEmbeddedSizes proves that catalog/sizes.jsonnet yields exactly the u1
// series of KubeVirt's common-instancetypes (names, vCPUs, memory, builtin,
// in this order), and that the u1 sizes come from nowhere else.
func TestEmbeddedSizes(t *testing.T) {
	type size struct {
		Name    string
		CPU     int64
		Memory  string
		Builtin bool
	}
	want := []size{
		{"u1.nano", 1, "512Mi", true},
		{"u1.micro", 1, "1Gi", true},
		{"u1.small", 1, "2Gi", true},
		{"u1.medium", 1, "4Gi", true},
		{"u1.2xmedium", 2, "4Gi", true},
		{"u1.large", 2, "8Gi", true},
		{"u1.xlarge", 4, "16Gi", true},
		{"u1.2xlarge", 8, "32Gi", true},
		{"u1.4xlarge", 16, "64Gi", true},
		{"u1.8xlarge", 32, "128Gi", true},
	}
	diags := &diag.List{}
	set := Embedded(diags)
	if n := diags.Len(); n != 0 {
		t.Fatalf("the embedded catalog has %d diagnostics:\n%s", n, diag.Format(diags.Sorted()))
	}
	var got []size
	for _, e := range set.Sizes {
		fromJsonnet := e.Doc.Rel == "catalog/sizes.jsonnet" && e.Doc.NoLines
		if strings.HasPrefix(e.Obj.Metadata.Name, "u1.") && !fromJsonnet {
			t.Errorf("%s comes from %s, want the evaluated catalog/sizes.jsonnet", e.Obj.Metadata.Name, e.Doc.Rel)
		}
		if fromJsonnet {
			got = append(got, size{e.Obj.Metadata.Name, e.Obj.Spec.CPU, e.Obj.Spec.Memory.String(), e.Obj.Spec.Builtin})
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("embedded sizes differ from the documented u1 series (-want +got):\n%s", diff)
	}
}
