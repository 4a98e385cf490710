//go:build !unix

package cmp

import "os"

// openFile is os.Open (see open_unix.go).
func openFile(name string) (*os.File, error) { return os.Open(name) }

// openRegular is openFile of a regular file (see open_unix.go).
func openRegular(name string) (*os.File, error) {
	if info, err := os.Lstat(name); err != nil || !info.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrInvalid}
	}
	return os.Open(name)
}
