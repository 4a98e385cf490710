package conform

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// SchemasEnv names the directory of upstream schemas (the shared
// schemas-upstream folder, with one subfolder per platform version).
const SchemasEnv = "VIRTC_SCHEMAS"

// RequireEnv, when set to 1, turns every "tool or data missing" skip into a
// failure: CI sets it so that nothing is skipped there.
const RequireEnv = "VIRTC_REQUIRE_TOOLS"

// Schemas returns the schemas directory for a platform version ("4.22"),
// or an explanation why it is not there.
func Schemas(version string) (string, error) {
	root := os.Getenv(SchemasEnv)
	if root == "" {
		root = filepath.Join(repoRoot(), "..", "shared", "schemas-upstream")
	}
	dir := filepath.Join(root, version)
	if _, err := os.Stat(filepath.Join(dir, "crds")); err != nil {
		return "", fmt.Errorf("upstream schemas not found at %s (set %s)", dir, SchemasEnv)
	}
	return dir, nil
}

// Tool finds a pinned tool binary: $NAME_BIN (e.g. KUBECONFORM_BIN), the
// repository's .tools/bin, then PATH.
func Tool(name, env string) (string, error) {
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	local := filepath.Join(repoRoot(), ".tools", "bin", name)
	if _, err := os.Stat(local); err == nil {
		return local, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found (run `make tools`, or set %s)", name, env)
}

// Kubeconform validates manifest files strictly against the upstream
// schemas of a platform version, offline.
func Kubeconform(version, kubeVersion string, files ...string) error {
	bin, err := Tool("kubeconform", "KUBECONFORM_BIN")
	if err != nil {
		return err
	}
	dir, err := Schemas(version)
	if err != nil {
		return err
	}
	args := []string{"-strict", "-summary", "-kubernetes-version", kubeVersion,
		"-schema-location", filepath.Join(dir, "k8s") + "/{{.NormalizedKubernetesVersion}}-standalone{{.StrictSuffix}}/{{.ResourceKind}}{{.KindSuffix}}.json",
		"-schema-location", filepath.Join(dir, "crds") + "/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json",
		// Schemas the shared folder lacks (KubeVirt's MigrationPolicy),
		// kept in the repository: see test/schemas/README.md.
		"-schema-location", filepath.Join(repoRoot(), "test", "schemas", version, "crds") + "/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json",
		// prometheus-operator's PrometheusRule, ServiceMonitor and AlertmanagerConfig
		// (virtc's monitoring objects), the same for every platform
		// version: vendored by cmd/promcrdgen from its Go module.
		"-schema-location", filepath.Join(repoRoot(), "test", "schemas", "prometheus-operator", "crds") + "/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json",
		// argocd-operator's ArgoCD (OpenShift GitOps' Argo CD instance),
		// the form of the Argo CD wiring for OpenShift GitOps.
		"-schema-location", filepath.Join(repoRoot(), "test", "schemas", "argocd-operator", "crds") + "/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json",
		// Kubernetes kinds the shared folder lacks (ValidatingAdmissionPolicy
		// and its binding), generated from the Kubernetes OpenAPI by
		// cmd/k8sschemagen: see test/schemas/README.md.
		"-schema-location", filepath.Join(repoRoot(), "test", "schemas", version, "k8s") + "/{{.NormalizedKubernetesVersion}}-standalone{{.StrictSuffix}}/{{.ResourceKind}}{{.KindSuffix}}.json",
	}
	// The shared schemas hold no batch/v1 Job (the approver's Sync hook):
	// kubeconform skips it only while that file is missing; Strict decodes
	// it into k8s.io/api's Job, and test/conformance applies it to a real
	// API server.
	if jobs, _ := filepath.Glob(filepath.Join(dir, "k8s", "*", "job-batch-v1.json")); len(jobs) == 0 {
		args = append(args, "-skip", "batch/v1/Job")
	}
	out, err := exec.Command(bin, append(args, files...)...).CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("kubeconform rejected the manifests:\n%s", out)
		}
		return fmt.Errorf("kubeconform: %v\n%s", err, out)
	}
	return nil
}

// repoRoot is the module root, found from this source file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
