package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestBuildStdin: the PATH - is a YAML stream on stdin, compiled with the
// files; its messages name <stdin>, and its objects name no source file.
func TestBuildStdin(t *testing.T) {
	vm, err := os.ReadFile("../../examples/quickstart/web01.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"../../examples/quickstart/tenant.yaml", "../../examples/quickstart/platform-facts.yaml"}
	var stdout, stderr bytes.Buffer
	code := Main(append(append([]string{"build"}, files...), "-"), bytes.NewReader(vm), &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("build -: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "kind: VirtualMachine\nmetadata:\n  annotations:") || !strings.Contains(stdout.String(), "\n  name: web01\n") {
		t.Errorf("build - does not compile the VM on stdin:\n%s", stdout.String())
	}
	if strings.Contains(stdout.String(), "web01.yaml") {
		t.Errorf("an object from stdin names a file")
	}

	stdout.Reset()
	stderr.Reset()
	bad := strings.Replace(string(vm), "u1.medium", "u1.meduim", 1)
	code = Main(append(append([]string{"validate"}, files...), "-"), strings.NewReader(bad), &stdout, &stderr)
	if code != ExitFailed || !strings.HasPrefix(stderr.String(), "<stdin>:") || !strings.Contains(stderr.String(), `spec.size: unknown size "u1.meduim"`) {
		t.Errorf("validate - of a wrong VM: exit %d\n%s", code, stderr.String())
	}

	if code, _, stderr := runMain("build", "-", "-"); code != ExitUsage || !strings.Contains(stderr, "- (stdin) may be named once") {
		t.Errorf("build - -: exit %d, %q", code, stderr)
	}
}
