// Package bench is the driver behind `make bench` (cmd/benchrun), which
// times whole processes (virtc build, kustomize with and without virtc)
// side by side on generated fleets, and the shape of those fleets, which
// the stage benchmarks in bench/ share.
package bench

import "github.com/virtc/virtc/internal/fleet"

// VMsPerTenant is the average tenant size of benchmark fleets.
const VMsPerTenant = 20

// Seed is the seed of every benchmark fleet.
const Seed = 1

// FleetOptions is the benchmark fleet of n VMs: n/20 tenants (at least
// one), seed 1.
func FleetOptions(vms int) fleet.Options {
	return FleetShape(vms, VMsPerTenant)
}

// FleetShape is the benchmark fleet of n VMs in tenants of perTenant VMs
// on average (n/perTenant tenants, at least one), seed 1.
func FleetShape(vms, perTenant int) fleet.Options {
	return fleet.Options{Tenants: max(1, vms/max(1, perTenant)), VMs: vms, Seed: Seed}
}

// fleetOptions is the session's fleet of n VMs: Config.VMsPerTenant's
// shape, or FleetOptions when it is 0.
func (cfg Config) fleetOptions(vms int) fleet.Options {
	if cfg.VMsPerTenant == 0 {
		return FleetOptions(vms)
	}
	return FleetShape(vms, cfg.VMsPerTenant)
}
