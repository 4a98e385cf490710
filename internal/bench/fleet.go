// Package bench is the driver behind `make bench` (cmd/benchrun), which
// times whole processes (virtc build, kustomize with and without virtc)
// side by side on generated fleets, and the shape of those fleets, which
// the stage benchmarks in bench/ share.
package bench

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/virtc/virtc/internal/fleet"
)

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

// writeFleet empties the work directory cfg.Work/<name>-<n> and writes
// the session's fleet of n VMs into its intents directory, logging it
// after prefix. It returns the fleet's options, the work directory and
// the intents'.
func (cfg Config) writeFleet(name, prefix string, n int) (fleet.Options, string, string, error) {
	opts := cfg.fleetOptions(n)
	dir := filepath.Join(cfg.Work, fmt.Sprintf("%s-%d", name, n))
	if err := os.RemoveAll(dir); err != nil {
		return opts, "", "", err
	}
	intents := filepath.Join(dir, "intents")
	cfg.logf("%sfleet of %d VMs in %d tenants: generating %s", prefix, n, opts.Tenants, intents)
	_, err := fleet.Write(intents, opts)
	return opts, dir, intents, err
}
