package admission

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// VirtcBinary is $VIRTC_BIN (the Makefile passes bin/virtc), or virtc
// built from the root module at root into a temporary directory: the
// virtc the admission and boot suites run.
func VirtcBinary(t testing.TB, root string) string {
	t.Helper()
	if bin := os.Getenv("VIRTC_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	bin, err := filepath.Abs(filepath.Join(t.TempDir(), "virtc"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/virtc")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building virtc: %v\n%s", err, out)
	}
	return bin
}
