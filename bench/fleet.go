// Package bench measures virtc: stage benchmarks (go test -bench) on
// generated fleets, and the driver behind `make bench`, which times whole
// processes (virtc build, kustomize with and without virtc) side by side.
package bench

import "github.com/virtc/virtc/fn/fleet"

// VMsPerTenant is the average tenant size of benchmark fleets.
const VMsPerTenant = 20

// Seed is the seed of every benchmark fleet.
const Seed = 1

// FleetOptions is the benchmark fleet of n VMs: n/20 tenants (at least
// one), seed 1.
func FleetOptions(vms int) fleet.Options {
	return fleet.Options{Tenants: max(1, vms/VMsPerTenant), VMs: vms, Seed: Seed}
}
