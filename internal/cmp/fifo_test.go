//go:build unix

package cmp

import (
	"bytes"
	"syscall"
	"testing"
	"time"
)

// A FIFO where the call's entry should be is a miss, at once: opening it
// for reading would wait for a writer that never comes (issue 43).
func TestServeFIFOEntry(t *testing.T) {
	dir := t.TempDir()
	call := entryCall(t, dir, "a")
	if err := syscall.Mkfifo(call.Entry(), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool, 1)
	go func() {
		var out, errs bytes.Buffer
		served, _ := call.Serve(&out, &errs)
		done <- served
	}()
	select {
	case served := <-done:
		if served {
			t.Error("a FIFO was served as an entry")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve blocks on a FIFO")
	}
}
