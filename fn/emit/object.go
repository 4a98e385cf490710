// Package emit orders generated objects and writes them as YAML: a fixed
// kind order, sorted keys, no timestamps, so the same input always yields
// the same bytes.
package emit

import (
	"cmp"
	"slices"
)

// Scope says which repository (and so which Argo CD Application) an object
// belongs to.
type Scope int

const (
	// Cluster objects are cluster-scoped or platform-owned.
	Cluster Scope = iota
	// TenantScope objects are namespace plumbing owned by the platform team:
	// quota, RBAC, network attachments.
	TenantScope
	// VMScope objects are the tenants' workloads: disks, VMs, backups.
	VMScope
)

// Scopes by name, as --scope takes them.
var scopeNames = map[string][]Scope{
	"all":      {Cluster, TenantScope, VMScope},
	"platform": {Cluster},
	"tenants":  {TenantScope},
	"vms":      {VMScope},
}

// ScopeNames lists the names ParseScope accepts.
func ScopeNames() []string { return []string{"all", "platform", "tenants", "vms"} }

// ParseScope returns the scopes a --scope value selects.
func ParseScope(name string) ([]Scope, bool) {
	s, ok := scopeNames[name]
	return s, ok
}

// Object is one generated Kubernetes object.
type Object struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	Scope      Scope
	// Body is the typed API object (TypeMeta and ObjectMeta set), serialized
	// through encoding/json.
	Body any
}

// kindOrder is the order kinds are written in: what others depend on first,
// as `kubectl apply` and readers of a diff expect.
var kindOrder = []string{
	"Namespace",
	"OperatorGroup",
	"Subscription",
	"HyperConverged",
	"DataProtectionApplication",
	"VirtualMachineClusterInstancetype",
	"VirtualMachineClusterPreference",
	"ClusterUserDefinedNetwork",
	"ResourceQuota",
	"RoleBinding",
	"NetworkAttachmentDefinition",
	"UserDefinedNetwork",
	"PersistentVolumeClaim",
	"DataVolume",
	"DataSource",
	"VirtualMachine",
	"Schedule",
	"Backup",
}

func rank(kind string) int {
	if i := slices.Index(kindOrder, kind); i >= 0 {
		return i
	}
	return len(kindOrder)
}

// Sort orders objects by kind rank, then kind, namespace and name.
func Sort(objs []Object) {
	slices.SortFunc(objs, func(a, b Object) int {
		return cmp.Or(
			cmp.Compare(rank(a.Kind), rank(b.Kind)),
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Name, b.Name),
		)
	})
}
