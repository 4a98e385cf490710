//go:build !linux

package cmp

import (
	"io"
	"os"
)

// sendRange writes n bytes of f from off to w.
func sendRange(w io.Writer, f *os.File, off, n int64) error {
	return copyRange(w, f, off, n)
}
