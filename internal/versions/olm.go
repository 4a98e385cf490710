package versions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
)

// OLM's choice of the next CSV, modelled on the catalog the table
// describes. OpenShift 4.22 runs operator-lifecycle-manager v0.42.0
// (openshift/operator-framework-olm release-4.22 vendors upstream commit
// b44e81e, the v0.42.0 tag). Its resolver
// (pkg/controller/registry/resolver/resolver.go, getSubscriptionVariables)
// does, for a Subscription whose CSV is installed:
//
//   - take the bundles of the Subscription's package and channel in the
//     Subscription's catalog source, in channel order: sortChannel starts at
//     the channel head (the bundle no other bundle replaces or skips) and
//     follows spec.replaces, so the head comes first;
//   - keep those whose olm.skipRange includes the installed version, or
//     whose replaces (or skips) names the installed CSV
//     (cache/predicates.go: SkipRangeIncludesPredicate, ReplacesPredicate);
//   - offer them to the solver as one Dependency of the Subscription, in that
//     order, the installed CSV last: solver/constraints.go, "Identifiers
//     appearing earlier in the argument list have higher preference", so the
//     bundle nearest the head wins.
//
// With no installed CSV and a spec.startingCSV, the only candidate is the
// bundle of that name: a first install lands exactly on the pin. An upgrade
// lands only where OLM's choice goes: Route.

// Bundle is one bundle of a channel, with the edges OLM's resolver reads
// (operator-registry v1.65.0 pkg/api/registry.proto, message Bundle:
// csvName, version, replaces, skips, skipRange).
type Bundle struct {
	// Name is the bundle's CSV name (kubevirt-hyperconverged-operator.v4.22.6).
	Name    string
	Version Version
	// Replaces is the CSV name this bundle replaces, "" for none.
	Replaces string
	// Skips are the CSV names this bundle skips: OLM offers it to replace
	// any of them, and leaves each out of the channel's order.
	Skips []string
	// SkipRange is the bundle's olm.skipRange annotation, "" without one.
	SkipRange string
	// skip is SkipRange parsed; nil when it is empty or does not parse, as
	// OLM ignores a range it cannot parse (operator-lifecycle-manager
	// v0.42.0 pkg/controller/registry/resolver/source_registry.go,
	// newOperatorFromBundle: semver.ParseRange, kept only without error).
	skip semver.Range
}

// NewBundle is a bundle with its olm.skipRange parsed as OLM parses it.
func NewBundle(name string, v Version, replaces string, skips []string, skipRange string) Bundle {
	b := Bundle{Name: name, Version: v, Replaces: replaces, Skips: skips, SkipRange: skipRange}
	if skipRange != "" {
		if r, err := semver.ParseRange(skipRange); err == nil {
			b.skip = r
		}
	}
	return b
}

// upgrades reports whether OLM offers the bundle to replace the installed
// CSV, and why: its olm.skipRange includes the installed version, or its
// replaces or skips name the installed CSV (operator-lifecycle-manager
// v0.42.0 pkg/controller/registry/resolver/resolver.go
// getSubscriptionVariables: cache.Or(SkipRangeIncludesPredicate,
// ReplacesPredicate); cache/predicates.go: ReplacesPredicate tests
// Replaces and each of Skips).
func (b Bundle) upgrades(installed string, v Version) (string, bool) {
	if b.skip != nil && b.skip(semver.Version{Major: uint64(v.Major), Minor: uint64(v.Minor), Patch: uint64(v.Patch)}) {
		return fmt.Sprintf("its olm.skipRange %q includes %s", b.SkipRange, v), true
	}
	if b.Replaces == installed {
		return "its replaces names " + installed, true
	}
	if slices.Contains(b.Skips, installed) {
		return "its skips name " + installed, true
	}
	return "", false
}

// Channel is one channel of one package in a catalog: its bundles in the
// order OLM's resolver prefers them (SortChannel).
type Channel struct {
	// Package is the OLM package, for messages.
	Package string
	// Name is the channel's name ("" when the table's).
	Name string
	// CSV names a version's ClusterServiceVersion.
	CSV func(Version) string
	// Bundles are the bundles OLM may offer as an upgrade, the head first
	// (SortChannel).
	Bundles []Bundle
	// Others are the channel's bundles OLM never offers as an upgrade
	// (skipped by another, or off the replaces chain): only a first
	// install (spec.startingCSV) lands on one.
	Others []Bundle
}

// NewChannel orders a channel's bundles as OLM's resolver does
// (SortChannel).
func NewChannel(pkg, name string, csv func(Version) string, bundles []Bundle) (*Channel, error) {
	chain, others, err := SortChannel(pkg, name, bundles)
	if err != nil {
		return nil, err
	}
	return &Channel{Package: pkg, Name: name, CSV: csv, Bundles: chain, Others: others}, nil
}

// SortChannel orders a channel's bundles as OLM's resolver does before it
// offers them (operator-lifecycle-manager v0.42.0
// pkg/controller/registry/resolver/resolver.go sortChannel): the head is
// the one bundle no other bundle replaces or skips; from it the chain
// follows replaces; a bundle some other bundle skips is left out of the
// chain, and so is every bundle the chain does not reach. It fails as
// OLM's resolution fails: no head, more than one head, a cycle. others
// are the bundles left out, by name.
func SortChannel(pkg, channel string, bundles []Bundle) (chain, others []Bundle, err error) {
	if len(bundles) == 0 {
		return nil, nil, fmt.Errorf("channel %q of package %q has no bundles", channel, pkg)
	}
	byName := map[string]int{}
	for i, b := range bundles {
		byName[b.Name] = i
	}
	replacedBy := make([]bool, len(bundles))
	skipped := make([]bool, len(bundles))
	for _, b := range bundles {
		if i, ok := byName[b.Replaces]; ok && b.Replaces != "" {
			replacedBy[i] = true
		}
		for _, s := range b.Skips {
			if i, ok := byName[s]; ok {
				replacedBy[i] = true
				skipped[i] = true
			}
		}
	}
	var heads []int
	for i := range bundles {
		if !replacedBy[i] {
			heads = append(heads, i)
		}
	}
	if len(heads) == 0 {
		return nil, nil, fmt.Errorf("no channel heads (entries not replaced by another entry) found in channel %q of package %q", channel, pkg)
	}
	if len(heads) > 1 {
		var names []string
		for _, h := range heads {
			names = append(names, bundles[h].Name)
		}
		slices.Sort(names)
		return nil, nil, fmt.Errorf("a unique replacement chain within a channel is required to determine the relative order between channel entries, but %d replacement chains were found in channel %q of package %q: heads %s", len(heads), channel, pkg, strings.Join(names, ", "))
	}
	inChain := make([]bool, len(bundles))
	for cur, seen := heads[0], map[int]bool{}; ; {
		seen[cur] = true
		if !skipped[cur] {
			chain = append(chain, bundles[cur])
			inChain[cur] = true
		}
		next, ok := byName[bundles[cur].Replaces]
		if !ok || bundles[cur].Replaces == "" {
			break
		}
		if seen[next] {
			return nil, nil, fmt.Errorf("a cycle exists in the chain of replacement beginning with %q in channel %q of package %q", bundles[heads[0]].Name, channel, pkg)
		}
		cur = next
	}
	for i, b := range bundles {
		if !inChain[i] {
			others = append(others, b)
		}
	}
	slices.SortFunc(others, func(a, b Bundle) int { return a.Version.Compare(b.Version) })
	return chain, others, nil
}

// Head is the channel head.
func (c *Channel) Head() Version { return c.Bundles[0].Version }

// Has reports whether the channel has a bundle of version v.
func (c *Channel) Has(v Version) bool {
	is := func(b Bundle) bool { return b.Version == v }
	return slices.ContainsFunc(c.Bundles, is) || slices.ContainsFunc(c.Others, is)
}

// Bundle is the channel's bundle of version v.
func (c *Channel) Bundle(v Version) (Bundle, bool) {
	for _, b := range slices.Concat(c.Bundles, c.Others) {
		if b.Version == v {
			return b, true
		}
	}
	return Bundle{}, false
}

// Next is the bundle OLM offers to replace the installed version, and why;
// false when none does (OLM stays: AtLatestKnown). The installed CSV is
// named as the channel's package names it.
func (c *Channel) Next(installed Version) (Bundle, string, bool) {
	name := c.CSV(installed)
	for _, b := range c.Bundles {
		if why, ok := b.upgrades(name, installed); ok {
			if b.Version == installed {
				// A bundle whose own range includes it: OLM's first
				// choice is what is installed, so it stays.
				break
			}
			return b, why, true
		}
	}
	return Bundle{}, "", false
}

// Lands reports whether OLM ends an upgrade on v: v is the channel head or
// the bundle OLM offers from some other version the channel knows.
// Elsewhere only a first install (spec.startingCSV) lands on v.
func (c *Channel) Lands(v Version) bool {
	if c.Head() == v {
		return true
	}
	for _, b := range slices.Concat(c.Bundles, c.Others) {
		if next, _, ok := c.Next(b.Version); ok && next.Version == v {
			return true
		}
	}
	return false
}

// Before is a version from which OLM's upgrade would have to reach v: the
// version of the bundle v's replaces names, else of the first it skips.
func (c *Channel) Before(v Version) (Version, bool) {
	b, ok := c.Bundle(v)
	if !ok {
		return Version{}, false
	}
	for _, name := range append([]string{b.Replaces}, b.Skips...) {
		for _, o := range slices.Concat(c.Bundles, c.Others) {
			if name != "" && o.Name == name {
				return o.Version, true
			}
		}
	}
	return Version{}, false
}

// Step is one CSV OLM installs (one InstallPlan).
type Step struct {
	Version Version
	// Why OLM chose it: the replaces or skipRange that names the version
	// before it.
	Why string
}

// Route is what OLM does from an installed version towards a pinned one.
type Route struct {
	From, To Version
	Channel  *Channel
	// Steps are the CSVs OLM installs, in order, as far as the approver
	// lets it: ending at To when Reached.
	Steps []Step
	// Reached: OLM lands exactly on To.
	Reached bool
	// Past is what OLM offers instead of going on to To, when it offers a
	// CSV newer than To (the approver refuses it); nil when OLM offers
	// nothing (it stops before To).
	Past *Step
}

// Versions are the steps' versions.
func (r *Route) Versions() []Version {
	var out []Version
	for _, s := range r.Steps {
		out = append(out, s.Version)
	}
	return out
}

// Route follows OLM's choice from an installed version until it lands on
// to, offers a CSV past it, or offers nothing.
func (c *Channel) Route(from, to Version) *Route {
	r := &Route{From: from, To: to, Channel: c}
	cur := from
	for range len(c.Bundles) + 1 {
		if cur == to {
			r.Reached = true
			return r
		}
		b, why, ok := c.Next(cur)
		if !ok {
			return r
		}
		if b.Version.Compare(to) > 0 {
			r.Past = &Step{b.Version, why}
			return r
		}
		r.Steps = append(r.Steps, Step{b.Version, why})
		cur = b.Version
	}
	return r
}

// Explain says where OLM goes, naming the CSVs: "from A, OLM installs B
// (why), then C (why), then offers D (why), newer than P pinned in Git".
func (r *Route) Explain() string {
	csv := r.Channel.CSV
	var b strings.Builder
	fmt.Fprintf(&b, "from %s, OLM", csv(r.From))
	prev := r.From
	for i, s := range r.Steps {
		if i == 0 {
			fmt.Fprintf(&b, " installs %s (%s)", csv(s.Version), s.Why)
		} else {
			fmt.Fprintf(&b, ", then %s (%s)", csv(s.Version), s.Why)
		}
		prev = s.Version
	}
	then := " "
	if len(r.Steps) > 0 {
		then = ", then "
	}
	switch {
	case r.Reached:
		if len(r.Steps) == 0 {
			return b.String() + " has nothing to do"
		}
		return b.String() + ": the pin"
	case r.Past != nil:
		fmt.Fprintf(&b, "%soffers %s (%s), newer than %s pinned in Git", then, csv(r.Past.Version), r.Past.Why, csv(r.To))
	default:
		fmt.Fprintf(&b, "%soffers nothing after %s: no bundle up to channel head %s replaces it or skips it", then, csv(prev), csv(r.Channel.Head()))
	}
	return b.String()
}

// UnreachableError: OLM's upgrade does not land on the pin.
type UnreachableError struct{ Route *Route }

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s → %s does not land on %s: %s", e.Route.From, e.Route.To, e.Route.To, e.Route.Explain())
}

// The OLM packages of OpenShift Virtualization and of OADP.
const (
	HCOChannelPackage = "kubevirt-hyperconverged"
	OADPPackage       = "redhat-oadp-operator"
)

// HCOChannel is the kubevirt-hyperconverged channel of a catalog whose
// head is head: every z-stream of the table's minors up to head, chained as
// the table's header describes (a z-stream replaces the one before it and
// skips the earlier z-streams of its minor with olm.skipRange ">=x.y.0
// <x.y.z"; a minor's first bundle replaces the previous minor's Replaces
// CSV).
func HCOChannel(head Version) (*Channel, error) {
	if _, _, err := Lookup(head.String()); err != nil {
		return nil, err
	}
	rels := slices.Clone(load())
	slices.Reverse(rels) // oldest first
	var chain []Bundle
	for _, r := range rels {
		first, err := Parse(r.Minor + ".0")
		if err != nil {
			return nil, fmt.Errorf("versions table: minor %q: %v", r.Minor, err)
		}
		if first.Compare(Version{head.Major, head.Minor, 0}) > 0 {
			break
		}
		last := r.Patches[1]
		if first.MinorString() == head.MinorString() {
			last = head.Patch
		}
		for z := r.Patches[0]; z <= last; z++ {
			v := Version{first.Major, first.Minor, z}
			var replaces, skipRange string
			if z > r.Patches[0] {
				replaces = HCOCSV(Version{v.Major, v.Minor, z - 1})
			} else if r.Replaces != "" {
				rep, err := Parse(r.Replaces)
				if err != nil {
					return nil, fmt.Errorf("versions table: %s replaces: %v", r.Minor, err)
				}
				replaces = HCOCSV(rep)
			}
			if z > 0 {
				skipRange = fmt.Sprintf(">=%s <%s", first, v)
			}
			chain = append(chain, NewBundle(HCOCSV(v), v, replaces, nil, skipRange))
		}
	}
	return NewChannel(HCOChannelPackage, "", HCOCSV, chain)
}

// DefaultHead is the channel head virtc assumes for the default catalog
// (redhat-operators, the index of the cluster's OpenShift minor) when
// version v is pinned: the newest z-stream the table has of v's minor.
func DefaultHead(v Version) Version {
	for _, r := range load() {
		if r.Minor == v.MinorString() {
			return Version{v.Major, v.Minor, r.Patches[1]}
		}
	}
	return v
}

// OADPChannel is the OADP channel of a catalog whose head is the OADP
// release head: the table's OADP releases up to it, each skipping every
// earlier version (openshift/oadp-operator bundle/manifests/
// oadp-operator.clusterserviceversion.yaml, branches oadp-1.4 and oadp-1.5:
// olm.skipRange '>=0.0.0 <1.5.0' on oadp-operator.v1.5.0) and replacing
// the one before it (the table's oadp.replaces).
func OADPChannel(head string) (*Channel, error) {
	h, err := Parse(head)
	if err != nil {
		return nil, err
	}
	rels := slices.Clone(load())
	slices.Reverse(rels)
	var chain []Bundle
	for _, r := range rels {
		v, err := Parse(r.OADP.Version)
		if err != nil {
			return nil, fmt.Errorf("versions table: %s oadp: %v", r.Minor, err)
		}
		if v.Compare(h) > 0 || len(chain) > 0 && chain[len(chain)-1].Version == v {
			continue
		}
		var replaces string
		if len(chain) > 0 {
			replaces = chain[len(chain)-1].Name
		}
		chain = append(chain, NewBundle(OADPCSV(v.String()), v, replaces, nil, ">=0.0.0 <"+v.String()))
	}
	if len(chain) == 0 || chain[len(chain)-1].Version != h {
		return nil, fmt.Errorf("OADP %s is not in the version table", head)
	}
	return NewChannel(OADPPackage, "", func(v Version) string { return OADPCSV(v.String()) }, chain)
}

// ChannelOf is the modelled channel whose head is the CSV named head
// (kubevirt-hyperconverged-operator.v4.22.6, oadp-operator.v1.6.0): what
// the approver models from its --catalog-head.
func ChannelOf(head string) (*Channel, error) {
	pkg, ver, ok := strings.Cut(head, ".v")
	if !ok {
		return nil, fmt.Errorf("%q is not a CSV name of the form <operator>.v<x.y.z>", head)
	}
	switch pkg {
	case "kubevirt-hyperconverged-operator":
		v, err := Parse(ver)
		if err != nil {
			return nil, err
		}
		return HCOChannel(v)
	case "oadp-operator":
		return OADPChannel(ver)
	}
	return nil, fmt.Errorf("%q: virtc models the channels of kubevirt-hyperconverged-operator and oadp-operator only", head)
}

// CSVVersion is the version of a CSV name <operator>.v<x.y.z>.
func CSVVersion(csv string) (Version, error) {
	_, ver, ok := strings.Cut(csv, ".v")
	if !ok {
		return Version{}, fmt.Errorf("%q is not a CSV name of the form <operator>.v<x.y.z>", csv)
	}
	return Parse(ver)
}
