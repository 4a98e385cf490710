// Package olmindex reads an OLM catalog's upgrade graph: the packages,
// channels and bundle edges (replaces, skips, olm.skipRange) that OLM's
// resolver reads, from a file-based catalog (`opm render` of an index
// image, or a catalog directory: FBC) or from a running CatalogSource's
// registry over gRPC, as OLM itself does. virtc's approver and build model
// OLM's route on it (internal/versions Channel) instead of on the channel
// virtc's version table implies, which is behind the live catalog as soon
// as Red Hat publishes a z-stream.
package olmindex

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/virtc/virtc/internal/versions"
)

// Index is a catalog's graph.
type Index struct {
	// Source says where the graph was read: a file and its digest, or a
	// registry address. It goes into messages and into the build's output
	// as the provenance of the route.
	Source   string
	Packages map[string]*Package
}

// Package is one OLM package of a catalog.
type Package struct {
	Name           string
	DefaultChannel string
	// Channels are the package's channels by name, each with its bundles
	// in the order the catalog lists them.
	Channels map[string][]versions.Bundle
}

// Entry is one bundle of one channel as a catalog states it: the fields
// of the registry's Bundle message (operator-registry v1.65.0
// pkg/api/registry.proto) that the graph needs.
type Entry struct {
	Package, Channel, Name, Version string
	Replaces, SkipRange             string
	Skips                           []string
}

func newIndex(source string) *Index {
	return &Index{Source: source, Packages: map[string]*Package{}}
}

// New is the index of entries, read from source; defaultChannels names
// each package's default channel.
func New(source string, defaultChannels map[string]string, entries ...Entry) (*Index, error) {
	ix := newIndex(source)
	var errs []error
	for _, e := range entries {
		errs = append(errs, ix.add(e))
	}
	for pkg, ch := range defaultChannels {
		ix.pkg(pkg).DefaultChannel = ch
	}
	return ix, errors.Join(errs...)
}

func (ix *Index) pkg(name string) *Package {
	p := ix.Packages[name]
	if p == nil {
		p = &Package{Name: name, Channels: map[string][]versions.Bundle{}}
		ix.Packages[name] = p
	}
	return p
}

// add puts a bundle in its channel; its version must be an x.y.z release,
// the only versions virtc models.
func (ix *Index) add(e Entry) error {
	sv, err := semver.ParseTolerant(e.Version)
	if err != nil {
		return fmt.Errorf("%s: bundle %s of package %s: version %q: %v", ix.Source, e.Name, e.Package, e.Version, err)
	}
	if len(sv.Pre) > 0 || len(sv.Build) > 0 {
		return fmt.Errorf("%s: bundle %s of package %s: version %s: virtc models released x.y.z versions only", ix.Source, e.Name, e.Package, sv)
	}
	v := versions.Version{Major: int(sv.Major), Minor: int(sv.Minor), Patch: int(sv.Patch)}
	p := ix.pkg(e.Package)
	p.Channels[e.Channel] = append(p.Channels[e.Channel], versions.NewBundle(e.Name, v, e.Replaces, e.Skips, e.SkipRange))
	return nil
}

// Channel is channel of package pkg ("" for the package's default
// channel, as a Subscription without spec.channel resolves), ordered as
// OLM's resolver orders it (versions.SortChannel); csv names a version's
// CSV in messages.
func (ix *Index) Channel(pkg, channel string, csv func(versions.Version) string) (*versions.Channel, error) {
	p, ok := ix.Packages[pkg]
	if !ok {
		return nil, fmt.Errorf("%s has no package %s (packages: %s)", ix.Source, pkg, strings.Join(ix.names(), ", "))
	}
	if channel == "" {
		channel = p.DefaultChannel
	}
	bundles, ok := p.Channels[channel]
	if !ok {
		var names []string
		for n := range p.Channels {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("%s: package %s has no channel %q (channels: %s)", ix.Source, pkg, channel, strings.Join(names, ", "))
	}
	ch, err := versions.NewChannel(pkg, channel, csv, bundles)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", ix.Source, err)
	}
	return ch, nil
}

func (ix *Index) names() []string {
	var out []string
	for n := range ix.Packages {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
