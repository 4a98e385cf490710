package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/virtc/virtc/fn/api"
	"github.com/virtc/virtc/fn/catalog"
	"github.com/virtc/virtc/fn/decode"
	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/versions"
)

// Platform is a resolved Platform: its spec with the release it names.
type Platform struct {
	decode.Entry[api.Platform]
	Name    string
	Release versions.Release
	Version versions.Version
	// FeatureGates are the gates to enable, sorted.
	FeatureGates []string
}

func resolvePlatform(cat *catalog.Catalog, diags *diag.List) *Platform {
	e := cat.Platform
	if e == nil {
		return nil
	}
	spec := e.Obj.Spec
	p := &Platform{Entry: *e, Name: e.Obj.Metadata.Name}
	rel, v, err := versions.Lookup(spec.Version)
	if err != nil {
		diags.Errorf(e.Doc.Pos("spec.version"), "spec.version", "%v", err)
		return nil
	}
	p.Release, p.Version = rel, v
	known := slices.Concat(rel.FeatureGates.GenerallyAvailable, rel.FeatureGates.TechnologyPreview)
	for i, g := range spec.FeatureGates {
		field := fmt.Sprintf("spec.featureGates[%d]", i)
		switch rel.GateStatus(g) {
		case "ga":
			p.FeatureGates = append(p.FeatureGates, g)
		case "tp":
			diags.Errorf(e.Doc.Pos(field), field, "feature gate %q is a Technology Preview in %s and is not supported in production (generally available gates: %s)", g, rel.Minor, strings.Join(rel.FeatureGates.GenerallyAvailable, ", "))
		default:
			diags.Errorf(e.Doc.Pos(field), field, "%s", diag.Unknown(fmt.Sprintf("feature gate of OpenShift Virtualization %s", rel.Minor), g, known))
		}
	}
	slices.Sort(p.FeatureGates)
	p.FeatureGates = slices.Compact(p.FeatureGates)
	return p
}
