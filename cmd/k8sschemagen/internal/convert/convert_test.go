package convert

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/virtc/virtc/test/conform"
)

// TestReproducesSharedSchemas converts definitions whose schemas the
// shared schemas-upstream folder holds (written by yannh's converter) and
// compares: the converter must give the same schemas, so that the ones it
// writes for kinds the folder lacks are what that converter would write.
func TestReproducesSharedSchemas(t *testing.T) {
	swagger := os.Getenv("K8S_SWAGGER")
	if swagger == "" {
		// The swagger.json of the Kubernetes release the schemas are of,
		// from its module (the module cache, else the module proxy).
		cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@v1.35.8")
		cmd.Dir = t.TempDir()
		out, err := cmd.Output()
		var mod struct{ Dir, Error string }
		if err == nil {
			err = json.Unmarshal(out, &mod)
		}
		if err != nil || mod.Dir == "" {
			conform.Skip(t, fmt.Errorf("the swagger.json of k8s.io/kubernetes v1.35.8: go mod download: %v %s (or set K8S_SWAGGER)", err, mod.Error))
		}
		swagger = filepath.Join(mod.Dir, "api", "openapi-spec", "swagger.json")
	}
	schemas, err := conform.Schemas("4.22")
	if err != nil {
		conform.Skip(t, err)
	}
	defs, err := ReadDefinitions(swagger)
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{
		"io.k8s.api.rbac.v1.RoleBinding",
		"io.k8s.api.core.v1.PersistentVolumeClaim",
		"io.k8s.api.core.v1.ResourceQuota",
		"io.k8s.api.core.v1.Namespace",
		"io.k8s.api.core.v1.Secret",
	} {
		name, got, err := Schema(defs, title)
		if err != nil {
			t.Fatal(err)
		}
		wantData, err := os.ReadFile(filepath.Join(schemas, "k8s", "v1.35.8-standalone-strict", name))
		if err != nil {
			t.Fatal(err)
		}
		var want, have any
		if err := json.Unmarshal(wantData, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &have); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, have); d != "" {
			t.Errorf("%s differs from the shared %s (-shared +converted):\n%s", title, name, d)
		}
	}
}
