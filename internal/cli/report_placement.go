package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/placement"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/sizing"
)

func guestHealth(vm *resolve.VM) string {
	switch {
	case !model.GuestHealth(vm):
		return "none"
	case vm.Spec.Health != nil && vm.Spec.Health.Liveness:
		return "readiness, liveness"
	}
	return "readiness"
}

func reserveOf(pp *placement.Pool) poolReserve {
	milli := func(m int64) string { q := sizing.Milli(m); return q.String() }
	r := poolReserve{
		VMs: len(pp.VMs), RequestsCPU: milli(pp.Requests.MilliCPU), RequestsMemory: gibText(pp.Requests.Memory),
		CapacityCPU: milli(pp.Capacity.MilliCPU), CapacityMemory: gibText(pp.Capacity.Memory),
		Lose: pp.Lose, RemainingCPU: milli(pp.Remaining.MilliCPU), RemainingMem: gibText(pp.Remaining.Memory),
		NPlusOne: pp.ReserveOK, NPlusOneProblems: pp.ReserveProblems, DrainOK: pp.DrainOK, DrainProblems: pp.DrainProblems,
		VMsPerNode: pp.PerNode, Concurrent: pp.Concurrent, Rounds: pp.Rounds,
		FitsAllUp: pp.Initial.Fits, NPlusOnePlacement: []nodeReport{},
		NPlusOneUnplaced: vmNames(pp.Loss.Unplaced), DrainStops: vmNames(pp.DrainStops), DrainRestarts: vmNames(pp.DrainRestarts),
	}
	for _, n := range pp.Loss.Nodes {
		r.NPlusOnePlacement = append(r.NPlusOnePlacement, nodeReport{Node: n.Index, Domain: n.Domain, VMs: vmNames(n.VMs),
			FreeCPU: milli(n.Free.MilliCPU), FreeMemory: gibText(n.Free.Memory)})
	}
	return r
}

func vmNames(vms []*placement.VM) []string {
	out := []string{}
	for _, v := range vms {
		out = append(out, v.VM.Namespace+"/"+v.VM.Name)
	}
	return out
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

// reserveLine is a line of a pool's reserve, with the lines under it.
type reserveLine struct {
	text string
	sub  []string
}

func reserveLines(pp *placement.Pool) []reserveLine {
	r := reserveOf(pp)
	p := pp.Pool
	domains := ""
	level := ""
	if fd := p.Spec.FailureDomain; fd != nil {
		domains = fmt.Sprintf(" in %d %ss", fd.Domains, fd.Level)
		level = fd.Level
	}
	out := []reserveLine{
		{text: fmt.Sprintf("%d nodes%s, %s CPU and %s each; %d running VMs request %s CPU and %s of %s CPU and %s",
			p.Spec.Nodes, domains, p.Spec.Allocatable.CPU.String(), p.Spec.Allocatable.Memory.String(), r.VMs, r.RequestsCPU, r.RequestsMemory, r.CapacityCPU, r.CapacityMemory)},
	}
	// The placement after the loss, node by node: one that virtc found,
	// not the scheduler's (which places restarted VMs where the others
	// leave room).
	// The empty nodes together, on one line after the others.
	var nodes, empty []string
	for _, n := range r.NPlusOnePlacement {
		where := fmt.Sprintf("node %d", n.Node)
		if level != "" {
			where += fmt.Sprintf(" (%s %d)", level, n.Domain)
		}
		if len(n.VMs) == 0 {
			empty = append(empty, where)
			continue
		}
		nodes = append(nodes, fmt.Sprintf("%s: %s; %s CPU and %s free", where, strings.Join(n.VMs, ", "), n.FreeCPU, n.FreeMemory))
	}
	if len(empty) > 0 {
		line := fmt.Sprintf("%s: no VM; %s CPU and %s free", strings.Join(empty, ", "), p.Spec.Allocatable.CPU.String(), p.Spec.Allocatable.Memory.String())
		if len(empty) > 1 {
			line += " each"
		}
		nodes = append(nodes, line)
	}
	nPlusOne := fmt.Sprintf("N+1, after losing %s: the VMs fit node by node (%s CPU and %s left in sum); a placement:", r.Lose, r.RemainingCPU, r.RemainingMem)
	if !r.NPlusOne {
		nPlusOne = "N+1: FAILS: " + strings.Join(r.NPlusOneProblems, "; ")
		if len(nodes) > 0 {
			nPlusOne += "; the nodes left, as packed:"
		}
	}
	out = append(out, reserveLine{text: nPlusOne, sub: nodes})
	drain := fmt.Sprintf("drain of one node: about %d %s per node, %d migrations at a time (%d %s)", r.VMsPerNode, vmsWord(r.VMsPerNode), r.Concurrent, r.Rounds, rounds(r.Rounds))
	if r.DrainOK {
		drain += ": can complete"
	} else {
		drain += ": CANNOT COMPLETE: " + strings.Join(r.DrainProblems, "; ")
	}
	if len(r.DrainStops) > 0 {
		drain += fmt.Sprintf("; it shuts down those of %s on the node (they cannot live-migrate)", strings.Join(r.DrainStops, ", "))
		restart := fmt.Sprintf("%s %s on another node (runStrategy Always)", strings.Join(r.DrainRestarts, ", "), pluralWord(len(r.DrainRestarts), "restarts", "restart"))
		switch stay := len(r.DrainStops) - len(r.DrainRestarts); {
		case stay > 0 && len(r.DrainRestarts) > 0:
			drain += ": " + restart + ", the others stay stopped"
		case stay > 0:
			drain += ": they stay stopped (runStrategy other than Always)"
		default:
			drain += ": " + restart
		}
	}
	return append(out, reserveLine{text: drain})
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
		writePools(w, pl.Pools, "\nPool %s:\n", "  %s\n", "    - %s\n")
	}
	writeWithoutGuestHealth(w, rows)
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
		writePools(w, pl.Pools, "\n### Pool %s\n\n", "- %s\n", "  - %s\n")
	}
	writeWithoutGuestHealth(w, rows)
}

// writePools writes each pool's reserve lines, in the formats of the
// pool's heading, a line and a line under it.
func writePools(w io.Writer, pools []*placement.Pool, heading, line, sub string) {
	for _, pp := range pools {
		fmt.Fprintf(w, heading, pp.Pool.Name)
		for _, l := range reserveLines(pp) {
			fmt.Fprintf(w, line, l.text)
			for _, s := range l.sub {
				fmt.Fprintf(w, sub, s)
			}
		}
	}
}

// writeWithoutGuestHealth names the VMs whose images declare no guest
// agent, and those on draft profiles, in text and Markdown alike.
func writeWithoutGuestHealth(w io.Writer, rows []vmReport) {
	var none []string
	for _, r := range rows {
		if r.GuestHealth == "none" {
			none = append(none, r.Tenant+"/"+r.VM)
		}
	}
	if len(none) > 0 {
		fmt.Fprintf(w, "\nWithout guest-level health (their images declare no guest agent): %s\n", strings.Join(none, ", "))
	}
	var draft []string
	for _, r := range rows {
		if len(r.DraftProfiles) > 0 {
			draft = append(draft, fmt.Sprintf("%s/%s (%s)", r.Tenant, r.VM, strings.Join(r.DraftProfiles, ", ")))
		}
	}
	if len(draft) > 0 {
		fmt.Fprintf(w, "\nOn draft profiles (not promoted: no production VM may use them until the platform team promotes them with their evidence): %s\n", strings.Join(draft, "; "))
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

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
