//go:build !unix

package cmp

// Where flock(2) does not exist no lock is taken: concurrent misses of one
// key then each compile (see lock_unix.go).

func lockFile(name string, inherit bool) (fd int, waited bool, ok bool) { return -1, false, false }

func adoptFD(fd int) bool { return false }

func closeFD(fd int) {}
