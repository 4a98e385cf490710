package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/placement"
	"github.com/virtc/virtc/internal/resolve"
)

// placementRules refuses what can never schedule (a VM whose networks or
// storage its pool does not reach, a VM larger than a node of its pool, a
// required spread group larger than the pool's hosts or zones), checks
// that KubeVirt's node agents can run on every pool, and warns about (or,
// with the Platform's requireMaintenanceReserve, refuses production VMs
// on) pools without maintenance reserve.
func placementRules(m *resolve.Model, diags *diag.List) {
	poolsUnderWorkloads(m, diags)
	dedicatedPool(m, diags)
	if len(m.Catalog.WorkerPools.Names()) == 0 {
		for _, t := range m.Tenants {
			for _, vm := range t.VMs {
				spreadLevel(vm, diags)
			}
		}
		return
	}
	res := placement.Analyze(m)
	for _, t := range m.Tenants {
		for _, vm := range t.VMs {
			spreadLevel(vm, diags)
			reachable(vm, diags)
			if p := vm.Pool; p != nil && vm.Size != nil && !placement.Fits(res.VMs[vm].Request, p) {
				req := res.VMs[vm].Request
				diags.Errorf(vm.Doc.Pos("spec.size"), "spec.size", "size %s needs a virt-launcher pod of %s CPU and %s, more than a node of pool %q offers (%s CPU, %s): it can never schedule (pick a smaller size or another pool)",
					vm.SizeName, milli(req.MilliCPU), gib(req.Memory), p.Name, p.Spec.Allocatable.CPU.String(), p.Spec.Allocatable.Memory.String())
			}
		}
		spreadGroupSize(t, diags)
	}
	for _, pp := range res.Pools {
		reserveRules(m, pp, diags)
	}
}

// spreadLevel refuses a spread across a level the VM's pool does not have.
func spreadLevel(vm *resolve.VM, diags *diag.List) {
	s := vm.Spread
	if s == nil || s.Across == api.DomainHost {
		return
	}
	if vm.Pool == nil {
		if s.Across == api.DomainRack {
			diags.Errorf(vm.Doc.Pos("spec.spread.across"), "spec.spread.across", "spread across rack needs a worker pool whose failureDomain is rack (virtc knows no rack label otherwise)")
		}
		return
	}
	if vm.Pool.Domains(s.Across) == 0 {
		diags.Errorf(vm.Doc.Pos("spec.spread.across"), "spec.spread.across", "pool %q has no %ss (its failureDomain says %s): spread across host, or use a pool with %ss", vm.Pool.Name, s.Across, poolLevel(vm.Pool), s.Across)
	}
}

func poolLevel(p *resolve.Pool) string {
	if fd := p.Spec.FailureDomain; fd != nil {
		return fmt.Sprintf("%d %ss", fd.Domains, fd.Level)
	}
	return "hosts only"
}

// reachable refuses networks and storage the VM's pool does not reach.
func reachable(vm *resolve.VM, diags *diag.List) {
	p := vm.Pool
	if p == nil {
		return
	}
	for i, n := range vm.Networks {
		if !p.Reaches(n.Name) {
			f := fmt.Sprintf("spec.networks[%d]", i)
			if len(vm.Spec.Networks) == 0 {
				f = "spec"
			}
			diags.Errorf(vm.Doc.Pos(f), f, "network %q is not reachable from pool %q (its nodes reach %s): the VM can never schedule (use another pool or network)", n.Name, p.Name, strings.Join(p.Spec.Networks, ", "))
		}
	}
	if st := vm.RootStorage; st.StorageProfile != nil && !p.Stores(st.Name) {
		diags.Errorf(vm.Doc.Pos("spec.rootDisk"), "spec.rootDisk", "the root disk's storage %q is not reachable from pool %q (its nodes reach %s): the VM can never schedule (use another pool, or make a reachable profile the default)", st.Name, p.Name, strings.Join(p.Spec.Storage, ", "))
	}
	for _, d := range vm.Attached() {
		if st := d.Storage; st.StorageProfile != nil && !p.Stores(st.Name) {
			f := d.Field + ".storage"
			diags.Errorf(vm.Doc.Pos(f), f, "storage %q is not reachable from pool %q (its nodes reach %s): the VM can never schedule (use another pool or storage profile)", st.Name, p.Name, strings.Join(p.Spec.Storage, ", "))
		}
	}
}

// spreadGroupSize refuses a required spread group with more running VMs
// than its pool has domains of the level: the scheduler could never place
// the last of them (it would stay Pending). Members of one group must
// agree on pool, level and mode.
func spreadGroupSize(t *resolve.Tenant, diags *diag.List) {
	type group struct {
		first *resolve.VM
		vms   []*resolve.VM
	}
	groups := map[string]*group{}
	var names []string
	for _, vm := range t.VMs {
		s := vm.Spread
		if s == nil || !placement.Runs(vm) {
			continue
		}
		g := groups[s.Group]
		if g == nil {
			g = &group{first: vm}
			groups[s.Group] = g
			names = append(names, s.Group)
		}
		f := g.first
		if f != vm && (f.Spread.Across != s.Across || f.Spread.Mode != s.Mode || poolName(f) != poolName(vm)) {
			diags.Errorf(vm.Doc.Pos("spec.spread"), "spec.spread", "spread group %q: VM %s spreads %s across %s on pool %q; every VM of a group spreads alike, on one pool", s.Group, f.Name, f.Spread.Mode, f.Spread.Across, poolName(f))
			continue
		}
		g.vms = append(g.vms, vm)
	}
	slices.Sort(names)
	for _, name := range names {
		g := groups[name]
		f := g.first
		if f.Pool == nil || f.Spread.Mode != api.SpreadRequired {
			continue
		}
		domains := f.Pool.Domains(f.Spread.Across)
		if domains == 0 || int64(len(g.vms)) <= domains {
			continue
		}
		for _, vm := range g.vms {
			diags.Errorf(vm.Doc.Pos("spec.spread.group"), "spec.spread.group", "spread group %q has %d running VMs required on different %ss, but pool %q has %d %ss: one can never schedule (use mode: preferred, fewer VMs, or a larger pool)",
				name, len(g.vms), f.Spread.Across, f.Pool.Name, domains, f.Spread.Across)
		}
	}
}

func poolName(vm *resolve.VM) string {
	if vm.Pool == nil {
		return ""
	}
	return vm.Pool.Name
}

// poolsUnderWorkloads refuses a pool whose nodes KubeVirt's node agents
// cannot run on: virt-handler runs where the Platform's spec.workloads
// places it (HCO spec.workloads.nodePlacement), and a node without it is
// never schedulable for VMs (virt-handler labels nodes
// kubevirt.io/schedulable). So the workloads tolerations must tolerate
// every pool taint, and the workloads node selector must not contradict
// a pool's.
func poolsUnderWorkloads(m *resolve.Model, diags *diag.List) {
	if m.Platform == nil {
		return
	}
	var w api.Placement
	if p := m.Platform.Obj.Spec.Workloads; p != nil {
		w = *p
	}
	for _, name := range m.Catalog.WorkerPools.Names() {
		e, _ := m.Catalog.WorkerPools.Entry(name)
		for i, t := range e.Obj.Spec.Taints {
			if !tolerated(w.Tolerations, t) {
				f := fmt.Sprintf("spec.taints[%d]", i)
				diags.Errorf(e.Doc.Pos(f), f, "pool %q: the Platform's spec.workloads.tolerations do not tolerate taint %s=%s:%s, so virt-handler cannot run on the pool's nodes and no VM would start there (add the toleration to the Platform)", name, t.Key, t.Value, t.Effect)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(w.NodeSelector)) {
			if v, ok := e.Obj.Spec.NodeSelector[k]; ok && v != w.NodeSelector[k] {
				f := "spec.nodeSelector." + k
				diags.Errorf(e.Doc.Pos(f), f, "pool %q selects %s=%q but the Platform's spec.workloads.nodeSelector selects %s=%q: the pool's nodes would run no virt-handler (make them agree)", name, k, v, k, w.NodeSelector[k])
			}
		}
	}
}

func tolerated(tols []api.Toleration, t api.Taint) bool {
	for _, tol := range tols {
		if tol.Effect != "" && tol.Effect != t.Effect {
			continue
		}
		if tol.Operator == "Exists" && (tol.Key == "" || tol.Key == t.Key) {
			return true
		}
		if tol.Key == t.Key && tol.Value == t.Value {
			return true
		}
	}
	return false
}

// reserveRules warns about a pool without maintenance reserve (its running
// VMs do not fit node by node with every node up, or after the N+1 loss:
// placement.Pool's packings), or with a drain that cannot complete; with
// the Platform's
// requireMaintenanceReserve the production VMs on it are refused.
func reserveRules(m *resolve.Model, pp *placement.Pool, diags *diag.List) {
	var problems []string
	problems = append(problems, pp.ReserveProblems...)
	if len(pp.DrainProblems) > 0 {
		problems = append(problems, "a drain of one node cannot complete: "+strings.Join(pp.DrainProblems, "; "))
	}
	if len(problems) == 0 {
		return
	}
	e, _ := m.Catalog.WorkerPools.Entry(pp.Pool.Name)
	require := m.Platform != nil && m.Platform.Obj.Spec.RequireMaintenanceReserve
	var refused []*resolve.VM
	for _, v := range pp.VMs {
		if v.VM.Tier == resolve.TierProduction || require {
			refused = append(refused, v.VM)
		}
	}
	if len(refused) > 0 {
		for _, vm := range refused {
			why := "a production VM's pool survives the loss of a node (doc 000, Compute: capacity and maintenance behavior; doc 001: planned maintenance needs capacity reserve): add nodes, or move VMs to another pool"
			if vm.Tier != resolve.TierProduction {
				why = "the Platform requires it of every tier: add nodes, move VMs to another pool, or lift spec.requireMaintenanceReserve"
			}
			diags.Errorf(vm.Doc.Pos("spec"), "spec.pool", "%s VM %s/%s is on pool %q, which has no maintenance reserve: %s (%s)",
				vm.Tier, vm.Namespace, vm.Name, pp.Pool.Name, strings.Join(problems, "; "), why)
		}
		return
	}
	diags.Warnf(e.Doc.Pos("spec.nodes"), "spec.nodes", "pool %q has no maintenance reserve: %s", pp.Pool.Name, strings.Join(problems, "; "))
}

func milli(m int64) string {
	if m%1000 == 0 {
		return fmt.Sprint(m / 1000)
	}
	return fmt.Sprintf("%dm", m)
}

func gib(b int64) string {
	if b%(1<<20) == 0 {
		return humanBytes(b)
	}
	return fmt.Sprintf("%.1fGi", float64(b)/(1<<30))
}

// archLabel is the node label of the CPU architecture (kubelet sets it;
// amd64 on x86).
const archLabel = "kubernetes.io/arch"

// dedicatedPool refuses production VMs that do not run on a dedicated x86
// worker pool. Doc 000, Compute and Decisions ("a dedicated x86
// worker-pool ... hosts virtualization workloads"; the eligible class is
// the "Standard x86 business VM"): a production VM needs a pool (a
// catalog WorkerPool, or with none the Platform's spec.workloads
// placement, which is where virt-handler runs and so where any VM can
// start: a nodeSelector and a toleration, the nodes' taint), whose nodes are x86 (no kubernetes.io/arch other than amd64
// selected) and dedicated (tainted, so that nothing else schedules
// there: a pool without taints shares its nodes with every pod). Each
// tenant or VM whose spec.tier makes VMs production is reported once per
// reason. A tenant-only build is judged by the platform repository's
// build, which has the pools.
func dedicatedPool(m *resolve.Model, diags *diag.List) {
	if m.Platform == nil {
		return
	}
	pools := len(m.Catalog.WorkerPools.Names()) > 0
	var w api.Placement
	if p := m.Platform.Obj.Spec.Workloads; p != nil {
		w = *p
	}
	seen := map[string]bool{}
	refuse := func(vm *resolve.VM, why, fix string) {
		doc, field := vm.Doc, "spec.tier"
		if vm.Spec.Tier == "" {
			doc = vm.Tenant.Doc
		}
		pos := doc.Pos(field)
		key := fmt.Sprint(pos) + why
		if seen[key] {
			return
		}
		seen[key] = true
		diags.Errorf(pos, field, "VM %s/%s is production tier but %s (doc 000, Compute: production runs on a dedicated x86 worker pool; %s, or use tier standard)", vm.Namespace, vm.Name, why, fix)
	}
	for _, vm := range productionVMs(m) {
		switch p := vm.Pool; {
		case !pools && (len(w.NodeSelector) == 0 || len(w.Tolerations) == 0):
			refuse(vm, fmt.Sprintf("platform %q has no worker pool in its catalog and its spec.workloads selects no tainted nodes (a nodeSelector and the toleration of their taint), so its VMs schedule onto any worker", m.Platform.Name),
				"add a WorkerPool of the dedicated nodes (their nodeSelector and taints) to the catalog, or place spec.workloads on them")
		case !pools && w.NodeSelector[archLabel] != "" && w.NodeSelector[archLabel] != "amd64":
			refuse(vm, fmt.Sprintf("the Platform's spec.workloads.nodeSelector selects %s=%s, not x86 (amd64)", archLabel, w.NodeSelector[archLabel]),
				"select amd64 nodes")
		case p == nil:
			// resolvePlacement refused it: no pool named and no default.
		case p.Spec.NodeSelector[archLabel] != "" && p.Spec.NodeSelector[archLabel] != "amd64":
			refuse(vm, fmt.Sprintf("its pool %q selects %s=%s, not x86 (amd64)", p.Name, archLabel, p.Spec.NodeSelector[archLabel]),
				"put it on a pool of amd64 nodes")
		case !slices.ContainsFunc(p.Spec.Taints, func(t api.Taint) bool { return t.Effect == "NoSchedule" || t.Effect == "NoExecute" }):
			refuse(vm, fmt.Sprintf("its pool %q has no NoSchedule or NoExecute taint, so any pod schedules onto its nodes: it is not dedicated", p.Name),
				"taint the pool's nodes and list the taint in its spec.taints")
		}
	}
}
