package convert

import (
	"encoding/json"
	"os"
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
		conform.Skipped(t, "K8S_SWAGGER is not set (the swagger.json of k8s.io/kubernetes v1.35.8: go mod download k8s.io/kubernetes@v1.35.8)")
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
