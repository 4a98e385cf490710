package resolve

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/olmindex"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/internal/versions"
)

// Platform is a resolved Platform: its spec with the release it names.
type Platform struct {
	decode.Entry[api.Platform]
	Name    string
	Release versions.Release
	Version versions.Version
	// CatalogHead is the kubevirt-hyperconverged channel head of the
	// catalog the Subscription installs from: the head of the catalog's
	// graph among the inputs, else spec.catalogSource.head, else the
	// default catalog's (versions.DefaultHead).
	CatalogHead versions.Version
	// Channel is the Subscription's kubevirt-hyperconverged channel in
	// that catalog, as OLM's resolver orders it: OLM's route to Version is
	// modelled on it (Channel.Route).
	Channel *versions.Channel
	// Graph says where Channel comes from: the file-based catalog among
	// the inputs (olmindex.FromDocs: its files and digest), or GraphTable.
	Graph string
	// OADPChannel is the OADP Subscription's channel in the catalog's
	// graph among the inputs; nil when the build has none or it has no
	// redhat-oadp-operator package (OADP's route is then the table's:
	// every OADP bundle skips all earlier ones).
	OADPChannel *versions.Channel
	// FeatureGates are the gates to enable, sorted.
	FeatureGates []string
	// DisabledGates are the beta gates (on by default) that the Platform
	// does not accept, sorted: virtc turns them off.
	DisabledGates []string
	// DefaultLocation is the default backup storage location's name.
	DefaultLocation string
	// MigrationNetwork is the bridge profile of the dedicated live-migration
	// network, if the Platform names one.
	MigrationNetwork *Network
	// WorkloadUpdate is the HyperConverged's workloadUpdateStrategy, HCO's
	// defaults filled in.
	WorkloadUpdate WorkloadUpdate
}

// WorkloadUpdate is how KubeVirt moves running VMs to a new virt-launcher
// after an upgrade.
type WorkloadUpdate struct {
	Methods           []string
	BatchEvictionSize int64
	// BatchEvictionInterval is a Go duration, normalized (1m0s).
	BatchEvictionInterval string
}

// Live and Evict report the methods.
func (w WorkloadUpdate) Live() bool  { return slices.Contains(w.Methods, "LiveMigrate") }
func (w WorkloadUpdate) Evict() bool { return slices.Contains(w.Methods, "Evict") }

// HCO's workloadUpdateStrategy defaults (hyperconverged-cluster-operator
// v1.18.1 api/v1/hyperconverged_types.go, HyperConvergedWorkloadUpdateStrategy
// kubebuilder defaults; the same in the 4.20 and 4.21 CRDs).
const (
	DefaultBatchEvictionSize     = 10
	DefaultBatchEvictionInterval = "1m0s"
)

// durationForm is WorkloadUpdate.BatchEvictionInterval's pattern.
var durationForm = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+h)?([0-9]+m)?([0-9]+s)?$`) })

func workloadUpdate(p *Platform, diags *diag.List) {
	w := WorkloadUpdate{Methods: []string{"LiveMigrate"}, BatchEvictionSize: DefaultBatchEvictionSize, BatchEvictionInterval: DefaultBatchEvictionInterval}
	if spec := p.Obj.Spec.WorkloadUpdate; spec != nil {
		if spec.Methods != nil {
			w.Methods = slices.Clone(spec.Methods)
		}
		if n := spec.BatchEvictionSize; n != nil {
			if *n < 1 || *n > math.MaxInt32 {
				diags.Errorf(p.Doc.Pos("spec.workloadUpdate.batchEvictionSize"), "spec.workloadUpdate.batchEvictionSize", "%d VMs per batch is out of range (1 to %d; HCO's default is %d)", *n, math.MaxInt32, DefaultBatchEvictionSize)
			}
			w.BatchEvictionSize = *n
		}
		// The decoder reports a value that is not of the field's form.
		if s := spec.BatchEvictionInterval; s != "" && durationForm().MatchString(s) {
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				diags.Errorf(p.Doc.Pos("spec.workloadUpdate.batchEvictionInterval"), "spec.workloadUpdate.batchEvictionInterval", "%q is not a positive duration (such as 1m0s, HCO's default)", s)
			} else {
				w.BatchEvictionInterval = d.String()
			}
		}
	}
	p.WorkloadUpdate = w
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

// ParallelMigrations is how many live migrations KubeVirt runs at once
// cluster-wide: the Platform's parallelMigrationsPerCluster, HCO's default
// 5 without one. It bounds the migrations of one tenant too: the workload
// updater starts up to that many for outdated VMIs it picks anywhere in the
// cluster (kubevirt v1.8.4 pkg/virt-controller/watch/workload-updater/
// workload-updater.go: parallelMigrationsPerCluster less the running ones),
// a drain of several nodes up to parallelOutboundMigrationsPerNode per node
// (watch/drain/evacuation/evacuation.go), and the migration controller
// creates target pods for no more than parallelMigrationsPerCluster
// (watch/migration/migration.go handleTargetPodCreation). All of them may
// be VMs of one tenant.
func (m *Model) ParallelMigrations() int64 {
	if m.Platform != nil {
		if lm := m.Platform.Obj.Spec.LiveMigration; lm != nil && lm.ParallelMigrationsPerCluster != nil {
			return *lm.ParallelMigrationsPerCluster
		}
	}
	return DefaultParallelMigrationsPerCluster
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
	rel, v, past, err := versions.LookupMinor(spec.Version)
	if err != nil {
		diags.Errorf(e.Doc.Pos("spec.version"), "spec.version", "%v", err)
		return nil
	}
	p.Release, p.Version = rel, v
	if !olmGraph(p, cat.OLM, past, diags) {
		return nil
	}
	catalogSource(p, diags)
	upgradingTo(p.Doc, p.Name, p.Obj.Spec.UpgradingTo, p.Release, p.Version, diags)
	liveMigrationLimits(e, diags)
	featureGates(p, diags)
	hostDevices(p, diags)
	workloadUpdate(p, diags)
	if a := spec.Approver; a != nil && a.TimeoutMinutes != nil && (*a.TimeoutMinutes < 1 || *a.TimeoutMinutes > 1440) {
		diags.Errorf(e.Doc.Pos("spec.approver.timeoutMinutes"), "spec.approver.timeoutMinutes", "%d minutes is out of range (1 to 1440; the default is 45)", *a.TimeoutMinutes)
	}
	if spec.Approver == nil {
		diags.Warnf(e.Doc.Pos("spec"), "spec.approver", "no InstallPlan approver: OLM's InstallPlans (installPlanApproval: Manual) wait for a person to approve each one, and the HyperConverged waits with them; name virtc's image, pinned by digest, in spec.approver.image to approve from Git")
	}
	if lm := spec.LiveMigration; lm != nil && lm.Network != "" {
		p.MigrationNetwork = migrationNetwork(cat, e, lm.Network, diags)
	}
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
				diags.Errorf(e.Doc.Pos("spec.storageLocation"), "spec.storageLocation", "backup policy %q: %s", name, diag.UnknownName("storage location", loc, names))
			}
		}
	}
	return p
}

// GraphTable is Platform.Graph when the build has no catalog's graph: the
// channel is the one virtc's version table implies.
const GraphTable = "virtc's version table (catalog/versions/versions.yaml)"

// olmGraph sets the Platform's channel: from the file-based catalog among
// the inputs when there is one (a refresh of the version table: Red Hat
// publishes z-streams after any virtc was built), else from the table up
// to spec.catalogSource.head or the default catalog's head. A z-stream of
// a known minor past the table compiles only with a catalog that has it,
// with its minor's facts. It reports whether the Platform can go on.
func olmGraph(p *Platform, ix *olmindex.Index, past bool, diags *diag.List) bool {
	vpos := p.Doc.Pos("spec.version")
	cs := p.Obj.Spec.CatalogSource
	if ix == nil {
		if past {
			diags.Errorf(vpos, "spec.version", "version %s is not supported by this virtc (supported: %s): a z-stream newer than virtc's version table compiles when the build has the catalog's upgrade graph among its inputs (virtc olm-graph of the index image; docs/platform.md)", p.Version, versions.SupportedList())
			return false
		}
		p.Graph, p.CatalogHead = GraphTable, versions.DefaultHead(p.Version)
		if cs != nil && cs.Head != "" {
			pos := p.Doc.Pos("spec.catalogSource.head")
			rel, head, err := versions.Lookup(cs.Head)
			switch {
			case err != nil:
				diags.Errorf(pos, "spec.catalogSource.head", "%v", err)
				return true
			case rel.Minor != p.Release.Minor:
				diags.Errorf(pos, "spec.catalogSource.head", "the catalog's head %s is not of %s, the minor of spec.version %s: the Subscription installs from the index of the cluster's OpenShift minor (name an index image whose kubevirt-hyperconverged head is a %s release)", head, p.Release.Minor, p.Version, p.Release.Minor)
				return true
			}
			p.CatalogHead = head
		}
		ch, err := versions.HCOChannel(p.CatalogHead)
		if err != nil {
			diags.Errorf(vpos, "spec.version", "%v", err)
			return false
		}
		p.Channel = ch
		return true
	}
	channel := cmp.Or(p.Obj.Spec.Channel, p.Release.Channel)
	ch, err := ix.Channel(versions.HCOChannelPackage, channel, versions.HCOCSV)
	if err != nil {
		diags.Errorf(vpos, "spec.version", "the Subscription's catalog: %v", err)
		return false
	}
	p.Channel, p.CatalogHead, p.Graph = ch, ch.Head(), ix.Source
	if cs != nil && cs.Head != "" && cs.Head != ch.Head().String() {
		diags.Errorf(p.Doc.Pos("spec.catalogSource.head"), "spec.catalogSource.head", "%s, but the channel %s of %s ends at %s: the inputs' catalog is not the image's (render the image named in spec.catalogSource.image: virtc olm-graph)", cs.Head, channel, ix.Source, ch.Head())
	}
	if !ch.Has(p.Version) {
		diags.Errorf(vpos, "spec.version", "%s is not in the channel %s of %s, whose head is %s: OLM cannot install it (pin a version of the channel)", p.Version, channel, ix.Source, ch.Head())
		return false
	}
	oadpGraph(p, ix, diags)
	if past {
		diags.Warnf(vpos, "spec.version", "%s is newer than virtc's version table (%s); %s has it: compiled with the facts of the %s release (HCO %s, KubeVirt %s, CDI %s): a z-stream keeps its minor's API", p.Version, p.Release.Supported(), ix.Source, p.Release.Minor, p.Release.HCO, p.Release.KubeVirt, p.Release.CDI)
	}
	return true
}

// oadpGraph checks OADP's pin, the OADP release of the platform release,
// against the OADP channel of the catalog's graph, when it has the
// package: OLM cannot install a CSV its channel lacks.
func oadpGraph(p *Platform, ix *olmindex.Index, diags *diag.List) {
	if _, ok := ix.Packages[versions.OADPPackage]; !ok {
		return
	}
	dp := p.Obj.Spec.DataProtection
	if dp == nil || dp.External {
		return
	}
	csv := func(v versions.Version) string { return versions.OADPCSV(v.String()) }
	ch, err := ix.Channel(versions.OADPPackage, p.Release.OADP.Channel, csv)
	if err != nil {
		diags.Errorf(p.Doc.Pos("spec.dataProtection"), "spec.dataProtection", "OADP's Subscription: %v", err)
		return
	}
	p.OADPChannel = ch
	pin, err := versions.Parse(p.Release.OADP.Version)
	if err == nil && !ch.Has(pin) {
		diags.Errorf(p.Doc.Pos("spec.dataProtection"), "spec.dataProtection", "OpenShift Virtualization %s installs OADP %s, which is not in the channel %s of %s, whose head is %s: OLM cannot install it", p.Release.Minor, pin, p.Release.OADP.Channel, ix.Source, ch.Head())
	}
}

// catalogSource checks a digest-pinned catalog against the pin: its head is
// of the pin's minor (the index of the cluster's OpenShift minor), and
// OLM's upgrades in it land on the pin. OLM upgrades an installed CSV to
// the bundle nearest the channel head that replaces or skips it
// (operator-lifecycle-manager v0.42.0
// pkg/controller/registry/resolver/resolver.go getSubscriptionVariables,
// solver/constraints.go Dependency order); only a first install
// (spec.startingCSV) lands anywhere else. With the default catalog the
// head floats as Red Hat publishes z-streams, so a pin there is checked on
// a change, by virtc diff, and by the approver on the live catalog.
func catalogSource(p *Platform, diags *diag.List) {
	cs := p.Obj.Spec.CatalogSource
	if cs == nil || cs.Head == "" || p.Channel == nil {
		return
	}
	ch, head := p.Channel, p.CatalogHead
	vpos := p.Doc.Pos("spec.version")
	switch {
	case p.Version.Compare(head) > 0:
		diags.Errorf(vpos, "spec.version", "%s is not in the catalog %s, whose kubevirt-hyperconverged channel head is %s: OLM cannot install it (pin %s, the channel head, or name an index image whose head is %s)", p.Version, cs.Image, head, head, p.Version)
	case !ch.Lands(p.Version):
		// Where OLM goes from the CSV the pin's bundle replaces.
		why := "no earlier CSV upgrades to it"
		if before, ok := ch.Before(p.Version); ok {
			why = ch.Route(before, p.Version).Explain()
		}
		diags.Errorf(vpos, "spec.version", "OLM's upgrades in the catalog %s do not land on %s: %s; only a first install does (pin %s, the channel head, or name an index image whose head is %s in spec.catalogSource)", cs.Image, p.Version, why, head, p.Version)
	}
}

// featureGates checks the Platform's feature gates against the phases of
// its release: a gate that is not generally available (every HCO gate) is
// enabled only with its explicit opt-in in spec.acceptPreviewGates, and a
// beta gate without it is turned off.
func featureGates(p *Platform, diags *diag.List) {
	spec, rel, e := p.Obj.Spec, p.Release, p.Entry
	known := slices.Concat(rel.FeatureGates.Alpha, rel.FeatureGates.Beta)
	slices.Sort(known)
	// check reports a gate the release cannot enable; it returns the phase
	// of one it can.
	check := func(field, g string) string {
		switch phase := rel.GatePhase(g); phase {
		case versions.PhaseAlpha, versions.PhaseBeta:
			return phase
		case versions.PhaseDeprecated:
			diags.Errorf(e.Doc.Pos(field), field, "feature gate %q is deprecated in OpenShift Virtualization %s: HCO %s ignores it (remove it)", g, rel.Minor, rel.HCO)
		default:
			diags.Errorf(e.Doc.Pos(field), field, "%s", diag.UnknownName(fmt.Sprintf("feature gate of OpenShift Virtualization %s", rel.Minor), g, known))
		}
		return ""
	}
	accepted := map[string]bool{}
	for i, g := range spec.AcceptPreviewGates {
		if check(fmt.Sprintf("spec.acceptPreviewGates[%d]", i), g) != "" {
			accepted[g] = true
		}
	}
	for i, g := range spec.FeatureGates {
		field := fmt.Sprintf("spec.featureGates[%d]", i)
		phase := check(field, g)
		switch {
		case phase == "":
		case accepted[g]:
			p.FeatureGates = append(p.FeatureGates, g)
		default:
			diags.Errorf(e.Doc.Pos(field), field, "feature gate %q is %s in OpenShift Virtualization %s (%s, not supported in production); to enable it anyway, also name it in spec.acceptPreviewGates", g, phase, rel.Minor, phaseMeaning[phase])
		}
	}
	slices.Sort(p.FeatureGates)
	p.FeatureGates = slices.Compact(p.FeatureGates)
	for _, g := range rel.FeatureGates.Beta {
		if !accepted[g] {
			p.DisabledGates = append(p.DisabledGates, g)
		}
	}
	slices.Sort(p.DisabledGates)
}

var phaseMeaning = map[string]string{
	versions.PhaseAlpha: "a Developer Preview",
	versions.PhaseBeta:  "a Technology Preview",
}

// migrationNetwork resolves the Platform's live-migration network: a bridge
// profile with an IP range. KubeVirt v1.8.4 attaches every virt-handler pod
// to it (pkg/virt-operator/resource/generate/components/daemonsets.go:
// k8s.v1.cni.cncf.io/networks "<name>@migration0", in virt-handler's
// namespace), and virt-handler panics without a global unicast address on
// migration0 (pkg/virt-handler/migration.go FindMigrationIP,
// cmd/virt-handler/virt-handler.go): a pod network cannot be attached by
// name, and localnet, udn-primary and sriov attachments are not created in
// openshift-cnv by virtc nor addressed for pods.
func migrationNetwork(cat *catalog.Catalog, e *decode.Entry[api.Platform], name string, diags *diag.List) *Network {
	const field = "spec.liveMigration.network"
	pos := e.Doc.Pos(field)
	np, ok := cat.NetworkProfiles.Entry(name)
	if !ok {
		diags.Errorf(pos, field, "%s", cat.NetworkProfiles.Unknown("network profile", name))
		return nil
	}
	spec := np.Obj.Spec
	at := np.Doc.Pos("spec")
	switch {
	case spec.Type != api.NetworkBridge:
		diags.Errorf(pos, field, "network profile %q (%s:%d) is a %s profile and cannot carry live migrations; name a bridge profile with spec.bridge.ipRange (a Linux bridge on every workload node, optionally on a VLAN), or remove the field to migrate over the pod network", name, at.File, at.Line, spec.Type)
	case spec.Bridge == nil || spec.Bridge.IPRange == "":
		diags.Errorf(pos, field, "network profile %q (%s:%d) has no spec.bridge.ipRange: virt-handler needs an address on the migration network (add a whereabouts range such as 10.200.5.0/24)", name, at.File, at.Line)
	default:
		return &Network{Name: name, NetworkProfile: np.Obj}
	}
	return nil
}

// upgradingTo checks the baseline version an upgrade-path Platform (or its
// published facts) names as its destination: a supported version of the
// baseline release, later than spec.version. A Platform on the baseline
// release names none.
func upgradingTo(doc *source.Doc, name, to string, release versions.Release, version versions.Version, diags *diag.List) {
	if to == "" {
		return
	}
	pos := doc.Pos("spec.upgradingTo")
	if release.Baseline {
		diags.Errorf(pos, "spec.upgradingTo", "platform %q is on the baseline release %s already: remove spec.upgradingTo", name, release.Minor)
		return
	}
	rel, v, err := versions.Lookup(to)
	switch {
	case err != nil:
		diags.Errorf(pos, "spec.upgradingTo", "%v", err)
	case !rel.Baseline:
		base, _ := versions.BaselineRelease()
		diags.Errorf(pos, "spec.upgradingTo", "%s is not a baseline version: an upgrade-path Platform is on its way to the baseline release %s (%s)", to, base.Minor, base.Supported())
	case v.Compare(version) <= 0:
		diags.Errorf(pos, "spec.upgradingTo", "%s is not later than spec.version %s", to, version)
	}
}

// resolveFacts checks the PlatformFacts of the inputs: at most one, of a
// supported version, and the Platform's when the build has both.
func resolveFacts(facts []decode.Entry[api.PlatformFacts], p *Platform, diags *diag.List) *decode.Entry[api.PlatformFacts] {
	if len(facts) == 0 {
		return nil
	}
	for _, f := range facts[1:] {
		first := facts[0].Doc.Pos("metadata.name")
		diags.Errorf(f.Doc.Pos("metadata.name"), "metadata.name", "a second PlatformFacts (the first is at %s:%d): a build compiles for one platform", first.File, first.Line)
	}
	f := facts[0]
	// A z-stream past the table was checked against the catalog file of
	// the platform build that published the facts.
	release, version, _, err := versions.LookupMinor(f.Obj.Spec.Version)
	if err != nil {
		diags.Errorf(f.Doc.Pos("spec.version"), "spec.version", "%v", err)
		return nil
	}
	upgradingTo(f.Doc, f.Obj.Metadata.Name, f.Obj.Spec.UpgradingTo, release, version, diags)
	if p != nil && p.Obj.Spec.UpgradingTo != f.Obj.Spec.UpgradingTo {
		diags.Errorf(f.Doc.Pos("spec.upgradingTo"), "spec.upgradingTo", "the PlatformFacts say upgradingTo %q but the Platform %q in the build says %q (publish the facts again: virtc facts)", f.Obj.Spec.UpgradingTo, p.Name, p.Obj.Spec.UpgradingTo)
	}
	if p != nil && p.Version.String() != f.Obj.Spec.Version {
		diags.Errorf(f.Doc.Pos("spec.version"), "spec.version", "the PlatformFacts say version %s but the Platform %q in the build is %s (publish the facts again: virtc facts)", f.Obj.Spec.Version, p.Name, p.Version.String())
	}
	return &f
}
