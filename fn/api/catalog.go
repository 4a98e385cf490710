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
	// references it and does not emit it.
	Builtin bool `json:"builtin,omitempty"`
}

// Image is an OS image that VMs' root disks are cloned from.
type Image struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta `json:"metadata"`
	Spec     ImageSpec  `json:"spec"`
}

// ImageSpec says where an image comes from and how VMs use it.
type ImageSpec struct {
	// DataSource is the golden-image DataSource the root disk is cloned from.
	DataSource DataSourceRef `json:"dataSource"`
	// Preference is the VirtualMachineClusterPreference for the OS (for
	// example rhel.9).
	Preference string `json:"preference"`
	// MinRootDisk is the smallest root disk the image fits on.
	MinRootDisk resource.Quantity `json:"minRootDisk"`
	// DefaultRootDisk is the root disk size when a VM names none. Absent:
	// MinRootDisk.
	DefaultRootDisk *resource.Quantity `json:"defaultRootDisk,omitempty"`
}

// DataSourceRef names a CDI DataSource.
type DataSourceRef struct {
	// Name of the DataSource.
	Name string `json:"name"`
	// Namespace of the DataSource. Absent: the platform's golden-image
	// namespace (openshift-virtualization-os-images).
	Namespace string `json:"namespace,omitempty"`
}

// Network profile types.
const (
	NetworkPod = "pod"
)

// NetworkProfile is a network VMs can attach to.
type NetworkProfile struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta         `json:"metadata"`
	Spec     NetworkProfileSpec `json:"spec"`
}

// NetworkProfileSpec describes a network.
type NetworkProfileSpec struct {
	// Type of the network: pod (the cluster's pod network, masquerade
	// binding).
	Type string `json:"type" enum:"pod"`
	// Migratable says whether VMs on this network can live-migrate (their
	// addresses survive the move).
	Migratable bool `json:"migratable,omitempty"`
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
	// than the disk, and quota counts the PVC. Ignored for Block.
	FilesystemOverhead string `json:"filesystemOverhead,omitempty"`
}

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
}
