package decode

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/source"
)

// reservedDiskNames are volume names virtc uses itself.
var reservedDiskNames = []string{"root", "rootdisk", "cloudinitdisk"}

// reservedLabelPrefixes are label and annotation prefixes that drive the
// platform (backup selection, KubeVirt behaviour): a tenant cannot set them.
var reservedLabelPrefixes = []string{"virtc.dev/", "kubevirt.io/", "vm.kubevirt.io/", "cdi.kubevirt.io/", "velero.io/", "argocd.argoproj.io/", "app.kubernetes.io/managed-by"}

// isClusterNamespace reports namespaces that belong to the cluster and so
// cannot be tenants.
func isClusterNamespace(name string) bool {
	return name == "default" || name == "openshift" || strings.HasPrefix(name, "kube-") || strings.HasPrefix(name, "openshift-")
}

// CatalogNamePattern is the form of a catalog entry's name (at most 63
// characters); the JSON Schemas use it too.
const CatalogNamePattern = `^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`

var catalogName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(CatalogNamePattern) })

func (d *decoder) at(path string) *yaml.Node { return source.Lookup(d.doc.Node, path) }

func (d *decoder) fail(path, format string, args ...any) {
	d.valueErrorf(d.at(path), path, format, args...)
}

func (d *decoder) dnsLabel(path, what, name string) {
	if errs := isDNS1123Label(name); len(errs) > 0 {
		d.fail(path, "invalid %s %q: %s", what, name, errs[0])
	}
}

func (d *decoder) dnsSubdomain(path, what, name string) {
	if errs := isDNS1123Subdomain(name); len(errs) > 0 {
		d.fail(path, "invalid %s %q: %s", what, name, errs[0])
	}
}

func (d *decoder) meta(m api.ObjectMeta, namespaced bool) {
	if namespaced && m.Namespace == "" {
		d.fail("metadata", "metadata.namespace is missing (the name of the Tenant this object belongs to)")
	}
	if !namespaced && m.Namespace != "" {
		d.fail("metadata.namespace", "this kind is not namespaced: remove metadata.namespace")
	}
	for _, k := range sortedKeys(m.Labels) {
		path := "metadata.labels." + k
		for _, e := range isQualifiedName(k) {
			d.fail(path, "invalid label key %q: %s", k, e)
		}
		for _, e := range isValidLabelValue(m.Labels[k]) {
			d.fail(path, "invalid label value %q: %s", m.Labels[k], e)
		}
		d.reserved(path, "label", k)
	}
	for _, k := range sortedKeys(m.Annotations) {
		path := "metadata.annotations." + k
		for _, e := range isQualifiedName(k) {
			d.fail(path, "invalid annotation key %q: %s", k, e)
		}
		d.reserved(path, "annotation", k)
	}
}

func (d *decoder) reserved(path, what, key string) {
	for _, p := range reservedLabelPrefixes {
		if strings.HasPrefix(key, p) {
			d.fail(path, "%s %q is reserved: virtc sets the %s* %ss itself", what, key, p, what)
			return
		}
	}
}

func (d *decoder) catalogMeta(m api.ObjectMeta) {
	d.meta(m, false)
	if !catalogName().MatchString(m.Name) || len(m.Name) > 63 {
		d.fail("metadata.name", "invalid catalog name %q (lowercase letters, digits, '-' and '.', at most 63 characters)", m.Name)
	}
}

func (d *decoder) positive(path string, v *int64) {
	if v != nil && *v <= 0 {
		d.fail(path, "must be greater than zero")
	}
}

func validate(d *decoder, obj any) {
	switch o := obj.(type) {
	case *api.Tenant:
		d.validateTenant(o)
	case *api.VM:
		d.validateVM(o)
	case *api.Size:
		d.validateSize(o)
	case *api.Image:
		d.validateImage(o)
	case *api.NetworkProfile:
		d.catalogMeta(o.Metadata)
		d.dnsLabel("metadata.name", "network profile name (it names interfaces and attachments)", o.Metadata.Name)
		d.networkProfile(o)
		if d.at("spec.restricted") != d.at("spec") {
			if o.Spec.Type == api.NetworkPod {
				d.warnf("spec.restricted", "has no effect: the pod network is open to every tenant (remove the field)")
			} else {
				d.warnf("spec.restricted", "has no effect: every additional network is restricted, reaching only the tenants that list it in spec.allow.networks (remove the field)")
			}
		}
	case *api.ContainerDisk:
		d.catalogMeta(o.Metadata)
		if strings.TrimSpace(o.Spec.Provenance) == "" {
			d.fail("spec.provenance", "a container disk needs its provenance record (doc 000, Images and provisioning: sources must be approved and traceable to a provenance record)")
		}
	case *api.Preference:
		d.validatePreference(o)
	case *api.Platform:
		d.validatePlatform(o)
	case *api.StorageProfile:
		d.catalogMeta(o.Metadata)
		d.dnsSubdomain("spec.storageClass", "StorageClass name", o.Spec.StorageClass)
		if o.Spec.FilesystemOverhead != "" {
			if _, err := ParseOverhead(o.Spec.FilesystemOverhead); err != nil {
				d.fail("spec.filesystemOverhead", "%v", err)
			}
		}
		if o.Spec.Qualified && len(o.Spec.Evidence) == 0 {
			// A qualified profile keeps its VMs out of the conditional
			// unqualified-storage class, whose storage-validation it then
			// no longer asks: the claim carries evidence of its own, or any
			// Block profile (LVMS, local NVMe) could pass as qualified RBD
			// raw-block by saying so (issue 46).
			d.fail("spec.qualified", "a qualified profile names the evidence that qualifies it, which production VMs on it then need (doc 000, Storage: \"validate the selected StorageClass, access mode, snapshot, clone, and migration behavior per 4.22.z\"; add spec.evidence, such as check storage-validation or storage-failover, or remove qualified)")
		}
	case *api.WorkerPool:
		d.catalogMeta(o.Metadata)
		d.dnsLabel("metadata.name", "pool name (it is the value of the VMs' label virtc.dev/pool)", o.Metadata.Name)
		d.workerPool(o)
	case *api.MigrationPolicy:
		d.catalogMeta(o.Metadata)
		d.dnsSubdomain("metadata.name", "MigrationPolicy name", o.Metadata.Name)
		d.migrationPolicy(o)
	case *api.BackupPolicy:
		d.validateBackupPolicy(o)
	case *api.PlatformFacts:
		d.catalogMeta(o.Metadata)
	case *api.Evidence:
		d.catalogMeta(o.Metadata)
		if o.Spec.Date != "" {
			if _, err := time.Parse(time.DateOnly, o.Spec.Date); err != nil {
				d.fail("spec.date", "%q is not a date (YYYY-MM-DD)", o.Spec.Date)
			}
		}
	}
}

// validateTenant checks a Tenant: its name, access groups, quota, backup policy and size patterns.
func (d *decoder) validateTenant(o *api.Tenant) {
	d.meta(o.Metadata, false)
	d.dnsLabel("metadata.name", "tenant name", o.Metadata.Name)
	if isClusterNamespace(o.Metadata.Name) {
		d.fail("metadata.name", "namespace %q belongs to the cluster and cannot be a tenant", o.Metadata.Name)
	}
	for _, r := range []struct {
		role   string
		groups []string
	}{{"admin", o.Spec.Access.Admin}, {"edit", o.Spec.Access.Edit}, {"view", o.Spec.Access.View}} {
		for i, g := range r.groups {
			if strings.TrimSpace(g) == "" {
				d.fail(fmt.Sprintf("spec.access.%s[%d]", r.role, i), "group name must not be empty")
			}
		}
	}
	if q := o.Spec.Quota; q != nil {
		d.positive("spec.quota.cpu", q.CPU)
		d.positive("spec.quota.vms", q.VMs)
		if q.Memory != nil && q.Memory.Sign() == 0 {
			d.fail("spec.quota.memory", "must be greater than zero")
		}
		if q.Storage != nil && q.Storage.Sign() == 0 {
			d.fail("spec.quota.storage", "must be greater than zero")
		}
	}
	if o.Spec.Backup != "" {
		d.catalogRef("spec.backup", o.Spec.Backup)
	}
	if a := o.Spec.Allow; a != nil {
		for i, p := range a.Sizes {
			if _, err := path.Match(p, ""); err != nil {
				d.fail(fmt.Sprintf("spec.allow.sizes[%d]", i), "invalid pattern %q: %v", p, err)
			}
		}
	}
}

// validateVM checks a VM: names, disks, networks, run strategy of a retired VM, pool, root disk, cloud-init and SSH key Secrets, devices.
func (d *decoder) validateVM(o *api.VM) {
	d.meta(o.Metadata, true)
	d.dnsLabel("metadata.name", "VM name", o.Metadata.Name)
	if o.Metadata.Namespace != "" {
		d.dnsLabel("metadata.namespace", "namespace", o.Metadata.Namespace)
	}
	seen := map[string]int{}
	for i, disk := range o.Spec.Disks {
		path := fmt.Sprintf("spec.disks[%d]", i)
		d.dnsLabel(path+".name", "disk name", disk.Name)
		for _, r := range reservedDiskNames {
			if disk.Name == r {
				d.fail(path+".name", "disk name %q is reserved (virtc names the root and cloud-init disks); pick another", disk.Name)
			}
		}
		if j, dup := seen[disk.Name]; dup {
			d.fail(path+".name", "duplicate disk name %q (also spec.disks[%d])", disk.Name, j)
		}
		seen[disk.Name] = i
		if disk.Size.Sign() == 0 {
			d.fail(path+".size", "must be greater than zero")
		}
	}
	nets := map[string]int{}
	for i, n := range o.Spec.Networks {
		if j, dup := nets[n]; dup {
			d.fail(fmt.Sprintf("spec.networks[%d]", i), "network %q is listed twice (also spec.networks[%d])", n, j)
		}
		nets[n] = i
	}
	if o.Spec.Retired && o.Spec.RunStrategy != "" && o.Spec.RunStrategy != api.RunHalted {
		d.fail("spec.runStrategy", "a retired VM is halted: remove spec.runStrategy %s (or set it to Halted)", o.Spec.RunStrategy)
	}
	if o.Spec.Pool != "" {
		d.catalogRef("spec.pool", o.Spec.Pool)
	}
	if o.Spec.RootDisk != nil && o.Spec.RootDisk.Sign() == 0 {
		d.fail("spec.rootDisk", "must be greater than zero")
	}
	if ci := o.Spec.CloudInit; ci != nil {
		if ci.UserDataSecret != "" {
			d.dnsSubdomain("spec.cloudInit.userDataSecret", "Secret name", ci.UserDataSecret)
		}
		if ci.NetworkDataSecret != "" {
			d.dnsSubdomain("spec.cloudInit.networkDataSecret", "Secret name", ci.NetworkDataSecret)
		}
	}
	for i, s := range o.Spec.SSHKeySecrets {
		d.dnsSubdomain(fmt.Sprintf("spec.sshKeySecrets[%d]", i), "Secret name", s)
	}
	d.devices(o)
}

// validateSize checks a Size: CPU, memory, overcommit and an inline shape.
func (d *decoder) validateSize(o *api.Size) {
	d.catalogMeta(o.Metadata)
	if o.Spec.CPU <= 0 {
		d.fail("spec.cpu", "must be at least 1 vCPU")
	}
	if o.Spec.Memory.Cmp(mustQuantity("1Mi")) < 0 {
		d.fail("spec.memory", "must be at least 1Mi")
	}
	if p := o.Spec.MemoryOvercommitPercent; p < 0 || p > 100 {
		d.fail("spec.memoryOvercommitPercent", "must be from 0 to 100 (KubeVirt's instance type memory.overcommitPercent)")
	}
	if in := o.Spec.Inline; in != nil {
		if in.Sockets < 0 || in.Cores < 0 || in.Threads < 0 {
			d.fail("spec.inline", "sockets, cores and threads are at least 1 when set")
		} else if n := in.VCPUs(); n != o.Spec.CPU {
			d.fail("spec.inline", "sockets × cores × threads is %d vCPUs, not spec.cpu %d (absent ones count 1)", n, o.Spec.CPU)
		}
		if o.Spec.Builtin || o.Spec.DedicatedCPU || o.Spec.Hugepages != "" || len(o.Spec.GPUs) > 0 || o.Spec.MemoryOvercommitPercent != 0 {
			d.fail("spec.inline", "an inline size is a plain CPU and memory shape: not builtin, without dedicatedCPU, hugepages, gpus or memoryOvercommitPercent")
		}
	}
}

// validateImage checks an Image: exactly one source, its names and schedule, root disk sizes.
func (d *decoder) validateImage(o *api.Image) {
	d.catalogMeta(o.Metadata)
	sources := 0
	for _, set := range []bool{o.Spec.DataSource != nil, o.Spec.Registry != nil, o.Spec.HTTP != nil} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		d.fail("spec", "an image needs exactly one source: dataSource (a golden DataSource), registry (a digest-pinned container disk) or http (a URL with its checksum)")
	}
	if ds := o.Spec.DataSource; ds != nil {
		d.dnsSubdomain("spec.dataSource.name", "DataSource name", ds.Name)
		if ds.Namespace != "" {
			d.dnsLabel("spec.dataSource.namespace", "namespace", ds.Namespace)
		}
	}
	if r := o.Spec.Registry; r != nil && r.Schedule != "" {
		if err := checkCron(r.Schedule); err != nil {
			d.fail("spec.registry.schedule", "%v", err)
		} else {
			d.warnf("spec.registry.schedule", "has no effect: an image pinned by digest never changes, so it is imported once by a DataVolume, never polled (remove the field)")
		}
	}
	if o.Spec.Registry != nil || o.Spec.HTTP != nil {
		// The image's DataSource is named after it.
		d.dnsLabel("metadata.name", "name of an imported image (it names its DataSource)", o.Metadata.Name)
	}
	if o.Spec.MinRootDisk.Sign() == 0 {
		d.fail("spec.minRootDisk", "must be greater than zero")
	}
	if def := o.Spec.DefaultRootDisk; def != nil && def.Cmp(o.Spec.MinRootDisk) < 0 {
		d.fail("spec.defaultRootDisk", "%s is below spec.minRootDisk %s", def.String(), o.Spec.MinRootDisk.String())
	}
}

// validatePreference checks a Preference: persistent EFI needs EFI firmware, requirements are not negative.
func (d *decoder) validatePreference(o *api.Preference) {
	d.catalogMeta(o.Metadata)
	if o.Spec.PersistentEFI && !strings.HasPrefix(o.Spec.Firmware, "efi") {
		d.fail("spec.persistentEFI", "needs firmware efi or efi-secureboot (the EFI variable store is what persists)")
	}
	if r := o.Spec.Requirements; r != nil {
		if r.CPU < 0 {
			d.fail("spec.requirements.cpu", "must not be negative")
		}
		if r.Memory != nil && r.Memory.Sign() < 0 {
			d.fail("spec.requirements.memory", "must not be negative")
		}
	}
}

// validatePlatform checks the Platform: names, memory overcommit, data protection.
func (d *decoder) validatePlatform(o *api.Platform) {
	d.meta(o.Metadata, false)
	d.dnsLabel("metadata.name", "platform name", o.Metadata.Name)
	if ns := o.Spec.GoldenImageNamespace; ns != "" {
		d.dnsLabel("spec.goldenImageNamespace", "namespace", ns)
	}
	if p := o.Spec.MemoryOvercommitPercentage; p != nil && (*p < 10 || *p > 1000) {
		d.fail("spec.memoryOvercommitPercentage", "must be from 10 to 1000 (100 means no overcommit)")
	}
	if dp := o.Spec.DataProtection; dp != nil {
		d.dataProtection(dp)
	}
}

// validateBackupPolicy checks a BackupPolicy: schedule with retention, durations.
func (d *decoder) validateBackupPolicy(o *api.BackupPolicy) {
	d.catalogMeta(o.Metadata)
	if o.Spec.Schedule != "" {
		if err := checkCron(o.Spec.Schedule); err != nil {
			d.fail("spec.schedule", "%v", err)
		}
		if o.Spec.Retention == "" {
			d.fail("spec", "spec.retention is required with a schedule (for example 720h)")
		}
	}
	if o.Spec.Retention != "" {
		if _, err := ParseRetention(o.Spec.Retention); err != nil {
			d.fail("spec.retention", "%v", err)
		}
	}
	if o.Spec.DrillInterval != "" {
		if _, err := ParseRetention(o.Spec.DrillInterval); err != nil {
			d.fail("spec.drillInterval", "%v", err)
		}
	}
}
func (d *decoder) catalogRef(path, name string) {
	if !catalogName().MatchString(name) {
		d.fail(path, "invalid catalog name %q (lowercase letters, digits, '-' and '.')", name)
	}
}

func (d *decoder) networkProfile(o *api.NetworkProfile) {
	spec := o.Spec
	blocks := []struct {
		name string
		set  bool
		typ  string
	}{
		{"bridge", spec.Bridge != nil, api.NetworkBridge},
		{"localnet", spec.Localnet != nil, api.NetworkLocalnet},
		{"layer2", spec.Layer2 != nil, api.NetworkUDNPrimary},
	}
	for _, b := range blocks {
		switch {
		case b.typ == spec.Type && !b.set:
			d.fail("spec", "a %s profile needs spec.%s", spec.Type, b.name)
		case b.typ != spec.Type && b.set:
			d.fail("spec."+b.name, "spec.%s belongs to %s profiles, not %s", b.name, b.typ, spec.Type)
		}
	}
	vlan := func(path string, v *int64) {
		if v != nil && (*v < 1 || *v > 4094) {
			d.fail(path, "VLAN %d is outside 1-4094", *v)
		}
	}
	if b := spec.Bridge; b != nil {
		if b.Name == "" || len(b.Name) > 15 || strings.ContainsAny(b.Name, " /") {
			d.fail("spec.bridge.name", "invalid bridge name %q (a Linux interface name: 1-15 characters, no spaces or '/')", b.Name)
		}
		vlan("spec.bridge.vlan", b.VLAN)
		if b.IPRange != "" {
			if pr, err := netip.ParsePrefix(b.IPRange); err != nil || pr.Bits() >= pr.Addr().BitLen()-1 {
				d.fail("spec.bridge.ipRange", "invalid IP range %q (a CIDR with room for an address per node, such as 10.200.5.0/24)", b.IPRange)
			}
		}
	}
	if l := spec.Localnet; l != nil {
		vlan("spec.localnet.vlan", l.VLAN)
		if l.MTU != nil && (*l.MTU < 576 || *l.MTU > 65536) {
			d.fail("spec.localnet.mtu", "MTU %d is outside 576-65536", *l.MTU)
		}
	}
	if l := spec.Layer2; l != nil {
		if len(l.Subnets) == 0 {
			d.fail("spec.layer2.subnets", "a primary network needs at least one subnet (a CIDR such as 10.100.0.0/16)")
		}
		for i, c := range l.Subnets {
			if _, err := netip.ParsePrefix(c); err != nil {
				d.fail(fmt.Sprintf("spec.layer2.subnets[%d]", i), "invalid CIDR %q", c)
			}
		}
	}
}

func (d *decoder) dataProtection(dp *api.DataProtection) {
	switch {
	case dp.External && len(dp.StorageLocations) > 0:
		d.fail("spec.dataProtection.storageLocations", "an external OADP defines its own storage locations: remove them, or remove external: true to install OADP with them")
	case !dp.External && len(dp.StorageLocations) == 0:
		d.fail("spec.dataProtection.storageLocations", "name at least one storage location (or set external: true if OADP is managed outside this build)")
	}
	seen := map[string]int{}
	defaults := 0
	for i, l := range dp.StorageLocations {
		path := fmt.Sprintf("spec.dataProtection.storageLocations[%d]", i)
		d.dnsLabel(path+".name", "storage location name", l.Name)
		if j, dup := seen[l.Name]; dup {
			d.fail(path+".name", "duplicate storage location %q (also storageLocations[%d])", l.Name, j)
		}
		seen[l.Name] = i
		d.dnsSubdomain(path+".credential.name", "Secret name", l.Credential.Name)
		if l.Default {
			defaults++
			if defaults > 1 {
				d.fail(path+".default", "only one storage location may be the default")
			}
		}
	}
	if len(dp.StorageLocations) > 1 && defaults == 0 {
		d.fail("spec.dataProtection.storageLocations", "mark one storage location default: true")
	}
}

// devices checks how an intent spells its disks and interfaces (the
// fields virtc import sets to keep an adopted VM's devices; see
// api.DiskDevice and api.Interface).
func (d *decoder) devices(o *api.VM) {
	boots := map[int64]string{}
	device := func(path string, dev *api.DiskDevice, bootable bool) {
		if dev == nil {
			return
		}
		if dev.Target == api.TargetUnset || dev.Target == api.TargetNone {
			if dev.Bus != "" || dev.Serial != "" {
				d.fail(path+".target", "target %s has no bus or serial (KubeVirt gives it a disk on the default bus): remove bus and serial, or set target disk", dev.Target)
			}
		}
		if dev.BootOrder == nil {
			return
		}
		switch {
		case !bootable:
			d.fail(path+".bootOrder", "the cloud-init disk does not boot: remove bootOrder")
		case *dev.BootOrder < 0:
			d.fail(path+".bootOrder", "must be 0 (none) or more")
		case *dev.BootOrder > 0 && dev.Target == api.TargetNone:
			d.fail(path+".bootOrder", "a disk without an entry (target none) has no boot order: set target unset or disk")
		case *dev.BootOrder > 0:
			// KubeVirt v1.8.4 pkg/virt-api/webhooks/validating-webhook/admitters/vmi-create-admitter.go
			// validateBootOrder refuses a boot order used twice.
			if other, dup := boots[*dev.BootOrder]; dup {
				d.fail(path+".bootOrder", "boot order %d is also %s's (boot orders are unique)", *dev.BootOrder, other)
			}
			boots[*dev.BootOrder] = path
		}
	}
	if slices.Contains(o.Spec.KubeVirtDefaults, api.DefaultDisks) {
		// No disk entries are written: nothing to spell.
		if o.Spec.RootDiskDevice != nil {
			d.fail("spec.rootDiskDevice", "disks left to KubeVirt (spec.kubevirtDefaults) have no device entry to spell: remove it")
		}
		for i, disk := range o.Spec.Disks {
			if disk.BootOrder != nil || disk.Target != "" {
				d.fail(fmt.Sprintf("spec.disks[%d]", i), "disks left to KubeVirt (spec.kubevirtDefaults) have no device entry: remove bootOrder and target")
			}
		}
		if ci := o.Spec.CloudInit; ci != nil && ci.Device != nil {
			d.fail("spec.cloudInit.device", "disks left to KubeVirt (spec.kubevirtDefaults) have no device entry to spell: remove it")
		}
	}
	root := o.Spec.RootDiskDevice
	if root == nil || root.BootOrder == nil {
		// The root disk boots first unless it says otherwise.
		boots[1] = "the root disk"
	}
	device("spec.rootDiskDevice", root, true)
	for i, disk := range o.Spec.Disks {
		device(fmt.Sprintf("spec.disks[%d]", i), &api.DiskDevice{Bus: disk.Bus, Serial: disk.Serial, BootOrder: disk.BootOrder, Target: disk.Target}, true)
	}
	if ci := o.Spec.CloudInit; ci != nil {
		device("spec.cloudInit.device", ci.Device, false)
		if ci.UserDataEncoding != "" && ci.UserData == "" {
			d.fail("spec.cloudInit.userDataEncoding", "encodes spec.cloudInit.userData, which is absent: remove it")
		}
	}
	if len(o.Spec.SSHKeyGuestAgentUsers) > 0 && len(o.Spec.SSHKeySecrets) == 0 {
		d.fail("spec.sshKeyGuestAgentUsers", "propagates the keys of spec.sshKeySecrets, which is empty: remove it or name the Secrets")
	}
	for i, u := range o.Spec.SSHKeyGuestAgentUsers {
		if u == "" || strings.ContainsAny(u, " :/\t\n") {
			d.fail(fmt.Sprintf("spec.sshKeyGuestAgentUsers[%d]", i), "%q is not a user name", u)
		}
	}
	if fw := o.Spec.Firmware; fw != nil && fw.Bootloader != "efi" {
		if fw.SecureBoot != nil {
			d.fail("spec.firmware.secureBoot", "Secure Boot is an EFI setting: set spec.firmware.bootloader efi, or remove it")
		}
		if fw.PersistentEFI != nil {
			d.fail("spec.firmware.persistentEFI", "persistent EFI variables are an EFI setting: set spec.firmware.bootloader efi, or remove it")
		}
	}
	if slices.Contains(o.Spec.KubeVirtDefaults, api.DefaultSerial) && o.Spec.Firmware != nil && o.Spec.Firmware.Serial != "" {
		d.fail("spec.firmware.serial", "the serial is left to KubeVirt (spec.kubevirtDefaults serial: the VM has none): remove one of them")
	}
	defaultBoot := slices.Contains(o.Spec.KubeVirtDefaults, api.DefaultBootloader)
	switch {
	case defaultBoot && o.Spec.Preference != "none":
		d.fail("spec.kubevirtDefaults", "bootloader is left to KubeVirt only on a VM without a preference (spec.preference none): the preference chooses the firmware otherwise; remove it")
	case defaultBoot && o.Spec.Firmware != nil && o.Spec.Firmware.Bootloader != "":
		d.fail("spec.firmware.bootloader", "the bootloader is left to KubeVirt (spec.kubevirtDefaults): remove one of them")
	case o.Spec.Preference == "none" && !defaultBoot && (o.Spec.Firmware == nil || o.Spec.Firmware.Bootloader == ""):
		// Without a preference nothing chooses the firmware but the VM:
		// KubeVirt's default is BIOS, which a guest installed for EFI does
		// not boot with.
		d.fail("spec.preference", "a VM without a preference states its firmware: set spec.firmware.bootloader (bios or efi, as the guest was installed)")
	}
	if c := o.Spec.Clock; c != nil {
		if c.Timezone != "" && c.UTC != nil {
			d.fail("spec.clock.utc", "the clock's offset is utc or a timezone, not both (KubeVirt's ClockOffset): remove one")
		}
		if tm := c.Timer; tm != nil {
			for _, x := range []struct {
				name string
				t    *api.Timer
			}{{"kvm", tm.KVM}, {"hyperv", tm.Hyperv}} {
				if name, t := x.name, x.t; t != nil && t.TickPolicy != "" {
					d.fail("spec.clock.timer."+name+".tickPolicy", "the %s timer has no tick policy (KubeVirt's KVMTimer and HypervTimer): remove it", name)
				}
			}
			if t := tm.HPET; t != nil && t.TickPolicy == "catchup" {
				d.fail("spec.clock.timer.hpet.tickPolicy", "the hpet timer's tick policies are delay, merge and discard (KubeVirt's HPETTickPolicy)")
			}
			if t := tm.PIT; t != nil && t.TickPolicy == "merge" {
				d.fail("spec.clock.timer.pit.tickPolicy", "the pit timer's tick policies are delay, catchup and discard (KubeVirt's PITTickPolicy)")
			}
			if t := tm.RTC; t != nil && (t.TickPolicy == "merge" || t.TickPolicy == "discard") {
				d.fail("spec.clock.timer.rtc.tickPolicy", "the rtc timer's tick policies are delay and catchup (KubeVirt's RTCTickPolicy)")
			}
		}
	}
	volumes := map[string]string{}
	if r := o.Spec.ExistingRootDisk; r != nil && r.VolumeName != "" {
		volumes[r.VolumeName] = "the root disk"
	} else {
		volumes["rootdisk"] = "the root disk"
	}
	volumes["cloudinitdisk"] = "the cloud-init disk"
	for i, disk := range o.Spec.Disks {
		volumes[disk.Name] = fmt.Sprintf("spec.disks[%d]", i)
	}
	for i, cd := range o.Spec.CDROMs {
		path := fmt.Sprintf("spec.cdroms[%d]", i)
		if other, dup := volumes[cd.Name]; dup {
			d.fail(path+".name", "disk name %q is also %s's (disk names are unique)", cd.Name, other)
		}
		volumes[cd.Name] = path
		if cd.BootOrder != nil && *cd.BootOrder < 0 {
			d.fail(path+".bootOrder", "must be 0 (none) or more")
		}
	}
	names := map[string]string{}
	for _, n := range slices.Sorted(maps.Keys(o.Spec.Interfaces)) {
		name := cmp.Or(o.Spec.Interfaces[n].Name, n)
		if other, dup := names[name]; dup {
			d.fail("spec.interfaces."+n+".name", "interface name %q is also network %s's (interface names are unique)", name, other)
		}
		names[name] = n
	}
}
