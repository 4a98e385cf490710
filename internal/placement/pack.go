package placement

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/sizing"
)

// SearchBudget bounds the exhaustive search that follows a failed
// first-fit decreasing: the number of (VM, node) choices it tries before
// it gives up and leaves the verdict to the heuristic.
const SearchBudget = 100_000

// Node is one node of a pool in a packing.
type Node struct {
	// Index is the node's number in the pool (1-based; virtc knows nodes
	// only by count, so the numbers are its own); Domain the number of its
	// rack or zone (1-based; 0 in a pool without failure domains). The
	// nodes are spread over the domains evenly, the first domains getting
	// one node more (as resolve.Pool.LargestDomain counts).
	Index, Domain int64
	// VMs are the VMs placed on it, the largest first.
	VMs []*VM
	// Free is what its allocatable leaves after their launcher requests.
	Free sizing.Pod
}

// Packing is a placement of a pool's running VMs on the nodes that are up
// in one scenario (all nodes, a node or zone lost, a node drained), as the
// scheduler would have to find it: each VM's launcher pod on one node
// whose free CPU and memory cover its requests, and no two VMs of a
// required spread group in one host, rack or zone.
//
// Bin packing is NP-hard. virtc runs first-fit decreasing (the VMs by
// memory, then CPU, then tenant and name, each on the first node by number
// that has room and no member of its required spread group in the way);
// when that leaves VMs out, an exhaustive search (backtracking over the
// same order, nodes of equal state tried once) decides within
// SearchBudget choices: it finds a placement, proves there is none, or
// gives up, and then the verdict is the heuristic's ("found no
// placement"), not a proof.
//
// A fit is necessary, not sufficient: the scheduler places a restarted or
// migrating VM in the room the VMs already running leave, and does not
// move those, so a pool whose VMs fit in some arrangement can still strand
// one in the arrangement it has.
type Packing struct {
	// Down are the numbers of the nodes out (lost or drained).
	Down []int64
	// Nodes are the nodes up, by number, with the VMs placed on them.
	Nodes []*Node
	// VMs is the number of VMs to place.
	VMs int
	// Unplaced are the VMs first-fit decreasing left out, when no
	// placement was found (largest first).
	Unplaced []*VM
	// Fits: every VM has a node.
	Fits bool
	// Proven: when the VMs do not fit, no placement exists (the search
	// finished, or their requests exceed the free room of all nodes);
	// otherwise the search gave up.
	Proven bool
}

// nodeDomains are the domains of a pool's nodes, by node (0 without
// failure domains).
func nodeDomains(p *resolve.Pool) []int64 {
	out := make([]int64, p.Spec.Nodes)
	fd := p.Spec.FailureDomain
	if fd == nil || fd.Domains < 1 {
		return out
	}
	small, big := p.Spec.Nodes/fd.Domains, p.Spec.Nodes%fd.Domains
	i := int64(0)
	for d := int64(1); d <= fd.Domains; d++ {
		size := small
		if d <= big {
			size++
		}
		for range size {
			out[i] = d
			i++
		}
	}
	return out
}

// packOrder sorts VMs as first-fit decreasing takes them: memory, then
// CPU, the largest first; then tenant and name, so the result does not
// depend on the order the VMs came in.
func packOrder(vms []*VM) []*VM {
	out := slices.Clone(vms)
	slices.SortStableFunc(out, func(a, b *VM) int {
		return cmp.Or(
			cmp.Compare(b.Request.Memory, a.Request.Memory),
			cmp.Compare(b.Request.MilliCPU, a.Request.MilliCPU),
			cmp.Compare(a.VM.Namespace, b.VM.Namespace),
			cmp.Compare(a.VM.Name, b.VM.Name))
	})
	return out
}

// spreadKey is the required spread group a VM belongs to ("" for none),
// and the level its members must not share.
func spreadKey(v *VM, p *resolve.Pool) (key, across string) {
	s := v.VM.Spread
	if s == nil || s.Mode != api.SpreadRequired || p.Domains(s.Across) == 0 {
		// Preferred spread excludes no node; a level the pool lacks is
		// refused elsewhere (policy spreadLevel).
		return "", ""
	}
	return v.VM.Namespace + "/" + s.Group, s.Across
}

// packer is the state of one packing.
type packer struct {
	pool  *resolve.Pool
	nodes []*Node
	// onNode and inDomain count the members of each required spread
	// group on each node (by position in nodes) and in each domain.
	onNode   []map[string]int
	inDomain map[int64]map[string]int
	// free is the room of all nodes together.
	free   sizing.Pod
	budget int
}

func (k *packer) fits(v *VM, i int) bool {
	n := k.nodes[i]
	if v.Request.MilliCPU > n.Free.MilliCPU || v.Request.Memory > n.Free.Memory {
		return false
	}
	key, across := spreadKey(v, k.pool)
	switch {
	case key == "":
		return true
	case across == api.DomainHost:
		return k.onNode[i][key] == 0
	default:
		return k.inDomain[n.Domain][key] == 0
	}
}

func (k *packer) place(v *VM, i int, sign int) {
	n := k.nodes[i]
	if sign > 0 {
		n.VMs = append(n.VMs, v)
	} else {
		n.VMs = n.VMs[:len(n.VMs)-1]
	}
	d := int64(sign)
	n.Free.MilliCPU -= d * v.Request.MilliCPU
	n.Free.Memory -= d * v.Request.Memory
	k.free.MilliCPU -= d * v.Request.MilliCPU
	k.free.Memory -= d * v.Request.Memory
	if key, _ := spreadKey(v, k.pool); key != "" {
		k.onNode[i][key] += sign
		if k.inDomain[n.Domain] == nil {
			k.inDomain[n.Domain] = map[string]int{}
		}
		k.inDomain[n.Domain][key] += sign
	}
}

// signature is what makes two nodes interchangeable for the VMs still to
// place: the same domain, the same free room, the same spread groups.
type signature struct {
	domain, cpu, mem int64
	groups           string
}

func (k *packer) signature(i int) signature {
	n := k.nodes[i]
	sig := signature{domain: n.Domain, cpu: n.Free.MilliCPU, mem: n.Free.Memory}
	if len(k.onNode[i]) == 0 {
		return sig
	}
	var groups []string
	for g, c := range k.onNode[i] {
		if c > 0 {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	sig.groups = strings.Join(groups, ",")
	return sig
}

// search places vms[j:] by backtracking; done is false when the budget ran
// out before it decided.
func (k *packer) search(vms []*VM, j int, restCPU, restMem []int64) (found, done bool) {
	if j == len(vms) {
		return true, true
	}
	if restCPU[j] > k.free.MilliCPU || restMem[j] > k.free.Memory {
		return false, true
	}
	tried := map[signature]bool{}
	for i := range k.nodes {
		if !k.fits(vms[j], i) {
			continue
		}
		sig := k.signature(i)
		if tried[sig] {
			continue
		}
		tried[sig] = true
		if k.budget == 0 {
			return false, false
		}
		k.budget--
		k.place(vms[j], i, 1)
		found, done := k.search(vms, j+1, restCPU, restMem)
		if found {
			return true, true
		}
		k.place(vms[j], i, -1)
		if !done {
			return false, false
		}
	}
	return false, true
}

func (k *packer) reset(p *resolve.Pool, up []int64, domains []int64) {
	alloc := sizing.Pod{MilliCPU: p.Spec.Allocatable.CPU.MilliValue(), Memory: p.Spec.Allocatable.Memory.Value()}
	k.nodes = k.nodes[:0]
	k.onNode = k.onNode[:0]
	k.inDomain = map[int64]map[string]int{}
	k.free = sizing.Pod{}
	for _, i := range up {
		k.nodes = append(k.nodes, &Node{Index: i, Domain: domains[i-1], Free: alloc})
		k.onNode = append(k.onNode, map[string]int{})
		k.free = k.free.Add(alloc)
	}
}

// Pack places the running VMs of a pool on its nodes but the ones down
// (by number): first-fit decreasing, then, if that leaves VMs out, the
// bounded exhaustive search (see Packing).
func Pack(p *resolve.Pool, vms []*VM, down []int64) *Packing {
	domains := nodeDomains(p)
	var up []int64
	for i := int64(1); i <= p.Spec.Nodes; i++ {
		if !slices.Contains(down, i) {
			up = append(up, i)
		}
	}
	order := packOrder(vms)
	k := &packer{pool: p}
	k.reset(p, up, domains)
	out := &Packing{Down: slices.Clone(down), VMs: len(vms)}
	for _, v := range order {
		placed := false
		for i := range k.nodes {
			if k.fits(v, i) {
				k.place(v, i, 1)
				placed = true
				break
			}
		}
		if !placed {
			out.Unplaced = append(out.Unplaced, v)
		}
	}
	out.Nodes = k.nodes
	if len(out.Unplaced) == 0 {
		out.Fits = true
		return out
	}
	restCPU, restMem := make([]int64, len(order)+1), make([]int64, len(order)+1)
	for j := len(order) - 1; j >= 0; j-- {
		restCPU[j] = restCPU[j+1] + order[j].Request.MilliCPU
		restMem[j] = restMem[j+1] + order[j].Request.Memory
	}
	if spreadShort(p, order, k.nodes) {
		out.Proven = true
		return out
	}
	heuristic := k.nodes
	k.nodes = nil
	k.reset(p, up, domains)
	k.budget = SearchBudget
	found, done := k.search(order, 0, restCPU, restMem)
	if found {
		out.Nodes, out.Unplaced, out.Fits = k.nodes, nil, true
		return out
	}
	out.Nodes, out.Proven = heuristic, done
	return out
}

// spreadShort reports whether a required spread group has more members
// than the nodes up have hosts, racks or zones: then no placement exists.
func spreadShort(p *resolve.Pool, vms []*VM, nodes []*Node) bool {
	hosts, doms := int64(len(nodes)), map[int64]bool{}
	for _, n := range nodes {
		doms[n.Domain] = true
	}
	members := map[string]int64{}
	for _, v := range vms {
		key, across := spreadKey(v, p)
		if key == "" {
			continue
		}
		members[key]++
		if across == api.DomainHost && members[key] > hosts || across != api.DomainHost && members[key] > int64(len(doms)) {
			return true
		}
	}
	return false
}

// Problem says why the VMs do not fit, for a message: how many and which
// VMs first-fit decreasing leaves without a node (the first
// diag.MaxNames), whether no placement exists or virtc found none, and the
// room the nodes keep.
func (k *Packing) Problem() string {
	if len(k.Nodes) == 0 {
		return fmt.Sprintf("no node is left for the %d running %s", k.VMs, plural(int64(k.VMs), "VM", "VMs"))
	}
	var names []string
	for _, v := range k.Unplaced[:min(len(k.Unplaced), diag.MaxNames)] {
		names = append(names, k.unplacedText(v))
	}
	list := strings.Join(names, ", ")
	if more := len(k.Unplaced) - len(names); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	verdict := "no placement of all of them exists"
	if !k.Proven {
		verdict = fmt.Sprintf("virtc found no placement of all of them (first-fit decreasing, then %d steps of exhaustive search: one may still exist)", SearchBudget)
	}
	// One VM left out of a placement that cannot exist is the fewest;
	// more are the heuristic's count, which a better packing might lower.
	how := ""
	if len(k.Unplaced) > 1 {
		how = " as first-fit decreasing packs them"
	}
	return fmt.Sprintf("%d of the %d running VMs %s no room on the %d %s%s: %s; %s; free: %s",
		len(k.Unplaced), k.VMs, plural(int64(len(k.Unplaced)), "finds", "find"), len(k.Nodes), plural(int64(len(k.Nodes)), "node", "nodes"), how,
		list, verdict, k.FreeText())
}

// unplacedText names a VM left out and what it needs: its launcher
// requests, and the spread group when every node with room for it holds a
// member (or is in a rack or zone that does).
func (k *Packing) unplacedText(v *VM) string {
	text := fmt.Sprintf("%s/%s (%s CPU, %s", v.VM.Namespace, v.VM.Name, milli(v.Request.MilliCPU), bytes(v.Request.Memory))
	s := v.VM.Spread
	if s == nil || s.Mode != api.SpreadRequired {
		return text + ")"
	}
	member := func(o *VM) bool {
		return o.VM.Namespace == v.VM.Namespace && o.VM.Spread != nil && o.VM.Spread.Group == s.Group
	}
	takenNode, takenDomain := map[int64]bool{}, map[int64]bool{}
	for _, n := range k.Nodes {
		if slices.ContainsFunc(n.VMs, member) {
			takenNode[n.Index], takenDomain[n.Domain] = true, true
		}
	}
	room, blocked := 0, 0
	for _, n := range k.Nodes {
		if v.Request.MilliCPU > n.Free.MilliCPU || v.Request.Memory > n.Free.Memory {
			continue
		}
		room++
		if s.Across == api.DomainHost && takenNode[n.Index] || s.Across != api.DomainHost && takenDomain[n.Domain] {
			blocked++
		}
	}
	if room == 0 || blocked < room {
		return text + ")"
	}
	if s.Across == api.DomainHost {
		return fmt.Sprintf("%s; every node with room for it holds a member of its spread group %s/%s)", text, v.VM.Namespace, s.Group)
	}
	return fmt.Sprintf("%s; every node with room for it is in a %s holding a member of its spread group %s/%s)", text, s.Across, v.VM.Namespace, s.Group)
}

// FreeText is the room the nodes keep, nodes of equal room together, in
// node order: "31.2Gi and 29200m CPU on each of 3 nodes".
func (k *Packing) FreeText() string {
	type room struct {
		free sizing.Pod
		n    int
	}
	var rooms []*room
	for _, n := range k.Nodes {
		i := slices.IndexFunc(rooms, func(r *room) bool { return r.free == n.Free })
		if i < 0 {
			rooms = append(rooms, &room{free: n.Free})
			i = len(rooms) - 1
		}
		rooms[i].n++
	}
	var parts []string
	for _, r := range rooms {
		where := "on 1 node"
		if r.n > 1 {
			where = fmt.Sprintf("on each of %d nodes", r.n)
		}
		parts = append(parts, fmt.Sprintf("%s and %s CPU %s", bytes(r.free.Memory), milli(r.free.MilliCPU), where))
	}
	return strings.Join(parts, "; ")
}
