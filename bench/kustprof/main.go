// Command kustprof runs kustomize's build, as `kustomize build DIR` of
// kustomize v5.8.2 runs it (krusty with the same API and kyaml modules),
// under Go's CPU profiler, to find where kustomize spends its time on large
// kustomizations. It is a separate module so that virtc does not depend on
// kustomize. See BENCHMARKS.md.
//
//	go run . -cpuprofile cpu.prof DIR > /dev/null
//	go tool pprof -top cpu.prof
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the build to `FILE`")
	plugins := flag.Bool("enable-exec", false, "as --enable-alpha-plugins --enable-exec: run exec KRM functions")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: kustprof [-cpuprofile FILE] DIR")
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	// The options `kustomize build` passes without flags (HonorKustomizeFlags
	// in kustomize/v5/commands/build): no --reorder given, so the order is
	// the kustomization's sortOptions or the legacy one.
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	if *plugins {
		c := types.EnabledPluginConfig(types.BploUseStaticallyLinked)
		c.FnpLoadingOptions.EnableExec = true
		opts.PluginConfig = c
	}
	k := krusty.MakeKustomizer(opts)
	start := time.Now()
	m, err := k.Run(filesys.MakeFsOnDisk(), flag.Arg(0))
	if err != nil {
		fail(err)
	}
	built := time.Since(start)
	out, err := m.AsYaml()
	if err != nil {
		fail(err)
	}
	written := time.Since(start) - built
	w := bufio.NewWriter(os.Stdout)
	w.Write(out)
	w.Flush()
	fmt.Fprintf(os.Stderr, "kustprof: %d resources: build %s, AsYaml %s\n", m.Size(), built.Round(time.Millisecond), written.Round(time.Millisecond))
}

func fail(err error) {
	pprof.StopCPUProfile()
	fmt.Fprintf(os.Stderr, "kustprof: %v\n", err)
	os.Exit(1)
}
