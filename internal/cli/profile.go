package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiles are the --cpuprofile and --memprofile flags of build,
// validate and fn, for performance work on real inputs (see BENCHMARKS.md).
type profiles struct {
	cpu, mem string
}

func addProfileFlags(fs *flag.FlagSet) *profiles {
	p := &profiles{}
	fs.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of reading and compiling to `FILE` (go tool pprof)")
	fs.StringVar(&p.mem, "memprofile", "", "write an allocation profile of reading and compiling to `FILE` (go tool pprof)")
	return p
}

// start begins the CPU profile; the returned function ends it and writes
// the allocation profile. Profiles are diagnostics of virtc itself: a
// failure to write them is reported but does not change the exit code.
func (p *profiles) start(stderr io.Writer) func() {
	var cpu *os.File
	if p.cpu != "" {
		f, err := os.Create(p.cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "virtc: cpu profile: %v\n", err)
		} else {
			cpu = f
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if p.mem != "" {
			f, err := os.Create(p.mem)
			if err == nil {
				runtime.GC()
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintf(stderr, "virtc: memory profile: %v\n", err)
			}
		}
	}
}
