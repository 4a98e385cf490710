package api

import "k8s.io/apimachinery/pkg/api/resource"

// Size is an instance type: a number of vCPUs and an amount of memory. VMs
// reference it as a VirtualMachineClusterInstancetype of the same name.
type Size struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta `json:"metadata"`
	Spec     SizeSpec   `json:"spec"`
}

// SizeSpec is the shape of an instance type.
type SizeSpec struct {
	// CPU is the number of vCPUs of the guest.
	CPU int64 `json:"cpu"`
	// Memory is the guest memory.
	Memory resource.Quantity `json:"memory"`
	// Builtin marks a size that OpenShift Virtualization already installs
	// (KubeVirt's common-instancetypes, such as the u1 series): virtc
	// references it and does not emit it. Other sizes are published as
	// VirtualMachineClusterInstancetype objects. A published size is
	// immutable: change its shape under a new name.
	Builtin bool `json:"builtin,omitempty"`
	// Restricted sizes are usable only by tenants that allow them by name
	// or pattern in spec.allow.sizes.
	Restricted bool `json:"restricted,omitempty"`
	// DedicatedCPU pins each vCPU to a host CPU, with an isolated emulator
	// thread (the cx1, d1, n1 and rt1 series).
	// Excluded from the platform baseline unless the Platform enables
	// dedicatedCPU.
	DedicatedCPU bool `json:"dedicatedCPU,omitempty"`
	// Hugepages backs guest memory with huge pages of this size (the cx1,
	// m1, n1 and rt1 series). Excluded unless the Platform enables hugepages.
	Hugepages string `json:"hugepages,omitempty" enum:"2Mi,1Gi"`
	// GPUs are passed through to the guest. Excluded unless the Platform
	// enables gpu.
	GPUs []Device `json:"gpus,omitempty"`
	// MemoryOvercommitPercent lets the launcher pod request that much less
	// memory than the guest has (the o1 series: 50). KubeVirt sets the
	// pod's memory request to guest × (1 − percent/100).
	MemoryOvercommitPercent int64 `json:"memoryOvercommitPercent,omitempty"`
	// Inline writes the size into each VM that uses it
	// (spec.template.spec.domain.cpu and memory.guest) instead of referring
	// to a VirtualMachineClusterInstancetype, and virtc publishes no
	// instance type for it. For VMs adopted from before instance types
	// (virtc import writes such sizes): KubeVirt v1.8.4 sets RestartRequired
	// when a running VM's template changes, so giving it an instance type
	// would restart it. New sizes leave it absent. Not with dedicatedCPU,
	// hugepages, gpus or memoryOvercommitPercent.
	Inline *InlineShape `json:"inline,omitempty"`
}

// InlineShape is the CPU topology an inline size writes, as the adopted VM
// states it: sockets × cores × threads must be the size's cpu. Absent
// fields are not written (KubeVirt's default is 1); all absent writes no
// spec.template.spec.domain.cpu at all, for a VM of 1 vCPU.
type InlineShape struct {
	// Sockets is domain.cpu.sockets.
	Sockets int64 `json:"sockets,omitempty"`
	// Cores is domain.cpu.cores.
	Cores int64 `json:"cores,omitempty"`
	// Threads is domain.cpu.threads.
	Threads int64 `json:"threads,omitempty"`
}

// VCPUs is the number of vCPUs the shape gives.
func (s InlineShape) VCPUs() int64 {
	n := int64(1)
	for _, v := range []int64{s.Sockets, s.Cores, s.Threads} {
		if v > 0 {
			n *= v
		}
	}
	return n
}

// Device is a host device passed through to a guest.
type Device struct {
	// Name of the device in the guest's spec.
	Name string `json:"name"`
	// DeviceName is the resource name the cluster advertises (for example
	// nvidia.com/GA102GL_A10).
	DeviceName string `json:"deviceName"`
}

// Preference tunes VMs for a guest OS. VMs reference it as a
// VirtualMachineClusterPreference of the same name, through their image.
type Preference struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Spec     PreferenceSpec `json:"spec,omitempty"`
}

// PreferenceSpec is the subset of a VirtualMachineClusterPreference that
// virtc publishes, and the facts of a builtin preference that decide what a
// VM using it needs and costs. The builtin preferences are generated from
// the common-instancetypes bundle KubeVirt deploys (catalog/
// common-instancetypes.yaml).
type PreferenceSpec struct {
	// Builtin marks a preference that OpenShift Virtualization already
	// installs (common-preferences such as rhel.9): referenced, not emitted.
	Builtin bool `json:"builtin,omitempty"`
	// DiskBus is the preferred bus of disks: virtio, sata or scsi.
	DiskBus string `json:"diskBus,omitempty" enum:"virtio,sata,scsi"`
	// InterfaceModel is the preferred NIC model: virtio, or an emulated
	// model for guests without virtio drivers (e1000e, e1000, rtl8139).
	InterfaceModel string `json:"interfaceModel,omitempty" enum:"virtio,e1000e,e1000,rtl8139"`
	// Firmware is bios, efi or efi-secureboot (UEFI with Secure Boot, which
	// also turns on SMM). Absent: KubeVirt's default, BIOS.
	Firmware string `json:"firmware,omitempty" enum:"bios,efi,efi-secureboot"`
	// PersistentEFI keeps the UEFI variable store (NVRAM) across restarts
	// (preferredEfi.persistent). Needs firmware efi or efi-secureboot.
	// KubeVirt then keeps the VM's state on a backend-storage PVC of 10Mi
	// in the VM's namespace, on the HyperConverged's vmStateStorageClass:
	// the tenant's quota counts it.
	PersistentEFI bool `json:"persistentEFI,omitempty"`
	// TPM gives the guest an emulated TPM 2.0 (swtpm, which adds 53Mi to
	// the virt-launcher pod's memory): transient (state lost at restart) or
	// persistent (state on the backend-storage PVC, as persistentEFI;
	// Windows 11 and Server 2022/2025 need it for BitLocker and Secure
	// Boot). Absent: no TPM.
	TPM string `json:"tpm,omitempty" enum:"transient,persistent"`
	// CPUTopology spreads vCPUs as sockets, cores, threads or spread.
	CPUTopology string `json:"cpuTopology,omitempty" enum:"sockets,cores,threads,spread"`
	// Architecture is the CPU architecture the preference is made for
	// (amd64, arm64, s390x): VMs using it get this spec.architecture.
	// Absent: amd64. On arm64 KubeVirt adds 128Mi to the launcher's memory
	// for the UEFI flash devices.
	Architecture string `json:"architecture,omitempty" enum:"amd64,arm64,s390x"`
	// Requirements are the smallest size the guest OS runs on. KubeVirt
	// refuses a VM whose instance type is below them; virtc refuses it at
	// the VM's spec.size and names the sizes that fit.
	Requirements *PreferenceRequirements `json:"requirements,omitempty"`
}

// PreferenceRequirements are a preference's minimum vCPUs and memory
// (spec.requirements of a VirtualMachineClusterPreference).
type PreferenceRequirements struct {
	// CPU is the minimum number of vCPUs.
	CPU int64 `json:"cpu,omitempty"`
	// Memory is the minimum guest memory.
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// NeedsBackendStorage reports whether KubeVirt keeps state of VMs with
// this preference on a backend-storage PVC (persistent EFI or TPM).
func (p PreferenceSpec) NeedsBackendStorage() bool {
	return p.PersistentEFI || p.TPM == TPMPersistent
}

// TPM modes of a preference.
const (
	TPMTransient  = "transient"
	TPMPersistent = "persistent"
)

// Image is an OS image that VMs' root disks are cloned from.
type Image struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta `json:"metadata"`
	Spec     ImageSpec  `json:"spec"`
}

// ImageSpec says where an image comes from and how VMs use it. Exactly one
// of dataSource, registry and http is set.
type ImageSpec struct {
	// DataSource is an existing golden-image DataSource (for example one of
	// Red Hat's, which OpenShift Virtualization imports itself).
	DataSource *DataSourceRef `json:"dataSource,omitempty"`
	// Registry imports the image from a container registry, pinned by
	// digest, into a DataVolume and a DataSource (named like the image) in
	// the golden-image namespace; VMs clone the DataSource.
	Registry *RegistrySource `json:"registry,omitempty"`
	// HTTP imports the image from a URL, verified by its checksum, into a
	// DataVolume and DataSource in the golden-image namespace.
	HTTP *HTTPSource `json:"http,omitempty"`
	// Preference is the VirtualMachineClusterPreference for the OS (for
	// example rhel.9).
	Preference string `json:"preference"`
	// MinRootDisk is the smallest root disk the image fits on.
	MinRootDisk resource.Quantity `json:"minRootDisk"`
	// DefaultRootDisk is the root disk size when a VM names none. Absent:
	// MinRootDisk.
	DefaultRootDisk *resource.Quantity `json:"defaultRootDisk,omitempty"`
	// Restricted images are usable only by tenants that allow them by name
	// in spec.allow.images.
	Restricted bool `json:"restricted,omitempty"`
	// Provenance is the image's provenance record: where the image comes
	// from, who approved it and where its scan is (a URL or a reference
	// such as a ticket). Doc 000 ("Runtime, storage, and network model",
	// Images and provisioning): sources must be "approved, scanned where
	// the platform standard requires it, versioned, and traceable to a
	// provenance record". A production VM's image must have one.
	Provenance string `json:"provenance,omitempty"`
	// GuestAgent: the guest runs the QEMU guest agent. VMs from the image
	// get a readiness probe on it (guestAgentPing), and a liveness probe
	// when they ask for one (spec.health.liveness). KubeVirt also freezes
	// the guest's file systems through it for a VirtualMachineSnapshot, and
	// Velero's backup hooks do the same for a backup, so both are
	// filesystem-consistent; without it they are crash-consistent (the
	// snapshot's status says NoGuestAgent), and spec.snapshotBefore warns.
	GuestAgent bool `json:"guestAgent,omitempty"`
}

// ContainerDisk is a container disk image that VMs may mount as a CD-ROM
// (spec.cdroms), such as the virtio-win drivers CD: catalog data, approved
// like an Image. KubeVirt v1.8.4 pulls it into each VM's virt-launcher pod
// (an init container copies the disk's binary, a container serves the
// image: pkg/virt-controller/services/template.go and
// pkg/container-disk/container-disk.go), so nothing of it is stored in the
// tenant's namespace and no quota is counted for it beyond the launcher.
type ContainerDisk struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta        `json:"metadata"`
	Spec     ContainerDiskSpec `json:"spec"`
}

// ContainerDiskSpec is where a container disk comes from.
type ContainerDiskSpec struct {
	// Image is the container image, pinned by digest
	// (host/path@sha256:<64 hex digits>): a tag can change under the same
	// name.
	Image string `json:"image" pattern:"^[^@ :/]+(:[0-9]+)?/[^@ ]+@sha256:[0-9a-f]{64}$" hint:"pin the image by digest: host/path@sha256:<64 hex digits>"`
	// Provenance is the image's provenance record, as an Image's (doc 000,
	// Images and provisioning: sources must be approved and traceable to a
	// provenance record).
	Provenance string `json:"provenance"`
	// Restricted container disks are usable only by tenants that allow them
	// by name in spec.allow.images.
	Restricted bool `json:"restricted,omitempty"`
}

// RegistrySource is a container disk image pinned by digest.
type RegistrySource struct {
	// URL is docker://host/path@sha256:<64 hex digits>. A tag is not
	// accepted: it can change under the same name.
	URL string `json:"url" pattern:"^docker://[^@ ]+@sha256:[0-9a-f]{64}$" hint:"pin the image by digest: docker://host/path@sha256:<64 hex digits> (a tag can change under the same name)"`
	// Schedule is deprecated and has no effect (a warning says so): an
	// image pinned by digest never changes, so it is imported once, never
	// polled.
	Schedule string `json:"schedule,omitempty"`
}

// HTTPSource is a disk image on an HTTP(S) server.
type HTTPSource struct {
	// URL of the image (https:// or http://).
	URL string `json:"url" pattern:"^https?://[^ ]+$" hint:"an http:// or https:// URL"`
	// Checksum verifies the download: sha256:<hex> or sha512:<hex>.
	Checksum string `json:"checksum" pattern:"^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$" hint:"the image's digest: sha256:<64 hex digits> or sha512:<128 hex digits>"`
}

// DataSourceRef names a CDI DataSource.
type DataSourceRef struct {
	// Name of the DataSource.
	Name string `json:"name"`
	// Namespace of the DataSource. Absent: the platform's golden-image
	// namespace (openshift-virtualization-os-images).
	Namespace string `json:"namespace,omitempty"`
	// ManagedBy HyperConverged marks one of HyperConverged's common boot
	// sources (rhel9, fedora, …: the release's commonBootImages in the
	// golden-image namespace). It is not pinned: its DataImportCron polls
	// a tag and re-points the DataSource at every new image, so VMs clone
	// whatever was imported last (the digest is in the DataImportCron's
	// status.currentImports, not in Git). virtc warns about an unmarked
	// reference to such a DataSource and refuses the mark on any other.
	ManagedBy string `json:"managedBy,omitempty" enum:"HyperConverged"`
}

// ManagedByHyperConverged is the DataSourceRef.ManagedBy of HyperConverged's
// common boot sources.
const ManagedByHyperConverged = "HyperConverged"

// Network profile types.
const (
	NetworkPod        = "pod"
	NetworkBridge     = "bridge"
	NetworkLocalnet   = "localnet"
	NetworkUDNPrimary = "udn-primary"
	NetworkSRIOV      = "sriov"
)

// NetworkProfile is a network VMs can attach to.
type NetworkProfile struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta         `json:"metadata"`
	Spec     NetworkProfileSpec `json:"spec"`
}

// NetworkProfileSpec describes a network.
type NetworkProfileSpec struct {
	// Type of the network:
	//   - pod: the cluster's pod network, masquerade binding;
	//   - bridge: a Linux bridge on the nodes, optionally on a VLAN, through a
	//     NetworkAttachmentDefinition in each tenant namespace allowed to use it;
	//   - localnet: an OVN-Kubernetes localnet (a physical network, optionally
	//     a VLAN) through a ClusterUserDefinedNetwork selecting the allowed
	//     tenant namespaces;
	//   - udn-primary: a namespace-scoped Layer2 UserDefinedNetwork that
	//     replaces the pod network as the VMs' primary network. Every VM of the
	//     tenant must then use it as its first network, and cluster-native
	//     features that assume the pod network (Services reaching pods by the
	//     cluster network, the default network policies) apply to the UDN instead.
	//   - sriov: an SR-IOV virtual function through the NetworkAttachmentDefinition
	//     of that name that the SR-IOV operator creates. Excluded from the
	//     baseline unless the Platform enables sriov.
	Type string `json:"type" enum:"pod,bridge,localnet,udn-primary,sriov"`
	// Migratable says whether VMs on this network can live-migrate (their
	// addresses survive the move).
	Migratable bool `json:"migratable,omitempty"`
	// Evidence lists what must be shown before a production VM may use
	// this network (for example a failover test), for `virtc report`.
	Evidence []EvidenceRequirement `json:"evidence,omitempty"`
	// Bridge configures a bridge profile.
	Bridge *BridgeNetwork `json:"bridge,omitempty"`
	// Localnet configures a localnet profile.
	Localnet *LocalnetNetwork `json:"localnet,omitempty"`
	// Layer2 configures a udn-primary profile.
	Layer2 *Layer2Network `json:"layer2,omitempty"`
	// Restricted is deprecated and has no effect (a warning says so):
	// every additional network (any type but pod) is restricted. The
	// target architecture offers additional networks "only for approved
	// workload needs" and "not enabled by default" (doc 000, "Runtime,
	// storage, and network model" and the workload eligibility matrix), so
	// such a profile reaches only the tenants that list it in
	// spec.allow.networks: its attachment is rendered into their
	// namespaces alone, and VMs of other tenants are refused. The pod
	// network (OVN masquerade, the general default) is open to every
	// tenant.
	Restricted bool `json:"restricted,omitempty"`
	// Draft marks a profile that is not promoted yet (doc 000, "Acceptance
	// evidence": before a profile is promoted beyond draft, capture evidence
	// for the exact 4.22.z combination). Production VMs may not use a draft
	// profile; VMs of the standard tier may, to gather that evidence.
	// Promote it by removing draft once its evidence is recorded: from then
	// on production VMs on it need that evidence on the platform's exact
	// version. virtc report lists the draft profiles.
	Draft bool `json:"draft,omitempty"`
}

// Additional reports whether the profile is an additional network (any
// type but the pod network): usable only by tenants that allow it by name
// in spec.allow.networks.
func (s NetworkProfileSpec) Additional() bool { return s.Type != NetworkPod }

// BridgeNetwork is a Linux bridge on the nodes.
type BridgeNetwork struct {
	// Name of the bridge on the nodes (for example br1).
	Name string `json:"name"`
	// VLAN tag (1-4094). Absent: untagged.
	VLAN *int64 `json:"vlan,omitempty"`
	// IPRange makes the profile a live-migration network: pods attached to
	// it get addresses from this whereabouts IPAM range (a CIDR such as
	// 10.200.5.0/24 with an address for every workload node, overlapping no
	// other network of the cluster). The Platform's liveMigration.network
	// must name such a profile: virt-handler cannot start without an
	// address on its migration interface, and every workload node needs
	// the bridge (on the VLAN). VMs bring their own addresses
	// and never attach to a migration network: a profile with an ipRange is
	// refused on VMs and gets no attachment in tenant namespaces.
	IPRange string `json:"ipRange,omitempty"`
}

// LocalnetNetwork is an OVN-Kubernetes localnet.
type LocalnetNetwork struct {
	// PhysicalNetworkName is the bridge mapping name configured on the nodes
	// (NodeNetworkConfigurationPolicy ovn.bridge-mappings localnet).
	PhysicalNetworkName string `json:"physicalNetworkName"`
	// VLAN access tag (1-4094). Absent: untagged.
	VLAN *int64 `json:"vlan,omitempty"`
	// MTU of the network. Absent: OVN-Kubernetes' default.
	MTU *int64 `json:"mtu,omitempty"`
}

// Layer2Network is the primary Layer2 network of a tenant namespace.
type Layer2Network struct {
	// Subnets of the network, as CIDRs.
	Subnets []string `json:"subnets"`
}

// Volume and access modes of storage profiles.
const (
	VolumeModeBlock      = "Block"
	VolumeModeFilesystem = "Filesystem"
	AccessRWX            = "ReadWriteMany"
	AccessRWO            = "ReadWriteOnce"
)

// StorageProfile is a kind of disk storage.
type StorageProfile struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta         `json:"metadata"`
	Spec     StorageProfileSpec `json:"spec"`
}

// StorageProfileSpec describes how disks on this storage are provisioned.
type StorageProfileSpec struct {
	// StorageClass is the Kubernetes StorageClass of the PVCs.
	StorageClass string `json:"storageClass"`
	// VolumeMode is Block or Filesystem.
	VolumeMode string `json:"volumeMode" enum:"Block,Filesystem"`
	// AccessMode is ReadWriteMany (needed for live migration) or
	// ReadWriteOnce.
	AccessMode string `json:"accessMode" enum:"ReadWriteMany,ReadWriteOnce"`
	// Default marks the profile disks use when they name none. Exactly one
	// profile of the catalog is the default.
	Default bool `json:"default,omitempty"`
	// FilesystemOverhead is the share of a Filesystem-mode volume that the
	// file system takes (CDI's default is 0.055): the PVC is that much larger
	// than the disk, and quota counts the PVC. On a Block profile it applies
	// only to the VM-state PVCs KubeVirt creates on the class, which are
	// always Filesystem (see the Platform's vmStateStorage).
	FilesystemOverhead string `json:"filesystemOverhead,omitempty"`
	// Snapshots says whether the class has a VolumeSnapshotClass: backups of
	// disks on it use CSI snapshots.
	Snapshots bool `json:"snapshots,omitempty"`
	// Evidence lists what must be shown before a production VM may depend on
	// this storage (for example a planned migration and maintenance test).
	Evidence []EvidenceRequirement `json:"evidence,omitempty"`
	// Restricted profiles are usable only by tenants that allow them in
	// spec.allow.storage.
	Restricted bool `json:"restricted,omitempty"`
	// Draft marks a profile that is not promoted yet (doc 000, "Acceptance
	// evidence": before a profile is promoted beyond draft, capture evidence
	// for the exact 4.22.z combination). Production VMs may not use a draft
	// profile; VMs of the standard tier may, to gather that evidence.
	// Promote it by removing draft once its evidence is recorded: from then
	// on production VMs on it need that evidence on the platform's exact
	// version. virtc report lists the draft profiles.
	Draft bool `json:"draft,omitempty"`
	// Qualified says the platform team qualified the profile's
	// StorageClass as the eligibility matrix's storage for VM disks (design
	// document 000: "qualified RBD raw-block"), for the exact 4.22.z the
	// Platform pins. Only a qualified profile with volumeMode Block keeps a
	// VM in the standard class; a disk on any other profile places the VM
	// in the conditional class unqualified-storage, which needs a
	// storage-validation Evidence of the profile before onboarding. A
	// qualified profile names the evidence that qualifies it in Evidence
	// (production VMs on it then need it), or it is refused. Absent:
	// false.
	Qualified bool `json:"qualified,omitempty"`
}

// Backup methods of a BackupPolicy (spec.method).
const (
	BackupDataMover = "DataMover"
	BackupSnapshot  = "Snapshot"
)

// BackupPolicy is how often and how long a VM is backed up.
type BackupPolicy struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta       `json:"metadata"`
	Spec     BackupPolicySpec `json:"spec"`
}

// BackupPolicySpec describes a backup schedule.
type BackupPolicySpec struct {
	// Schedule is a cron expression (UTC). Absent: the policy takes no
	// backups (as the policy "none").
	Schedule string `json:"schedule,omitempty"`
	// Retention is how long each backup is kept, as a duration (720h).
	Retention string `json:"retention,omitempty"`
	// Default marks the policy of tenants that name none.
	Default bool `json:"default,omitempty"`
	// StorageLocation names the Platform's storage location the backups go
	// to. Absent: the default location.
	StorageLocation string `json:"storageLocation,omitempty"`
	// Method is how disks are captured: DataMover (a CSI snapshot whose data
	// the node agent copies to the object store, so the backup survives the
	// loss of the storage system; the default) or Snapshot (a CSI snapshot
	// that stays on the storage system: lost with it, so not a backup, and
	// refused for production VMs). Both start from a CSI snapshot: a disk
	// on a storage profile without snapshots cannot be captured (refused
	// for production VMs, warned for others).
	Method string `json:"method,omitempty" enum:"DataMover,Snapshot"`
	// Evidence lists what must be shown before production VMs rely on this
	// policy (for example a restore drill).
	Evidence []EvidenceRequirement `json:"evidence,omitempty"`
	// DrillInterval is how long the evidence of this policy's checks (its
	// restore drill) counts, as a duration (90d, 12w, 2160h): older
	// evidence has expired and the drill must be done again. Absent: it
	// does not expire.
	DrillInterval string `json:"drillInterval,omitempty"`
}
