// Package emit orders generated objects and writes them as YAML: a fixed
// kind order, sorted keys, no timestamps, so the same input always yields
// the same bytes.
package emit

import (
	"cmp"
	"slices"
	"strings"

	"github.com/virtc/virtc/internal/par"
)

// Scope says which repository (and so which Argo CD Application) an object
// belongs to.
type Scope int

const (
	// Cluster objects are cluster-scoped or platform-owned.
	Cluster Scope = iota
	// TenantScope objects are namespace plumbing owned by the platform team:
	// quota, RBAC, network attachments, backup Schedules and Backups.
	TenantScope
	// VMScope objects are the tenants' workloads: disks, VMs, snapshots.
	VMScope
)

// Scopes by name, as --scope takes them.
var scopeNames = map[string][]Scope{
	"all":      {Cluster, TenantScope, VMScope},
	"platform": {Cluster},
	"tenants":  {TenantScope},
	"vms":      {VMScope},
}

// ScopeHelp says in words what ParseScope accepts.
const ScopeHelp = "all, platform, tenants or vms, or several of them separated by commas (platform,tenants)"

// ParseScope returns the scopes a --scope value selects: all, platform,
// tenants or vms, or several separated by commas (a platform team's
// Application holds platform,tenants, a tenant's holds vms), in the order
// of the Scope constants.
func ParseScope(value string) ([]Scope, bool) {
	var out []Scope
	for name := range strings.SplitSeq(value, ",") {
		s, ok := scopeNames[name]
		if !ok {
			return nil, false
		}
		for _, sc := range s {
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		}
	}
	slices.Sort(out)
	return out, true
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
	"CatalogSource",
	"OperatorGroup",
	"Subscription",
	"ServiceAccount",
	"Role",
	"Job",
	"HyperConverged",
	"DataProtectionApplication",
	"VirtualMachineClusterInstancetype",
	"VirtualMachineClusterPreference",
	"ClusterUserDefinedNetwork",
	"ValidatingAdmissionPolicy",
	"ValidatingAdmissionPolicyBinding",
	"ResourceQuota",
	"RoleBinding",
	"NetworkPolicy",
	"NetworkAttachmentDefinition",
	"UserDefinedNetwork",
	"PersistentVolumeClaim",
	"DataVolume",
	"DataSource",
	"VirtualMachine",
	"Schedule",
	"Backup",
}

var kindRanks = func() map[string]int {
	m := make(map[string]int, len(kindOrder))
	for i, k := range kindOrder {
		m[k] = i
	}
	return m
}()

func rank(kind string) int {
	if i, ok := kindRanks[kind]; ok {
		return i
	}
	return len(kindOrder)
}

// Sort orders objects by kind rank, then kind, namespace and name; objects
// with equal keys keep their input order. Objects are first dealt into one
// bucket per rank, keeping their order; renderers emit each kind tenant by
// tenant and VM by VM, so a bucket is then nearly sorted already, and the
// buckets are sorted on all CPUs.
func Sort(objs []Object) {
	buckets := make([][]int, len(kindOrder)+1)
	for i, o := range objs {
		r := rank(o.Kind)
		buckets[r] = append(buckets[r], i)
	}
	par.For(len(buckets), func(r int) {
		slices.SortFunc(buckets[r], func(i, j int) int {
			a, b := &objs[i], &objs[j]
			return cmp.Or(
				cmp.Compare(a.Kind, b.Kind),
				cmp.Compare(a.Namespace, b.Namespace),
				cmp.Compare(a.Name, b.Name),
				cmp.Compare(i, j),
			)
		})
	})
	sorted := make([]Object, 0, len(objs))
	for _, b := range buckets {
		for _, i := range b {
			sorted = append(sorted, objs[i])
		}
	}
	copy(objs, sorted)
}

// Keyed is an object serialized on its own (as WriteEach serializes it),
// with what Sort orders it by: its kind, namespace and name, and in place
// of its position in Sort's input, the group it was rendered in and its
// position there (groups in input order).
type Keyed struct {
	Kind, Namespace, Name string
	Group, Index          int
	Piece                 []byte
	rank                  int
}

// JoinSorted orders serialized objects as Sort orders the objects (by
// kind rank, then kind, namespace and name, then input order) and returns
// the pieces with the separators between them: joined, they are what
// Write writes of the sorted objects. Nothing is copied: the output is
// held once.
func JoinSorted(ps []Keyed) [][]byte {
	for i := range ps {
		ps[i].rank = rank(ps[i].Kind)
	}
	slices.SortFunc(ps, func(a, b Keyed) int {
		return cmp.Or(
			cmp.Compare(a.rank, b.rank),
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.Group, b.Group),
			cmp.Compare(a.Index, b.Index),
		)
	})
	out := make([][]byte, 0, 2*len(ps))
	for i := range ps {
		if i > 0 {
			out = append(out, separator)
		}
		out = append(out, ps[i].Piece)
		ps[i].Piece = nil
	}
	return out
}

// Separator is the document separator between two objects of the stream.
const Separator = "---\n"

var separator = []byte(Separator)
