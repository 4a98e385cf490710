package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/virtc/virtc/fn/api"
	"github.com/virtc/virtc/fn/model"
	"github.com/virtc/virtc/fn/resolve"
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
	// InlineSizes are the shapes of the inline sizes the tenant may use
	// (adopted VMs: CPU topology and guest memory written into the VM).
	InlineSizes []InlineShape
	// Preferences are the preferences of the images the tenant may use;
	// NonX86Preferences those of the catalog's images for another
	// architecture, which no tenant may use.
	Preferences       []string
	NonX86Preferences []string
	// StorageClasses are the classes of the storage profiles the tenant
	// may use, with the catalog's default (root disks) and the VM-state
	// profile (persistent EFI/TPM), which no allow list restricts.
	StorageClasses []string
	// RWXClasses are those of StorageClasses whose profile is
	// ReadWriteMany: a disk on another class blocks live migration
	// (resolve.VM.MigrationBlockers).
	RWXClasses []string
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
	Networks   map[string]string
	VMNetworks map[string][]string
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
	BackupPolicies   []string
	VMBackupPolicies map[string][]string
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
		SizeRefusals: map[string][]string{}, VMSizes: map[string][]string{}, VMDevices: map[string][]string{},
		VMNetworks: map[string][]string{}, VMBackupPolicies: map[string][]string{},
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
		a.DataSources = append(a.DataSources, ds.Namespace+"/"+ds.Name)
		if r := img.Spec.Registry; r != nil {
			a.Registries = append(a.Registries, r.URL)
		}
		if img.Spec.Preference != "" {
			a.Preferences = append(a.Preferences, img.Spec.Preference)
		}
	}
	for _, name := range cat.ContainerDisks.Names() {
		cd, _ := cat.ContainerDisks.Get(name)
		if resolve.Allows(allow.Images, name, cd.Spec.Restricted) {
			a.ContainerDisks = append(a.ContainerDisks, cd.Spec.Image)
		}
	}
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
	}
	storage := func(name string, always bool) {
		p, ok := cat.StorageProfiles.Get(name)
		if !ok || !always && !resolve.Allows(allow.Storage, name, p.Spec.Restricted) {
			return
		}
		a.StorageClasses = append(a.StorageClasses, p.Spec.StorageClass)
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
	a.AllowDevices = allow.Devices
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
		for _, n := range []string{name, t.Name + "/" + name} {
			a.Networks[n] = p.Spec.Type
			if !p.Spec.Migratable {
				a.NonMigratableNetworks = append(a.NonMigratableNetworks, n)
			}
		}
	}
	for _, n := range model.TenantNADs(m, t) {
		a.NADs[n.Name] = n.Config
	}
	if u := model.TenantUDN(t); u != nil {
		a.UDNs[u.Name] = jsonValue(u.Spec)
	}
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
	tenantVM := j.hypothetical(t, func(*resolve.VM) {})
	a.BackupPolicies = backupPolicies(cat.BackupPolicies.Names(), tenantVM, m)
	for _, vm := range t.VMs {
		if ci := model.CloudInit(vm); ci != nil && ci.UserDataBase64 != "" {
			a.CloudInitBase64 = append(a.CloudInitBase64, ci.UserDataBase64)
		}
		a.vmGrants(j, vm, m)
	}
	for _, l := range []*[]string{&a.CloudInitBase64, &a.DataSources, &a.Registries, &a.Sizes, &a.Preferences, &a.NonX86Preferences, &a.StorageClasses, &a.RWXClasses, &a.NonMigratableNetworks, &a.Devices, &a.BackupPolicies} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return a
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
		if !slices.ContainsFunc(j.sriov(vm), func(r refusal) bool { return r.Field == n.Field }) {
			a.VMNetworks[vm.Name] = append(a.VMNetworks[vm.Name], n.Name, vm.Namespace+"/"+n.Name)
		}
	}
	if own := backupPolicies(m.Catalog.BackupPolicies.Names(), vm, m); !slices.Equal(own, a.BackupPolicies) {
		a.VMBackupPolicies[vm.Name] = own
	}
}

// backupPolicies are the policies of names a VM may use (backupAllowed),
// sorted.
func backupPolicies(names []string, vm *resolve.VM, m *resolve.Model) []string {
	var out []string
	for _, name := range names {
		p, _ := m.Catalog.BackupPolicies.Get(name)
		if backupAllowed(vm, p) {
			out = append(out, name)
		}
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
