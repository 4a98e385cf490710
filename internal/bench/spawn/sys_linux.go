package main

import "syscall"

// sysProcAttr kills the command when this process dies, so that a run the
// driver kills at its time limit leaves nothing running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// maxRSS is ru_maxrss in bytes (Linux gives kilobytes).
func maxRSS(ru *syscall.Rusage) int64 { return int64(ru.Maxrss) * 1024 }
