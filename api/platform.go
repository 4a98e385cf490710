package api

import "k8s.io/apimachinery/pkg/api/resource"

// Platform is the cluster side: the OpenShift Virtualization version and how
// it is installed and configured. At most one Platform is compiled at a
// time; without one, virtc compiles tenants and VMs only.
type Platform struct {
	TypeMeta `json:",inline"`
	// Metadata.name names the cluster (for messages and labels).
	Metadata ObjectMeta   `json:"metadata"`
	Spec     PlatformSpec `json:"spec"`
}

// PlatformSpec configures OpenShift Virtualization on one cluster.
type PlatformSpec struct {
	// Version is the exact OpenShift Virtualization version (for example
	// 4.22.3). Only versions in virtc's support table are accepted; `virtc
	// catalog` lists them.
	Version string `json:"version" pattern:"^[0-9]+\\.[0-9]+\\.[0-9]+$" hint:"an exact version such as 4.22.3"`
	// UpgradingTo is the baseline version (an exact 4.22.z) a Platform on an
	// upgrade-path release (4.20, 4.21) is on its way to. Only the
	// baseline release is a production target (doc 000, Summary): on an
	// upgrade-path release production VMs are refused unless the Platform
	// says, with this field, that it is passing through, and the exact
	// compatibility gate of this version has its Evidence already (the
	// gate is never skipped on the way). Absent on the baseline release.
	UpgradingTo string `json:"upgradingTo,omitempty" pattern:"^[0-9]+\\.[0-9]+\\.[0-9]+$" hint:"an exact baseline version such as 4.22.5"`
	// Channel is the OLM channel. Absent: the version's default (stable).
	Channel string `json:"channel,omitempty"`
	// CatalogSource pins the operator catalog the Subscriptions install
	// from: an index image pinned by digest whose channel heads do not move.
	// OLM upgrades an installed operator to the newest bundle of the
	// channel that replaces or skips it (the channel head, within a
	// minor), so an upgrade lands on a version other than the head only
	// with a catalog whose head it is. virtc emits a CatalogSource
	// (sourceType grpc) of the image in openshift-marketplace and points
	// the Subscriptions at it. Absent: the cluster's redhat-operators
	// catalog, whose head virtc assumes is the newest z-stream of the
	// version's minor in its version table.
	CatalogSource *CatalogSource `json:"catalogSource,omitempty"`
	// Workloads is where KubeVirt's node agents run (HCO spec.workloads:
	// virt-handler, and the nodes VMs may use at all). With WorkerPools in
	// the catalog, each pool is a part of these nodes: its VMs get the
	// pool's nodeSelector and tolerations, and the tolerations here must
	// tolerate every pool's taints (virt-handler must run on every node of
	// every pool).
	Workloads *Placement `json:"workloads,omitempty"`
	// Infra is where the operators and controllers run.
	Infra *Placement `json:"infra,omitempty"`
	// LiveMigration tunes live migration cluster-wide.
	LiveMigration *LiveMigration `json:"liveMigration,omitempty"`
	// EvictionStrategy is the cluster's default for VMs that set none:
	// LiveMigrate, LiveMigrateIfPossible, None or External. virtc sets one
	// on every VM it compiles.
	EvictionStrategy string `json:"evictionStrategy,omitempty" enum:"LiveMigrate,LiveMigrateIfPossible,None,External"`
	// MemoryOvercommitPercentage lets guests see more memory than their pods
	// request (100: no overcommit, the default).
	MemoryOvercommitPercentage *int64 `json:"memoryOvercommitPercentage,omitempty"`
	// VMStateStorage names the StorageProfile whose StorageClass holds VM
	// state: KubeVirt keeps the persistent EFI variables and TPM of VMs
	// whose preference has them (windows.11, windows.2k22, windows.2k25 …)
	// on a 10Mi Filesystem PVC per VM in the VM's namespace, and virtc sets
	// the HyperConverged's vmStateStorageClass to this class and counts the
	// PVCs in the tenants' quotas. KubeVirt asks for ReadWriteMany unless
	// CDI's StorageProfile of the class says Filesystem claims are
	// ReadWriteOnce; then each live migration creates a second PVC for the
	// target and hands over (quota headroom counts it). Absent: the
	// catalog's default storage profile.
	VMStateStorage string `json:"vmStateStorage,omitempty"`
	// GoldenImageNamespace holds the golden-image DataSources. Absent:
	// openshift-virtualization-os-images.
	GoldenImageNamespace string `json:"goldenImageNamespace,omitempty"`
	// FeatureGates are HyperConverged feature gates to enable. Every gate
	// HCO offers is a feature that is not generally available (a graduated
	// feature is always on and has no gate), in the phase the version table
	// records from HCO's CRD: alpha (a Developer Preview, off by default) or
	// beta (a Technology Preview, on by default). Each gate listed here must
	// also be named in acceptPreviewGates; deprecated gates, which HCO
	// ignores, are refused.
	FeatureGates []string `json:"featureGates,omitempty"`
	// AcceptPreviewGates is the explicit opt-in to features that Red Hat
	// does not support in production: each feature gate named here may be
	// enabled in featureGates. A beta gate is on by default in HCO: virtc
	// turns it off (featureGates <gate>: false) unless it is named here, so
	// a cluster runs no preview feature nobody accepted. Technology Preview
	// features are excluded from the baseline and need "a separate approved
	// scope after product maturity and support review" (target
	// architecture, workload eligibility matrix): each gate named here
	// needs an Evidence of check support-review whose covers.feature is the
	// gate, on this exact version. No VM virtc compiles uses a gated
	// feature (KubeVirt v1.8.4 reaches them only through VM fields and
	// annotations the VM intent does not have: devices.downwardMetrics,
	// devices.video, a disk's reservation, the
	// EmulatorThreadCompleteToEvenParity annotation, …), so a gate marks no
	// VM: the review is the gate's own. Absent: none.
	AcceptPreviewGates []string `json:"acceptPreviewGates,omitempty"`
	// Enable lifts features excluded from the platform baseline, for nodes
	// prepared for them: gpu, hostDevices, sriov, dedicatedCPU, hugepages.
	// (Confidential VMs and Technology Preview features cannot be enabled.)
	// Enabling is not enough for a VM to use one: the workload eligibility
	// matrix puts it in class hardware-passthrough, which needs "a separate
	// architecture and vendor support assessment" (an Evidence of check
	// architecture-assessment whose covers.feature names the feature, or
	// the device's resource name for gpu and hostDevices, on this exact
	// version) in every tier; a device must also be among hostDevices here
	// and in its tenant's spec.allow.devices.
	Enable []string `json:"enable,omitempty" enum:"gpu,hostDevices,sriov,dedicatedCPU,hugepages"`
	// HostDevices are the host devices the cluster permits for passthrough:
	// the HyperConverged's spec.permittedHostDevices (pciHostDevices and
	// mediatedDevices) and, for mediated devices KubeVirt creates, its
	// spec.mediatedDevicesConfiguration. KubeVirt v1.8.4's virt-controller
	// renders no virt-launcher pod for a VM whose gpus or hostDevices name
	// a deviceName that is not permitted here
	// (pkg/virt-controller/services/renderresources.go,
	// validatePermittedHostDevices), so virtc refuses such a VM. Needs
	// spec.enable gpu or hostDevices.
	HostDevices []HostDevice `json:"hostDevices,omitempty"`
	// Limits bound what VMs may ask for.
	Limits *Limits `json:"limits,omitempty"`
	// DataProtection installs OADP and names where backups go, or says that
	// OADP is managed outside this build (external: true). Absent: no OADP
	// on the cluster, so a build whose VMs take backups (their Velero
	// Schedules and Backups need OADP's CRDs) is refused.
	DataProtection *DataProtection `json:"dataProtection,omitempty"`
	// Approver runs the InstallPlan approver, which makes the install and
	// every upgrade happen from Git without a person: virtc keeps
	// installPlanApproval Manual on the operators' Subscriptions, and emits
	// beside each Subscription an Argo CD Sync hook Job (in the
	// Subscription's sync wave, with a ServiceAccount allowed only to
	// read and approve InstallPlans and read the Subscription and CSVs of
	// that namespace) that runs `virtc approve-installplan`: it approves
	// only the InstallPlans whose CSVs are the version pinned here or on
	// OLM's path to it, waits until that CSV has succeeded, and fails,
	// naming the CSVs it saw, on anything else. Absent: no Job; every
	// InstallPlan waits for a person to approve it.
	Approver *Approver `json:"approver,omitempty"`
	// WorkloadUpdate is how KubeVirt moves running VMs to the new
	// virt-launcher after an upgrade (the HyperConverged's
	// workloadUpdateStrategy). Absent: HCO's defaults, written out:
	// LiveMigrate only, batches of 10 every 1m0s.
	WorkloadUpdate *WorkloadUpdate `json:"workloadUpdate,omitempty"`
	// ConfirmDeletion makes Argo CD ask a person before it deletes a VM or a
	// disk (sync-options Prune=confirm,Delete=confirm on VirtualMachines and
	// data disks' PVCs): removing a VM from Git, or deleting the
	// Application, never silently deletes disks. Namespaces, whose deletion
	// would delete the VMs and disks in them, get Prune=confirm,Delete=false:
	// deleting the Application never deletes them. Absent: true.
	ConfirmDeletion *bool `json:"confirmDeletion,omitempty"`
	// RequireMaintenanceReserve refuses the VMs of every tier on a worker
	// pool that fails its maintenance checks: after losing its largest
	// node (or one zone, when the pool spans zones) its VMs no longer fit,
	// or a drain of one node cannot complete. Production VMs on such a
	// pool are refused in any case (a production pool survives the loss of
	// a node). Absent: false, the failed checks are warnings for
	// standard-tier VMs (and shown by virtc report).
	RequireMaintenanceReserve bool `json:"requireMaintenanceReserve,omitempty"`
	// Monitoring is the alerting virtc compiles with the build, for
	// OpenShift's monitoring stack (prometheus-operator's PrometheusRule
	// and AlertmanagerConfig): per VM that should run, per backup
	// Schedule and restore drill, per tenant quota and for the platform
	// itself. Absent: on, with the thresholds and severities of virtc's
	// default catalog (catalog/monitoring/alerting.yaml).
	Monitoring *Monitoring `json:"monitoring,omitempty"`
	// Recovery names who restores the cluster service (doc 001, "Upgrade
	// and recovery planning": a recovery document identifies who restores
	// the cluster service, who restores guest data, and who validates the
	// application; the tenants name the other two). virtc restore-plan
	// writes it into every plan. Required when the build has production
	// VMs.
	Recovery *PlatformRecovery `json:"recovery,omitempty"`
}

// PlatformRecovery names the platform's part of the recovery document.
type PlatformRecovery struct {
	// RestoresClusterService is who brings the cluster service back:
	// the control plane, OpenShift Virtualization, storage, networking
	// and backup integration, before any tenant's data can be restored
	// (for example "platform-team" or "platform on-call").
	RestoresClusterService string `json:"restoresClusterService,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9 ._@+,:()/#-]{0,127}$" hint:"a team, person or rota: letters, digits, spaces and ._@+,:()/#-"`
}

// Monitoring switches the generated alerts on or off and overrides their
// thresholds and severities.
//
// Where the alerts go: each tenant's VM alerts in a PrometheusRule
// virtc-vms in the tenant's namespace (evaluated by user workload
// monitoring, which limits its queries to that namespace), routed by an
// AlertmanagerConfig virtc-alerts to the tenant's receiver (Tenant
// spec.alerts); backup and restore-drill alerts in a PrometheusRule
// virtc-backups in openshift-adp, beside the Velero Schedules; platform
// and quota (capacity) alerts in a PrometheusRule virtc-platform in
// openshift-cnv, which virtc then labels openshift.io/cluster-monitoring
// so that the platform Prometheus scrapes and evaluates it.
type Monitoring struct {
	// Enabled: false compiles no monitoring objects at all: the output is
	// what it would be without monitoring. Absent: true.
	Enabled *bool `json:"enabled,omitempty"`
	// Tiers override, tier by tier, the thresholds and severity of the
	// alerts of VMs of that tier (and of their tenants' quotas and their
	// backup Schedules). Absent fields keep the default catalog's.
	Tiers []TierAlerting `json:"tiers,omitempty"`
	// Platform overrides the thresholds and severity of the platform's
	// own alerts. Absent fields keep the default catalog's.
	Platform *PlatformAlerting `json:"platform,omitempty"`
}

// On reports whether monitoring objects are compiled (absent: yes).
func (m *Monitoring) On() bool { return m == nil || m.Enabled == nil || *m.Enabled }

// TierAlerting is how a tier's alerts fire. Durations are Prometheus
// durations (30s, 5m, 1h, 14d, 1w).
type TierAlerting struct {
	// Tier is production or standard.
	Tier string `json:"tier" enum:"production,standard"`
	// Severity is the severity label of the tier's alerts.
	Severity string `json:"severity,omitempty" enum:"critical,warning,info"`
	// NotRunningFor is how long a VM that should run (runStrategy Always
	// or RerunOnFailure) may be in any status but running or migrating
	// before it alerts.
	NotRunningFor string `json:"notRunningFor,omitempty" pattern:"^([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$" hint:"a Prometheus duration such as 5m, 1h30m or 14d (units y, w, d, h, m, s in that order)"`
	// GuestAgentMissingFor is how long a running VM whose image declares
	// the QEMU guest agent may run without it reporting before it alerts.
	GuestAgentMissingFor string `json:"guestAgentMissingFor,omitempty" pattern:"^([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$" hint:"a Prometheus duration such as 5m, 1h30m or 14d (units y, w, d, h, m, s in that order)"`
	// MigrationStuckAfter is how long a live migration of a VM that must
	// migrate (spec.migration Required) may run before it alerts.
	MigrationStuckAfter string `json:"migrationStuckAfter,omitempty" pattern:"^([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$" hint:"a Prometheus duration such as 5m, 1h30m or 14d (units y, w, d, h, m, s in that order)"`
	// BackupGrace is how much longer than its schedule's longest interval
	// a backup Schedule may go without a successful backup before it
	// alerts.
	BackupGrace string `json:"backupGrace,omitempty" pattern:"^([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$" hint:"a Prometheus duration such as 5m, 1h30m or 14d (units y, w, d, h, m, s in that order)"`
	// DrillWarning is how long before a restore drill's evidence expires
	// (its backup policy's drillInterval after its date) the alert fires.
	DrillWarning string `json:"drillWarning,omitempty" pattern:"^([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$" hint:"a Prometheus duration such as 5m, 1h30m or 14d (units y, w, d, h, m, s in that order)"`
}

// PlatformAlerting is how the platform's alerts fire.
type PlatformAlerting struct {
	// Severity is the severity label of the platform's alerts.
	Severity string `json:"severity,omitempty" enum:"critical,warning,info"`
	// UnhealthyFor is how long HCO may report its system health as
	// warning or error before it alerts, outside an update of OpenShift
	// Virtualization and the upgradeFor after one.
	UnhealthyFor string `json:"unhealthyFor,omitempty" pattern:"^([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$" hint:"a Prometheus duration such as 5m, 1h30m or 14d (units y, w, d, h, m, s in that order)"`
	// UpgradeFor is how long an operator's CSV (OpenShift Virtualization,
	// OADP) may be in any phase but Succeeded (an install or upgrade in
	// progress, or failed) before it alerts. It is also how long after
	// OpenShift Virtualization's CSV was last being replaced HCO's health
	// stays unwatched: HCO and KubeVirt report Degraded until every
	// component has rolled, which goes on after the new CSV has Succeeded.
	UpgradeFor string `json:"upgradeFor,omitempty" pattern:"^([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$" hint:"a Prometheus duration such as 5m, 1h30m or 14d (units y, w, d, h, m, s in that order)"`
}

// CatalogSource is a digest-pinned operator index image and what its
// channels hold.
type CatalogSource struct {
	// Image is the index image (for example a mirror of
	// registry.redhat.io/redhat/redhat-operator-index), pinned by digest
	// (host/path@sha256:<64 hex digits>): a tag is re-pushed as Red Hat
	// publishes bundles, and the channel head moves with it.
	Image string `json:"image" pattern:"^[^@ ]+@sha256:[0-9a-f]{64}$" hint:"an index image pinned by digest, host/path@sha256:<64 hex digits> (a tag moves the channel head)"`
	// Head is the version of the kubevirt-hyperconverged channel head in
	// the image (`opm render` of the image, or the PackageManifest's
	// status.channels[].currentCSV once the catalog runs). It must be a
	// version of the table, of spec.version's minor. OADP's channel head in
	// the image is taken to be the OADP release of that version.
	Head string `json:"head" pattern:"^[0-9]+\\.[0-9]+\\.[0-9]+$" hint:"the channel head's version, such as 4.22.5"`
}

// HostDevice is a device KubeVirt may pass through to VMs: a whole PCI
// device (pciDeviceSelector) or a mediated device such as a vGPU
// (mdevNameSelector), advertised to the scheduler as resourceName.
// Exactly one of pciDeviceSelector and mdevNameSelector.
type HostDevice struct {
	// ResourceName is the name the device is advertised and requested by
	// (vendor.com/NAME, for example nvidia.com/GA102GL_A10): a VM's
	// gpus[].deviceName or hostDevices[].deviceName, and a tenant's
	// spec.allow.devices, name it.
	ResourceName string `json:"resourceName" pattern:"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?/[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$" hint:"a resource name vendor.com/NAME, such as nvidia.com/GA102GL_A10"`
	// PCIDeviceSelector is the PCI vendor_id:product_id of a device passed
	// through whole (for example 10de:2236), bound to vfio-pci on the
	// nodes.
	PCIDeviceSelector string `json:"pciDeviceSelector,omitempty" pattern:"^[0-9a-fA-F]{4}:[0-9a-fA-F]{4}$" hint:"vendor_id:product_id in hex, such as 10de:2236"`
	// MdevNameSelector is the name of a mediated device type as the node's
	// sysfs states it (for example "GRID A10-4Q").
	MdevNameSelector string `json:"mdevNameSelector,omitempty"`
	// MdevType is the mediated device type KubeVirt creates on the nodes
	// for mdevNameSelector (for example nvidia-592): virtc lists it in the
	// HyperConverged's spec.mediatedDevicesConfiguration.mediatedDeviceTypes.
	// Absent: the mediated devices are created outside KubeVirt (the NVIDIA
	// GPU Operator). Only with mdevNameSelector.
	MdevType string `json:"mdevType,omitempty"`
	// ExternalResourceProvider says that a device plugin other than
	// KubeVirt's advertises the device (the NVIDIA GPU Operator's):
	// virt-handler then starts no device plugin for it
	// (pkg/virt-handler/device-manager/device_controller.go).
	ExternalResourceProvider bool `json:"externalResourceProvider,omitempty"`
}

// Approver is the InstallPlan approver Job's image and patience.
type Approver struct {
	// Image is the virtc image the approver Job runs, pinned by digest
	// (host/path@sha256:<64 hex digits>); the platform team names the
	// release, which must be this virtc's or later (its version table
	// holds the update graph).
	Image string `json:"image" pattern:"^[^@ ]+@sha256:[0-9a-f]{64}$" hint:"an image pinned by digest, host/path@sha256:<64 hex digits> (a tag can change under the same name)"`
	// TimeoutMinutes bounds one run of the Job: it fails, and the sync
	// with it, when the pinned CSV has not succeeded by then. Absent: 45.
	TimeoutMinutes *int64 `json:"timeoutMinutes,omitempty"`
}

// WorkloadUpdate is KubeVirt's automated workload update after an upgrade.
type WorkloadUpdate struct {
	// Methods are LiveMigrate and Evict. LiveMigrate moves migratable VMs
	// to a new virt-launcher without downtime; Evict restarts the others
	// (shuts them down; a VM whose runStrategy restarts it comes back on
	// the new launcher). Without Evict, a VM that cannot migrate keeps the
	// old virt-launcher until it is restarted. An empty list turns
	// automated updates off. Absent: [LiveMigrate].
	Methods []string `json:"methods,omitempty" enum:"LiveMigrate,Evict"`
	// BatchEvictionSize is how many VMs Evict restarts per interval.
	// Absent: 10.
	BatchEvictionSize *int64 `json:"batchEvictionSize,omitempty"`
	// BatchEvictionInterval is the wait between batches, a Go duration
	// such as 1m0s. Absent: 1m0s.
	BatchEvictionInterval string `json:"batchEvictionInterval,omitempty" pattern:"^([0-9]+h)?([0-9]+m)?([0-9]+s)?$" hint:"a duration such as 1m0s or 5m"`
}

// Limits bound VMs. Absent fields take the defaults.
type Limits struct {
	// MaxDiskSize bounds one disk (default 16Ti).
	MaxDiskSize *resource.Quantity `json:"maxDiskSize,omitempty"`
	// MaxDataDisks bounds the data disks of one VM (default 16).
	MaxDataDisks *int64 `json:"maxDataDisks,omitempty"`
}

// DataProtection configures OADP (Velero) for VM backups.
type DataProtection struct {
	// External says that OADP is installed and configured outside this
	// build (by another repository or Application, or by hand): virtc emits
	// no OADP install and no DataProtectionApplication, only the backup
	// Schedules and Backups in openshift-adp. Backups go to the external
	// Velero's default storage location, or to the one a backup policy
	// names (not checked: the external DataProtectionApplication defines
	// the names). Without storageLocations only.
	External bool `json:"external,omitempty"`
	// StorageLocations are the object stores backups are written to.
	// Required unless external.
	StorageLocations []StorageLocation `json:"storageLocations,omitempty"`
}

// StorageLocation is a Velero backup storage location.
type StorageLocation struct {
	// Name of the location; backup policies refer to it.
	Name string `json:"name"`
	// Provider is the Velero object-storage plugin: aws (any S3-compatible
	// store), azure or gcp.
	Provider string `json:"provider" enum:"aws,azure,gcp"`
	// Bucket holds the backups.
	Bucket string `json:"bucket"`
	// Prefix inside the bucket (for example the cluster name).
	Prefix string `json:"prefix,omitempty"`
	// Credential names the Secret (in openshift-adp) and its key that hold
	// the object store's credentials. The credentials themselves never go
	// in Git.
	Credential SecretKeyRef `json:"credential"`
	// Config is provider configuration (region, s3Url, s3ForcePathStyle...).
	Config map[string]string `json:"config,omitempty"`
	// Default marks the location of policies that name none. Exactly one
	// location is the default.
	Default bool `json:"default,omitempty"`
}

// SecretKeyRef names a key of a Secret.
type SecretKeyRef struct {
	// Name of the Secret.
	Name string `json:"name"`
	// Key in the Secret.
	Key string `json:"key"`
}

// Placement is a node selector with tolerations.
type Placement struct {
	// NodeSelector selects the nodes by label.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations let the pods run on tainted nodes.
	Tolerations []Toleration `json:"tolerations,omitempty"`
}

// Toleration is a Kubernetes toleration.
type Toleration struct {
	// Key of the taint. Empty with operator Exists: every taint.
	Key string `json:"key,omitempty"`
	// Operator is Exists or Equal. Absent: Equal.
	Operator string `json:"operator,omitempty" enum:"Exists,Equal"`
	// Value of the taint, with Equal.
	Value string `json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute. Absent: every effect.
	Effect string `json:"effect,omitempty" enum:"NoSchedule,PreferNoSchedule,NoExecute"`
}

// LiveMigration tunes live migration.
type LiveMigration struct {
	// ParallelMigrationsPerCluster bounds concurrent migrations (default 5):
	// a workload update, or a drain of several nodes, runs that many at
	// once, all of them possibly VMs of one tenant, so each tenant's quota
	// holds that many target pods (fewer when fewer of its VMs can
	// migrate).
	ParallelMigrationsPerCluster *int64 `json:"parallelMigrationsPerCluster,omitempty"`
	// ParallelOutboundMigrationsPerNode bounds migrations leaving one node
	// (default 2): a node drain migrates that many of the node's VMs at
	// once.
	ParallelOutboundMigrationsPerNode *int64 `json:"parallelOutboundMigrationsPerNode,omitempty"`
	// BandwidthPerMigration caps each migration (for example 1Gi per second).
	BandwidthPerMigration *resource.Quantity `json:"bandwidthPerMigration,omitempty"`
	// CompletionTimeoutPerGiB is the seconds a migration may take per GiB of
	// guest memory before it is cancelled (default 150).
	CompletionTimeoutPerGiB *int64 `json:"completionTimeoutPerGiB,omitempty"`
	// ProgressTimeout is the seconds a migration may make no progress
	// (default 150).
	ProgressTimeout *int64 `json:"progressTimeout,omitempty"`
	// Network names the network profile of a dedicated migration network.
	// It must be a bridge profile with spec.bridge.ipRange: virtc emits its
	// NetworkAttachmentDefinition in openshift-cnv (a Linux bridge on the
	// workload nodes, optionally on a VLAN, with whereabouts addresses from
	// ipRange) before the HyperConverged, which names it. KubeVirt then
	// attaches every virt-handler pod to it as migration0 and migrates over
	// that address. Absent: the pod network.
	Network string `json:"network,omitempty"`
}

// PlatformFacts carries the facts of a Platform that a build without the
// Platform needs for the eligibility gate (design document 000, "Workload
// eligibility matrix" and "Acceptance evidence": evidence counts on the
// exact 4.22.z it was recorded on). The platform repository's build
// publishes it (`virtc facts DIR...` prints it from the Platform there);
// a tenant repository commits that file beside its tenants, so that its
// build judges evidence on the platform's version. A build with VMs that
// need the gate (a conditional class, or tier production) and neither a
// Platform nor PlatformFacts is refused. Beside a Platform, its version
// must be the Platform's.
type PlatformFacts struct {
	TypeMeta `json:",inline"`
	// Metadata.name names the cluster, as the Platform's does.
	Metadata ObjectMeta        `json:"metadata"`
	Spec     PlatformFactsSpec `json:"spec"`
}

// PlatformFactsSpec are the Platform's facts.
type PlatformFactsSpec struct {
	// Version is the Platform's exact OpenShift Virtualization version.
	Version string `json:"version" pattern:"^[0-9]+\\.[0-9]+\\.[0-9]+$" hint:"an exact version such as 4.22.3"`
	// UpgradingTo is the Platform's spec.upgradingTo: the baseline version
	// a Platform on an earlier release is on its way to, which lets
	// production VMs stay while it upgrades.
	UpgradingTo string `json:"upgradingTo,omitempty" pattern:"^[0-9]+\\.[0-9]+\\.[0-9]+$" hint:"an exact baseline version such as 4.22.5"`
	// CompatibilityGate lists the checks of the exact-version compatibility
	// gate that the platform repository's Evidence accepts, each with the
	// Evidence that accepts it: the gate of Version on the baseline
	// release, of UpgradingTo on a release of the upgrade path (the gate's Evidence
	// is platform-wide, so it lives in the platform repository). A tenant
	// repository's production VMs need every check of the gate listed.
	CompatibilityGate []GateFact `json:"compatibilityGate,omitempty"`
	// Monitoring is the Platform's spec.monitoring (absent: on, with the
	// default catalog's thresholds): a tenant-only build compiles its
	// tenants' alerts with it, as the platform repository would.
	Monitoring *Monitoring `json:"monitoring,omitempty"`
}

// GateFact is one accepted check of the compatibility gate.
type GateFact struct {
	// Check is the gate's check (openshift-compatibility, ...).
	Check string `json:"check"`
	// Evidence names the platform repository's Evidence that accepts it.
	Evidence string `json:"evidence"`
}
