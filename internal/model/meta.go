package model

// Labels and annotations virtc sets.
const (
	LabelManagedBy    = "app.kubernetes.io/managed-by"
	ManagedBy         = "virtc"
	LabelTenant       = "virtc.dev/tenant"
	LabelVM           = "virtc.dev/vm"
	LabelBackupPolicy = "virtc.dev/backup-policy"
	LabelEligibility  = "virtc.dev/eligibility"
	// LabelPool names a VM's worker pool on its template (and so on its
	// VirtualMachineInstance and pod).
	LabelPool = "virtc.dev/pool"
	// LabelSpreadGroup names a VM's spread group on its template: the
	// pod anti-affinity of the group's VMs selects it.
	LabelSpreadGroup = "virtc.dev/spread-group"
	AnnotationSource = "virtc.dev/source"
	// AnnotationPreviewFeatures lists, on a VirtualMachine, the preview
	// feature gates that change what it runs (comma-separated).
	AnnotationPreviewFeatures = "virtc.dev/preview-features"
	// AnnotationOLMGraph says, on the kubevirt-hyperconverged
	// Subscription, which upgrade graph the build modelled OLM's route on
	// (the file-based catalog among its inputs, with its digest, or
	// virtc's version table) and the channel head it found: the
	// provenance of the route virtc diff shows and of the approver's
	// --catalog-head.
	AnnotationOLMGraph    = "virtc.dev/olm-graph"
	AnnotationSyncWave    = "argocd.argoproj.io/sync-wave"
	AnnotationSyncOptions = "argocd.argoproj.io/sync-options"
	// LabelRetired marks the objects of a retired VM, disk or tenant.
	LabelRetired = "virtc.dev/retired"
	// LabelEnvironment marks the Namespace and VMs of a tenant in the lab
	// environment (Tenant spec.environment): not onboarded, its VMs in
	// conditional classes of the eligibility matrix run without evidence.
	LabelEnvironment = "virtc.dev/environment"
	// LabelPlatform marks the objects of the platform (the cluster side).
	LabelPlatform = "virtc.dev/platform"
	// LabelPrimaryUDN marks a namespace whose pods use a primary
	// user-defined network; OVN-Kubernetes reads it only when the
	// namespace is created.
	LabelPrimaryUDN = "k8s.ovn.org/primary-user-defined-network"
)

// Where OpenShift Virtualization is installed from and into.
const (
	CNVNamespace    = "openshift-cnv"
	HCOName         = "kubevirt-hyperconverged"
	HCOPackage      = "kubevirt-hyperconverged"
	CatalogSource   = "redhat-operators"
	CatalogSourceNS = "openshift-marketplace"
	// PinnedCatalogSource names the CatalogSource of a Platform's
	// spec.catalogSource, beside redhat-operators in the global catalog
	// namespace (visible to Subscriptions of every namespace).
	PinnedCatalogSource = "virtc-redhat-operators"
)

// Where OADP is installed from and into.
const (
	OADPNamespace = "openshift-adp"
	OADPPackage   = "redhat-oadp-operator"
	DPAName       = "velero"
)

// Names of the volumes virtc adds to every VM.
const (
	RootVolume      = "rootdisk"
	CloudInitVolume = "cloudinitdisk"
)
