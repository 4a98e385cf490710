package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/virtc/virtc/fn/placement"
	"github.com/virtc/virtc/fn/render"
	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/sizing"
)

func guestHealth(vm *resolve.VM) string {
	switch {
	case !render.GuestHealth(vm):
		return "none"
	case vm.Spec.Health != nil && vm.Spec.Health.Liveness:
		return "readiness, liveness"
	}
	return "readiness"
}

func reserveOf(pp *placement.Pool) poolReserve {
	milli := func(m int64) string { q := sizing.Milli(m); return q.String() }
	return poolReserve{
		VMs: len(pp.VMs), RequestsCPU: milli(pp.Requests.MilliCPU), RequestsMemory: gibText(pp.Requests.Memory),
		CapacityCPU: milli(pp.Capacity.MilliCPU), CapacityMemory: gibText(pp.Capacity.Memory),
		Lose: pp.Lose, RemainingCPU: milli(pp.Remaining.MilliCPU), RemainingMem: gibText(pp.Remaining.Memory),
		NPlusOne: pp.ReserveOK, NPlusOneProblems: pp.ReserveProblems, DrainOK: pp.DrainOK, DrainProblems: pp.DrainProblems,
		VMsPerNode: pp.PerNode, Concurrent: pp.Concurrent, Rounds: pp.Rounds,
	}
}

func yesNo(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

func eligibleText(p *placementReport) string {
	s := fmt.Sprintf("%d of %d nodes in pool %s (%d in all pools)", p.EligibleNodes, p.PoolNodes, p.Pool, p.ClusterNodes)
	if p.FewerThanTwo {
		s += ": FEWER THAN TWO, a restart after a node failure has nowhere to go"
	}
	return s
}

func reserveLines(pp *placement.Pool) []string {
	r := reserveOf(pp)
	p := pp.Pool
	domains := ""
	if fd := p.Spec.FailureDomain; fd != nil {
		domains = fmt.Sprintf(" in %d %ss", fd.Domains, fd.Level)
	}
	out := []string{
		fmt.Sprintf("%d nodes%s, %s CPU and %s each; %d running VMs request %s CPU and %s of %s CPU and %s",
			p.Spec.Nodes, domains, p.Spec.Allocatable.CPU.String(), p.Spec.Allocatable.Memory.String(), r.VMs, r.RequestsCPU, r.RequestsMemory, r.CapacityCPU, r.CapacityMemory),
		fmt.Sprintf("N+1, after losing %s: %s", r.Lose, yesNo(r.NPlusOne, fmt.Sprintf("the VMs fit (%s CPU and %s left)", r.RemainingCPU, r.RemainingMem), "FAILS: "+strings.Join(r.NPlusOneProblems, "; "))),
	}
	drain := fmt.Sprintf("drain of one node: about %d %s per node, %d migrations at a time (%d %s)", r.VMsPerNode, vmsWord(r.VMsPerNode), r.Concurrent, r.Rounds, rounds(r.Rounds))
	if r.DrainOK {
		drain += ": can complete"
	} else {
		drain += ": CANNOT COMPLETE: " + strings.Join(r.DrainProblems, "; ")
	}
	return append(out, drain)
}

func writePlacementText(w io.Writer, rows []vmReport, pl *placement.Result) {
	if len(pl.Pools) > 0 {
		fmt.Fprintln(w, "\nWhere each VM can run (eligible nodes after every constraint):")
		for _, r := range rows {
			if r.Placement == nil {
				continue
			}
			policy := r.MigrationPolicy
			if policy == "" {
				policy = "none (the cluster's settings)"
			}
			fmt.Fprintf(w, "  %s/%s: %s; migration policy %s\n", r.Tenant, r.VM, eligibleText(r.Placement), policy)
			for _, c := range r.Placement.Constraints {
				fmt.Fprintf(w, "    - %s\n", c)
			}
		}
		for _, pp := range pl.Pools {
			fmt.Fprintf(w, "\nPool %s:\n", pp.Pool.Name)
			for _, l := range reserveLines(pp) {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
	}
	var none []string
	for _, r := range rows {
		if r.GuestHealth == "none" {
			none = append(none, r.Tenant+"/"+r.VM)
		}
	}
	if len(none) > 0 {
		fmt.Fprintf(w, "\nWithout guest-level health (their images declare no guest agent): %s\n", strings.Join(none, ", "))
	}
}

func writePlacementMarkdown(w io.Writer, rows []vmReport, pl *placement.Result) {
	if len(pl.Pools) > 0 {
		fmt.Fprintln(w, "\n### Where each VM can run")
		fmt.Fprintln(w, "\n| Tenant | VM | Pool | Eligible nodes | Constraints | Migration policy | Guest health |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		for _, r := range rows {
			if r.Placement == nil {
				continue
			}
			p := r.Placement
			eligible := fmt.Sprintf("%d of %d (%d in all pools)", p.EligibleNodes, p.PoolNodes, p.ClusterNodes)
			if p.FewerThanTwo {
				eligible = "**" + eligible + ": fewer than two**"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Tenant, r.VM, p.Pool, eligible,
				strings.Join(p.Constraints, "<br>"), cmpOr(r.MigrationPolicy, "none"), r.GuestHealth)
		}
		for _, pp := range pl.Pools {
			fmt.Fprintf(w, "\n### Pool %s\n\n", pp.Pool.Name)
			for _, l := range reserveLines(pp) {
				fmt.Fprintf(w, "- %s\n", l)
			}
		}
	}
	var none []string
	for _, r := range rows {
		if r.GuestHealth == "none" {
			none = append(none, r.Tenant+"/"+r.VM)
		}
	}
	if len(none) > 0 {
		fmt.Fprintf(w, "\nWithout guest-level health (their images declare no guest agent): %s\n", strings.Join(none, ", "))
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func rounds(n int64) string {
	if n == 1 {
		return "round"
	}
	return "rounds"
}

func vmsWord(n int64) string {
	if n == 1 {
		return "VM"
	}
	return "VMs"
}

// gibText writes a byte count as Kubernetes does where it is exact in Mi or
// Gi, else in Gi with one decimal.
func gibText(b int64) string {
	if b%(1<<20) == 0 {
		q := sizing.Bytes(b)
		return q.String()
	}
	return fmt.Sprintf("%.1fGi", float64(b)/(1<<30))
}
