//go:build unix

// Command spawn runs one command for the benchmark driver (package
// internal/bench, Measure) and reports what the command used, as wait4(2)
// gives it: its peak resident set in bytes, then its user and system CPU
// in nanoseconds, one line on file descriptor 3. It exits with the
// command's status (128 + the signal's number when a signal ended it).
//
// Why a process of its own: on Linux a child's peak RSS starts at the
// resident set of the memory it was started from. Go starts a child with
// vfork, sharing the parent's memory until exec, and exec records that
// memory's peak as the child's (fs/exec.c, setmax_mm_hiwater_rss). A
// command started by the driver, which holds fleets and their copies,
// so reports at least the driver's tens of MiB: noise on a build's 450
// MiB, but the whole figure of a plugin call that waits for another's
// compile (about 3 MiB of its own). Started from this program, which
// links the syscall package only, a command's peak starts at about 1 MiB.
//
// The command must be named by an absolute path (the driver looks it up)
// and is killed when this process dies (the driver's time limit kills
// this process).
package main

import (
	"os"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		os.Stderr.WriteString("usage: spawn /ABSOLUTE/COMMAND [ARG...] (reports on fd 3)\n")
		os.Exit(2)
	}
	pid, err := syscall.ForkExec(os.Args[1], os.Args[1:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   sysProcAttr(),
	})
	if err != nil {
		os.Stderr.WriteString("spawn: " + os.Args[1] + ": " + err.Error() + "\n")
		os.Exit(127)
	}
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	for {
		_, err = syscall.Wait4(pid, &ws, 0, &ru)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		os.Stderr.WriteString("spawn: wait: " + err.Error() + "\n")
		os.Exit(127)
	}
	line := strconv.FormatInt(maxRSS(&ru), 10) + " " +
		strconv.FormatInt(syscall.TimevalToNsec(ru.Utime), 10) + " " +
		strconv.FormatInt(syscall.TimevalToNsec(ru.Stime), 10) + "\n"
	if report := os.NewFile(3, "report"); report != nil {
		report.WriteString(line)
	}
	switch {
	case ws.Exited():
		os.Exit(ws.ExitStatus())
	case ws.Signaled():
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(127)
}
