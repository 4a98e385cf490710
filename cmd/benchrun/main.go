// Command benchrun is the driver behind `make bench`: it times virtc build,
// kustomize with virtc as a KRM function, and kustomize passing virtc's
// output through, on generated fleets, alternating the tools run by run,
// and prints one Markdown table of medians (see BENCHMARKS.md).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/virtc/virtc/internal/bench"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == bench.PrepareCommand {
		if err := bench.Prepare(os.Args[2:]); err != nil {
			fail(err)
		}
		return
	}
	virtc := flag.String("virtc", "bin/virtc", "the virtc binary to measure (make build)")
	front := flag.String("cmp", "bin/virtc-cmp", "the plugin's generate command (make build puts virtc-cmp beside virtc), which the cmp mode runs for every tenant; empty runs `virtc cmp` itself")
	baseline := flag.String("baseline", "", "another virtc binary to time beside --virtc (before/after figures)")
	kustomize := flag.String("kustomize", ".tools/bin/kustomize", "the kustomize binary (make tools); empty to leave kustomize out")
	sizes := flag.String("sizes", "1,100,1000,10000", "fleet sizes in VMs, measured with every tool")
	virtcOnly := flag.String("virtc-only", "100000", "fleet sizes measured with virtc build alone")
	perTenant := flag.String("per-tenant", "1000", "fleet sizes that kustomize also builds one tenant at a time")
	small := flag.Int("runs", 5, "runs of each tool per fleet below 10,000 VMs")
	large := flag.Int("runs-large", 3, "runs of each tool per fleet of 10,000 VMs or more")
	limit := flag.Duration("limit", 120*time.Second, "time limit of one kustomize run")
	krm := flag.Bool("krm", true, "measure kustomize with virtc as an exec KRM function (generator form)")
	fnSizes := flag.String("fn-sizes", "1000,10000,100000", "fleet sizes on which virtc fn (generator and transformer forms) is timed beside virtc build, without kustomize")
	fnOnly := flag.Bool("fn-only", false, "measure only the fn-against-build fleets (--fn-sizes)")
	modeSizes := flag.String("mode-sizes", "1000,10000,100000", "fleet sizes on which every mode (build, validate, report, diff, diff --base, diff --live, import, fn, cmp for every tenant) is timed beside virtc build")
	only := flag.String("modes", "", "with --mode-sizes, time only these modes beside build, separated by '|' as the table names them (\"cmp, every tenant|diff OLD NEW\"); empty for every mode")
	modesOnly := flag.Bool("modes-only", false, "measure only every mode on --mode-sizes")
	perTenantVMs := flag.Int("vms-per-tenant", bench.VMsPerTenant, "average VMs per tenant of every fleet (the issue's 10,000-VM fleet of 50 tenants is 200)")
	work := flag.String("work", "", "directory for fleets and outputs (default: a temporary one, removed at the end)")
	flag.Parse()

	parse := func(s string) []int {
		var out []int
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
			if err != nil {
				fail(fmt.Errorf("invalid fleet size %q", f))
			}
			out = append(out, n)
		}
		return out
	}
	cfg := bench.Config{
		Virtc:        abs(*virtc),
		CMP:          abs(*front),
		Modes:        strings.FieldsFunc(*only, func(r rune) bool { return r == '|' }),
		Baseline:     abs(*baseline),
		Kustomize:    abs(*kustomize),
		Sizes:        parse(*sizes),
		VirtcOnly:    parse(*virtcOnly),
		PerTenant:    parse(*perTenant),
		VMsPerTenant: *perTenantVMs,
		Runs: func(vms int) int {
			if vms >= 10000 {
				return *large
			}
			return *small
		},
		Limit:      *limit,
		KRM:        bench.KRMGenerator,
		KRMMissing: "n/a (--krm=false)",
		Log:        os.Stderr,
	}
	if !*krm {
		cfg.KRM = nil
	}
	if err := cfg.Check(); err != nil {
		fail(err)
	}
	cfg.Work = *work
	if cfg.Work == "" {
		dir, err := os.MkdirTemp("", "virtc-bench-")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
		cfg.Work = dir
	}
	// Every measured command starts through a small spawner, so that its
	// peak RSS is its own and not at least the driver's (internal/bench/
	// spawn says why).
	if err := bench.UseSpawner(cfg.Work); err != nil {
		fail(err)
	}
	start := time.Now()
	var rows []bench.Row
	if *modesOnly {
		*fnOnly, *fnSizes = true, ""
	}
	if !*fnOnly {
		var err error
		if rows, err = bench.Run(cfg); err != nil {
			fail(err)
		}
	}
	fnRows, err := bench.RunFn(cfg, parse(*fnSizes))
	if err != nil {
		fail(err)
	}
	modeRows, err := bench.RunModes(cfg, parse(*modeSizes))
	if err != nil {
		fail(err)
	}
	for _, l := range bench.Machine(cfg.Kustomize) {
		fmt.Printf("- %s\n", l)
	}
	fmt.Printf("- session: %s, medians of alternating runs\n\n", time.Since(start).Round(time.Second))
	if !*fnOnly {
		bench.Table(os.Stdout, rows)
		fmt.Println()
		if cfg.Baseline != "" {
			bench.Comparison(os.Stdout, rows)
			fmt.Println()
		}
		bench.Targets(os.Stdout, rows)
		fmt.Println()
	}
	if len(fnRows) > 0 {
		bench.FnTable(os.Stdout, fnRows)
		fmt.Println()
	}
	if len(modeRows) > 0 {
		bench.ModeTable(os.Stdout, modeRows)
	}
}

func abs(path string) string {
	if path == "" || !strings.ContainsRune(path, filepath.Separator) {
		return path
	}
	a, err := filepath.Abs(path)
	if err != nil {
		fail(err)
	}
	return a
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "benchrun: %v\n", err)
	os.Exit(1)
}
