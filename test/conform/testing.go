package conform

import (
	"os"
	"testing"

	"github.com/virtc/virtc/internal/versions"
)

// Skip skips t for a missing tool or data set, unless CI requires it.
func Skip(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("required in this run (%s=1): %v", RequireEnv, err)
	}
	t.Skip(err.Error())
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
