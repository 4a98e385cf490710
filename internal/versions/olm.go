package versions

import (
	"fmt"
	"slices"
	"strings"
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

// Bundle is one bundle of a modelled channel.
type Bundle struct {
	Version Version
	// Replaces is the version of the CSV this bundle replaces, if any.
	Replaces *Version
	// SkipFrom and SkipTo are its olm.skipRange ">=SkipFrom <SkipTo";
	// SkipTo is zero without one.
	SkipFrom, SkipTo Version
}

// SkipRange is the bundle's olm.skipRange annotation, "" without one.
func (b Bundle) SkipRange() string {
	if b.SkipTo == (Version{}) {
		return ""
	}
	return fmt.Sprintf(">=%s <%s", b.SkipFrom, b.SkipTo)
}

// upgrades reports whether OLM offers the bundle to replace the installed
// version, and why.
func (b Bundle) upgrades(installed Version) (string, bool) {
	if b.Replaces != nil && *b.Replaces == installed {
		return "its replaces names " + installed.String(), true
	}
	if b.SkipTo != (Version{}) && installed.Compare(b.SkipFrom) >= 0 && installed.Compare(b.SkipTo) < 0 {
		return fmt.Sprintf("its olm.skipRange %q includes %s", b.SkipRange(), installed), true
	}
	return "", false
}

// Channel is a modelled catalog channel of one package: its bundles in
// sortChannel's order, the head first.
type Channel struct {
	// Package is the OLM package, for messages.
	Package string
	// CSV names a version's ClusterServiceVersion.
	CSV     func(Version) string
	Bundles []Bundle
}

// Head is the channel head.
func (c *Channel) Head() Version { return c.Bundles[0].Version }

// Has reports whether the channel has a bundle of version v.
func (c *Channel) Has(v Version) bool {
	return slices.ContainsFunc(c.Bundles, func(b Bundle) bool { return b.Version == v })
}

// Next is the bundle OLM offers to replace the installed version, and why;
// false when none does (OLM stays: AtLatestKnown).
func (c *Channel) Next(installed Version) (Bundle, string, bool) {
	for _, b := range c.Bundles {
		if why, ok := b.upgrades(installed); ok {
			return b, why, true
		}
	}
	return Bundle{}, "", false
}

// Lands reports whether OLM ends an upgrade on v: v is the channel head or
// the bundle OLM offers from some earlier version the channel knows.
// Elsewhere only a first install (spec.startingCSV) lands on v.
func (c *Channel) Lands(v Version) bool {
	if c.Head() == v {
		return true
	}
	for _, b := range c.Bundles {
		if next, _, ok := c.Next(b.Version); ok && next.Version == v {
			return true
		}
	}
	return false
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

// HCOChannelPackage is the OLM package of OpenShift Virtualization.
const HCOChannelPackage = "kubevirt-hyperconverged"

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
			b := Bundle{Version: v}
			if z > r.Patches[0] {
				prev := Version{v.Major, v.Minor, z - 1}
				b.Replaces = &prev
			} else if r.Replaces != "" {
				rep, err := Parse(r.Replaces)
				if err != nil {
					return nil, fmt.Errorf("versions table: %s replaces: %v", r.Minor, err)
				}
				b.Replaces = &rep
			}
			if z > 0 {
				b.SkipFrom, b.SkipTo = first, v
			}
			chain = append(chain, b)
		}
	}
	slices.Reverse(chain)
	return &Channel{Package: HCOChannelPackage, CSV: HCOCSV, Bundles: chain}, nil
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
		b := Bundle{Version: v, SkipTo: v}
		if len(chain) > 0 {
			prev := chain[len(chain)-1].Version
			b.Replaces = &prev
		}
		chain = append(chain, b)
	}
	if len(chain) == 0 || chain[len(chain)-1].Version != h {
		return nil, fmt.Errorf("OADP %s is not in the version table", head)
	}
	slices.Reverse(chain)
	return &Channel{Package: "redhat-oadp-operator", CSV: func(v Version) string { return OADPCSV(v.String()) }, Bundles: chain}, nil
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
