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
	// Access lists the groups bound, in this namespace only, to the admin,
	// edit and view roles of Kubernetes and KubeVirt.
	Access TenantAccess `json:"access,omitempty"`
	// Quota bounds the tenant in VM terms. virtc translates it into pod terms
	// (what KubeVirt's virt-launcher pods request). Absent: the quota is
	// derived from the tenant's VMs, so that exactly they fit.
	Quota *TenantQuota `json:"quota,omitempty"`
	// Backup is the default backup policy (a BackupPolicy of the catalog) for
	// this tenant's VMs. Absent: the catalog's default policy.
	Backup string `json:"backup,omitempty"`
	// Allow restricts what the tenant's VMs may use. Absent lists allow
	// every catalog entry that is not marked restricted.
	Allow *TenantAllow `json:"allow,omitempty"`
	// Tier of the tenant's VMs: production VMs must have a backup policy
	// that takes backups. Absent: standard.
	Tier string `json:"tier,omitempty" enum:"production,standard"`
	// Retired marks a tenant being decommissioned: every VM of a retired
	// tenant must be retired too, and its Namespace is labelled
	// virtc.dev/retired. Only a tenant that is retired on the base branch
	// may be removed (virtc diff refuses the removal of any other).
	Retired bool `json:"retired,omitempty"`
}

// TenantAllow lists the catalog entries a tenant may use.
type TenantAllow struct {
	// Sizes are size names or glob patterns (u1.*, cx1.?large).
	Sizes []string `json:"sizes,omitempty"`
	// Images are image names.
	Images []string `json:"images,omitempty"`
	// Networks are network profile names.
	Networks []string `json:"networks,omitempty"`
	// Storage are storage profile names.
	Storage []string `json:"storage,omitempty"`
	// Pools are worker pool names.
	Pools []string `json:"pools,omitempty"`
}

// TenantAccess lists group names per role.
type TenantAccess struct {
	// Admin groups may manage everything in the namespace, RBAC included.
	Admin []string `json:"admin,omitempty"`
	// Edit groups may create, change and delete VMs and their disks.
	Edit []string `json:"edit,omitempty"`
	// View groups may read everything but Secrets.
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
	// Backup is a backup policy of the catalog. Absent: the tenant's.
	Backup string `json:"backup,omitempty"`
	// CloudInit configures the guest at first boot.
	CloudInit *CloudInit `json:"cloudInit,omitempty"`
	// SSHKeySecrets name Secrets in the VM's namespace whose values are SSH
	// public keys, injected through cloud-init (accessCredentials).
	SSHKeySecrets []string `json:"sshKeySecrets,omitempty"`
	// Tier overrides the tenant's tier for this VM: production or standard.
	Tier string `json:"tier,omitempty" enum:"production,standard"`
	// GPUs passes GPUs through to the guest. Excluded from the platform
	// baseline unless the Platform enables gpu.
	GPUs []Device `json:"gpus,omitempty"`
	// HostDevices passes host PCI devices through to the guest. Excluded
	// unless the Platform enables hostDevices.
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
}
