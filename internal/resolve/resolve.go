// Package resolve binds intents to the catalog: every name a Tenant or VM
// uses becomes the catalog entry it means, with defaults applied, so that
// renderers and policies work on complete facts.
package resolve

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
)

// Model is the resolved input: tenants in name order, each with its VMs in
// name order.
type Model struct {
	Catalog *catalog.Catalog
	// Platform is nil when the inputs have none.
	Platform *Platform
	Tenants  []*Tenant
	// Evidence is the acceptance evidence among the inputs.
	Evidence []decode.Entry[api.Evidence]
	// Facts are the published facts of the Platform a build without it
	// compiles for (nil when the inputs have none).
	Facts *decode.Entry[api.PlatformFacts]
	// AsOf is the day evidence expiry is judged on (compile.Options.AsOf);
	// zero: not given, each judgement takes the newest date of the
	// Evidence that concerns its subject (eligibility.Context.AsOf).
	AsOf time.Time
	// Memo holds what later stages derive from the model once per
	// compile and read several times (internal/rules' tenant allowances).
	Memo sync.Map
}

// Tenant is a resolved Tenant.
type Tenant struct {
	decode.Tenant
	Name   string
	Backup string
	VMs    []*VM
	// PrimaryNetwork is the udn-primary profile the tenant's VMs use, if
	// any: it replaces the pod network of the whole namespace.
	PrimaryNetwork *Network
}

// VM is a resolved VM.
type VM struct {
	decode.VM
	Tenant    *Tenant
	Name      string
	Namespace string
	Size      *api.Size
	SizeName  string
	Image     *api.Image
	ImageName string
	// Preference is the image's preference (nil when the image or its
	// preference is unknown).
	Preference *api.Preference
	// StateStorage is where KubeVirt keeps the VM's persistent EFI and TPM
	// state (a backend-storage PVC): nil unless its preference has them.
	StateStorage *Storage
	DataSource   api.DataSourceRef
	RootDisk     resource.Quantity
	RootStorage  Storage
	Disks        []Disk
	Networks     []Network
	RunStrategy  string
	Migration    string
	Backup       Backup
	// Tier is production or standard: the VM's own, else its tenant's.
	Tier string
	// Pool is the worker pool the VM runs on: nil when the catalog has no
	// pools (or the VM's is unknown).
	Pool *Pool
	// Spread is the VM's spread group with its defaults applied (nil
	// without one).
	Spread *api.Spread
	// CDROMs are the container disk images of the VM's CD-ROMs
	// (spec.cdroms), by CD-ROM name: from the catalog's ContainerDisks.
	CDROMs map[string]string
	// PreviewFeatures are the preview features (feature gates that are on
	// in the build's Platform) that change what the VM runs.
	PreviewFeatures []PreviewUse
}

// Pool is a worker pool with its name.
type Pool struct {
	Name string
	*api.WorkerPool
}

// Tiers of VMs.
const (
	TierProduction = "production"
	TierStandard   = "standard"
)

// Storage is a storage profile with its name.
type Storage struct {
	Name string
	*api.StorageProfile
}

// Disk is a resolved data disk.
type Disk struct {
	api.Disk
	// Field is the disk's path in the intent, for messages.
	Field   string
	Storage Storage
}

// Network is a network profile a VM is attached to, with its name.
type Network struct {
	Name string
	*api.NetworkProfile
	// Field is the intent field that names it: spec.networks[i], or
	// spec.networks for the catalog's default networks.
	Field string
}

// Backup is the backup policy that applies to a VM.
type Backup struct {
	Name string
	*api.BackupPolicy
}

// Resolve binds the decoded intents to the catalog.
func Resolve(set *decode.Set, cat *catalog.Catalog, diags *diag.List) *Model {
	m := &Model{Catalog: cat, Platform: resolvePlatform(cat, diags), Evidence: set.Evidence}
	m.Facts = resolveFacts(set.PlatformFacts, m.Platform, diags)
	byName := map[string]*Tenant{}
	for _, t := range set.Tenants {
		name := t.Metadata.Name
		if prev, dup := byName[name]; dup {
			p := prev.Doc.Pos("metadata.name")
			diags.Errorf(t.Doc.Pos("metadata.name"), "metadata.name", "duplicate Tenant %q (also defined at %s:%d)", name, p.File, p.Line)
			continue
		}
		rt := &Tenant{Tenant: t, Name: name, Backup: cmp.Or(t.Spec.Backup, cat.DefaultBackup)}
		if t.Spec.Backup != "" {
			if _, ok := cat.BackupPolicies.Get(t.Spec.Backup); !ok {
				diags.Errorf(t.Doc.Pos("spec.backup"), "spec.backup", "%s", cat.BackupPolicies.Unknown("backup policy", t.Spec.Backup))
			}
		}
		byName[name] = rt
		m.Tenants = append(m.Tenants, rt)
	}
	slices.SortFunc(m.Tenants, func(a, b *Tenant) int { return cmp.Compare(a.Name, b.Name) })
	tenantNames := make([]string, len(m.Tenants))
	for i, t := range m.Tenants {
		tenantNames[i] = t.Name
	}

	type key struct{ ns, name string }
	seen := map[key]*VM{}
	for _, v := range set.VMs {
		k := key{v.Metadata.Namespace, v.Metadata.Name}
		if prev, dup := seen[k]; dup {
			p := prev.Doc.Pos("metadata.name")
			diags.Errorf(v.Doc.Pos("metadata.name"), "metadata.name", "duplicate VM %s/%s (also defined at %s:%d)", k.ns, k.name, p.File, p.Line)
			continue
		}
		t, ok := byName[k.ns]
		if !ok && k.ns == "" {
			// decode reported the missing namespace.
			continue
		}
		if !ok {
			diags.Errorf(v.Doc.Pos("metadata.namespace"), "metadata.namespace", "%s", unknownTenant(k.ns, tenantNames))
			continue
		}
		rv := resolveVM(v, t, cat, diags)
		rv.PreviewFeatures = previewUses(m.Platform, rv)
		seen[k] = rv
		t.VMs = append(t.VMs, rv)
	}
	for _, t := range m.Tenants {
		slices.SortFunc(t.VMs, func(a, b *VM) int { return cmp.Compare(a.Name, b.Name) })
		primaryNetwork(t, diags)
	}
	return m
}

// primaryNetwork finds the tenant's primary UDN: a namespace has at most
// one, and then every VM in it is on it.
func primaryNetwork(t *Tenant, diags *diag.List) {
	for _, vm := range t.VMs {
		for i, n := range vm.Networks {
			if n.Spec.Type != api.NetworkUDNPrimary {
				continue
			}
			field := fmt.Sprintf("spec.networks[%d]", i)
			switch {
			case i != 0:
				diags.Errorf(vm.Doc.Pos(field), field, "network %q is a primary network (udn-primary): it must be the first network", n.Name)
			case t.PrimaryNetwork == nil:
				nn := n
				t.PrimaryNetwork = &nn
			case t.PrimaryNetwork.Name != n.Name:
				diags.Errorf(vm.Doc.Pos(field), field, "tenant %q already has the primary network %q; a namespace has one primary network", t.Name, t.PrimaryNetwork.Name)
			}
		}
	}
	if t.PrimaryNetwork == nil {
		return
	}
	for _, vm := range t.VMs {
		if len(vm.Networks) == 0 || vm.Networks[0].Name != t.PrimaryNetwork.Name {
			diags.Errorf(vm.Doc.Pos("spec.networks"), "spec.networks", "tenant %q uses the primary network %q, which replaces the pod network of its namespace: list it first in every VM's networks", t.Name, t.PrimaryNetwork.Name)
		}
		for i, n := range vm.Networks {
			if n.Spec.Type == api.NetworkPod {
				field := fmt.Sprintf("spec.networks[%d]", i)
				diags.Errorf(vm.Doc.Pos(field), field, "network %q (the pod network) is not available in tenant %q: its primary network %q replaces it", n.Name, t.Name, t.PrimaryNetwork.Name)
			}
		}
	}
}

func unknownTenant(ns string, tenants []string) string {
	msg := fmt.Sprintf("namespace %q has no Tenant", ns)
	if s, ok := diag.Nearest(ns, tenants); ok {
		return msg + fmt.Sprintf("; did you mean %q?", s)
	}
	return msg + " (a VM's namespace must be the name of a Tenant)"
}

func resolveVM(v decode.VM, t *Tenant, cat *catalog.Catalog, diags *diag.List) *VM {
	spec := v.Spec
	rv := &VM{
		VM:          v,
		Tenant:      t,
		Name:        v.Metadata.Name,
		Namespace:   v.Metadata.Namespace,
		SizeName:    spec.Size,
		ImageName:   spec.Image,
		RunStrategy: cmp.Or(spec.RunStrategy, api.RunAlways),
		Migration:   cmp.Or(spec.Migration, api.MigrationIfPossible),
		Tier:        cmp.Or(spec.Tier, t.Spec.Tier, TierStandard),
	}
	if spec.Retired {
		rv.RunStrategy = api.RunHalted
	}
	errorf := func(field, format string, args ...any) {
		diags.Errorf(v.Doc.Pos(field), field, format, args...)
	}
	if s, ok := cat.Sizes.Get(spec.Size); ok {
		rv.Size = s
	} else {
		errorf("spec.size", "%s", cat.Sizes.Unknown("size", spec.Size))
	}
	for i, cd := range spec.CDROMs {
		field := fmt.Sprintf("spec.cdroms[%d].containerDisk", i)
		c, ok := cat.ContainerDisks.Get(cd.ContainerDisk)
		if !ok {
			errorf(field, "%s", cat.ContainerDisks.Unknown("container disk", cd.ContainerDisk))
			continue
		}
		if rv.CDROMs == nil {
			rv.CDROMs = map[string]string{}
		}
		rv.CDROMs[cd.Name] = c.Spec.Image
	}
	if img, ok := cat.Images.Get(spec.Image); ok {
		rv.Image = img
		rv.DataSource = ImageDataSource(spec.Image, img, cat)
		p, ok := cat.Preferences.Get(img.Spec.Preference)
		if ok {
			rv.Preference = p
		}
		// A VM without a preference (spec.preference none) keeps what
		// its firmware states, not its image's preference's.
		if spec.Preference == "none" && spec.Firmware.NeedsBackendStorage() || spec.Preference != "none" && ok && p.Spec.NeedsBackendStorage() {
			if st, ok := StateStorage(cat); ok {
				rv.StateStorage = &st
			}
		}
		rv.RootDisk = img.Spec.MinRootDisk
		if img.Spec.DefaultRootDisk != nil {
			rv.RootDisk = *img.Spec.DefaultRootDisk
		}
		if spec.RootDisk != nil {
			if spec.RootDisk.Cmp(img.Spec.MinRootDisk) < 0 {
				errorf("spec.rootDisk", "root disk %s is smaller than image %q needs (at least %s)", spec.RootDisk.String(), spec.Image, img.Spec.MinRootDisk.String())
			}
			rv.RootDisk = *spec.RootDisk
		}
	} else if !strings.Contains(spec.Image, "://") {
		errorf("spec.image", "%s", cat.Images.Unknown("image", spec.Image))
	}
	rv.RootStorage, _ = storage(cat, "", "spec.rootDisk", v, diags)
	for i, d := range spec.Disks {
		field := fmt.Sprintf("spec.disks[%d]", i)
		st, _ := storage(cat, d.Storage, field+".storage", v, diags)
		rv.Disks = append(rv.Disks, Disk{Disk: d, Field: field, Storage: st})
	}
	nets := spec.Networks
	if len(nets) == 0 {
		nets = cat.DefaultNetworks
	}
	for i, n := range nets {
		p, ok := cat.NetworkProfiles.Get(n)
		if !ok {
			errorf(fmt.Sprintf("spec.networks[%d]", i), "%s", cat.NetworkProfiles.Unknown("network profile", n))
			continue
		}
		if br := p.Spec.Bridge; br != nil && br.IPRange != "" {
			errorf(fmt.Sprintf("spec.networks[%d]", i), "network profile %q is a live-migration network (it has spec.bridge.ipRange): VMs cannot attach to it", n)
			continue
		}
		field := fmt.Sprintf("spec.networks[%d]", i)
		if len(spec.Networks) == 0 {
			field = "spec.networks"
		}
		rv.Networks = append(rv.Networks, Network{Name: n, NetworkProfile: p, Field: field})
	}
	resolvePlacement(rv, cat, diags)
	adoption(rv, errorf)
	rv.Backup.Name = cmp.Or(spec.Backup, t.Backup)
	if p, ok := cat.BackupPolicies.Get(rv.Backup.Name); ok {
		rv.Backup.BackupPolicy = p
	} else if spec.Backup != "" {
		errorf("spec.backup", "%s", cat.BackupPolicies.Unknown("backup policy", spec.Backup))
	} else if rv.Backup.Name == "" {
		errorf("spec", "no backup policy: name one in spec.backup, in the Tenant's spec.backup, or mark a catalog BackupPolicy default")
	}
	return rv
}

var macAddress = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{2}([:-][0-9a-fA-F]{2}){5}$`) })

// adoption checks the fields that keep an adopted VM's identity and disks.
func adoption(rv *VM, errorf func(field, format string, args ...any)) {
	spec := rv.Spec
	if ex := spec.ExistingRootDisk; ex != nil && (ex.DataVolume == "") == (ex.PersistentVolumeClaim == "") {
		errorf("spec.existingRootDisk", "name exactly one of dataVolume and persistentVolumeClaim")
	}
	for _, d := range rv.Disks {
		if d.ExistingClaim != "" && d.ExistingDataVolume != "" {
			errorf(d.Field+".existingClaim", "a disk is an existing claim or an existing DataVolume, not both (remove one)")
		}
		if d.Hotpluggable && !d.Existing() {
			errorf(d.Field+".hotpluggable", "only an existing claim or DataVolume can be hot-pluggable (set existingClaim or existingDataVolume)")
		}
		// kubevirt.io/kubevirt v1.8.4 pkg/storage/admitters/storagehotplug.go:
		// ValidateHotplugDiskConfiguration.
		if d.Hotpluggable && d.Bus != "scsi" && d.Bus != "virtio" {
			errorf(d.Field+".bus", "a hot-pluggable disk needs the scsi or virtio bus (KubeVirt refuses others)")
		}
	}
	if slices.Contains(spec.KubeVirtDefaults, api.DefaultNetworks) {
		if len(rv.Networks) != 1 || rv.Networks[0].Spec.Type != api.NetworkPod {
			errorf("spec.kubevirtDefaults", "networks left to KubeVirt means the pod network alone: spec.networks must be one pod network profile")
		}
		if len(spec.MACAddresses) > 0 {
			errorf("spec.macAddresses", "networks left to KubeVirt (spec.kubevirtDefaults) have no interface to carry a MAC address")
		}
	}
	if slices.Contains(spec.KubeVirtDefaults, api.DefaultDisks) {
		for _, d := range rv.Disks {
			if d.Bus != "" {
				errorf(d.Field+".bus", "disks left to KubeVirt (spec.kubevirtDefaults) have its default bus: remove bus")
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(spec.Interfaces)) {
		if !slices.ContainsFunc(rv.Networks, func(n Network) bool { return n.Name == name }) {
			errorf("spec.interfaces."+name, "the VM is not attached to network %q (a key of interfaces is a network of spec.networks)", name)
		} else if slices.Contains(spec.KubeVirtDefaults, api.DefaultNetworks) {
			errorf("spec.interfaces."+name, "networks left to KubeVirt (spec.kubevirtDefaults) have no interface to spell")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(spec.MACAddresses)) {
		field := "spec.macAddresses." + name
		if !slices.ContainsFunc(rv.Networks, func(n Network) bool { return n.Name == name }) {
			errorf(field, "the VM is not attached to network %q (a key of macAddresses is a network of spec.networks)", name)
		}
		if !macAddress().MatchString(spec.MACAddresses[name]) {
			errorf(field, "%q is not a MAC address (six hex pairs such as 02:5e:6b:00:00:01)", spec.MACAddresses[name])
		}
	}
}

// ImageDataSource is the DataSource a VM's root disk clones: the golden
// one an image names, or the one virtc imports it into (named like the
// image, in the golden-image namespace).
func ImageDataSource(name string, img *api.Image, cat *catalog.Catalog) api.DataSourceRef {
	if ds := img.Spec.DataSource; ds != nil {
		return api.DataSourceRef{Name: ds.Name, Namespace: cmp.Or(ds.Namespace, cat.GoldenImageNamespace)}
	}
	return api.DataSourceRef{Name: name, Namespace: cat.GoldenImageNamespace}
}

// StateStorage is the storage profile of VM state (persistent EFI and TPM):
// the one the Platform names in spec.vmStateStorage, else the catalog's
// default. False when there is none (the Platform's name is checked where
// the Platform is resolved).
func StateStorage(cat *catalog.Catalog) (Storage, bool) {
	name := cat.DefaultStorage
	if cat.Platform != nil && cat.Platform.Obj.Spec.VMStateStorage != "" {
		name = cat.Platform.Obj.Spec.VMStateStorage
	}
	p, ok := cat.StorageProfiles.Get(name)
	if !ok {
		return Storage{}, false
	}
	return Storage{Name: name, StorageProfile: p}, true
}

// StateSharedOnMigration reports whether KubeVirt shares the VM-state PVC
// between the source and target of a live migration: a ReadWriteMany
// Filesystem claim. Otherwise (ReadWriteOnce, or a Block profile whose
// Filesystem access mode virtc does not know) the migration creates a
// second PVC for the target and deletes the source's afterwards
// (kubevirt.io/kubevirt v1.8.4 pkg/storage/backend-storage/backend-storage.go:
// getAccessMode, CreatePVCForMigrationTarget, MigrationHandoff).
func (s Storage) StateSharedOnMigration() bool {
	return s.StorageProfile != nil && s.Spec.VolumeMode == api.VolumeModeFilesystem && s.Spec.AccessMode == api.AccessRWX
}

func storage(cat *catalog.Catalog, name, field string, v decode.VM, diags *diag.List) (Storage, bool) {
	if name == "" {
		name = cat.DefaultStorage
		if name == "" {
			diags.Errorf(v.Doc.Pos(field), field, "no storage profile named and the catalog has no default (mark one StorageProfile default: true)")
			return Storage{}, false
		}
	}
	p, ok := cat.StorageProfiles.Get(name)
	if !ok {
		diags.Errorf(v.Doc.Pos(field), field, "%s", cat.StorageProfiles.Unknown("storage profile", name))
		return Storage{}, false
	}
	return Storage{Name: name, StorageProfile: p}, true
}

// TakesBackups reports whether the VM's backup policy takes backups.
func (v *VM) TakesBackups() bool {
	return v.Backup.BackupPolicy != nil && v.Backup.Spec.Schedule != ""
}

// Attached are the data disks attached to the VM: all but the retired ones.
// Callers only read the result: without retired disks it is v.Disks itself
// (this runs several times per VM in a build).
func (v *VM) Attached() []Disk {
	if !slices.ContainsFunc(v.Disks, func(d Disk) bool { return d.Retired }) {
		return v.Disks
	}
	var out []Disk
	for _, d := range v.Disks {
		if !d.Retired {
			out = append(out, d)
		}
	}
	return out
}

// Existing reports whether the disk is an existing claim or DataVolume
// (an adopted VM's) rather than a claim virtc writes.
func (d Disk) Existing() bool {
	return d.ExistingClaim != "" || d.ExistingDataVolume != ""
}

// CanMigrate reports whether the VM can live-migrate at all: every attached
// disk on ReadWriteMany storage and every network migratable.
func (v *VM) CanMigrate() bool {
	if v.RootStorage.StorageProfile == nil || v.RootStorage.Spec.AccessMode != api.AccessRWX {
		return false
	}
	for _, d := range v.Attached() {
		if d.Storage.StorageProfile == nil || d.Storage.Spec.AccessMode != api.AccessRWX {
			return false
		}
	}
	for _, n := range v.Networks {
		if !n.Spec.Migratable {
			return false
		}
	}
	// KubeVirt v1.8.4 sets LiveMigratable false on a VMI with a GPU or host
	// device (pkg/virt-handler/vm.go, calculateLiveMigrationCondition:
	// HostDeviceNotLiveMigratable).
	return len(v.Devices()) == 0
}

// MigrationBlockers say why the VM cannot live-migrate: storage that is not
// ReadWriteMany, networks that do not allow it. Empty when it can.
func (v *VM) MigrationBlockers() []string {
	var out []string
	if st := v.RootStorage; st.StorageProfile != nil && st.Spec.AccessMode != api.AccessRWX {
		out = append(out, fmt.Sprintf("the root disk is on storage profile %q (%s)", st.Name, st.Spec.AccessMode))
	}
	for _, d := range v.Attached() {
		if st := d.Storage; st.StorageProfile != nil && st.Spec.AccessMode != api.AccessRWX {
			out = append(out, fmt.Sprintf("disk %q is on storage profile %q (%s)", d.Name, st.Name, st.Spec.AccessMode))
		}
	}
	for _, n := range v.Networks {
		if n.NetworkProfile != nil && !n.Spec.Migratable {
			out = append(out, fmt.Sprintf("network %q does not allow live migration", n.Name))
		}
	}
	if len(v.Devices()) > 0 {
		out = append(out, "a GPU or host device is passed through: KubeVirt does not live-migrate such a VM, its LiveMigratable condition is false with reason HostDeviceNotLiveMigratable")
	}
	return out
}

// Migrates reports whether the VM will live-migrate during maintenance.
func (v *VM) Migrates() bool {
	return v.Migration != api.MigrationNever && v.CanMigrate()
}
