package cmp

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// sendRange writes exactly the range asked: into a pipe that fills (Go's
// pipes are non-blocking: sendfile meets EAGAIN and waits), into a file
// opened for appending (sendfile refuses it: the bytes go through
// memory) and into a writer that is no file.
func TestSendRange(t *testing.T) {
	data := make([]byte, 3<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	name := filepath.Join(t.TempDir(), "entry")
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := openFile(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const off, n = 1000, 2 << 20
	want := data[off : off+n]

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(pr)
		got <- b
	}()
	if err := sendRange(pw, f, off, n); err != nil {
		t.Fatalf("into a pipe: %v", err)
	}
	pw.Close()
	if b := <-got; !bytes.Equal(b, want) {
		t.Errorf("into a pipe: %d bytes, want the %d of the range", len(b), n)
	}

	out := filepath.Join(t.TempDir(), "out")
	af, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := sendRange(af, f, off, n); err != nil {
		t.Fatalf("into an appended file: %v", err)
	}
	af.Close()
	if b, _ := os.ReadFile(out); !bytes.Equal(b, want) {
		t.Errorf("into an appended file: %d bytes, want the %d of the range", len(b), n)
	}

	var buf bytes.Buffer
	if err := sendRange(&buf, f, off, n); err != nil || !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("into a buffer: %v, %d bytes", err, buf.Len())
	}
}
