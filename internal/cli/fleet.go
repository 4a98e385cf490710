package cli

import (
	"fmt"
	"io"

	"github.com/virtc/virtc/internal/fleet"
)

// runGenFleet writes a seeded synthetic fleet for benchmarks and load tests.
func runGenFleet(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("gen-fleet", "", stderr)
	tenants := fs.Int("tenants", 10, "number of tenants (each gets at least one VM)")
	vms := fs.Int("vms", 100, "number of VMs across all tenants")
	seed := fs.Uint64("seed", 1, "seed: the same seed and shape always give the same files")
	out := fs.String("out", "", "directory to write the fleet into (created; must be empty)")
	rest, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 || *out == "" {
		fmt.Fprintln(stderr, "virtc gen-fleet: name the output directory with --out DIR (and no other arguments)")
		fs.Usage()
		return ExitUsage
	}
	files, err := fleet.Write(*out, fleet.Options{Tenants: *tenants, VMs: *vms, Seed: *seed})
	if err != nil {
		fmt.Fprintf(stderr, "virtc gen-fleet: %v\n", err)
		return ExitFailed
	}
	size := 0
	for _, f := range files {
		size += len(f.Data)
	}
	fmt.Fprintf(stdout, "wrote %d tenants and %d VMs in %d files (%d bytes) to %s\n", *tenants, *vms, len(files), size, *out)
	return ExitOK
}
