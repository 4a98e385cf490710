//go:build !linux

package conformance

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
