//go:build unix

package cmp

import "syscall"

// lockFile takes an exclusive flock(2) on the file name (created if need
// be): first without waiting, then, if another open file holds it, waiting
// for it (waited). The lock is held by the descriptor fd until it is
// closed (closeFD), and released by the kernel when the process ends,
// however it ends. With inherit, fd is not closed on exec, so that the
// program a process execs holds the lock on (Front).
func lockFile(name string, inherit bool) (fd int, waited bool, ok bool) {
	flags := syscall.O_RDONLY | syscall.O_CREAT
	if !inherit {
		flags |= syscall.O_CLOEXEC
	}
	fd, err := syscall.Open(name, flags, 0o600)
	for err == syscall.EINTR {
		fd, err = syscall.Open(name, flags, 0o600)
	}
	if err != nil {
		return -1, false, false
	}
	if flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return fd, false, true
	}
	if flock(fd, syscall.LOCK_EX) != nil {
		syscall.Close(fd)
		return -1, false, false
	}
	return fd, true, true
}

// adoptFD takes over the lock of a descriptor inherited across exec: it is
// closed on any further exec.
func adoptFD(fd int) bool {
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		return false
	}
	syscall.CloseOnExec(fd)
	return true
}

func closeFD(fd int) { syscall.Close(fd) }

// flock is flock(2), retried when a signal interrupts it.
func flock(fd, how int) error {
	for {
		if err := syscall.Flock(fd, how); err != syscall.EINTR {
			return err
		}
	}
}
