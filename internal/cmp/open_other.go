//go:build !unix

package cmp

import "os"

// openFile is os.Open (see open_unix.go).
func openFile(name string) (*os.File, error) { return os.Open(name) }

// openRegular is openFile of a regular file (see open_unix.go).
func openRegular(name string) (*os.File, os.FileInfo, error) {
	info, err := os.Lstat(name)
	if err != nil || !info.Mode().IsRegular() {
		return nil, nil, &os.PathError{Op: "open", Path: name, Err: os.ErrInvalid}
	}
	f, err := os.Open(name)
	return f, info, err
}
