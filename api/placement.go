package api

import "k8s.io/apimachinery/pkg/api/resource"

// WorkerPool is a set of alike worker nodes that VMs are placed on: the
// platform team describes what its nodes offer (how many, how large, which
// networks and storage they reach, which CPU model), and VMs name the pool
// in spec.pool. A pool answers "where can this VM run?"; the Platform's
// spec.workloads answers "where do KubeVirt's node agents run?" and must
// cover the nodes of every pool (virt-handler runs on every node that runs
// VMs, so it must tolerate every pool's taints).
//
// Without any WorkerPool in the catalog, VMs have no pool and virtc places
// them as before (anywhere the cluster schedules virt-launcher pods).
type WorkerPool struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Spec     WorkerPoolSpec `json:"spec"`
}

// WorkerPoolSpec describes the nodes of a pool.
type WorkerPoolSpec struct {
	// Default marks the pool of VMs that name none. With a single pool in
	// the catalog, that pool is the default.
	Default bool `json:"default,omitempty"`
	// NodeSelector are the labels of the pool's nodes: VMs on the pool get
	// them as their template's nodeSelector.
	NodeSelector map[string]string `json:"nodeSelector"`
	// Taints are the taints of the pool's nodes (keeping other workloads
	// away): VMs on the pool get matching tolerations.
	Taints []Taint `json:"taints,omitempty"`
	// Nodes is the number of nodes in the pool.
	Nodes int64 `json:"nodes"`
	// Allocatable is what one node of the pool offers to pods (the node's
	// status.allocatable): a VM whose virt-launcher pod requests more than
	// this is refused, and the pool's capacity is Nodes times this.
	Allocatable NodeResources `json:"allocatable"`
	// FailureDomain says how the nodes are grouped into racks or zones.
	// Absent: every node is its own failure domain (hosts only).
	FailureDomain *FailureDomain `json:"failureDomain,omitempty"`
	// Networks are the network profiles reachable from the pool's nodes (a
	// bridge or VLAN present only on some nodes). Absent: every profile.
	Networks []string `json:"networks,omitempty"`
	// Storage are the storage profiles reachable from the pool's nodes
	// (local storage only on its own nodes). Absent: every profile.
	Storage []string `json:"storage,omitempty"`
	// CPUModel is the CPU model VMs on the pool present to their guests
	// (spec.domain.cpu.model, for example Cascadelake-Server): a live
	// migration needs the same model on the target node, so a pool with
	// mixed CPU generations names the oldest. Absent: KubeVirt's default
	// (host-model), which migrates only between nodes of the same CPU.
	CPUModel string `json:"cpuModel,omitempty"`
	// Restricted pools are usable only by tenants that allow them in
	// spec.allow.pools.
	Restricted bool `json:"restricted,omitempty"`
}

// Taint is a taint of a pool's nodes.
type Taint struct {
	// Key of the taint.
	Key string `json:"key"`
	// Value of the taint. Absent: the toleration uses operator Exists.
	Value string `json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect" enum:"NoSchedule,PreferNoSchedule,NoExecute"`
}

// NodeResources are what one node offers to pods.
type NodeResources struct {
	// CPU is the node's allocatable CPU (cores, such as 62 or 62500m).
	CPU resource.Quantity `json:"cpu"`
	// Memory is the node's allocatable memory.
	Memory resource.Quantity `json:"memory"`
}

// Failure-domain levels of a pool.
const (
	DomainHost = "host"
	DomainRack = "rack"
	DomainZone = "zone"
)

// FailureDomain is the grouping of a pool's nodes into racks or zones.
type FailureDomain struct {
	// Level is rack or zone: what one domain is.
	Level string `json:"level" enum:"rack,zone"`
	// TopologyKey is the node label that names the domain. Absent:
	// topology.kubernetes.io/zone for zones; racks need one.
	TopologyKey string `json:"topologyKey,omitempty"`
	// Domains is the number of racks or zones the pool's nodes are spread
	// over (evenly, as virtc assumes).
	Domains int64 `json:"domains"`
}

// ZoneTopologyKey is the well-known node label of zones.
const ZoneTopologyKey = "topology.kubernetes.io/zone"

// HostTopologyKey is the well-known node label of hosts.
const HostTopologyKey = "kubernetes.io/hostname"

// Spread modes of a spread group.
const (
	SpreadRequired  = "required"
	SpreadPreferred = "preferred"
)

// Spread keeps the VMs of a group apart: the VMs of one tenant that name
// the same group are placed on different hosts, racks or zones.
type Spread struct {
	// Group names the spread group, shared by the VMs to keep apart (the
	// two halves of an HA pair, the members of a cluster). It becomes the
	// label virtc.dev/spread-group of the VMs' pods.
	Group string `json:"group" pattern:"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$" hint:"a label value of lowercase letters, digits, '-' and '.'"`
	// Across is host, rack or zone: what the group's VMs must not share.
	// rack and zone need a pool whose failureDomain has that level.
	// Absent: host.
	Across string `json:"across,omitempty" enum:"host,rack,zone"`
	// Mode is required (the scheduler never puts two of the group in one
	// domain: a VM that cannot be placed stays Pending) or preferred (the
	// scheduler tries). Absent: required.
	Mode string `json:"mode,omitempty" enum:"required,preferred"`
}

// Health asks for guest-level health checks beyond the readiness probe
// every VM whose image runs the guest agent gets.
type Health struct {
	// Liveness adds a liveness probe on the QEMU guest agent: KubeVirt
	// restarts the VM when the agent stops answering (a hung guest). The
	// image must declare guestAgent: true.
	Liveness bool `json:"liveness,omitempty"`
}

// MigrationPolicy tunes the live migrations of the VMs it selects: a
// KubeVirt MigrationPolicy (migrations.kubevirt.io/v1alpha1) of the same
// name, emitted with the Platform. Large-memory or busy VMs need more
// bandwidth, more time per GiB, auto-converge or post-copy to finish.
type MigrationPolicy struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta          `json:"metadata"`
	Spec     MigrationPolicySpec `json:"spec"`
}

// MigrationPolicySpec is the policy's settings and the VMs it selects.
// Absent settings keep the cluster's (the Platform's liveMigration).
type MigrationPolicySpec struct {
	// BandwidthPerMigration caps each migration (bytes per second, such as
	// 1Gi). 0: unlimited.
	BandwidthPerMigration *resource.Quantity `json:"bandwidthPerMigration,omitempty"`
	// CompletionTimeoutPerGiB is the seconds a migration may take per GiB
	// of guest memory before it is cancelled.
	CompletionTimeoutPerGiB *int64 `json:"completionTimeoutPerGiB,omitempty"`
	// AllowAutoConverge lets QEMU throttle the guest's vCPUs until the
	// migration converges.
	AllowAutoConverge *bool `json:"allowAutoConverge,omitempty"`
	// AllowPostCopy switches a migration that does not converge to
	// post-copy: the guest runs on the target and fetches its memory from
	// the source (a network failure then loses the guest).
	AllowPostCopy *bool `json:"allowPostCopy,omitempty"`
	// Selector picks the VMs: all of its terms must hold. At least one term.
	Selector MigrationSelector `json:"selector"`
}

// MigrationSelector picks VMs by pool, tenant and labels. KubeVirt applies
// to a VM the policy whose selector matches the most of its labels and its
// namespace's (VM labels win a tie, then the policy name in alphabetical
// order: kubevirt v1.8.4 pkg/virt-controller/watch/migration/
// migrationpolicy.go matchPolicy); virtc's report names that policy.
type MigrationSelector struct {
	// Pool selects the VMs of a worker pool (their label virtc.dev/pool).
	Pool string `json:"pool,omitempty"`
	// Tenant selects the VMs of a tenant (its namespace's label
	// virtc.dev/tenant).
	Tenant string `json:"tenant,omitempty"`
	// VMLabels select VMs by their labels (metadata.labels of the intent).
	VMLabels map[string]string `json:"vmLabels,omitempty"`
}
