// Package placement answers "where can this VM run?": for each VM its
// eligible nodes in its worker pool after every constraint, and for each
// pool its capacity and maintenance reserve (N+1, node drain) judged node
// by node, by packing its running VMs onto the nodes that are up (Pack),
// and which migration policy KubeVirt gives each VM. Policy turns the
// answers into refusals and warnings; `virtc report` prints them.
package placement

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/sizing"
)

const gi = 1 << 30

// KubeVirt's default completion timeout per GiB (HCO liveMigrationConfig
// default, kubevirt virtconfig MigrationCompletionTimeoutPerGiB).
const defaultCompletionTimeoutPerGiB = 150

// VM is the placement of one VM.
type VM struct {
	VM *resolve.VM
	// Nodes is the number of nodes of its pool; Eligible how many of them
	// can run it after every constraint.
	Nodes, Eligible int64
	// Constraints say what narrows the pool, in order.
	Constraints []string
	// Request is its virt-launcher pod's request.
	Request sizing.Pod
	// Policy is the migration policy KubeVirt applies to it ("" for none:
	// the cluster's settings).
	Policy string
	// Bandwidth (bytes/s, 0 unlimited) and TimeoutPerGiB are its effective
	// migration settings.
	Bandwidth, TimeoutPerGiB int64
}

// Pool is the capacity and reserve of one pool, judged node by node:
// each scenario (all nodes up, the loss N+1 plans for, the drain of one
// node) packs the pool's running VMs onto the nodes that are up (see
// Packing). Every VM that runs (runStrategy other than Halted; retired
// VMs are halted) is placed in every scenario: virtc does not know which
// node a VM runs on, so any of them may be one that keeps running on a
// node that stays, and KubeVirt restarts those of a lost node
// (runStrategy Always, and RerunOnFailure, whose VMI fails with its node:
// kubevirt v1.8.4 pkg/virt-controller/watch/vm/vm.go); Manual and Once
// VMs wait for a person, who needs the same room.
type Pool struct {
	Pool *resolve.Pool
	// VMs are the pool's VMs that run (not halted), in tenant and name order.
	VMs []*VM
	// Requests is the sum of their launcher requests; Capacity the pool's.
	Requests, Capacity sizing.Pod
	// Initial is their packing with every node up.
	Initial *Packing
	// Lose describes the failure N+1 plans for ("one node", "one zone (3
	// nodes)": the largest rack or zone, the worst loss, as the nodes are
	// alike); Remaining is the capacity after it, in sum; Loss the packing
	// on the nodes left.
	Lose      string
	Remaining sizing.Pod
	Loss      *Packing
	// ReserveOK: the VMs fit with every node up and after the loss;
	// ReserveProblems say why not (the initial state first).
	ReserveOK       bool
	ReserveProblems []string
	// Drains are the packings with one node drained: one per size of rack
	// or zone (the nodes of equal domains are alike), one in a pool
	// without failure domains.
	Drains []*Packing
	// DrainStops are the VMs a drain shuts down rather than migrates
	// (evictionStrategy None): those with runStrategy Always restart on
	// another node (DrainRestarts); the others stay stopped (RerunOnFailure
	// too: an evicted VMI ends Succeeded, not Failed, kubevirt v1.8.4
	// pkg/virt-controller/watch/vm/vm.go, kubevirt/kubevirt#9823). Which
	// ones stop depends on the node drained; virtc places them all, as
	// above.
	DrainStops, DrainRestarts []*VM
	// DrainOK, DrainProblems say whether and why a drain cannot complete;
	// PerNode is the VMs of a node (spread evenly), Concurrent the
	// migrations at once, Rounds how many waves.
	DrainOK       bool
	DrainProblems []string
	PerNode       int64
	Concurrent    int64
	Rounds        int64
}

// Result is the placement of a model.
type Result struct {
	VMs   map[*resolve.VM]*VM
	Pools []*Pool
}

// Analyze places every VM of the model.
func Analyze(m *resolve.Model) *Result {
	r := &Result{VMs: map[*resolve.VM]*VM{}}
	byPool := map[string]*Pool{}
	for _, name := range m.Catalog.WorkerPools.Names() {
		p, _ := m.Catalog.WorkerPools.Get(name)
		pp := &Pool{Pool: &resolve.Pool{Name: name, WorkerPool: p}}
		byPool[name] = pp
		r.Pools = append(r.Pools, pp)
	}
	policies := policyMatchers(m)
	for _, t := range m.Tenants {
		groups := spreadGroups(t)
		for _, vm := range t.VMs {
			pv := &VM{VM: vm}
			r.VMs[vm] = pv
			if vm.Size != nil {
				pv.Request = sizing.KubeVirt.LauncherFor(sizing.ShapeOf(vm))
			}
			pv.Policy = matchPolicy(policies, vm)
			pv.Bandwidth, pv.TimeoutPerGiB = migrationSettings(m, pv.Policy)
			if vm.Pool == nil {
				continue
			}
			eligible(pv, groups)
			// A VM that can never schedule (refused) takes no capacity.
			if pp := byPool[vm.Pool.Name]; pp != nil && Runs(vm) && pv.Eligible > 0 {
				pp.VMs = append(pp.VMs, pv)
			}
		}
	}
	for _, pp := range r.Pools {
		reserve(m, pp)
	}
	return r
}

// Runs reports whether a VM has a launcher pod to place: it is not halted.
func Runs(vm *resolve.VM) bool { return vm.RunStrategy != api.RunHalted }

// spreadGroups are the running VMs of a tenant by spread group.
func spreadGroups(t *resolve.Tenant) map[string][]*resolve.VM {
	g := map[string][]*resolve.VM{}
	for _, vm := range t.VMs {
		if vm.Spread != nil && Runs(vm) {
			g[vm.Spread.Group] = append(g[vm.Spread.Group], vm)
		}
	}
	return g
}

// Fits reports whether a launcher request fits on one node of the pool.
func Fits(req sizing.Pod, p *resolve.Pool) bool {
	return req.MilliCPU <= p.Spec.Allocatable.CPU.MilliValue() && req.Memory <= p.Spec.Allocatable.Memory.Value()
}

// eligible narrows the VM's pool by its networks, storage, size, CPU
// model and spread group.
func eligible(pv *VM, groups map[string][]*resolve.VM) {
	vm, p := pv.VM, pv.VM.Pool
	pv.Nodes = p.Spec.Nodes
	n := p.Spec.Nodes
	add := func(format string, args ...any) {
		pv.Constraints = append(pv.Constraints, fmt.Sprintf(format, args...))
	}
	add("pool %s: %d nodes", p.Name, p.Spec.Nodes)
	for _, net := range vm.Networks {
		if !p.Reaches(net.Name) {
			add("network %s: not reachable from the pool", net.Name)
			n = 0
		}
	}
	for _, st := range Storage(vm) {
		if !p.Stores(st.Name) {
			add("storage %s: not reachable from the pool", st.Name)
			n = 0
		}
	}
	if vm.Size != nil && !Fits(pv.Request, p) {
		add("size %s: its launcher pod (%s CPU, %s) is larger than a node", vm.SizeName, milli(pv.Request.MilliCPU), bytes(pv.Request.Memory))
		n = 0
	}
	if p.Spec.CPUModel != "" {
		add("CPU model %s: every node of the pool", p.Spec.CPUModel)
	}
	if s := vm.Spread; s != nil && s.Mode == api.SpreadPreferred {
		add("spread group %s (preferred, across %s): the scheduler tries, no node is excluded", s.Group, s.Across)
	}
	if s := vm.Spread; s != nil && s.Mode == api.SpreadRequired {
		others := int64(0)
		for _, o := range groups[s.Group] {
			if o != vm && o.Pool != nil && o.Pool.Name == p.Name {
				others++
			}
		}
		if others > 0 {
			var left int64
			if s.Across == api.DomainHost {
				left = p.Spec.Nodes - others
			} else {
				left = smallestDomains(p, p.Domains(s.Across)-others)
			}
			left = max(left, 0)
			add("spread group %s (required, across %s): %d other %s", s.Group, s.Across, others, plural(others, "VM", "VMs"))
			n = min(n, left)
		}
	}
	pv.Eligible = n
}

// smallestDomains is the number of nodes in the k smallest racks or zones
// of the pool (nodes spread evenly: the first nodes%domains domains have
// one node more).
func smallestDomains(p *resolve.Pool, k int64) int64 {
	fd := p.Spec.FailureDomain
	if fd == nil || k <= 0 {
		return 0
	}
	small, big := p.Spec.Nodes/fd.Domains, p.Spec.Nodes%fd.Domains
	nSmall := fd.Domains - big
	if k <= nSmall {
		return k * small
	}
	return nSmall*small + (k-nSmall)*(small+1)
}

// Storage are the storage profiles a VM's disks use, each once.
func Storage(vm *resolve.VM) []resolve.Storage {
	out := []resolve.Storage{vm.RootStorage}
	for _, d := range vm.Attached() {
		if !slices.ContainsFunc(out, func(s resolve.Storage) bool { return s.Name == d.Storage.Name }) {
			out = append(out, d.Storage)
		}
	}
	return slices.DeleteFunc(out, func(s resolve.Storage) bool { return s.StorageProfile == nil })
}

// reserve checks a pool's capacity, N+1 and the drain of one node, node
// by node.
func reserve(m *resolve.Model, pp *Pool) {
	p := pp.Pool
	alloc := sizing.Pod{MilliCPU: p.Spec.Allocatable.CPU.MilliValue(), Memory: p.Spec.Allocatable.Memory.Value()}
	times := func(n int64) sizing.Pod { return sizing.Pod{MilliCPU: alloc.MilliCPU * n, Memory: alloc.Memory * n} }
	for _, v := range pp.VMs {
		pp.Requests = pp.Requests.Add(v.Request)
	}
	pp.Capacity = times(p.Spec.Nodes)
	domains := nodeDomains(p)
	// N+1 loses one node (the nodes are alike), or the first rack or
	// zone: a largest one, the first domains having one node more.
	lost := []int64{1}
	pp.Lose = "one node"
	if fd := p.Spec.FailureDomain; fd != nil && fd.Domains > 1 {
		lost = nil
		for i, d := range domains {
			if d == 1 {
				lost = append(lost, int64(i)+1)
			}
		}
		pp.Lose = fmt.Sprintf("one %s (%d %s)", fd.Level, len(lost), plural(int64(len(lost)), "node", "nodes"))
	}
	if p.Spec.Nodes == 0 {
		lost = nil
	}
	pp.Remaining = times(max(p.Spec.Nodes-int64(len(lost)), 0))
	pp.Initial = Pack(p, pp.VMs, nil)
	pp.Loss = Pack(p, pp.VMs, lost)
	if !pp.Initial.Fits {
		pp.ReserveProblems = append(pp.ReserveProblems, fmt.Sprintf("even with all %d %s up: %s", p.Spec.Nodes, plural(p.Spec.Nodes, "node", "nodes"), pp.Initial.Problem()))
	}
	if !pp.Loss.Fits {
		pp.ReserveProblems = append(pp.ReserveProblems, fmt.Sprintf("after losing %s: %s", pp.Lose, pp.Loss.Problem()))
	}
	pp.ReserveOK = len(pp.ReserveProblems) == 0

	// The drain of one node: its VMs leave it, the migratable ones by
	// live migration, a few at a time; the others are shut down.
	pp.DrainOK = true
	pp.Concurrent = m.ConcurrentMigrations()
	if len(pp.VMs) == 0 {
		return
	}
	pp.PerNode = (int64(len(pp.VMs)) + p.Spec.Nodes - 1) / p.Spec.Nodes
	migrating := 0
	for _, v := range pp.VMs {
		if model.EvictionStrategy(v.VM) != kubevirtv1.EvictionStrategyNone {
			migrating++
			continue
		}
		pp.DrainStops = append(pp.DrainStops, v)
		if v.VM.RunStrategy == api.RunAlways {
			pp.DrainRestarts = append(pp.DrainRestarts, v)
		}
	}
	onNode := min(int64(migrating), pp.PerNode)
	pp.Rounds = (onNode + pp.Concurrent - 1) / pp.Concurrent
	problem := func(format string, args ...any) {
		pp.DrainOK = false
		pp.DrainProblems = append(pp.DrainProblems, fmt.Sprintf(format, args...))
	}
	if migrating > 0 && p.Spec.Nodes < 2 {
		problem("the pool has one node: its migratable VMs have no other node to go to")
	}
	// One node drained per size of domain: the first node of the first
	// domain of each size.
	sizes := map[int64]int64{}
	for _, d := range domains {
		sizes[d]++
	}
	seen := map[int64]bool{}
	for i, d := range domains {
		if seen[sizes[d]] || p.Spec.Nodes < 2 {
			continue
		}
		seen[sizes[d]] = true
		k := Pack(p, pp.VMs, []int64{int64(i) + 1})
		pp.Drains = append(pp.Drains, k)
		if k.Fits {
			continue
		}
		what := "any one node"
		if fd := p.Spec.FailureDomain; fd != nil && fd.Domains > 1 {
			what = fmt.Sprintf("a node of a %s of %d %s", fd.Level, sizes[d], plural(sizes[d], "node", "nodes"))
		}
		if slices.Equal(k.Down, pp.Loss.Down) {
			// The nodes left are those N+1 leaves, already told.
			problem("draining %s leaves the nodes that losing one leaves: %d of the %d running VMs %s no room, as above", what, len(k.Unplaced), k.VMs, plural(int64(len(k.Unplaced)), "finds", "find"))
			continue
		}
		problem("draining %s: %s", what, k.Problem())
	}
	// A migration's target pod carries the group label and keeps the
	// template's anti-affinity (KubeVirt v1.8.4 pkg/virt-controller/
	// watch/migration/migration.go createMigrationPodAntiAffinityRule
	// appends its own term to it): it must avoid every host, rack or zone
	// holding a pod of the group, its own source pod's included, as if
	// that host or zone were lost. With as many members as domains there
	// is none left: the packing of the drained state does not see this,
	// as both pods exist at once only while the VM migrates.
	for _, g := range spreadShortfalls(pp, 1, 1) {
		if !g.migrates || drainLeavesOut(pp.Drains, g.name) {
			// A member the drained state has no room for is told above.
			continue
		}
		if g.across == api.DomainHost {
			problem("spread group %s has %d VMs required on different hosts of %d nodes: the one on the drained node has no host to migrate to", g.name, g.members, p.Spec.Nodes)
		} else {
			problem("spread group %s has %d VMs required in different %ss of %d: a migrating one must move to a %s without a pod of the group (its own source pod's included), and there is none", g.name, g.members, g.across, g.domains, g.across)
		}
	}
	for _, v := range pp.VMs {
		vm := v.VM
		if model.EvictionStrategy(vm) == kubevirtv1.EvictionStrategyNone {
			continue
		}
		if v.Bandwidth > 0 && vm.Size != nil {
			mem := vm.Size.Spec.Memory.Value()
			need := (mem + v.Bandwidth - 1) / v.Bandwidth
			allowed := v.TimeoutPerGiB * mem / gi
			if need > allowed {
				problem("VM %s/%s cannot finish migrating: %s at %s/s take at least %ds, beyond the %ds its completion timeout (%ds per GiB) allows", vm.Namespace, vm.Name, bytes(mem), bytes(v.Bandwidth), need, allowed, v.TimeoutPerGiB)
			}
		}
	}
}

// drainLeavesOut reports whether a drain's packing leaves out a member
// of a spread group (tenant/group).
func drainLeavesOut(drains []*Packing, group string) bool {
	for _, k := range drains {
		for _, v := range k.Unplaced {
			if s := v.VM.Spread; s != nil && v.VM.Namespace+"/"+s.Group == group {
				return true
			}
		}
	}
	return false
}

// shortfall is a required spread group of a pool with more running
// members than domains left after a loss.
type shortfall struct {
	name, across           string
	members, domains, left int64
	// migrates: one of its members live-migrates (a drain moves it).
	migrates bool
}

// spreadShortfalls are the pool's required spread groups (by tenant and
// group, in order) whose running members outnumber the hosts left after
// losing hosts nodes, or the racks or zones left after losing zones of
// them: the drain of one node checks its migrations with it (the packings
// see the spread groups of the states before and after).
func spreadShortfalls(pp *Pool, hosts, zones int64) []shortfall {
	var out []shortfall
	seen := map[string]bool{}
	for _, v := range pp.VMs {
		s := v.VM.Spread
		key := v.VM.Namespace + "/"
		if s != nil {
			key += s.Group
		}
		if s == nil || s.Mode != api.SpreadRequired || seen[key] {
			continue
		}
		seen[key] = true
		g := shortfall{name: key, across: s.Across, domains: pp.Pool.Domains(s.Across)}
		for _, o := range pp.VMs {
			if o.VM.Namespace == v.VM.Namespace && o.VM.Spread != nil && o.VM.Spread.Group == s.Group {
				g.members++
				g.migrates = g.migrates || model.EvictionStrategy(o.VM) != kubevirtv1.EvictionStrategyNone
			}
		}
		if g.domains == 0 {
			continue
		}
		lost := zones
		if s.Across == api.DomainHost {
			lost = hosts
		}
		g.left = max(g.domains-lost, 0)
		if g.members > g.left {
			out = append(out, g)
		}
	}
	return out
}

// policyMatcher is a catalog migration policy as KubeVirt matches it.
type policyMatcher struct {
	name         string
	vmi, ns      map[string]string
	hasSelectors bool
}

func policyMatchers(m *resolve.Model) []policyMatcher {
	var out []policyMatcher
	for _, name := range m.Catalog.MigrationPolicies.Names() {
		p, _ := m.Catalog.MigrationPolicies.Get(name)
		vmi, ns := model.MigrationPolicyLabels(p)
		out = append(out, policyMatcher{name: name, vmi: vmi, ns: ns})
	}
	return out
}

// matchPolicy is KubeVirt's choice of a VM's migration policy: among the
// policies all of whose selector labels the VMI and its namespace carry,
// the one matching the most labels (VMI labels win a tie), then the first
// by name (kubevirt v1.8.4 pkg/virt-controller/watch/migration/
// migrationpolicy.go, matchPolicy and countMatchingLabels).
func matchPolicy(ps []policyMatcher, vm *resolve.VM) string {
	if len(ps) == 0 {
		return ""
	}
	vmiLabels := model.TemplateLabels(vm)
	nsLabels := model.NamespaceLabels(vm.Tenant)
	best, bestVMI, bestNS := "", -1, -1
	for _, p := range ps {
		nVMI, ok := count(p.vmi, vmiLabels)
		if !ok {
			continue
		}
		nNS, ok := count(p.ns, nsLabels)
		if !ok {
			continue
		}
		total, bestTotal := nVMI+nNS, bestVMI+bestNS
		if best == "" || total > bestTotal || total == bestTotal && nVMI > bestVMI {
			best, bestVMI, bestNS = p.name, nVMI, nNS
		}
	}
	return best
}

func count(selector, labels map[string]string) (int, bool) {
	n := 0
	for _, k := range slices.Sorted(maps.Keys(selector)) {
		if v, ok := labels[k]; !ok || v != selector[k] {
			return 0, false
		}
		n++
	}
	return n, true
}

// migrationSettings are a VM's bandwidth and completion timeout: its
// policy's, else the Platform's, else KubeVirt's defaults.
func migrationSettings(m *resolve.Model, policy string) (bandwidth, timeout int64) {
	timeout = defaultCompletionTimeoutPerGiB
	if m.Platform != nil {
		if lm := m.Platform.Obj.Spec.LiveMigration; lm != nil {
			if lm.BandwidthPerMigration != nil {
				bandwidth = lm.BandwidthPerMigration.Value()
			}
			if lm.CompletionTimeoutPerGiB != nil {
				timeout = *lm.CompletionTimeoutPerGiB
			}
		}
	}
	if policy != "" {
		p, _ := m.Catalog.MigrationPolicies.Get(policy)
		if p.Spec.BandwidthPerMigration != nil {
			bandwidth = p.Spec.BandwidthPerMigration.Value()
		}
		timeout = cmp.Or(ptr(p.Spec.CompletionTimeoutPerGiB), timeout)
	}
	return bandwidth, timeout
}

func ptr(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func milli(m int64) string {
	q := sizing.Milli(m)
	return q.String()
}

// bytes writes a byte count as Kubernetes does where it is exact in Mi
// or Gi, else in Gi with one decimal.
func bytes(b int64) string {
	if b%(1<<20) == 0 {
		q := sizing.Bytes(b)
		return q.String()
	}
	return fmt.Sprintf("%.1fGi", float64(b)/(1<<30))
}
