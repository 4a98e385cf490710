//go:build unix && !linux

package main

import (
	"runtime"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// maxRSS is ru_maxrss in bytes: macOS gives bytes, the BSDs kilobytes.
func maxRSS(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
