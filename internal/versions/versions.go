// Package versions is virtc's table of supported OpenShift Virtualization
// releases (catalog/versions/versions.yaml): which versions a Platform may
// name and the facts that differ between them.
package versions

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	defaults "github.com/virtc/virtc/catalog"
)

// Release is one supported minor release.
type Release struct {
	Minor      string `yaml:"minor"`
	Patches    [2]int `yaml:"patches"`
	Kubernetes string `yaml:"kubernetes"`
	KubeVirt   string `yaml:"kubevirt"`
	CDI        string `yaml:"cdi"`
	// HTTPChecksum says whether CDI verifies HTTP images' checksums.
	HTTPChecksum bool   `yaml:"httpChecksum"`
	HCO          string `yaml:"hco"`
	// CommonInstancetypes is the common-instancetypes release whose bundle
	// KubeVirt deploys.
	CommonInstancetypes string `yaml:"commonInstancetypes"`
	// AbsentBuiltinSizes are name patterns of the catalog's builtin sizes
	// (generated from the newest release's bundle) that this release's
	// bundle does not have.
	AbsentBuiltinSizes []string `yaml:"absentBuiltinSizes"`
	Channel            string   `yaml:"channel"`
	UpgradesFrom       []string `yaml:"upgradesFrom"`
	// Replaces is the CSV version of the previous minor that this minor's
	// first bundle (x.y.0) replaces in OLM's channel: the only way into
	// this minor. Empty for the oldest supported minor.
	Replaces string `yaml:"replaces"`
	// OADP is the OADP operator release for this platform release.
	OADP struct {
		Channel string `yaml:"channel"`
		Version string `yaml:"version"`
		// Replaces is the OADP CSV version this release's bundle replaces,
		// when it differs from the previous platform release's.
		Replaces string `yaml:"replaces"`
	} `yaml:"oadp"`
	// Baseline marks the product baseline release (doc 000, Summary:
	// "publicly released OpenShift Virtualization 4.22"): the only release a
	// production VM may settle on. The other releases are on the upgrade
	// path to it: a Platform may run them, and production VMs only while
	// the Platform names the baseline version it is on its way to
	// (spec.upgradingTo).
	Baseline bool `yaml:"baseline"`
	// CompatibilityGate are the checks of the release's exact-version
	// compatibility gate (doc 000, Summary: "an exact 4.22.z compatibility
	// gate covering OpenShift, the OpenShift Virtualization operator,
	// supported storage/network integrations, and planned management
	// tooling before promotion"): before a Platform on a version of the
	// release runs production VMs, each needs an Evidence with that check
	// on the Platform's exact version.
	CompatibilityGate []GateCheck `yaml:"compatibilityGate"`
	// CommonBootImages are the DataSources HyperConverged's common boot-image
	// import manages in the golden-image namespace (its
	// commonBootImageNamespace): one DataImportCron per
	// dataImportCronTemplate, whose spec.managedDataSource CDI's
	// DataImportCron controller creates and re-points at every new import.
	// A DataSource virtc writes under one of these names would have two
	// owners.
	CommonBootImages []string `yaml:"commonBootImages"`
	// FeatureGates are the HyperConverged feature gates of the release by
	// phase, as HCO's CRD states it. HCO lists no generally available gate:
	// a graduated feature is always on and leaves the list.
	FeatureGates struct {
		// Alpha gates are Developer Preview features, off by default.
		Alpha []string `yaml:"alpha"`
		// Beta gates are Technology Preview features, on by default.
		Beta []string `yaml:"beta"`
		// Deprecated gates are ignored by HCO.
		Deprecated []string `yaml:"deprecated"`
		// VMUse names, for each gate that changes what some VMs run, the
		// VM trait it applies to (resolve's preview traits: dedicatedCPU).
		// A VM with the trait on a cluster where the gate is on uses the
		// preview feature.
		VMUse map[string]string `yaml:"vmUse"`
	} `yaml:"featureGates"`
}

// HasBuiltinSize reports whether the release's common-instancetypes bundle
// has the builtin size called name.
func (r Release) HasBuiltinSize(name string) bool {
	for _, p := range r.AbsentBuiltinSizes {
		if ok, _ := path.Match(p, name); ok {
			return false
		}
	}
	return true
}

// GateCheck is one check of a release's compatibility gate.
type GateCheck struct {
	// Check is the identifier an Evidence's spec.check names.
	Check string `yaml:"check"`
	// Description says what the check covers, for people.
	Description string `yaml:"description"`
}

// GateVersion is the release and exact version whose compatibility gate
// the production VMs of a platform on version, on its way to upgradingTo
// (a Platform's spec.upgradingTo, or empty), need: on the baseline
// release its own; on a release of the upgrade path the baseline version
// it is upgrading to, so that passing through 4.20 or 4.21 never skips
// the gate (doc 000, Summary: "an exact 4.22.z compatibility gate ...
// before promotion"). ok is false where there is none: an upgrade-path
// release without upgradingTo (its production VMs are refused for that),
// an unknown version, a release without a gate.
func GateVersion(version, upgradingTo string) (r Release, exact string, ok bool) {
	r, _, _, err := LookupMinor(version)
	if err != nil {
		return Release{}, "", false
	}
	exact = version
	if !r.Baseline && upgradingTo != "" {
		if r, _, err = Lookup(upgradingTo); err != nil {
			return Release{}, "", false
		}
		exact = upgradingTo
	}
	return r, exact, r.Baseline && len(r.CompatibilityGate) > 0
}

// BaselineRelease is the product baseline release.
func BaselineRelease() (Release, bool) {
	for _, r := range load() {
		if r.Baseline {
			return r, true
		}
	}
	return Release{}, false
}

// ManagesBootImage reports whether HyperConverged's common boot-image
// import of the release manages a DataSource of this name in the
// golden-image namespace.
func (r Release) ManagesBootImage(name string) bool {
	return slices.Contains(r.CommonBootImages, name)
}

// Supported describes the patch range, such as 4.22.0-4.22.6.
func (r Release) Supported() string {
	return fmt.Sprintf("%s.%d-%s.%d", r.Minor, r.Patches[0], r.Minor, r.Patches[1])
}

// Version is a parsed x.y.z version.
type Version struct {
	Major, Minor, Patch int
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// MinorString is "x.y".
func (v Version) MinorString() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Compare orders versions.
func (v Version) Compare(w Version) int {
	if c := v.Major - w.Major; c != 0 {
		return c
	}
	if c := v.Minor - w.Minor; c != 0 {
		return c
	}
	return v.Patch - w.Patch
}

// Parse parses x.y.z.
func Parse(s string) (Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("version %q is not of the form x.y.z", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("version %q is not of the form x.y.z", s)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

type table struct {
	Releases []Release `yaml:"releases"`
}

var load = sync.OnceValue(func() []Release {
	var t table
	if err := yaml.Unmarshal(defaults.Versions, &t); err != nil {
		panic(fmt.Sprintf("versions table: %v", err))
	}
	return t.Releases
})

// Releases lists the supported releases, newest first.
func Releases() []Release { return load() }

// Lookup finds the release of an exact version, or says what is supported.
func Lookup(s string) (Release, Version, error) {
	v, err := Parse(s)
	if err != nil {
		return Release{}, v, err
	}
	for _, r := range load() {
		if r.Minor != v.MinorString() {
			continue
		}
		if v.Patch < r.Patches[0] || v.Patch > r.Patches[1] {
			return r, v, fmt.Errorf("version %s is not supported by this virtc (supported: %s)", s, SupportedList())
		}
		return r, v, nil
	}
	return Release{}, v, fmt.Errorf("version %s is not supported by this virtc (supported: %s)", s, SupportedList())
}

// LookupMinor finds the release of a version of a minor the table has,
// whatever its z-stream: past is set when the table's patches end before
// it (a z-stream Red Hat published after this virtc was built, which a
// build accepts only when the catalog file it was given has it:
// resolve's olmGraph). For versions a build has already checked: the
// PlatformFacts a platform build published, a Platform's compatibility
// gate.
func LookupMinor(s string) (r Release, v Version, past bool, err error) {
	r, v, err = Lookup(s)
	if err == nil {
		return r, v, false, nil
	}
	if r.Minor != "" && v.Patch > r.Patches[1] {
		return r, v, true, nil
	}
	return r, v, false, err
}

// SupportedList is the human list of supported ranges.
func SupportedList() string {
	var out []string
	for _, r := range load() {
		out = append(out, r.Supported())
	}
	return strings.Join(out, ", ")
}

// Phases of a HyperConverged feature gate (HCO v1.18.1
// api/v1/hyperconverged_types.go, FeatureGates): alpha is a Developer
// Preview, disabled by default; beta a Technology Preview, enabled by
// default; deprecated gates are ignored. A generally available feature has
// no gate.
const (
	PhaseAlpha      = "alpha"
	PhaseBeta       = "beta"
	PhaseDeprecated = "deprecated"
)

// GatePhase is the phase of a feature gate in a release, or "" for a gate
// the release does not have.
func (r Release) GatePhase(gate string) string {
	switch {
	case slices.Contains(r.FeatureGates.Alpha, gate):
		return PhaseAlpha
	case slices.Contains(r.FeatureGates.Beta, gate):
		return PhaseBeta
	case slices.Contains(r.FeatureGates.Deprecated, gate):
		return PhaseDeprecated
	}
	return ""
}

// CSV names of the operators virtc installs, as OLM's InstallPlans list them
// in spec.clusterServiceVersionNames.
func HCOCSV(v Version) string       { return "kubevirt-hyperconverged-operator.v" + v.String() }
func OADPCSV(version string) string { return "oadp-operator.v" + version }

// release finds the release of a minor.
func release(minor string) (Release, bool) {
	for _, r := range load() {
		if r.Minor == minor {
			return r, true
		}
	}
	return Release{}, false
}

// PathError says why OLM cannot go from one version to another.
type PathError struct {
	From, To Version
	// Downgrade: OLM never moves an installed operator back.
	Downgrade bool
	// Via are the minors the target is reached from, when the change skips
	// one of them.
	Via []string
}

func (e *PathError) Error() string {
	if e.Downgrade {
		return fmt.Sprintf("%s → %s is a downgrade: OLM does not downgrade an installed operator", e.From, e.To)
	}
	return fmt.Sprintf("%s → %s skips what OLM upgrades through: %s is reached only from %s, one minor release at a time", e.From, e.To, e.To.MinorString(), strings.Join(e.Via, ", "))
}

// Path is every version OLM installs, in order, to go from an installed
// version to a pinned one, in a catalog whose channel head is head: one
// InstallPlan each, chosen as OLM's resolver chooses (Channel.Route). It
// ends at to; it is empty when from equals to. A downgrade, or a change
// of more than one minor release (OpenShift Virtualization follows the
// OpenShift minor, upgraded one at a time), is a *PathError; an upgrade
// on which OLM passes the pin or stops before it is an *UnreachableError.
func Path(from, to, head Version) ([]Version, error) {
	if from == to {
		return nil, nil
	}
	if err := CheckMinors(from, to); err != nil {
		return nil, err
	}
	ch, err := HCOChannel(head)
	if err != nil {
		return nil, err
	}
	return PathIn(ch, from, to)
}

// PathIn is Path on a given channel (the graph of a catalog file, or the
// table's): every version OLM installs from from to to, one InstallPlan
// each; an *UnreachableError when OLM passes to or stops before it. The
// minors are not checked (CheckMinors).
func PathIn(ch *Channel, from, to Version) ([]Version, error) {
	if from == to {
		return nil, nil
	}
	r := ch.Route(from, to)
	if !r.Reached {
		return nil, &UnreachableError{Route: r}
	}
	return r.Versions(), nil
}

// CheckMinors refuses what OpenShift Virtualization never does, whatever
// the catalog: a downgrade, or a change of more than one minor release
// (it runs only on its own OpenShift minor, upgraded one at a time): a
// *PathError.
func CheckMinors(from, to Version) error {
	if to.Compare(from) < 0 {
		return &PathError{From: from, To: to, Downgrade: true}
	}
	rel, ok := release(to.MinorString())
	if !ok {
		return fmt.Errorf("version %s is not supported by this virtc (supported: %s)", to, SupportedList())
	}
	if from.MinorString() != to.MinorString() && !slices.Contains(rel.UpgradesFrom, from.MinorString()) {
		return &PathError{From: from, To: to, Via: rel.UpgradesFrom}
	}
	return nil
}

// OADPPath is the OADP CSVs OLM installs, in order, when the platform
// goes from one release to the next: OADP moves with the minor release.
func OADPPath(from, to Release) []string {
	if from.OADP.Version == to.OADP.Version {
		return nil
	}
	return []string{to.OADP.Version}
}
