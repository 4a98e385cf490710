package importer

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/virtc/virtc/fn/catalog"
	"github.com/virtc/virtc/fn/live"
)

func goldenExport(t *testing.T, name string) []live.Object {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	objs, err := live.Read([]string{filepath.Join(filepath.Dir(file), "..", "..", "golden", "import", name, "live.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// A field the pinned KubeVirt API does not know is not dropped silently:
// the VM is refused.
func TestUnknownFieldRefused(t *testing.T) {
	objs := goldenExport(t, "virtctl")
	for _, o := range objs {
		if o.Kind == "VirtualMachine" {
			tmpl := o.Body["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			tmpl["futureField"] = true
		}
	}
	res := Import(objs, nil, catalog.Options{})
	if len(res.Refused) != 1 || !strings.Contains(strings.Join(res.Refused[0].Reasons, "\n"), "futureField") {
		t.Fatalf("refused %+v, want the VM refused for futureField", res.Refused)
	}
}

// The import is the same bytes every time (no map order in the output).
func TestDeterministic(t *testing.T) {
	var first []File
	for i := range 5 {
		res := Import(goldenExport(t, "bridge-mac"), nil, catalog.Options{})
		if i == 0 {
			first = res.Files
			continue
		}
		if len(res.Files) != len(first) {
			t.Fatalf("run %d: %d files, first run %d", i, len(res.Files), len(first))
		}
		for j := range first {
			if res.Files[j].Path != first[j].Path || !bytes.Equal(res.Files[j].Data, first[j].Data) {
				t.Fatalf("run %d: %s differs", i, res.Files[j].Path)
			}
		}
	}
}
