//go:build unix

package cmp

import (
	"os"
	"syscall"
)

// openFile opens a file or directory for reading with the open system
// call and hands the descriptor to package os: os.Open would start Go's
// network poller (epoll) at the first file and offer it every file (four
// more system calls each, all refused for files on disk), which a cached
// call, a process that lives a millisecond or two, pays for nothing.
func openFile(name string) (*os.File, error) {
	fd, err := openFD(name, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openFD is open(2) for reading with flags added, retried when a signal
// (Go's preemption) interrupts it.
func openFD(name string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// openRegular opens a regular file for reading without blocking at open:
// a FIFO put where an entry or a file of the copy should be fails instead
// of waiting for a writer that never comes.
// Its information comes with it.
func openRegular(name string) (*os.File, os.FileInfo, error) {
	fd, err := openFD(name, syscall.O_NONBLOCK)
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, &os.PathError{Op: "open", Path: name, Err: syscall.EINVAL}
	}
	return f, info, nil
}
