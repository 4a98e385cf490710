package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// Allowances are what a tenant may use: the verdicts of decide.go on the
// catalog's values, for a VM of the tenant that Git does not know, and on
// each VM's own values where its verdict differs (evidence narrowed to the
// VM, a VM's own tier). The compile's checks ask the same verdicts of the
// VMs of Git; the tenant's ValidatingAdmissionPolicy holds these as its
// variables (policyVariables). Every list is sorted, so the policy is the
// same for the same inputs.
type Allowances struct {
	Tenant string
	// DataSources are the DataSources ("namespace/name") the root disks
	// of the images the tenant may use clone (resolve.ImageDataSource).
	DataSources []string
	// Registries are the pinned registry URLs (docker://…@sha256:…) of
	// the images the tenant may use that come from a registry.
	Registries []string
	// ContainerDisks are the images of the catalog's ContainerDisks the
	// tenant may use: the only containerDisk volumes (CD-ROMs) its VMs
	// may have.
	ContainerDisks []string
	// Sizes are the instance types (sizes written as references) the
	// tenant may use; SizeRefusals say why other sizes of the catalog are
	// refused, beyond the tenant's allow list (a reason, with the sizes it
	// refuses); VMSizes are sizes a VM of Git may use beyond Sizes
	// (evidence narrowed to it), by VM name.
	Sizes        []string
	SizeRefusals map[string][]string
	VMSizes      map[string][]string
	// SizeShapes are the vCPUs and memory (bytes) of each of Sizes, and
	// PreferenceNeeds the least of each a preference of the tenant's
	// images requires: KubeVirt refuses a VM whose size is below its
	// preference's (pkg/instancetype/preference/requirements), and so do
	// the rules (requirements), in Git and in the cluster alike.
	SizeShapes      map[string][]int64
	PreferenceNeeds map[string][]int64
	// InlineSizes are the shapes of the inline sizes the tenant may use
	// (adopted VMs: CPU topology and guest memory written into the VM).
	InlineSizes []InlineShape
	// Preferences are the preferences of the images the tenant may use;
	// NonX86Preferences those of the catalog's images for another
	// architecture, which no tenant may use.
	Preferences       []string
	NonX86Preferences []string
	// Production: the tenant is production tier, so the lists below are
	// those of a production VM. Else the lists are a standard VM's, and
	// ProductionVMs (the VMs of Git that are production tier themselves)
	// get the Production* lists instead: their profiles, networks, backup
	// policies and images need the evidence production asks for.
	Production    bool
	ProductionVMs []string
	// StorageClasses are the classes of the storage profiles the tenant
	// may use, with the catalog's default (root disks) and the VM-state
	// profile (persistent EFI/TPM), which no allow list restricts: each
	// with the evidence the eligibility gate asks of a VM on it (an
	// unqualified profile's validation; a production VM's profile checks).
	// VMStorageClasses are those a VM of Git may use beyond them
	// (evidence narrowed to it).
	StorageClasses           []string
	ProductionStorageClasses []string
	VMStorageClasses         map[string][]string
	// RWXClasses are those of StorageClasses whose profile is
	// ReadWriteMany: a disk on another class blocks live migration
	// (resolve.VM.MigrationBlockers). RWXClaims are the claims virtc
	// writes for the tenant's data disks on such a profile: the cluster
	// judges a VM's claims by name, since its policy sees the VM, not the
	// claims it names.
	RWXClasses []string
	RWXClaims  []string
	// AllowDevices are the tenant's spec.allow.devices; Devices the
	// resource names it may pass through (entitled, permitted, enabled
	// and assessed), VMDevices those a VM of Git may beyond them.
	AllowDevices []string
	Devices      []string
	VMDevices    map[string][]string
	// Networks maps each multus network name the tenant's VMs may attach
	// (the profile's name, and namespace/name) to the profile's type;
	// VMNetworks are those a VM of Git may beyond them (an SR-IOV network
	// whose assessment is narrowed to it).
	Networks           map[string]string
	ProductionNetworks []string
	VMNetworks         map[string][]string
	// NonMigratableNetworks are the names of Networks whose profile does
	// not allow live migration.
	NonMigratableNetworks []string
	// NADs maps the name of each NetworkAttachmentDefinition virtc writes
	// into the tenant's namespace to its spec.config (model.TenantNADs).
	NADs map[string]string
	// UDNs maps the name of the UserDefinedNetwork virtc writes into the
	// tenant's namespace (its primary network) to its spec.
	UDNs map[string]any
	// Pools are the node selectors and tolerations of the worker pools the
	// tenant may use (one with neither when the catalog has no pools).
	Pools []PoolPlacement
	// CloudInitBase64 are the base64 cloud-init data of the tenant's VMs
	// as virtc writes them (checked at compile time): CEL in admission
	// policies has no base64 decoding, so the policy admits base64 data
	// only when it is one of these.
	CloudInitBase64 []string
	// BackupPolicies are the backup policies a VM of the tenant may use
	// (its backup-policy label); VMBackupPolicies those of each VM of Git
	// whose own differ (a production VM of a standard tenant, a disk
	// without snapshots).
	BackupPolicies           []string
	ProductionBackupPolicies []string
	VMBackupPolicies         map[string][]string
	// ProductionDataSources are those of DataSources whose image has a
	// provenance record: a production VM's images.
	ProductionDataSources []string
	// LiveMigration: the gate accepts the live-migration class (migration
	// Required, evictionStrategy LiveMigrate) for a VM of the tenant on
	// the default profiles; VMLiveMigration are the VMs of Git it accepts
	// it for otherwise.
	LiveMigration   bool
	VMLiveMigration []string
	// MaxDataDisks and MaxDiskSize are the Platform's limits.
	MaxDataDisks int64
	MaxDiskSize  string
	// ClusterEviction is the cluster's eviction strategy, which a VM
	// without its own gets: the Platform's, else HCO's default,
	// LiveMigrate.
	ClusterEviction string
}

// InlineShape is an inline size's CPU topology and guest memory.
type InlineShape struct {
	Name                    string
	Sockets, Cores, Threads int64
	Guest                   string
}

// PoolPlacement is what a worker pool writes into a VM's template: its
// node selector ("key=value") and tolerations ("key|operator|value|effect").
type PoolPlacement struct {
	Name         string
	NodeSelector []string
	Tolerations  []string
}

// allowancesKey keys a tenant's allowances in the model's memo: the
// compile's checks, its output checks and render's policy all read them.
type allowancesKey struct{ t *resolve.Tenant }

// TenantAllowances are a tenant's Allowances, computed once per model.
func TenantAllowances(m *resolve.Model, t *resolve.Tenant) Allowances {
	if a, ok := m.Memo.Load(allowancesKey{t}); ok {
		return a.(Allowances)
	}
	a := tenantAllowances(newJudge(m), t)
	m.Memo.Store(allowancesKey{t}, a)
	return a
}

func tenantAllowances(j *judge, t *resolve.Tenant) Allowances {
	m := j.m
	cat := m.Catalog
	a := Allowances{
		Tenant: t.Name, Networks: map[string]string{}, NADs: map[string]string{}, UDNs: map[string]any{},
		SizeRefusals: map[string][]string{}, SizeShapes: map[string][]int64{}, PreferenceNeeds: map[string][]int64{}, VMSizes: map[string][]string{}, VMDevices: map[string][]string{},
		VMNetworks: map[string][]string{}, VMBackupPolicies: map[string][]string{}, VMStorageClasses: map[string][]string{},
		MaxDataDisks: DefaultMaxDataDisks, MaxDiskSize: "16Ti", ClusterEviction: "LiveMigrate",
	}
	if p := m.Platform; p != nil {
		if l := p.Obj.Spec.Limits; l != nil {
			if l.MaxDataDisks != nil {
				a.MaxDataDisks = *l.MaxDataDisks
			}
			if l.MaxDiskSize != nil {
				a.MaxDiskSize = l.MaxDiskSize.String()
			}
		}
		a.ClusterEviction = cmp.Or(p.Obj.Spec.EvictionStrategy, a.ClusterEviction)
	}
	var allow api.TenantAllow
	if t.Spec.Allow != nil {
		allow = *t.Spec.Allow
	}
	a.Production = t.Spec.Tier == resolve.TierProduction
	tier := resolve.TierStandard
	if a.Production {
		tier = resolve.TierProduction
	}
	a.images(j, t, allow)
	a.sizes(j, t)
	a.storage(j, t, allow, tier)
	a.LiveMigration = j.liveMigrationAccepted(j.hypothetical(t, func(vm *resolve.VM) { vm.Tier, vm.Migration = tier, api.MigrationRequired }))
	a.AllowDevices = allow.Devices
	a.devices(j, t)
	a.networks(j, t, tier)
	for _, n := range model.TenantNADs(m, t) {
		a.NADs[n.Name] = n.Config
	}
	if u := model.TenantUDN(t); u != nil {
		a.UDNs[u.Name] = jsonValue(u.Spec)
	}
	a.pools(cat, allow)
	a.BackupPolicies = j.backupPolicies(j.hypothetical(t, func(vm *resolve.VM) { vm.Tier = tier }))
	if !a.Production {
		a.ProductionBackupPolicies = j.backupPolicies(j.hypothetical(t, func(vm *resolve.VM) { vm.Tier = resolve.TierProduction }))
	}
	for _, vm := range t.VMs {
		if ci := model.CloudInit(vm); ci != nil && ci.UserDataBase64 != "" {
			a.CloudInitBase64 = append(a.CloudInitBase64, ci.UserDataBase64)
		}
		a.vmGrants(j, vm, m)
		a.RWXClaims = append(a.RWXClaims, rwxClaims(vm)...)
	}
	for _, l := range []*[]string{&a.CloudInitBase64, &a.DataSources, &a.Registries, &a.Sizes, &a.Preferences, &a.NonX86Preferences, &a.StorageClasses, &a.RWXClasses, &a.RWXClaims, &a.NonMigratableNetworks, &a.Devices, &a.BackupPolicies, &a.ProductionStorageClasses, &a.ProductionNetworks, &a.ProductionBackupPolicies, &a.ProductionDataSources, &a.ProductionVMs, &a.VMLiveMigration} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return a
}

// images records the golden images and container disks the tenant may
// boot from, with the preferences they bring.
func (a *Allowances) images(j *judge, t *resolve.Tenant, allow api.TenantAllow) {
	cat := j.m.Catalog
	for _, name := range cat.Images.Names() {
		img, _ := cat.Images.Get(name)
		p, _ := cat.Preferences.Get(img.Spec.Preference)
		vm := j.hypothetical(t, func(vm *resolve.VM) { vm.ImageName, vm.Image, vm.Preference = name, img, p })
		if len(j.architecture(vm)) > 0 {
			if img.Spec.Preference != "" {
				a.NonX86Preferences = append(a.NonX86Preferences, img.Spec.Preference)
			}
			continue
		}
		if len(j.image(vm)) > 0 {
			continue
		}
		ds := resolve.ImageDataSource(name, img, cat)
		// A production VM's image has a provenance record and is
		// versioned (imageProvenance).
		versioned := img.Spec.Provenance != "" && !AutoUpdated(img)
		if versioned {
			a.ProductionDataSources = append(a.ProductionDataSources, ds.Namespace+"/"+ds.Name)
		}
		if a.Production && img.Spec.Provenance == "" {
			continue
		}
		if !a.Production || versioned {
			a.DataSources = append(a.DataSources, ds.Namespace+"/"+ds.Name)
		}
		if r := img.Spec.Registry; r != nil {
			a.Registries = append(a.Registries, r.URL)
		}
		if img.Spec.Preference != "" {
			a.Preferences = append(a.Preferences, img.Spec.Preference)
			// An image naming a preference the catalog lacks (refused
			// elsewhere) has none: p is nil.
			if p != nil && p.Spec.Requirements != nil {
				r := p.Spec.Requirements
				var mem int64
				if r.Memory != nil {
					mem = r.Memory.Value()
				}
				a.PreferenceNeeds[img.Spec.Preference] = []int64{r.CPU, mem}
			}
		}
	}
	for _, name := range cat.ContainerDisks.Names() {
		cd, _ := cat.ContainerDisks.Get(name)
		if resolve.Allows(allow.Images, name, cd.Spec.Restricted) {
			a.ContainerDisks = append(a.ContainerDisks, cd.Spec.Image)
		}
	}
}

// sizes records the catalog sizes the tenant may use, and why the
// others are refused.
func (a *Allowances) sizes(j *judge, t *resolve.Tenant) {
	cat := j.m.Catalog
	for _, name := range cat.Sizes.Names() {
		s, _ := cat.Sizes.Get(name)
		rs := j.size(j.hypothetical(t, func(vm *resolve.VM) { vm.SizeName, vm.Size = name, s }))
		if len(rs) > 0 {
			if s.Spec.Inline == nil {
				for _, r := range rs {
					if why, ok := sizeReason(name, r.Message); ok {
						a.SizeRefusals[why] = append(a.SizeRefusals[why], name)
					}
				}
			}
			continue
		}
		if in := s.Spec.Inline; in != nil {
			a.InlineSizes = append(a.InlineSizes, InlineShape{Name: name, Sockets: int64(in.Sockets), Cores: int64(in.Cores), Threads: int64(in.Threads), Guest: s.Spec.Memory.String()})
			continue
		}
		a.Sizes = append(a.Sizes, name)
		a.SizeShapes[name] = []int64{s.Spec.CPU, s.Spec.Memory.Value()}
	}
}

// storage records the storage classes the tenant's disks may use, in its
// tier and in production.
func (a *Allowances) storage(j *judge, t *resolve.Tenant, allow api.TenantAllow, tier string) {
	cat := j.m.Catalog
	storage := func(name string, always bool) {
		p, ok := cat.StorageProfiles.Get(name)
		if !ok || !always && !resolve.Allows(allow.Storage, name, p.Spec.Restricted) {
			return
		}
		root := name == cat.DefaultStorage
		if j.storageAccepted(t, tier, name, p, root) {
			a.StorageClasses = append(a.StorageClasses, p.Spec.StorageClass)
		}
		if !a.Production && j.storageAccepted(t, resolve.TierProduction, name, p, root) {
			a.ProductionStorageClasses = append(a.ProductionStorageClasses, p.Spec.StorageClass)
		}
		if p.Spec.AccessMode == api.AccessRWX {
			a.RWXClasses = append(a.RWXClasses, p.Spec.StorageClass)
		}
	}
	for _, name := range cat.StorageProfiles.Names() {
		storage(name, false)
	}
	storage(cat.DefaultStorage, true)
	if st, ok := resolve.StateStorage(cat); ok {
		storage(st.Name, true)
	}
}

// devices records the permitted devices the tenant may attach.
func (a *Allowances) devices(j *judge, t *resolve.Tenant) {
	m := j.m
	if p := m.Platform; p != nil {
		for _, d := range p.PermittedDevices() {
			gpu := j.hypothetical(t, func(vm *resolve.VM) { vm.Spec.GPUs = []api.Device{{DeviceName: d}} })
			host := j.hypothetical(t, func(vm *resolve.VM) { vm.Spec.HostDevices = []api.Device{{DeviceName: d}} })
			// A device the tenant may use as a GPU or as a host device: the
			// cluster cannot tell the two apart by its name, and both need
			// the same entitlement and assessment of it.
			if len(j.devices(gpu)) == 0 || len(j.devices(host)) == 0 {
				a.Devices = append(a.Devices, d)
			}
		}
	}
}

// networks records the additional networks the tenant's VMs may attach
// to, in its tier and in production.
func (a *Allowances) networks(j *judge, t *resolve.Tenant, tier string) {
	cat := j.m.Catalog
	for _, name := range cat.NetworkProfiles.Names() {
		p, _ := cat.NetworkProfiles.Get(name)
		if !p.Spec.Additional() || p.Spec.Type == api.NetworkUDNPrimary || !t.AllowsNetwork(name, p) {
			continue
		}
		if br := p.Spec.Bridge; br != nil && br.IPRange != "" {
			continue // the live-migration network: VMs never attach to it
		}
		if p.Spec.Type == api.NetworkSRIOV && len(j.sriov(j.hypothetical(t, func(vm *resolve.VM) {
			vm.Networks = []resolve.Network{{Name: name, NetworkProfile: p, Field: "spec.networks[0]"}}
		}))) > 0 {
			continue
		}
		names := []string{name, t.Name + "/" + name}
		if !a.Production && j.networkAccepted(t, resolve.TierProduction, name, p) {
			a.ProductionNetworks = append(a.ProductionNetworks, names...)
		}
		if !j.networkAccepted(t, tier, name, p) {
			continue
		}
		for _, n := range names {
			a.Networks[n] = p.Spec.Type
			if !p.Spec.Migratable {
				a.NonMigratableNetworks = append(a.NonMigratableNetworks, n)
			}
		}
	}
}

// pools records the placement (node selector, tolerations) of each
// worker pool the tenant may use.
func (a *Allowances) pools(cat *catalog.Catalog, allow api.TenantAllow) {
	pools := cat.WorkerPools.Names()
	if len(pools) == 0 {
		a.Pools = []PoolPlacement{{}}
	}
	for _, name := range pools {
		p, _ := cat.WorkerPools.Get(name)
		if !resolve.Allows(allow.Pools, name, p.Spec.Restricted) {
			continue
		}
		pp := PoolPlacement{Name: name}
		for k, v := range p.Spec.NodeSelector {
			pp.NodeSelector = append(pp.NodeSelector, k+"="+v)
		}
		for _, tol := range model.Tolerations(p.Spec.Taints) {
			pp.Tolerations = append(pp.Tolerations, strings.Join([]string{tol.Key, string(tol.Operator), tol.Value, string(tol.Effect)}, "|"))
		}
		slices.Sort(pp.NodeSelector)
		slices.Sort(pp.Tolerations)
		a.Pools = append(a.Pools, pp)
	}
}

// vmGrants records the verdicts on a VM of Git's own values that differ
// from the tenant's.
func (a *Allowances) vmGrants(j *judge, vm *resolve.VM, m *resolve.Model) {
	if vm.Size != nil && vm.Size.Spec.Inline == nil && !slices.Contains(a.Sizes, vm.SizeName) && len(j.size(vm)) == 0 {
		a.VMSizes[vm.Name] = append(a.VMSizes[vm.Name], vm.SizeName)
	}
	if len(vm.Spec.GPUs)+len(vm.Spec.HostDevices) > 0 {
		refused := map[string]bool{}
		for _, r := range j.devices(vm) {
			refused[r.Field] = true
		}
		for _, d := range vm.Devices() {
			if d.List == "spec.size" || slices.Contains(a.Devices, d.ResourceName) || refused[d.Field] || refused[d.List] {
				continue
			}
			a.VMDevices[vm.Name] = append(a.VMDevices[vm.Name], d.ResourceName)
		}
	}
	for _, n := range vm.Networks {
		if n.NetworkProfile == nil || n.Spec.Type != api.NetworkSRIOV || a.Networks[n.Name] != "" || !vm.Tenant.AllowsNetwork(n.Name, n.NetworkProfile) {
			continue
		}
		if !slices.ContainsFunc(j.sriov(vm), func(r refusal) bool { return r.Field == n.Field }) && !slices.Contains(a.VMNetworks[vm.Name], n.Name) {
			a.VMNetworks[vm.Name] = append(a.VMNetworks[vm.Name], n.Name, vm.Namespace+"/"+n.Name)
		}
	}
	production := vm.Tier == resolve.TierProduction
	if production && !a.Production {
		a.ProductionVMs = append(a.ProductionVMs, vm.Name)
	}
	tierPolicies := a.BackupPolicies
	if production && !a.Production {
		tierPolicies = a.ProductionBackupPolicies
	}
	if own := j.backupPolicies(vm); !slices.Equal(own, tierPolicies) {
		a.VMBackupPolicies[vm.Name] = own
	}
	// The VM's own verdict may accept what the tenant's does not
	// (evidence narrowed to the VM).
	v := gateVerdict(vm, j.ctx)
	classes := a.StorageClasses
	if production && !a.Production {
		classes = a.ProductionStorageClasses
	}
	for _, st := range append([]resolve.Storage{vm.RootStorage}, storages(vm.Attached())...) {
		if st.StorageProfile == nil || slices.Contains(classes, st.Spec.StorageClass) || slices.Contains(a.VMStorageClasses[vm.Name], st.Spec.StorageClass) {
			continue
		}
		if production && st.Spec.Draft {
			continue // draftProfiles
		}
		if accepted(v, func(q eligibility.Requirement) bool { return q.StorageProfile == st.Name }) && len(j.storage(vm)) == 0 {
			a.VMStorageClasses[vm.Name] = append(a.VMStorageClasses[vm.Name], st.Spec.StorageClass)
		}
	}
	for _, n := range vm.Networks {
		if n.NetworkProfile == nil || !n.Spec.Additional() || n.Spec.Type == api.NetworkUDNPrimary || !vm.Tenant.AllowsNetwork(n.Name, n.NetworkProfile) {
			continue
		}
		_, tenantWide := a.Networks[n.Name]
		if production && !a.Production {
			tenantWide = slices.Contains(a.ProductionNetworks, n.Name)
		}
		if tenantWide || slices.Contains(a.VMNetworks[vm.Name], n.Name) || n.Spec.Type == api.NetworkSRIOV && len(j.sriov(vm)) > 0 {
			continue
		}
		if production && n.Spec.Draft {
			continue // draftProfiles
		}
		if accepted(v, func(q eligibility.Requirement) bool { return slices.Contains(q.NetworkProfiles, n.Name) }) {
			a.VMNetworks[vm.Name] = append(a.VMNetworks[vm.Name], n.Name, vm.Namespace+"/"+n.Name)
		}
	}
	if vm.Migration == api.MigrationRequired && !a.LiveMigration && j.liveMigrationAccepted(vm) {
		a.VMLiveMigration = append(a.VMLiveMigration, vm.Name)
	}
}

func storages(ds []resolve.Disk) []resolve.Storage {
	out := make([]resolve.Storage, len(ds))
	for i, d := range ds {
		out[i] = d.Storage
	}
	return out
}

// rwxClaims are the claims and DataVolumes a VM's volumes name (its data
// disks, an existing root disk) whose storage profile is ReadWriteMany.
func rwxClaims(vm *resolve.VM) []string {
	rwx := func(st resolve.Storage) bool { return st.StorageProfile != nil && st.Spec.AccessMode == api.AccessRWX }
	var out []string
	if ex := vm.Spec.ExistingRootDisk; ex != nil && rwx(vm.RootStorage) {
		out = append(out, cmp.Or(ex.PersistentVolumeClaim, ex.DataVolume))
	}
	for _, d := range vm.Attached() {
		if !rwx(d.Storage) {
			continue
		}
		switch {
		case d.ExistingClaim != "":
			out = append(out, d.ExistingClaim)
		case d.ExistingDataVolume != "":
			out = append(out, d.ExistingDataVolume)
		default:
			out = append(out, model.DiskName(vm.Name, d.Name))
		}
	}
	return out
}

// backupPolicies are the backup policies a VM may use (backupAllowed),
// and whose checks the gate accepts for it (a production VM's restore
// drill), sorted.
func (j *judge) backupPolicies(vm *resolve.VM) []string {
	var out []string
	for _, name := range j.m.Catalog.BackupPolicies.Names() {
		p, _ := j.m.Catalog.BackupPolicies.Get(name)
		if !backupAllowed(vm, p) {
			continue
		}
		withPolicy := *vm
		withPolicy.Backup = resolve.Backup{Name: name, BackupPolicy: p}
		if !accepted(gateVerdict(&withPolicy, j.ctx), func(q eligibility.Requirement) bool { return q.BackupPolicy == name }) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// backupAllowed reports whether a VM may use a backup policy: any, unless
// it is production tier, where the policy must take backups
// (productionBackup), move their data off the storage system
// (snapshotOnlyBackup) and capture every disk of the VM (uncapturedDisks).
func backupAllowed(vm *resolve.VM, p *api.BackupPolicy) bool {
	if vm.Tier != resolve.TierProduction || p == nil {
		return true
	}
	if p.Spec.Schedule == "" || p.Spec.Method == api.BackupSnapshot {
		return false
	}
	return len(withoutSnapshots(vm, "%s%s")) == 0
}

// sizeReason is a size's refusal as the cluster's message says it, without
// the size's name (one reason for every size it refuses); false for the
// tenant's allow list, which the message lists itself.
func sizeReason(name, message string) (string, bool) {
	for _, p := range []string{fmt.Sprintf("size %q ", name), fmt.Sprintf("size %q: ", name)} {
		if rest, ok := strings.CutPrefix(message, p); ok {
			if strings.Contains(rest, "does not allow it") || strings.Contains(rest, "does not list it in spec.allow") {
				return "", false
			}
			return rest, true
		}
	}
	return message, true
}

// GlobRegexp is the RE2 pattern (anchored) that matches what path.Match
// matches for a glob: * and ? never cross a slash, classes are kept.
func GlobRegexp(glob string) string {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := strings.IndexByte(glob[i:], ']')
			if j < 0 {
				b.WriteString(regexp.QuoteMeta(glob[i:]))
				i = len(glob)
				continue
			}
			// path.Match's classes ([a-z], [^a-z]) read the same in RE2.
			b.WriteString(glob[i : i+j+1])
			i += j
		case '\\':
			if i+1 < len(glob) {
				i++
				b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return b.String()
}
