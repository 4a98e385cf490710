package api

// Evidence records one piece of acceptance evidence of the workload
// eligibility matrix: a check that was done (a restore drill, a planned
// migration and maintenance test, a storage or network failover, a security
// review …), what it covered, when, by whom, and where its record is.
// Evidence lives in Git beside the catalog; `virtc report` shows, for each
// VM, which of its classes' and profiles' required checks are accepted by
// Evidence and which are missing. A VM in a conditional class is refused
// until its classes' checks are accepted, in every tier (unless its tenant
// is lab); a VM of tier production also needs its profiles' and backup
// policy's checks.
//
// An Evidence satisfies a required check when its spec.check is the
// check's identifier, spec.covers names what the check is about (the
// storage profile, the network profiles, the backup policy or the class the
// requirement comes from), spec.covers.platformVersion is the Platform's
// exact version, and it has not expired. The other fields of spec.covers
// (tenant, vm, size) narrow it to the VMs they name.
type Evidence struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta   `json:"metadata"`
	Spec     EvidenceSpec `json:"spec"`
}

// EvidenceSpec describes one check that was done.
type EvidenceSpec struct {
	// Check is the identifier of the check of the matrix this evidence
	// satisfies, as a requirement's check names it: one of the eligibility
	// matrix's (internal/eligibility/matrix.yaml: migration-test,
	// network-failover, security-review, storage-validation,
	// worker-role-design, node-drain-test, capacity-plan,
	// supportability-review), one the platform's catalog defines
	// (restore-drill, storage-failover, …) or one of the release's
	// exact-version compatibility gate, recorded once for the whole
	// platform (catalog/versions/versions.yaml compatibilityGate:
	// openshift-compatibility, storage-integration, network-integration,
	// management-tooling, worker-pool-lifecycle, template-enforcement,
	// observability, controlled-maintenance).
	Check string `json:"check" pattern:"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$" hint:"a check identifier such as restore-drill or migration-test"`
	// Covers says what the check was done on.
	Covers EvidenceCovers `json:"covers"`
	// Date is the day the check was done, "YYYY-MM-DD" (quoted: YAML tools
	// read an unquoted date as a timestamp). A check of a backup policy
	// expires after the policy's drillInterval.
	Date string `json:"date" pattern:"^[0-9]{4}-[0-9]{2}-[0-9]{2}$" hint:"a quoted date \"YYYY-MM-DD\", such as \"2026-11-20\""`
	// By names who did the check (a person or a team).
	By string `json:"by"`
	// Link is the record of the check (a ticket, a test report).
	Link string `json:"link" pattern:"^https?://[^ ]+$" hint:"an http:// or https:// URL of the record"`
}

// EvidenceCovers is what a check was done on. PlatformVersion is required:
// evidence counts only on the exact platform version it was recorded on.
type EvidenceCovers struct {
	// PlatformVersion is the exact OpenShift Virtualization version the
	// check ran on (4.22.2). After a platform upgrade the evidence no longer
	// counts: the check must be done again.
	PlatformVersion string `json:"platformVersion" pattern:"^[0-9]+\\.[0-9]+\\.[0-9]+$" hint:"an exact version x.y.z, such as 4.22.2"`
	// StorageProfile is the storage profile the check covered.
	StorageProfile string `json:"storageProfile,omitempty"`
	// NetworkProfiles are the network profiles the check covered.
	NetworkProfiles []string `json:"networkProfiles,omitempty"`
	// Pool is the worker pool the check ran on: the compute profile (its
	// nodes and CPU model) a migration test covers, which a VM on that pool
	// needs (design document 000: "on its exact storage/network/compute
	// profile").
	Pool string `json:"pool,omitempty"`
	// BackupPolicy is the backup policy the check covered (a restore drill).
	BackupPolicy string `json:"backupPolicy,omitempty"`
	// Class is the workload class of the eligibility matrix the check
	// covered (for example worker-virtualization).
	Class string `json:"class,omitempty"`
	// Feature is the excluded feature an assessment covered: for check
	// architecture-assessment (class hardware-passthrough) a device's
	// resource name (nvidia.com/GA102GL_A10) or sriov, dedicatedCPU or
	// hugepages; for check support-review a feature gate of the
	// Platform's spec.acceptPreviewGates (videoConfig).
	Feature string `json:"feature,omitempty"`
	// Size narrows the evidence to VMs of this size.
	Size string `json:"size,omitempty"`
	// Tenant narrows the evidence to this tenant's VMs.
	Tenant string `json:"tenant,omitempty"`
	// VM narrows the evidence to one VM, as NAMESPACE/NAME.
	VM string `json:"vm,omitempty" pattern:"^[a-z0-9-]+/[a-z0-9-]+$" hint:"NAMESPACE/NAME"`
}

// EvidenceRequirement is a check that must be accepted by an Evidence
// before production VMs rely on a catalog entry.
type EvidenceRequirement struct {
	// Check is the check's identifier, which an Evidence's spec.check names
	// (restore-drill, migration-test, storage-failover, network-failover,
	// security-review, …).
	Check string `json:"check" pattern:"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$" hint:"a check identifier such as restore-drill or storage-failover"`
	// Description says what the check is, for people.
	Description string `json:"description"`
}
