// Package examples checks that every example compiles, and that its output
// is valid for the real API types and the upstream schemas.
package examples

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/cli"
	"github.com/virtc/virtc/test/conform"
)

// builds are the examples `virtc build DIR` compiles as they are.
var builds = []string{"quickstart", "platform", "fleet-jsonnet"}

func TestExamplesBuildAndConform(t *testing.T) {
	var files []string
	for _, name := range builds {
		var stdout, stderr bytes.Buffer
		if code := cli.Main([]string{"build", name}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("virtc build %s: exit %d\n%s", name, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "kind: VirtualMachine\n") {
			t.Errorf("%s: no VirtualMachine in the output", name)
		}
		for _, err := range conform.Strict(stdout.Bytes()) {
			t.Errorf("%s: %v", name, err)
		}
		out := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(out, stdout.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, out)
	}
	conform.RunKubeconform(t, "4.22", files...)
}
