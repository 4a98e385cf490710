package api

import "k8s.io/apimachinery/pkg/api/resource"

// Tenant is one namespace that may hold VMs. It is owned by the platform team:
// it grants access, bounds resources and sets defaults for its VMs.
type Tenant struct {
	TypeMeta `json:",inline"`
	// Metadata.name is the namespace.
	Metadata ObjectMeta `json:"metadata"`
	Spec     TenantSpec `json:"spec,omitempty"`
}

// TenantSpec is what a tenant may do.
type TenantSpec struct {
	// Access lists the groups bound, in this namespace only, to virtc's
	// VM-scoped roles (the Roles virtc-tenant-admin, -edit and -view):
	// rights over VMs, their disks, snapshots and services, never
	// Kubernetes' admin, edit or view.
	Access TenantAccess `json:"access,omitempty"`
	// Quota bounds the tenant in VM terms. virtc translates it into pod terms
	// (what KubeVirt's virt-launcher pods request). Absent: the quota is
	// derived from the tenant's VMs, so that exactly they fit.
	Quota *TenantQuota `json:"quota,omitempty"`
	// Backup is the default backup policy (a BackupPolicy of the catalog) for
	// this tenant's VMs. Absent: the catalog's default policy.
	Backup string `json:"backup,omitempty"`
	// Allow restricts what the tenant's VMs may use. Absent lists allow
	// every catalog entry that is not marked restricted, except
	// additional networks, which a tenant may use only when it lists them
	// (spec.allow.networks).
	Allow *TenantAllow `json:"allow,omitempty"`
	// Tier of the tenant's VMs: production VMs must have a backup policy
	// that takes backups, and accepted evidence for their eligibility
	// class and profiles. The tenant (the platform team) owns the tier and
	// through it the backup protection: a VM may raise its tier, never
	// lower it, so a production tenant's VMs all take backups. Absent:
	// standard.
	Tier string `json:"tier,omitempty" enum:"production,standard"`
	// Environment lab marks a tenant that is not onboarded: its VMs in a
	// conditional class of the eligibility matrix (live migration,
	// additional networks, worker virtualization, unqualified storage)
	// compile without that class's evidence, which every other tenant
	// needs before onboarding in every tier. It is never silent: every
	// build warns about each such VM, the Namespace is labelled
	// virtc.dev/environment: lab, and virtc report shows it. A production
	// tenant cannot be lab, nor can a lab tenant's VM be production tier.
	// Absent: the full gate.
	Environment string `json:"environment,omitempty" enum:"lab"`
	// Retired marks a tenant being decommissioned: every VM of a retired
	// tenant must be retired too, and its Namespace is labelled
	// virtc.dev/retired. Only a tenant that is retired on the base branch
	// may be removed (virtc diff refuses the removal of any other).
	Retired bool `json:"retired,omitempty"`
	// Alerts is where the alerts about this tenant's VMs go: virtc
	// compiles an AlertmanagerConfig virtc-alerts in the namespace that
	// routes them there (through user workload monitoring's Alertmanager,
	// which must allow AlertmanagerConfigs). Absent: no AlertmanagerConfig;
	// the alerts still fire, and reach whatever the cluster's Alertmanager
	// routes them to by default (the platform team's receiver).
	Alerts *TenantAlerts `json:"alerts,omitempty"`
	// Recovery names who restores this tenant's guest data and who
	// validates its application after a restore (doc 001, "Upgrade and
	// recovery planning": a recovery document identifies who restores the
	// cluster service, who restores guest data, and who validates the
	// application). virtc restore-plan writes both into every plan of
	// the tenant, with the application's validation as a step of its own.
	// Required for a tenant with production VMs.
	Recovery *TenantRecovery `json:"recovery,omitempty"`
}

// TenantRecovery names the people of a tenant's recovery document. Each
// is a team, a person, an on-call rota or an address, as the organisation
// writes it; restore plans are shell scripts, so no quote, dollar,
// backquote, backslash or line break.
type TenantRecovery struct {
	// RestoresGuestData is who restores the VMs' disks from backups and
	// runs the tenant's restore plans (for example "team-shop-ops" or
	// "shop on-call").
	RestoresGuestData string `json:"restoresGuestData,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9 ._@+,:()/#-]{0,127}$" hint:"a team, person or rota: letters, digits, spaces and ._@+,:()/#-"`
	// ValidatesApplication is who checks, after a restore, that the
	// application on the VMs works: virtc can check that the VMs run,
	// not what runs in them.
	ValidatesApplication string `json:"validatesApplication,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9 ._@+,:()/#-]{0,127}$" hint:"a team, person or rota: letters, digits, spaces and ._@+,:()/#-"`
}

// TenantAlerts is a tenant's alert receiver: e-mail addresses, a webhook,
// or both.
type TenantAlerts struct {
	// Email lists the addresses the alerts are mailed to (the
	// Alertmanager's SMTP settings send them).
	Email []string `json:"email,omitempty"`
	// Webhook is the URL the alerts are posted to (Alertmanager's webhook
	// format). It must not hold a credential: it is in Git.
	Webhook string `json:"webhook,omitempty" pattern:"^https?://[^ ]+$" hint:"an http:// or https:// URL"`
}

// TenantAllow lists the catalog entries a tenant may use.
type TenantAllow struct {
	// Sizes are size names or glob patterns (u1.*, cx1.?large).
	Sizes []string `json:"sizes,omitempty"`
	// Images are image names.
	Images []string `json:"images,omitempty"`
	// Networks are the additional network profiles (names or glob
	// patterns) the tenant may use: every type but pod. An additional
	// network reaches only the tenants that list it here (its attachment
	// is rendered into their namespaces alone); absent, the tenant has the
	// pod network only. The pod network needs no entry.
	Networks []string `json:"networks,omitempty"`
	// Storage are storage profile names.
	Storage []string `json:"storage,omitempty"`
	// Pools are worker pool names.
	Pools []string `json:"pools,omitempty"`
	// Devices are the resource names of the host devices (GPUs, vGPUs,
	// PCI devices; the Platform's spec.hostDevices) the tenant's VMs may
	// pass through, by name or glob pattern (nvidia.com/*). Unlike the
	// other lists, absent allows none: the target architecture grants "no
	// implied device entitlement" and no "unrestricted privileged-device
	// access".
	Devices []string `json:"devices,omitempty"`
}

// TenantAccess lists group names per role.
type TenantAccess struct {
	// Admin groups may do what edit groups do, and export VMs
	// (VirtualMachineExport, whose download reads its token Secret), read
	// a Secret by name and take memory dumps. Not RBAC, NetworkPolicies or
	// the quota: those are the platform's.
	Admin []string `json:"admin,omitempty"`
	// Edit groups may create, change, start, stop and delete VMs and their
	// disks, snapshot, restore and clone them, use their consoles, write
	// Services, and write (not read) Secrets such as cloud-init user data.
	Edit []string `json:"edit,omitempty"`
	// View groups may read the VMs, their disks, snapshots, pods, Services
	// and events: not Secrets, and not pod logs (a VM's pod log holds its
	// serial console).
	View []string `json:"view,omitempty"`
}

// TenantQuota bounds a tenant in VM terms.
type TenantQuota struct {
	// CPU is the number of vCPUs all VMs together may have.
	CPU *int64 `json:"cpu,omitempty"`
	// Memory is the guest memory all VMs together may have (virt-launcher
	// overhead is added by virtc).
	Memory *resource.Quantity `json:"memory,omitempty"`
	// Storage is the size of all disks together.
	Storage *resource.Quantity `json:"storage,omitempty"`
	// VMs is the number of VirtualMachines.
	VMs *int64 `json:"vms,omitempty"`
}

// VM is one virtual machine, as a tenant team describes it.
type VM struct {
	TypeMeta `json:",inline"`
	// Metadata.namespace must be the name of a Tenant.
	Metadata ObjectMeta `json:"metadata"`
	Spec     VMSpec     `json:"spec"`
}

// Run strategies of a VM.
const (
	RunAlways         = "Always"
	RunHalted         = "Halted"
	RunManual         = "Manual"
	RunRerunOnFailure = "RerunOnFailure"
	RunOnce           = "Once"
)

// Migration modes of a VM.
const (
	MigrationRequired   = "Required"
	MigrationIfPossible = "IfPossible"
	MigrationNever      = "Never"
)

// VMSpec describes a VM in catalog terms.
type VMSpec struct {
	// Size is an instance type of the catalog (for example u1.medium). It sets
	// the vCPUs and memory.
	Size string `json:"size"`
	// Image is an OS image of the catalog (for example rhel9). The root disk
	// is cloned from it, and its preference tunes the VM for the OS.
	Image string `json:"image"`
	// RootDisk is the size of the root disk: at least the image's minimum.
	// Absent: the image's default size.
	RootDisk *resource.Quantity `json:"rootDisk,omitempty"`
	// Disks are data disks, each a PersistentVolumeClaim of its own that
	// outlives changes to the VM.
	Disks []Disk `json:"disks,omitempty"`
	// Networks are network profiles of the catalog; the first is the primary
	// interface. Absent: [default].
	Networks []string `json:"networks,omitempty"`
	// RunStrategy is Always, Halted, Manual, RerunOnFailure or Once.
	// Absent: Always.
	RunStrategy string `json:"runStrategy,omitempty" enum:"Always,Halted,Manual,RerunOnFailure,Once"`
	// Migration says whether the VM moves during node maintenance: Required
	// (evictionStrategy LiveMigrate), IfPossible (LiveMigrateIfPossible) or
	// Never (None). Absent: IfPossible.
	Migration string `json:"migration,omitempty" enum:"Required,IfPossible,Never"`
	// Backup is a backup policy of the catalog. Absent: the tenant's. A
	// production VM's policy must take backups.
	Backup string `json:"backup,omitempty"`
	// CloudInit configures the guest at first boot.
	CloudInit *CloudInit `json:"cloudInit,omitempty"`
	// SSHKeySecrets name Secrets in the VM's namespace whose values are SSH
	// public keys, injected through cloud-init (accessCredentials).
	SSHKeySecrets []string `json:"sshKeySecrets,omitempty"`
	// Tier raises the tenant's tier for this VM to production. A VM
	// cannot lower its tenant's tier: standard in a production tenant is
	// refused.
	Tier string `json:"tier,omitempty" enum:"production,standard"`
	// GPUs passes GPUs through to the guest. Excluded from the platform
	// baseline unless the Platform enables gpu; each deviceName must be a
	// resource name of the Platform's spec.hostDevices that the tenant's
	// spec.allow.devices allows. A VM with a GPU or host device cannot
	// live-migrate (KubeVirt v1.8.4 pkg/virt-handler/vm.go: condition
	// LiveMigratable false, HostDeviceNotLiveMigratable).
	GPUs []Device `json:"gpus,omitempty"`
	// HostDevices passes host PCI devices through to the guest. Excluded
	// unless the Platform enables hostDevices; deviceName as for gpus.
	HostDevices []Device `json:"hostDevices,omitempty"`
	// Confidential asks for memory encryption (SEV, SEV-SNP, TDX).
	// Confidential VMs are excluded from the platform baseline.
	Confidential string `json:"confidential,omitempty" enum:"SEV,SEV-SNP,TDX"`
	// WorkerNode marks a VM that runs a Kubernetes worker node (nested
	// clusters, hosted control planes): a conditional class of the
	// eligibility matrix.
	WorkerNode bool `json:"workerNode,omitempty"`
	// BackupBefore asks for a one-off backup of this VM before a risky
	// change, named by a label such as 2026-12-01-upgrade. It compiles into a
	// Velero Backup; remove the field once the backup is done (Argo CD does
	// not prune the Backup, so removing it from Git keeps the backup).
	BackupBefore string `json:"backupBefore,omitempty" pattern:"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$" hint:"a label of lowercase letters, digits, '-' and '.', such as 2026-12-01-upgrade"`
	// SnapshotBefore asks for a local safety point of this VM before a
	// risky change (an OS upgrade), named by a label such as
	// 2026-12-01-upgrade. It compiles into a KubeVirt VirtualMachineSnapshot
	// <vm>-<label> (CSI snapshots of every disk, kept on the storage system:
	// not a backup). Every disk's storage profile must have snapshots; an
	// image without the QEMU guest agent gives a crash-consistent snapshot
	// (a warning says so). Argo CD never prunes the snapshot: remove the
	// field once the change went well and delete the snapshot by hand.
	// `virtc restore-plan --snapshot <vm>-<label>` rolls the VM back to it.
	SnapshotBefore string `json:"snapshotBefore,omitempty" pattern:"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$" hint:"a label of lowercase letters, digits, '-' and '.', such as 2026-12-01-upgrade"`
	// Retired marks a VM being decommissioned: it compiles to a halted VM
	// (runStrategy Halted, so spec.runStrategy must be absent or Halted)
	// labelled virtc.dev/retired, and keeps its disks and backups. Only a
	// VM that is retired on the base branch may be removed (virtc diff
	// refuses the removal of any other).
	Retired bool `json:"retired,omitempty"`
	// Pool is a worker pool of the catalog the VM runs on: the sanctioned
	// way to choose nodes (raw nodeSelector, tolerations and affinity are
	// refused). Absent: the catalog's default pool. Without WorkerPools in
	// the catalog, VMs have no pool.
	Pool string `json:"pool,omitempty"`
	// Spread keeps this VM apart from the tenant's other VMs of the same
	// spread group (pod anti-affinity on the group's label).
	Spread *Spread `json:"spread,omitempty"`
	// Health asks for a liveness probe on the guest agent. A readiness
	// probe is added for every VM whose image runs the guest agent.
	Health *Health `json:"health,omitempty"`
	// Firmware keeps the SMBIOS identity of a VM that already runs (see
	// virtc import): absent, virtc derives the UUID and serial from the
	// namespace and name. KubeVirt v1.8.4's VM mutating webhook gives a VM
	// created without them a random UUID and serial
	// (pkg/virt-api/webhooks/mutating-webhook/mutators/vm-mutator.go:
	// setFirmwareDefaultsIfEmpty); guests license software and name
	// devices after them, so an adopted VM keeps its own.
	Firmware *Firmware `json:"firmware,omitempty"`
	// MACAddresses fixes the MAC address of interfaces, by network profile
	// name (a name of spec.networks, or of the default networks when
	// spec.networks is absent). Absent: KubeVirt picks one when the VM
	// starts (or KubeMacPool allocates one). Kept in a map beside
	// spec.networks, rather than making the list's entries objects, so that
	// spec.networks stays a list of names for every tool that reads it.
	MACAddresses map[string]string `json:"macAddresses,omitempty"`
	// ExistingRootDisk uses a root disk that already exists (an adopted VM's)
	// instead of cloning the image into a new one: the VM's root volume
	// refers to the DataVolume or PersistentVolumeClaim by name, and virtc
	// renders no dataVolumeTemplate and no claim for it. spec.image still
	// names the OS (its preference); spec.rootDisk, when set, is the disk's
	// size for the quota. The claim is not virtc's: deleting the intent
	// does not delete it.
	ExistingRootDisk *ExistingDisk `json:"existingRootDisk,omitempty"`
	// KubeVirtDefaults leaves parts of the VM to KubeVirt's defaults instead
	// of writing them, as a VM created by `virtctl create vm` does, so that
	// virtc's manifest matches it exactly (KubeVirt v1.8.4 sets
	// RestartRequired on any change of the VM's template spec, even one
	// that spells out the default). Set by virtc import; new VMs leave it
	// absent. disks: no spec.template.spec.domain.devices.disks (KubeVirt
	// gives each volume a virtio disk when the VM starts and boots the
	// first); networks: no interfaces or networks (KubeVirt attaches the pod
	// network through masquerade, autoattachPodInterface), so spec.networks
	// must be the catalog's pod network and macAddresses absent;
	// evictionStrategy: none written (the cluster's default applies: HCO
	// sets LiveMigrate), so spec.migration only informs virtc's checks;
	// bootloader: no bootloader written for a VM without a preference
	// (spec.preference none, spec.firmware.bootloader absent), as the
	// common templates for RHEL 8 and older guests write none: KubeVirt
	// v1.8.4 then boots an amd64 guest with BIOS
	// (pkg/virt-launcher/virtwrap/converter/compute/os.go configures EFI
	// only for an efi bootloader; only arm64 defaults to EFI,
	// pkg/defaults/arm64.go); serial: no SMBIOS serial written
	// (spec.template.spec.domain.firmware.serial), as a VM created before
	// KubeVirt v1.7 has none: its mutating webhook gives a serial to a VM
	// only when it is created (v1.8.4 pkg/virt-api/webhooks/mutating-webhook/
	// mutators/vm-mutator.go, setFirmwareDefaultsIfEmpty), so such a VM's
	// guest has never seen one.
	KubeVirtDefaults []string `json:"kubevirtDefaults,omitempty" enum:"disks,networks,evictionStrategy,bootloader,serial"`
	// RootDiskDevice is how the guest sees the root disk (its entry in
	// spec.template.spec.domain.devices.disks). Absent: a disk on the
	// preference's bus (KubeVirt's default, virtio, without one) that boots
	// first. virtc import sets it to keep an adopted VM's device as it runs:
	// a bus, serial or boot order the guest booted with is part of what it
	// sees (device names, the firmware's boot entries).
	RootDiskDevice *DiskDevice `json:"rootDiskDevice,omitempty"`
	// Interfaces spell the VM's network interfaces, by network profile name
	// (a name of spec.networks, or of the default networks when
	// spec.networks is absent): the NIC model, PCI address and ACPI index the
	// guest sees, and the interface's name. Absent: KubeVirt's defaults
	// (virtio, addresses assigned in order) and the profile's name. Kept
	// beside spec.networks, as spec.macAddresses is.
	Interfaces map[string]Interface `json:"interfaces,omitempty"`
	// SSHKeyGuestAgentUsers propagates the keys of spec.sshKeySecrets
	// through the QEMU guest agent into these guest users'
	// authorized_keys (KubeVirt's qemuGuestAgent propagation: the agent
	// rewrites them whenever the Secrets change, also while the VM runs;
	// `virtctl create vm --access-cred type:ssh` does this by default).
	// Absent: through cloud-init NoCloud, at first boot. The image must run
	// the guest agent, and an SELinux guest must allow it
	// (virt_qemu_ga_manage_ssh).
	SSHKeyGuestAgentUsers []string `json:"sshKeyGuestAgentUsers,omitempty"`
	// MatcherKinds spells the kinds of spec.instancetype and
	// spec.preference of the VirtualMachine. KubeVirt v1.8.4 reads an absent
	// or lower-case kind as the cluster-wide kind
	// (pkg/instancetype/find/spec.go),
	// but writes no default itself (no mutator code, no CRD default), so
	// writing a kind onto a VM that has none is a spec change. Absent:
	// VirtualMachineClusterInstancetype and VirtualMachineClusterPreference.
	MatcherKinds *MatcherKinds `json:"matcherKinds,omitempty"`
	// MachineType is the QEMU machine type the VM runs as
	// (spec.template.spec.domain.machine.type), for example
	// pc-q35-rhel9.6.0: the chipset version the guest sees. Absent: none
	// written; KubeVirt v1.8.4's VM mutator writes the cluster's default
	// when the VM is created (pkg/defaults/defaults.go
	// setVMDefaultMachineType), so a VM re-created after an upgrade may get
	// a newer one. virtc import sets it to the machine type the VM runs
	// with.
	MachineType string `json:"machineType,omitempty" pattern:"^[a-z0-9][a-z0-9._-]*$" hint:"a machine type such as pc-q35-rhel9.6.0"`
	// Subdomain is the guest's DNS subdomain (spec.template.spec.subdomain):
	// with a headless Service of that name in the namespace, the VM is
	// <hostname>.<subdomain>.<namespace>.svc, and the guest gets that
	// domain over DHCP. The console sets headless (with the template label
	// network.kubevirt.io/headlessService). Absent: none.
	Subdomain string `json:"subdomain,omitempty" pattern:"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$" hint:"a DNS label such as headless"`
	// Clock states the guest's clock offset. Absent: UTC (KubeVirt's
	// default).
	Clock *Clock `json:"clock,omitempty"`
	// Tablet adds a tablet input device named tablet on this bus (virtio
	// or usb), as forklift and the Windows templates do: the pointer
	// follows the console's VNC cursor. Absent: none.
	Tablet string `json:"tablet,omitempty" enum:"virtio,usb"`
	// Preference none writes no spec.preference: the VM states its guest
	// tuning itself, as a VM created from a curated VM template does (the
	// OpenShift console's "Create from template", which processes the
	// common templates of kubevirt/common-templates: they state CPU,
	// memory, devices, features, clock and firmware inline and name no
	// preference). Doc 000 (Runtime, storage, and network model) lets
	// "curated VM templates and instance types provide the permitted sizing
	// and operating-system patterns", so such a VM is judged by the same
	// policy as any other: its image is a catalog image, and that image's
	// preference still names the OS for virtc's checks (its requirements,
	// architecture, and the TPM and EFI state the quota counts), but the
	// VM gets none of its defaults: spec.firmware.bootloader must be
	// stated, and the disk bus, NIC model, features and clock are what the
	// intent states (KubeVirt's defaults otherwise). Absent: the image's
	// preference.
	Preference string `json:"preference,omitempty" enum:"none"`
	// RNG gives the guest a virtio entropy device
	// (spec.template.spec.domain.devices.rng: {}), as the Linux common
	// templates do. Absent: none.
	RNG bool `json:"rng,omitempty"`
	// TerminationGracePeriodSeconds is how long KubeVirt waits for the
	// guest to shut down before it stops it
	// (spec.template.spec.terminationGracePeriodSeconds): the common
	// templates write 180 for Linux and 3600 for Windows (a guest that
	// installs updates at shutdown). Absent: none written (the preference's
	// preferredTerminationGracePeriodSeconds, else KubeVirt's 30).
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// Features are the hypervisor features the guest sees
	// (spec.template.spec.domain.features: ACPI, APIC, the Hyper-V
	// enlightenments a Windows guest needs; SMM is spec.firmware.smm).
	// Absent: the preference's, else KubeVirt's defaults.
	Features *Features `json:"features,omitempty"`
	// CDROMs are read-only CD-ROMs of container disks the catalog approves
	// (ContainerDisk entries), such as the virtio-win drivers CD the
	// console mounts on a Windows VM. KubeVirt v1.8.4 pulls the image into
	// the VM's virt-launcher pod (pkg/virt-controller/services/template.go
	// with pkg/container-disk/container-disk.go) and the guest sees it as a
	// CD-ROM; nothing of it is persisted. Absent: none.
	CDROMs []CDROM `json:"cdroms,omitempty"`
}

// CDROM is a CD-ROM of a catalog container disk.
type CDROM struct {
	// Name of the disk and its volume inside the VM (the console names the
	// drivers CD windows-drivers-disk).
	Name string `json:"name" pattern:"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$" hint:"a DNS label such as windows-drivers-disk"`
	// ContainerDisk is a ContainerDisk of the catalog: an approved, digest-
	// pinned image with its provenance record.
	ContainerDisk string `json:"containerDisk"`
	// Bus is the CD-ROM's bus: sata or scsi (KubeVirt v1.8.4
	// pkg/storage/admitters/disks.go refuses a virtio CD-ROM on q35).
	// Absent: none written (KubeVirt picks its default bus when it creates
	// the VM instance).
	Bus string `json:"bus,omitempty" enum:"sata,scsi"`
	// BootOrder is its place in the firmware's boot order (see
	// DiskDevice.bootOrder). Absent: none.
	BootOrder *int64 `json:"bootOrder,omitempty"`
}

// ACPI spellings of Features.acpi.
const (
	ACPIOn        = "on"
	ACPIOff       = "off"
	ACPIUnwritten = "unwritten"
)

// Features are hypervisor features, as KubeVirt's Features.
type Features struct {
	// ACPI: on writes acpi: {} (ACPI on: how KubeVirt's Go types write it
	// whenever a VM has features, since kubevirt.io/api v1.8.4's
	// Features.ACPI is a struct that encoding/json never omits: forklift,
	// virtctl and the Windows common templates), off writes
	// acpi: {enabled: false}, unwritten writes no acpi (ACPI on, KubeVirt's
	// default: how the console writes a Linux template VM's features).
	// Absent: on, written whenever the VM has features (firmware SMM
	// included).
	ACPI string `json:"acpi,omitempty" enum:"on,off,unwritten"`
	// APIC states features.apic.
	APIC *FeatureState `json:"apic,omitempty"`
	// Hyperv states the Hyper-V enlightenments (features.hyperv).
	Hyperv *Hyperv `json:"hyperv,omitempty"`
}

// Hyperv are Hyper-V enlightenments, as KubeVirt's FeatureHyperv: each
// present entry is written, {} meaning on.
type Hyperv struct {
	// Relaxed: relaxed timing.
	Relaxed *FeatureState `json:"relaxed,omitempty"`
	// VAPIC: the virtual APIC assist.
	VAPIC *FeatureState `json:"vapic,omitempty"`
	// VPIndex: the virtual processor index.
	VPIndex *FeatureState `json:"vpindex,omitempty"`
	// Runtime: the processor runtime MSR.
	Runtime *FeatureState `json:"runtime,omitempty"`
	// SyNIC: the synthetic interrupt controller.
	SyNIC *FeatureState `json:"synic,omitempty"`
	// Reset: the Hyper-V reset MSR.
	Reset *FeatureState `json:"reset,omitempty"`
	// Frequencies: the TSC and APIC frequency MSRs.
	Frequencies *FeatureState `json:"frequencies,omitempty"`
	// Reenlightenment: re-enlightenment on migration.
	Reenlightenment *FeatureState `json:"reenlightenment,omitempty"`
	// IPI: paravirtual inter-processor interrupts.
	IPI *FeatureState `json:"ipi,omitempty"`
	// Spinlocks: spinlocks is the retry count (at least 4095; the Windows
	// templates write 8191).
	Spinlocks *Spinlocks `json:"spinlocks,omitempty"`
	// SyNICTimer: direct is the direct-mode timer the templates turn on.
	SyNICTimer *SyNICTimer `json:"synictimer,omitempty"`
	// TLBFlush: direct and extended are its sub-features.
	TLBFlush *TLBFlush `json:"tlbflush,omitempty"`
}

// Spinlocks is KubeVirt's FeatureSpinlocks.
type Spinlocks struct {
	// Enabled: absent means enabled.
	Enabled *bool `json:"enabled,omitempty"`
	// Retries is the spinlock retry count (KubeVirt's field spinlocks).
	Retries *int64 `json:"spinlocks,omitempty"`
}

// SyNICTimer is KubeVirt's SyNICTimer.
type SyNICTimer struct {
	// Enabled: absent means enabled.
	Enabled *bool `json:"enabled,omitempty"`
	// Direct states the direct-mode timer.
	Direct *FeatureState `json:"direct,omitempty"`
}

// TLBFlush is KubeVirt's TLBFlush.
type TLBFlush struct {
	// Enabled: absent means enabled.
	Enabled *bool `json:"enabled,omitempty"`
	// Direct states direct TLB flush.
	Direct *FeatureState `json:"direct,omitempty"`
	// Extended states extended TLB flush.
	Extended *FeatureState `json:"extended,omitempty"`
}

// Kind spellings of spec.matcherKinds.
const (
	// KindAbsent writes no kind.
	KindAbsent = "absent"
	// KindLowercase writes the resource's singular name
	// (virtualmachineclusterinstancetype, virtualmachineclusterpreference),
	// as forklift and `virtctl create vm --preference
	// virtualmachineclusterpreference/NAME` do.
	KindLowercase = "lowercase"
)

// MatcherKinds spells the kinds of a VM's instance type and preference
// references.
type MatcherKinds struct {
	// Instancetype: absent or lowercase. Absent: VirtualMachineClusterInstancetype.
	Instancetype string `json:"instancetype,omitempty" enum:"absent,lowercase"`
	// Preference: absent or lowercase. Absent: VirtualMachineClusterPreference.
	Preference string `json:"preference,omitempty" enum:"absent,lowercase"`
}

// Disk targets of DiskDevice.target.
const (
	// TargetDisk writes a disk target (disk: {bus: ...}).
	TargetDisk = "disk"
	// TargetUnset writes the entry with its name (and boot order) only.
	TargetUnset = "unset"
	// TargetNone writes no entry for the volume.
	TargetNone = "none"
)

// DiskDevice is how the guest sees a disk.
type DiskDevice struct {
	// Bus is virtio, scsi or sata. Absent: the preference's disk bus, else
	// virtio.
	Bus string `json:"bus,omitempty" enum:"virtio,scsi,sata"`
	// BootOrder is the disk's place in the firmware's boot order (1
	// first). 0 writes none: the firmware boots the first bootable device.
	// Absent: 1 for the root disk, none for other disks. Boot orders are
	// unique among a VM's disks.
	BootOrder *int64 `json:"bootOrder,omitempty"`
	// Serial is the disk's serial number as the guest sees it (forklift
	// keeps the source disk's). Absent: none.
	Serial string `json:"serial,omitempty"`
	// Target says how the device entry is written: disk (a disk target,
	// the default), unset (only the name and boot order: KubeVirt gives it
	// a disk target on the default bus when it creates the VM instance,
	// staging/src/kubevirt.io/api/core/v1/defaults.go
	// SetDefaults_DiskDevice) or none (no entry: KubeVirt adds one for a
	// volume without, pkg/util/util.go SetDefaultVolumeDisk). unset and
	// none take no bus or serial; none no boot order. They are the
	// spellings of `virtctl create vm` and the console: the guest sees the
	// same disk either way.
	Target string `json:"target,omitempty" enum:"disk,unset,none"`
}

// Interface spells one network interface.
type Interface struct {
	// Name of the interface and its network inside the VM. Absent: the
	// network profile's name. (forklift names them net-0, net-1, …; the
	// console nic-<adjective>-<animal>-<n>.)
	Name string `json:"name,omitempty" pattern:"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$" hint:"a DNS label such as net-0"`
	// Model is the NIC model the guest sees (KubeVirt v1.8.4
	// pkg/network/admitter/netiface.go: validInterfaceModels). Absent:
	// virtio.
	Model string `json:"model,omitempty" enum:"virtio,e1000e,e1000,igb,rtl8139,ne2k_pci,pcnet"`
	// PCIAddress fixes the interface's PCI address in the guest
	// (0000:03:00.0); guests name NICs after it. Absent: assigned in order.
	PCIAddress string `json:"pciAddress,omitempty" pattern:"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]$" hint:"a PCI address such as 0000:03:00.0"`
	// ACPIIndex is the interface's ACPI index (guests name it eno<index>).
	// Absent: none.
	ACPIIndex int64 `json:"acpiIndex,omitempty"`
	// State is the interface's link state as the guest sees it: up or
	// down (KubeVirt v1.8.4 InterfaceStateLinkUp/LinkDown; the console
	// writes up for a NIC it adds, forklift down for a source NIC that was
	// not connected). Absent: none written (up).
	State string `json:"state,omitempty" enum:"up,down"`
	// QualifiedNetworkName writes a bridge or localnet profile's Multus
	// network as <namespace>/<name> (as forklift does) instead of <name>:
	// the same NetworkAttachmentDefinition of the VM's namespace.
	QualifiedNetworkName bool `json:"qualifiedNetworkName,omitempty"`
}

// Parts of a VM that spec.kubevirtDefaults leaves to KubeVirt.
const (
	DefaultDisks            = "disks"
	DefaultNetworks         = "networks"
	DefaultEvictionStrategy = "evictionStrategy"
	DefaultBootloader       = "bootloader"
	DefaultSerial           = "serial"
)

// Firmware is a VM's SMBIOS identity and, for a VM that states them itself
// (an adopted one), the firmware it boots with and the devices that guard
// its boot. Absent boot fields leave them to the image's preference (its
// firmware, SMM and TPM). A guest installed for BIOS does not boot with EFI
// (nor the reverse), and one that sealed secrets in its TPM or enrolled
// Secure Boot keys needs the same again: virtc import keeps them as they
// run, and refuses a VM whose boot settings it cannot write.
type Firmware struct {
	// UUID is the SMBIOS system UUID (spec.template.spec.domain.firmware.uuid).
	UUID string `json:"uuid,omitempty" pattern:"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$" hint:"a UUID such as 5b2c7f4e-1d3a-4c8b-9e6f-0a1b2c3d4e5f"`
	// Serial is the SMBIOS system serial number
	// (spec.template.spec.domain.firmware.serial).
	Serial string `json:"serial,omitempty"`
	// Bootloader is bios or efi (spec.template.spec.domain.firmware.bootloader).
	// Absent: the preference's firmware, else BIOS.
	Bootloader string `json:"bootloader,omitempty" enum:"bios,efi"`
	// SecureBoot states efi.secureBoot (efi only). Absent: not written;
	// KubeVirt v1.8.4 then boots with Secure Boot
	// (pkg/virt-launcher/virtwrap/manager.go), which needs SMM, from
	// spec.firmware.smm or the preference (vmi-create-admitter.go refuses
	// Secure Boot without it).
	SecureBoot *bool `json:"secureBoot,omitempty"`
	// PersistentEFI states efi.persistent (efi only): EFI variables kept
	// on KubeVirt's backend-storage claim across restarts.
	PersistentEFI *bool `json:"persistentEFI,omitempty"`
	// SMM states spec.template.spec.domain.features.smm (System
	// Management Mode, which Secure Boot needs).
	SMM *FeatureState `json:"smm,omitempty"`
	// TPM states spec.template.spec.domain.devices.tpm.
	TPM *TPM `json:"tpm,omitempty"`
}

// HasTPM reports whether the firmware states an enabled TPM.
func (f *Firmware) HasTPM() bool {
	return f != nil && f.TPM != nil && (f.TPM.Enabled == nil || *f.TPM.Enabled)
}

// NeedsBackendStorage reports whether the firmware states what KubeVirt
// keeps on a backend-storage PVC: persistent EFI variables or a persistent
// TPM (as PreferenceSpec.NeedsBackendStorage for a preference).
func (f *Firmware) NeedsBackendStorage() bool {
	if f == nil {
		return false
	}
	persistentEFI := f.Bootloader == "efi" && f.PersistentEFI != nil && *f.PersistentEFI
	return persistentEFI || f.HasTPM() && f.TPM.Persistent != nil && *f.TPM.Persistent
}

// FeatureState switches a feature as KubeVirt's FeatureState does.
type FeatureState struct {
	// Enabled: absent means enabled (KubeVirt writes the feature as {}).
	Enabled *bool `json:"enabled,omitempty"`
}

// TPM is a VM's virtual TPM device, as KubeVirt's TPMDevice.
type TPM struct {
	// Enabled: false removes the TPM (forklift writes it for guests whose
	// vTPM it cannot carry over). Absent: enabled.
	Enabled *bool `json:"enabled,omitempty"`
	// Persistent keeps the TPM's state on KubeVirt's backend-storage claim
	// across restarts (BitLocker, measured boot).
	Persistent *bool `json:"persistent,omitempty"`
}

// Clock is the guest's real-time clock offset.
type Clock struct {
	// Timezone the guest's clock starts in (an IANA name such as UTC or
	// Europe/Berlin), as forklift writes the source host's. Exclusive with
	// utc.
	Timezone string `json:"timezone,omitempty" pattern:"^[A-Za-z0-9_+/-]+$" hint:"an IANA time zone such as UTC or Europe/Berlin"`
	// UTC states the clock offset as UTC (clock.utc: {}, as the Windows
	// common templates write it), offsetSeconds from it if set.
	UTC *ClockUTC `json:"utc,omitempty"`
	// Timer are the guest's timers as KubeVirt's clock.timer: hpet, kvm,
	// pit, rtc and hyperv (the Windows templates turn hpet off, and set
	// pit delay and rtc catchup tick policies).
	Timer *Timers `json:"timer,omitempty"`
}

// ClockUTC is KubeVirt's ClockOffsetUTC.
type ClockUTC struct {
	// OffsetSeconds from UTC. Absent: none.
	OffsetSeconds *int64 `json:"offsetSeconds,omitempty"`
}

// Timers are KubeVirt's clock timers.
type Timers struct {
	// HPET is the high precision event timer.
	HPET *Timer `json:"hpet,omitempty"`
	// KVM is the KVM paravirtual clock.
	KVM *Timer `json:"kvm,omitempty"`
	// PIT is the programmable interval timer.
	PIT *Timer `json:"pit,omitempty"`
	// RTC is the real-time clock.
	RTC *Timer `json:"rtc,omitempty"`
	// Hyperv is the Hyper-V reference time counter.
	Hyperv *Timer `json:"hyperv,omitempty"`
}

// Timer is one clock timer.
type Timer struct {
	// TickPolicy: what the timer does with missed ticks (hpet, pit and rtc
	// only; KubeVirt's HPETTickPolicy, PITTickPolicy, RTCTickPolicy).
	TickPolicy string `json:"tickPolicy,omitempty" enum:"delay,catchup,merge,discard"`
	// Present: false removes the timer. Absent: present.
	Present *bool `json:"present,omitempty"`
}

// ExistingDisk names a disk that exists already: exactly one of
// dataVolume and persistentVolumeClaim.
type ExistingDisk struct {
	// DataVolume is a CDI DataVolume in the VM's namespace; the VM's volume
	// is a dataVolume volume (as KubeVirt wrote it for a dataVolumeTemplate).
	DataVolume string `json:"dataVolume,omitempty"`
	// PersistentVolumeClaim is a claim in the VM's namespace; the VM's
	// volume is a persistentVolumeClaim volume.
	PersistentVolumeClaim string `json:"persistentVolumeClaim,omitempty"`
	// VolumeName is the name of the disk and volume inside the VM.
	// Absent: rootdisk.
	VolumeName string `json:"volumeName,omitempty"`
}

// Disk is a data disk.
type Disk struct {
	// Name of the disk inside the VM; its PersistentVolumeClaim is named
	// <vm>-<name>.
	Name string `json:"name"`
	// Size of the disk. A disk can grow, never shrink.
	Size resource.Quantity `json:"size"`
	// Storage is a storage profile of the catalog. Absent: the catalog's
	// default profile.
	Storage string `json:"storage,omitempty"`
	// Retired detaches the disk from its VM (at the VM's next restart)
	// and keeps its PersistentVolumeClaim, labelled virtc.dev/retired. Only a disk
	// that is retired on the base branch may be removed from the VM
	// (virtc diff refuses the removal of any other).
	Retired bool `json:"retired,omitempty"`
	// ExistingClaim attaches a PersistentVolumeClaim that already exists
	// (an adopted VM's disk) as a persistentVolumeClaim volume, instead of
	// a claim named <vm>-<name> that virtc writes. virtc does not write or
	// resize the claim; size is its size for the quota.
	ExistingClaim string `json:"existingClaim,omitempty"`
	// ExistingDataVolume attaches a CDI DataVolume that already exists as a
	// dataVolume volume (how KubeVirt refers to a disk created from a
	// dataVolumeTemplate or hot-plugged with virtctl addvolume). virtc does
	// not write the DataVolume. Exclusive with existingClaim.
	ExistingDataVolume string `json:"existingDataVolume,omitempty"`
	// Hotpluggable marks a disk hot-plugged into the running VM (virtctl
	// addvolume, which KubeVirt v1.8.4 persists in the VM's spec): KubeVirt
	// attaches it through a hot-plug pod, on the scsi or virtio bus. virtc
	// writes such disks after the cloud-init disk, where KubeVirt appended
	// them. Set by virtc import; only with an existing claim or DataVolume.
	Hotpluggable bool `json:"hotpluggable,omitempty"`
	// Bus is the disk's bus (virtio, scsi or sata). Absent: the
	// preference's disk bus, else KubeVirt's default (virtio). Set by virtc
	// import to keep an adopted VM's.
	Bus string `json:"bus,omitempty" enum:"virtio,scsi,sata"`
	// Serial is the disk's serial number as the guest sees it (virtctl
	// addvolume sets the volume's name). Absent: none.
	Serial string `json:"serial,omitempty"`
	// BootOrder is the disk's place in the firmware's boot order (see
	// DiskDevice.bootOrder). Absent: none.
	BootOrder *int64 `json:"bootOrder,omitempty"`
	// Target says how the disk's device entry is written (see
	// DiskDevice.target). Absent: disk.
	Target string `json:"target,omitempty" enum:"disk,unset,none"`
}

// CloudInit names where the guest's cloud-init data comes from: Secrets in
// the VM's namespace, or inline data free of secrets.
type CloudInit struct {
	// UserDataSecret names a Secret with the key "userdata".
	UserDataSecret string `json:"userDataSecret,omitempty"`
	// NetworkDataSecret names a Secret with the key "networkdata".
	NetworkDataSecret string `json:"networkDataSecret,omitempty"`
	// UserData is inline cloud-config, accepted only when it holds no
	// secret material (passwords, password hashes, private keys, tokens):
	// anything secret belongs in userDataSecret.
	UserData string `json:"userData,omitempty"`
	// UserDataEncoding base64 writes userData base64-encoded
	// (cloudInitNoCloud.userDataBase64), as `virtctl create vm
	// --cloud-init-user-data` does. The intent holds it decoded, checked like
	// any inline user data. Absent: plain text.
	UserDataEncoding string `json:"userDataEncoding,omitempty" enum:"base64"`
	// Device is how the guest sees the cloud-init disk (bus and target; no
	// boot order). Absent: a disk on the preference's bus.
	Device *DiskDevice `json:"device,omitempty"`
}
