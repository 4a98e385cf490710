package cli

import (
	"os"
	"runtime/debug"
)

// batchGC lets the heap grow further between collections during a build:
// until virtc exits its heap is almost all live (inputs, model, objects,
// output), so collecting at every doubling spends a fifth of the CPU and
// frees little (see BENCHMARKS.md). GOGC in the environment wins.
func batchGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
