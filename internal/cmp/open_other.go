//go:build !unix

package cmp

import "os"

// openFile is os.Open (see open_unix.go).
func openFile(name string) (*os.File, error) { return os.Open(name) }
