package cli

import (
	"os"
	"runtime/debug"
)

// batchGC lets the heap grow further between collections during a build.
// Until virtc exits its heap is almost all live (inputs, model, objects,
// output: a build allocates about 1.2 times what it holds at the end), so
// collecting at every doubling spent a fifth of the CPU and freed little.
// At 1000% a collection still bounds garbage to ten times the live heap,
// and peak memory stays what the build holds (see BENCHMARKS.md). GOGC in
// the environment wins.
func batchGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(1000)
	}
}

// buildMemoryLimit is the soft memory limit of virtc build: 1800 MiB.
// At 1000% the heap of a 100,000-VM build grew to 4.6 GB between two
// collections (its live heap never passes about 1.1 GB: the output, the
// model and, until rendering, the inputs); with the limit the collector
// runs when the heap nears it instead, and the build peaks at about
// 1.8 GB (BENCHMARKS.md, issue 27) for about the same CPU time. A build
// whose live heap is smaller never reaches the limit and runs as before.
// One whose live heap is larger collects more often (Go bounds the
// collector to about half the CPU then) rather than fail. GOMEMLIMIT in
// the environment wins.
const buildMemoryLimit = 1800 << 20

func limitBuildMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(buildMemoryLimit)
	}
}
