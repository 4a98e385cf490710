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
