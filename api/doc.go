// Package api defines the virtc.dev/v1alpha1 kinds: the intents tenant teams
// write (Tenant, VM) and the catalog the platform team keeps (Size, Image,
// NetworkProfile, StorageProfile, BackupPolicy, Platform).
//
// The doc comments of these types are the reference documentation: the JSON
// Schemas under schemas/ are generated from them.
package api

// Group, Version and APIVersion of every virtc kind.
const (
	Group      = "virtc.dev"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
)

// TypeMeta names the kind of an object.
type TypeMeta struct {
	// APIVersion is always virtc.dev/v1alpha1.
	APIVersion string `json:"apiVersion"`
	// Kind is one of the virtc kinds.
	Kind string `json:"kind"`
}

// ObjectMeta is the part of Kubernetes object metadata that virtc reads.
type ObjectMeta struct {
	// Name of the object: a DNS-1123 label for tenants and VMs, a catalog
	// name (letters, digits, '-' and '.') for catalog entries.
	Name string `json:"name"`
	// Namespace of a VM: the name of a Tenant. Catalog entries and tenants
	// have none.
	Namespace string `json:"namespace,omitempty"`
	// Labels are copied to the generated objects (for a VM: to the
	// VirtualMachine and its pod template).
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are copied to the generated objects.
	Annotations map[string]string `json:"annotations,omitempty"`
}
