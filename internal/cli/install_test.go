package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallCopiesItself: the test binary stands in for virtc; install
// copies the running executable, executable bits included.
func TestInstallCopiesItself(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"install", dir}, strings.NewReader(""), &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	self, _ := os.Executable()
	want, _ := os.ReadFile(self)
	got, err := os.ReadFile(filepath.Join(dir, "virtc"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the copy differs from the executable (%v)", err)
	}
	if info, _ := os.Stat(filepath.Join(dir, "virtc")); info.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", info.Mode().Perm())
	}
	if code := Main([]string{"install"}, strings.NewReader(""), &stdout, &stderr); code != ExitUsage {
		t.Errorf("no argument: exit %d, want %d", code, ExitUsage)
	}
	if code := Main([]string{"install", filepath.Join(dir, "missing", "virtc")}, strings.NewReader(""), &stdout, &stderr); code != ExitFailed {
		t.Errorf("a missing directory: exit %d, want %d", code, ExitFailed)
	}
}
