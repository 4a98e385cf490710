package cmp

import (
	"io"
	"os"
	"syscall"
)

// sendRange writes n bytes of f from off to w. When w is a file (Argo CD
// gives generate a pipe) the kernel copies them (sendfile), without
// passing them through this process's memory: most of a cached call's
// bytes, and pages it would otherwise fault in.
func sendRange(w io.Writer, f *os.File, off, n int64) error {
	out, ok := w.(*os.File)
	if !ok || n == 0 {
		return copyRange(w, f, off, n)
	}
	rc, err := out.SyscallConn()
	if err != nil {
		return copyRange(w, f, off, n)
	}
	in := int(f.Fd())
	sent := int64(0)
	var serr error
	err = rc.Write(func(fd uintptr) bool {
		for sent < n {
			o := off + sent
			m, err := syscall.Sendfile(int(fd), in, &o, int(min(n-sent, 1<<30)))
			if m > 0 {
				sent += int64(m)
			}
			switch {
			case err == syscall.EINTR:
			case err == syscall.EAGAIN:
				return false // a non-blocking pipe is full: wait until it drains
			case err != nil:
				serr = err
				return true
			case m == 0:
				serr = io.ErrUnexpectedEOF
				return true
			}
		}
		return true
	})
	if err == nil {
		err = serr
	}
	if err != nil && sent == 0 && err != io.ErrUnexpectedEOF {
		return copyRange(w, f, off, n) // not a descriptor sendfile writes to
	}
	return err
}
