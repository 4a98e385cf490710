//go:build unix

package bench

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is the maximum resident set of a finished process (wait4's
// rusage): kilobytes on Linux and the BSDs, bytes on macOS.
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
