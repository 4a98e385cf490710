package resolve

import (
	"cmp"
	"fmt"
	"math"
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

// HCO's defaults of the live-migration limits (hyperconverged-cluster-operator
// v1.18.1 api/v1beta1/hyperconverged_types.go, liveMigrationConfig
// kubebuilder defaults), which KubeVirt enforces when it creates target pods
// (kubevirt v1.8.4 pkg/virt-controller/watch/migration/migration.go:
// ParallelMigrationsPerCluster, then ParallelOutboundMigrationsPerNode).
const (
	DefaultParallelMigrationsPerCluster      = 5
	DefaultParallelOutboundMigrationsPerNode = 2
)

// ConcurrentMigrations is how many VMs a node drain live-migrates at once:
// the Platform's parallelOutboundMigrationsPerNode, bounded by
// parallelMigrationsPerCluster (HCO's defaults, 2 and 5, where the Platform
// sets none, and in builds without a Platform). Each migration runs a target
// launcher pod beside its source, in the VM's namespace and quota.
func (m *Model) ConcurrentMigrations() int64 {
	perNode, perCluster := int64(DefaultParallelOutboundMigrationsPerNode), int64(DefaultParallelMigrationsPerCluster)
	if m.Platform != nil {
		if lm := m.Platform.Obj.Spec.LiveMigration; lm != nil {
			perNode = cmp.Or(ptrValue(lm.ParallelOutboundMigrationsPerNode), perNode)
			perCluster = cmp.Or(ptrValue(lm.ParallelMigrationsPerCluster), perCluster)
		}
	}
	return min(perNode, perCluster)
}

func ptrValue(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// liveMigrationLimits refuses migration limits KubeVirt cannot take: they
// are uint32 counts, and 0 would keep every VM on its node (a drain would
// never finish).
func liveMigrationLimits(e *decode.Entry[api.Platform], diags *diag.List) {
	lm := e.Obj.Spec.LiveMigration
	if lm == nil {
		return
	}
	for _, f := range []struct {
		field string
		value *int64
		def   int
	}{
		{"spec.liveMigration.parallelMigrationsPerCluster", lm.ParallelMigrationsPerCluster, DefaultParallelMigrationsPerCluster},
		{"spec.liveMigration.parallelOutboundMigrationsPerNode", lm.ParallelOutboundMigrationsPerNode, DefaultParallelOutboundMigrationsPerNode},
	} {
		if f.value != nil && (*f.value < 1 || *f.value > math.MaxUint32) {
			diags.Errorf(e.Doc.Pos(f.field), f.field, "%d concurrent live migrations is out of range (1 to %d; HCO's default is %d)", *f.value, uint32(math.MaxUint32), f.def)
		}
	}
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
	liveMigrationLimits(e, diags)
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
