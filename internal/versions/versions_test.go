package versions_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/virtc/virtc/internal/versions"
	"github.com/virtc/virtc/test/conform"
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
		{"4.21.2", "4.21", true},
		{"4.21.9", "", false},
		{"4.22", "", false},
		{"v4.22.3", "", false},
	} {
		r, _, err := Lookup(tc.in)
		if (err == nil) != tc.ok || tc.ok && r.Minor != tc.minor {
			t.Errorf("Lookup(%q) = %q, %v; want minor %q ok=%v", tc.in, r.Minor, err, tc.minor, tc.ok)
		}
	}
}

// The table's facts agree with the upstream schemas of each release: the
// feature gates by phase are exactly those of that release's HyperConverged
// CRD (see crdGatePhases), and the Kubernetes version is the one the
// schemas were generated for.
func TestTableMatchesUpstream(t *testing.T) {
	for _, r := range Releases() {
		if r.Patches[0] > r.Patches[1] || r.Channel == "" || r.OADP.Channel == "" || len(r.UpgradesFrom) == 0 {
			t.Errorf("%s: incomplete entry %+v", r.Minor, r)
		}
		dir, err := conform.Schemas(r.Minor)
		if err != nil {
			conform.Skip(t, err)
		}
		want := crdGatePhases(t, filepath.Join(dir, "crds/hco.kubevirt.io"))
		got := map[string]string{}
		for phase, gates := range map[string][]string{PhaseAlpha: r.FeatureGates.Alpha, PhaseBeta: r.FeatureGates.Beta, PhaseDeprecated: r.FeatureGates.Deprecated} {
			for _, g := range gates {
				if prev, dup := got[g]; dup {
					t.Errorf("%s: gate %s is both %s and %s", r.Minor, g, prev, phase)
				}
				got[g] = phase
			}
		}
		for _, g := range slices.Sorted(maps.Keys(want)) {
			if got[g] != want[g] {
				t.Errorf("%s: gate %s: the table says phase %q, the HyperConverged CRD %q", r.Minor, g, got[g], want[g])
			}
			if r.GatePhase(g) != want[g] {
				t.Errorf("%s: GatePhase(%s) = %q, want %q", r.Minor, g, r.GatePhase(g), want[g])
			}
		}
		for _, g := range slices.Sorted(maps.Keys(got)) {
			if _, ok := want[g]; !ok {
				t.Errorf("%s: gate %s is not in the HyperConverged CRD of this release", r.Minor, g)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "k8s", "v"+r.Kubernetes+"-standalone-strict")); err != nil {
			t.Errorf("%s: no Kubernetes %s schemas: %v", r.Minor, r.Kubernetes, err)
		}
	}
}

// The phase derivation reads what the 4.22 CRD says of the gates the
// version table once got wrong, and the 4.20 one (no phase lines) the
// same way: the test above cannot pass on a misreading of the CRD.
func TestCRDGatePhases(t *testing.T) {
	for minor, want := range map[string]map[string]string{
		"4.22": {"alignCPUs": PhaseAlpha, "downwardMetrics": PhaseAlpha, "persistentReservation": PhaseAlpha,
			"deployKubeSecondaryDNS": PhaseAlpha, "disableMDevConfiguration": PhaseAlpha,
			"videoConfig": PhaseBeta, "decentralizedLiveMigration": PhaseBeta, "nonRoot": PhaseDeprecated},
		"4.21": {"objectGraph": PhaseAlpha, "videoConfig": PhaseBeta, "decentralizedLiveMigration": PhaseAlpha,
			"nonRoot": PhaseDeprecated},
		"4.20": {"alignCPUs": PhaseAlpha, "downwardMetrics": PhaseAlpha, "decentralizedLiveMigration": PhaseAlpha,
			"nonRoot": PhaseDeprecated},
	} {
		dir, err := conform.Schemas(minor)
		if err != nil {
			conform.Skip(t, err)
		}
		got := crdGatePhases(t, filepath.Join(dir, "crds/hco.kubevirt.io"))
		for g, p := range want {
			if got[g] != p {
				t.Errorf("%s: %s is %q in the CRD, want %q", minor, g, got[g], p)
			}
		}
	}
}

// phaseLine is how HCO v1.18's CRD (api/v1 FeatureGates, the description
// of spec.featureGates in hyperconverged_v1.json) states each gate's
// phase: "* <gate>:\n  <description>\n  Phase: <phase>".
var phaseLine = regexp.MustCompile(`(?m)^\* (\w+):\n(?:  .*\n)*?  Phase: (\w+)$`)

// crdGatePhases reads the phase of every feature gate from the
// HyperConverged CRD schemas in dir. HCO's definition of the phases
// (v1.18.1 api/v1/hyperconverged_types.go, type FeatureGates): "alpha: the
// feature is in dev-preview. It is disabled by default", "beta: the feature
// gate is in tech-preview. It is enabled by default", "GA: ... always
// enabled" (and out of the list), "deprecated: ... no way to enable it".
// The v1 CRD (HCO 1.18 on) states a phase per gate; the v1beta1 map of
// gates has each gate's default and description, which decide it for older
// releases (HCO 1.16: no phase lines) and must agree with a stated phase.
func crdGatePhases(t *testing.T, dir string) map[string]string {
	t.Helper()
	var beta struct {
		Properties struct {
			Spec struct {
				Properties struct {
					FeatureGates struct {
						Properties map[string]struct {
							Description string `json:"description"`
							Default     *bool  `json:"default"`
						} `json:"properties"`
					} `json:"featureGates"`
				} `json:"properties"`
			} `json:"spec"`
		} `json:"properties"`
	}
	readJSON(t, filepath.Join(dir, "hyperconverged_v1beta1.json"), &beta)
	phases := map[string]string{}
	for g, p := range beta.Properties.Spec.Properties.FeatureGates.Properties {
		switch {
		case strings.Contains(p.Description, "Deprecated:"):
			phases[g] = PhaseDeprecated
		case p.Default != nil && *p.Default:
			phases[g] = PhaseBeta
		default:
			phases[g] = PhaseAlpha
		}
	}
	if len(phases) == 0 {
		t.Fatalf("%s: no feature gates in the v1beta1 HyperConverged schema", dir)
	}
	v1 := filepath.Join(dir, "hyperconverged_v1.json")
	if _, err := os.Stat(v1); err != nil {
		return phases
	}
	var schema struct {
		Properties struct {
			Spec struct {
				Properties struct {
					FeatureGates struct {
						Description string `json:"description"`
					} `json:"featureGates"`
				} `json:"properties"`
			} `json:"spec"`
		} `json:"properties"`
	}
	readJSON(t, v1, &schema)
	stated := map[string]string{}
	for _, m := range phaseLine.FindAllStringSubmatch(schema.Properties.Spec.Properties.FeatureGates.Description, -1) {
		stated[m[1]] = m[2]
	}
	if len(stated) == 0 {
		t.Fatalf("%s: no \"Phase:\" lines in the v1 HyperConverged featureGates description", v1)
	}
	for g, p := range stated {
		if derived, ok := phases[g]; !ok {
			t.Errorf("%s: gate %s has a phase in v1 but is not in v1beta1", dir, g)
		} else if derived != p {
			t.Errorf("%s: gate %s is %s in v1 but its v1beta1 default and description make it %s", dir, g, p, derived)
		}
		phases[g] = p
	}
	for g := range phases {
		if _, ok := stated[g]; !ok {
			t.Errorf("%s: gate %s of v1beta1 has no phase in v1", dir, g)
		}
	}
	return phases
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// Path is OLM's route to the pin in the catalog whose head virtc assumes:
// the default catalog's head is the newest z-stream of the pin's minor, so
// an upgrade lands on that head or on a minor's first bundle, and is
// refused anywhere else; never two minors or backwards.
func TestPath(t *testing.T) {
	for _, tc := range []struct {
		from, to, head string // head "": DefaultHead(to)
		want           string // versions joined by " ", or "error"
	}{
		{"4.22.2", "4.22.6", "", "4.22.6"},
		{"4.22.5", "4.22.5", "", ""},
		{"4.20.5", "4.21.8", "", "4.20.21 4.21.0 4.21.8"},
		{"4.20.21", "4.21.0", "", "4.21.0"},
		{"4.20.5", "4.21.0", "", "4.20.21 4.21.0"},
		{"4.21.8", "4.22.6", "", "4.22.0 4.22.6"},
		{"4.21.2", "4.22.0", "", "4.21.8 4.22.0"},
		// The issue's three: with the default catalog OLM passes the pin.
		{"4.22.2", "4.22.5", "", "error"},
		{"4.20.5", "4.21.3", "", "error"},
		{"4.21.8", "4.22.3", "", "error"},
		// With a catalog whose head is the pin they land on it.
		{"4.22.2", "4.22.5", "4.22.5", "4.22.5"},
		{"4.20.5", "4.21.3", "4.21.3", "4.20.21 4.21.0 4.21.3"},
		{"4.21.8", "4.22.3", "4.22.3", "4.22.0 4.22.3"},
		{"4.20.5", "4.22.3", "", "error"},
		{"4.22.3", "4.21.8", "", "error"},
		{"4.22.5", "4.22.2", "", "error"},
	} {
		from, _ := Parse(tc.from)
		to, _ := Parse(tc.to)
		head := DefaultHead(to)
		if tc.head != "" {
			head, _ = Parse(tc.head)
		}
		path, err := Path(from, to, head)
		var got []string
		for _, v := range path {
			got = append(got, v.String())
		}
		if err != nil {
			got = []string{"error"}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("Path(%s, %s, head %s) = %q (%v), want %q", tc.from, tc.to, head, got, err, tc.want)
		}
	}
}

// The issue's examples, against the model of OLM's resolver
// (operator-lifecycle-manager v0.42.0 pkg/controller/registry/resolver/
// resolver.go getSubscriptionVariables and sortChannel; solver/
// constraints.go Dependency: the candidate nearest the channel head wins):
// where OLM goes, and why, with the default catalog.
func TestRouteIssueExamples(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		steps    string // versions OLM installs
		past     string // what it offers past the pin
		explain  string
	}{
		{"4.22.2", "4.22.5", "", "4.22.6",
			`from kubevirt-hyperconverged-operator.v4.22.2, OLM offers kubevirt-hyperconverged-operator.v4.22.6 (its olm.skipRange ">=4.22.0 <4.22.6" includes 4.22.2), newer than kubevirt-hyperconverged-operator.v4.22.5 pinned in Git`},
		{"4.20.5", "4.21.3", "4.20.21 4.21.0", "4.21.8",
			`from kubevirt-hyperconverged-operator.v4.20.5, OLM installs kubevirt-hyperconverged-operator.v4.20.21 (its olm.skipRange ">=4.20.0 <4.20.21" includes 4.20.5), then kubevirt-hyperconverged-operator.v4.21.0 (its replaces names kubevirt-hyperconverged-operator.v4.20.21), then offers kubevirt-hyperconverged-operator.v4.21.8 (its olm.skipRange ">=4.21.0 <4.21.8" includes 4.21.0), newer than kubevirt-hyperconverged-operator.v4.21.3 pinned in Git`},
		{"4.21.8", "4.22.3", "4.22.0", "4.22.6", ""},
	} {
		from, _ := Parse(tc.from)
		to, _ := Parse(tc.to)
		ch, err := HCOChannel(DefaultHead(to))
		if err != nil {
			t.Fatal(err)
		}
		r := ch.Route(from, to)
		var steps []string
		for _, v := range r.Versions() {
			steps = append(steps, v.String())
		}
		if r.Reached || strings.Join(steps, " ") != tc.steps || r.Past == nil || r.Past.Version.String() != tc.past {
			t.Errorf("%s → %s: reached %v, steps %q, past %+v; want steps %q then %s offered", tc.from, tc.to, r.Reached, steps, r.Past, tc.steps, tc.past)
		}
		if tc.explain != "" && r.Explain() != tc.explain {
			t.Errorf("%s → %s explains\n%s\nwant\n%s", tc.from, tc.to, r.Explain(), tc.explain)
		}
	}
	// OLM stops before the pin: nothing in the channel replaces a 4.19
	// CSV (the table records no 4.20.0 replaces) nor skips it.
	from, _ := Parse("4.19.2")
	to, _ := Parse("4.20.21")
	ch, _ := HCOChannel(to)
	if r := ch.Route(from, to); r.Reached || r.Past != nil || len(r.Steps) != 0 ||
		!strings.Contains(r.Explain(), "offers nothing after kubevirt-hyperconverged-operator.v4.19.2") {
		t.Errorf("4.19.2 → 4.20.21: %+v: %s", r, r.Explain())
	}
}

// The modelled channel is what sortChannel accepts: one replaces chain
// from the head through every bundle (else OLM fails "a unique replacement
// chain within a channel is required"), and OLM lands on the default
// catalog's head and on each minor's first bundle only.
func TestChannelShape(t *testing.T) {
	for _, r := range Releases() {
		head := DefaultHead(Version{4, mustMinor(t, r.Minor), 0})
		ch, err := HCOChannel(head)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Head() != head {
			t.Errorf("head %s, want %s", ch.Head(), head)
		}
		for i, b := range ch.Bundles[:len(ch.Bundles)-1] {
			if b.Replaces != ch.Bundles[i+1].Name {
				t.Errorf("%s: bundle %s replaces %v, want %s (one chain)", head, b.Version, b.Replaces, ch.Bundles[i+1].Version)
			}
		}
		var lands []string
		for _, b := range ch.Bundles {
			if ch.Lands(b.Version) {
				lands = append(lands, b.Version.String())
			}
		}
		want := map[string]string{
			"4.22.6":  "4.22.6 4.22.0 4.21.8 4.21.0 4.20.21",
			"4.21.8":  "4.21.8 4.21.0 4.20.21",
			"4.20.21": "4.20.21",
		}[head.String()]
		if strings.Join(lands, " ") != want {
			t.Errorf("head %s: OLM lands on %q, want %q", head, lands, want)
		}
	}
	// OADP: every bundle skips all earlier versions, so OLM goes to the
	// head from anywhere.
	oadp, err := OADPChannel("1.6.0")
	if err != nil {
		t.Fatal(err)
	}
	v150, _ := Parse("1.5.0")
	v160, _ := Parse("1.6.0")
	if r := oadp.Route(v150, v160); !r.Reached || len(r.Steps) != 1 || oadp.Bundles[0].SkipRange != ">=0.0.0 <1.6.0" {
		t.Errorf("OADP 1.5.0 → 1.6.0: %s", r.Explain())
	}
	if _, err := ChannelOf("oadp-operator.v1.6.0"); err != nil {
		t.Error(err)
	}
	if ch, err := ChannelOf("kubevirt-hyperconverged-operator.v4.22.5"); err != nil || ch.Head().String() != "4.22.5" {
		t.Errorf("ChannelOf: %v", err)
	}
	if _, err := ChannelOf("kubevirt-hyperconverged-operator.v4.22.9"); err == nil {
		t.Error("a head the table does not have is accepted")
	}
}

func mustMinor(t *testing.T, minor string) int {
	v, err := Parse(minor + ".0")
	if err != nil {
		t.Fatal(err)
	}
	return v.Minor
}

// The graph's edges are consistent with the table: a minor's first bundle
// replaces the last qualified z-stream of a minor it upgrades from, so
// every qualified version reaches the next minor.
func TestGraphEdges(t *testing.T) {
	byMinor := map[string]Release{}
	for _, r := range Releases() {
		byMinor[r.Minor] = r
	}
	for _, r := range Releases() {
		if r.Replaces == "" {
			if _, ok := byMinor[r.UpgradesFrom[0]]; ok {
				t.Errorf("%s upgrades from %s, which the table has, but replaces no CSV of it", r.Minor, r.UpgradesFrom[0])
			}
			continue
		}
		v, err := Parse(r.Replaces)
		if err != nil {
			t.Fatalf("%s: replaces: %v", r.Minor, err)
		}
		prev, ok := byMinor[v.MinorString()]
		if !ok || !slices.Contains(r.UpgradesFrom, v.MinorString()) {
			t.Errorf("%s replaces %s, not of a minor it upgrades from (%v)", r.Minor, v, r.UpgradesFrom)
			continue
		}
		if v.Patch != prev.Patches[1] {
			t.Errorf("%s replaces %s, but %s's last qualified z-stream is %s.%d", r.Minor, v, prev.Minor, prev.Minor, prev.Patches[1])
		}
		if prev.OADP.Version != r.OADP.Version && r.OADP.Replaces != prev.OADP.Version {
			t.Errorf("%s: OADP %s replaces %q, want %s's OADP %s", r.Minor, r.OADP.Version, r.OADP.Replaces, prev.Minor, prev.OADP.Version)
		}
	}
}

// TestCommonBootImages holds every release's commonBootImages to the
// managedDataSource names of HCO's own dataImportCronTemplates
// (assets/dataImportCronTemplates/dataImportCronTemplates.yaml of v1.16.0,
// v1.17.3 and v1.18.1: centos-stream9, centos-stream10, fedora), which the
// OpenShift Virtualization build extends with its RHEL boot sources.
func TestCommonBootImages(t *testing.T) {
	for _, r := range Releases() {
		for _, name := range []string{"centos-stream9", "centos-stream10", "fedora", "rhel9"} {
			if !r.ManagesBootImage(name) {
				t.Errorf("%s (HCO %s): commonBootImages lacks %s", r.Minor, r.HCO, name)
			}
		}
		if r.ManagesBootImage("fedora-pinned") {
			t.Errorf("%s: fedora-pinned is not an HCO boot source", r.Minor)
		}
	}
}

// TestBaseline: exactly one release is the product baseline (doc 000,
// Summary: 4.22), the newest, and it has an exact-version compatibility
// gate covering OpenShift and the operator, the storage and network
// integrations and the management tooling; the other releases are upgrade
// paths into it.
func TestBaseline(t *testing.T) {
	var baselines []string
	for _, r := range Releases() {
		if r.Baseline {
			baselines = append(baselines, r.Minor)
		}
	}
	if len(baselines) != 1 || baselines[0] != Releases()[0].Minor {
		t.Fatalf("baselines = %v, want exactly the newest release %s", baselines, Releases()[0].Minor)
	}
	base, ok := BaselineRelease()
	if !ok || base.Minor != "4.22" {
		t.Fatalf("BaselineRelease() = %s, %v; want 4.22", base.Minor, ok)
	}
	var checks []string
	for _, g := range base.CompatibilityGate {
		if g.Description == "" {
			t.Errorf("gate check %s has no description", g.Check)
		}
		checks = append(checks, g.Check)
	}
	want := []string{"openshift-compatibility", "storage-integration", "network-integration", "management-tooling", "worker-pool-lifecycle", "template-enforcement", "observability", "controlled-maintenance"}
	if !slices.Equal(checks, want) {
		t.Errorf("compatibility gate = %v, want %v", checks, want)
	}
}
