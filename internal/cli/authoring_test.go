package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/virtc/virtc/schemas"
)

func run(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestSchema(t *testing.T) {
	want, err := schemas.Files.ReadFile("networkprofile.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"NetworkProfile", "networkprofile"} {
		code, out, errOut := run("schema", kind)
		if code != ExitOK || out != string(want) || errOut != "" {
			t.Errorf("schema %s: exit %d, %d bytes (want %d), stderr %q", kind, code, len(out), len(want), errOut)
		}
	}
	all, _ := schemas.Files.ReadFile("virtc.json")
	if code, out, _ := run("schema"); code != ExitOK || out != string(all) {
		t.Errorf("schema: exit %d, want virtc.json", code)
	}
	code, out, errOut := run("schema", "Sizes")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, `unknown kind "Sizes"; did you mean "Size"?`) {
		t.Errorf("schema Sizes: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := run("schema", "VM", "Tenant"); code != ExitUsage {
		t.Errorf("two kinds: exit %d", code)
	}
}

func TestExtStrUsage(t *testing.T) {
	code, out, errOut := run("build", "--ext-str", "cluster", "../../examples/quickstart")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, `invalid --ext-str "cluster": want key=value`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
