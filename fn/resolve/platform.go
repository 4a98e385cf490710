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
	// DefaultLocation is the default backup storage location's name.
	DefaultLocation string
}

// HasLocation reports whether the platform defines a storage location.
func (p *Platform) HasLocation(name string) bool {
	if dp := p.Obj.Spec.DataProtection; dp != nil {
		for _, l := range dp.StorageLocations {
			if l.Name == name {
				return true
			}
		}
	}
	return false
}

// ConfirmDeletion reports whether Argo CD must ask before deleting VMs and
// disks: the Platform's setting, true without one.
func (m *Model) ConfirmDeletion() bool {
	if m.Platform == nil || m.Platform.Obj.Spec.ConfirmDeletion == nil {
		return true
	}
	return *m.Platform.Obj.Spec.ConfirmDeletion
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
	if name := spec.VMStateStorage; name != "" {
		if _, ok := cat.StorageProfiles.Get(name); !ok {
			diags.Errorf(e.Doc.Pos("spec.vmStateStorage"), "spec.vmStateStorage", "%s", cat.StorageProfiles.Unknown("storage profile", name))
		}
	}
	if !rel.HTTPChecksum {
		for _, name := range cat.Images.Names() {
			img, _ := cat.Images.Entry(name)
			if img.Obj.Spec.HTTP != nil {
				diags.Errorf(img.Doc.Pos("spec.http"), "spec.http", "image %q: OpenShift Virtualization %s (CDI %s) cannot verify the checksum of an HTTP image, so it would be imported unverified; use a registry image pinned by digest, or platform version 4.22 or later", name, rel.Minor, rel.CDI)
			}
		}
	}
	if dp := spec.DataProtection; dp != nil && len(dp.StorageLocations) > 0 {
		p.DefaultLocation = dp.StorageLocations[0].Name
		for _, l := range dp.StorageLocations {
			if l.Default {
				p.DefaultLocation = l.Name
			}
		}
		for _, name := range cat.BackupPolicies.Names() {
			e, _ := cat.BackupPolicies.Entry(name)
			if loc := e.Obj.Spec.StorageLocation; loc != "" && !p.HasLocation(loc) {
				var names []string
				for _, l := range dp.StorageLocations {
					names = append(names, l.Name)
				}
				diags.Errorf(e.Doc.Pos("spec.storageLocation"), "spec.storageLocation", "backup policy %q: %s", name, diag.Unknown("storage location", loc, names))
			}
		}
	}
	return p
}
