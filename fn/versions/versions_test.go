package versions_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/virtc/virtc/fn/conform"
	. "github.com/virtc/virtc/fn/versions"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		in    string
		minor string
		ok    bool
	}{
		{"4.22.3", "4.22", true},
		{"4.22.0", "4.22", true},
		{"4.20.21", "4.20", true},
		{"4.22.99", "", false},
		{"4.21.2", "", false},
		{"4.22", "", false},
		{"v4.22.3", "", false},
	} {
		r, _, err := Lookup(tc.in)
		if (err == nil) != tc.ok || tc.ok && r.Minor != tc.minor {
			t.Errorf("Lookup(%q) = %q, %v; want minor %q ok=%v", tc.in, r.Minor, err, tc.minor, tc.ok)
		}
	}
}

// The table's facts agree with the upstream schemas of each release: every
// gate it classifies exists in that release's HyperConverged, no gate is
// both GA and Technology Preview, and the Kubernetes version is the one
// the schemas were generated for.
func TestTableMatchesUpstream(t *testing.T) {
	for _, r := range Releases() {
		if r.Patches[0] > r.Patches[1] || r.Channel == "" || r.OADP.Channel == "" || len(r.UpgradesFrom) == 0 {
			t.Errorf("%s: incomplete entry %+v", r.Minor, r)
		}
		for _, g := range r.FeatureGates.GenerallyAvailable {
			if slices.Contains(r.FeatureGates.TechnologyPreview, g) {
				t.Errorf("%s: gate %s is both GA and Technology Preview", r.Minor, g)
			}
		}
		dir, err := conform.Schemas(r.Minor)
		if err != nil {
			conform.Skip(t, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "crds/hco.kubevirt.io/hyperconverged_v1beta1.json"))
		if err != nil {
			t.Fatal(err)
		}
		var schema struct {
			Properties struct {
				Spec struct {
					Properties struct {
						FeatureGates struct {
							Properties map[string]any `json:"properties"`
						} `json:"featureGates"`
					} `json:"properties"`
				} `json:"spec"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(data, &schema); err != nil {
			t.Fatal(err)
		}
		gates := schema.Properties.Spec.Properties.FeatureGates.Properties
		for _, g := range slices.Concat(r.FeatureGates.GenerallyAvailable, r.FeatureGates.TechnologyPreview) {
			if _, ok := gates[g]; !ok {
				t.Errorf("%s: gate %s is not in the HyperConverged schema of this release", r.Minor, g)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "k8s", "v"+r.Kubernetes+"-standalone-strict")); err != nil {
			t.Errorf("%s: no Kubernetes %s schemas: %v", r.Minor, r.Kubernetes, err)
		}
	}
}
