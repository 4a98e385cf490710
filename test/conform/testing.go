package conform

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/versions"
)

// Skip skips t for a missing tool or data set, unless CI requires it.
func Skip(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("required in this run (%s=1): %v", RequireEnv, err)
	}
	Skipped(t, err.Error())
}

// SkipLogEnv names a file each skip appends a line to (package, test,
// reason): `make test` prints them at its end, so that a user sees what
// did not run (go test's own output hides skips unless -v).
const SkipLogEnv = "VIRTC_SKIP_LOG"

// Skipped skips t for reason and records it in the skip log.
func Skipped(t testing.TB, reason string) {
	t.Helper()
	if log := os.Getenv(SkipLogEnv); log != "" {
		pkg, _ := os.Getwd() // go test runs a test in its package's directory
		if rel, err := filepath.Rel(repoRoot(), pkg); err == nil {
			pkg = "./" + filepath.ToSlash(rel)
		}
		// One short write with O_APPEND: lines of parallel test binaries do
		// not interleave.
		line := fmt.Sprintf("%s %s: %s\n", pkg, t.Name(), strings.ReplaceAll(reason, "\n", " "))
		if f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			f.WriteString(line)
			f.Close()
		}
	}
	t.Skip(reason)
}

// RunKubeconform validates files for a platform version inside a test,
// skipping (or failing in CI) when kubeconform or the schemas are missing.
func RunKubeconform(t testing.TB, version string, files ...string) {
	t.Helper()
	if len(files) == 0 {
		t.Fatal("no files to validate")
	}
	if _, err := Tool("kubeconform", "KUBECONFORM_BIN"); err != nil {
		Skip(t, err)
	}
	if _, err := Schemas(version); err != nil {
		Skip(t, err)
	}
	if err := Kubeconform(version, kubernetesOf(version), files...); err != nil {
		t.Fatal(err)
	}
}

// kubernetesOf is the Kubernetes version of a platform minor release.
func kubernetesOf(minor string) string {
	for _, r := range versions.Releases() {
		if r.Minor == minor {
			return r.Kubernetes
		}
	}
	panic("conform: no release " + minor)
}
