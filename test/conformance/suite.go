package conformance

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/cli"
	"github.com/virtc/virtc/test/conform"
)

// What the suites that start a control plane (this package's,
// test/controllers, test/internal/olm, test/internal/velero) do alike in
// a test: their gate, the cached tools they need, the processes they start
// and the virtc runs they parse.

// Gate skips t unless the environment variable env is 1: a suite that
// starts a control plane does not run in plain `go test ./...`. why says
// what the suite starts and how to run it.
func Gate(t testing.TB, env, why string) {
	t.Helper()
	if os.Getenv(env) != "1" {
		t.Skipf("%s (or set %s=1)", why, env)
	}
}

// Need returns what find finds (cached tools, a data set), skipping t when
// it finds nothing (conform.Skip: a failure where CI requires it).
func Need[T any](t testing.TB, find func() (T, error)) T {
	t.Helper()
	v, err := find()
	if err != nil {
		conform.Skip(t, err)
	}
	return v
}

// StartForTest is Start for t: the control plane stops when t ends, and t
// fails when it does not start.
func StartForTest(t testing.TB, ctx context.Context, bins Binaries, dir string, apiserverArgs ...string) *ControlPlane {
	t.Helper()
	cp, err := Start(ctx, bins, dir, apiserverArgs...)
	if err != nil {
		t.Fatalf("start control plane: %v", err)
	}
	t.Cleanup(cp.Stop)
	return cp
}

// StartControllerManagerForTest is StartControllerManager for t:
// kube-controller-manager stops when t ends, and t fails when it does not
// start.
func StartControllerManagerForTest(t testing.TB, ctx context.Context, cp *ControlPlane, bin, dir string, controllers []string) *ControllerManager {
	t.Helper()
	kcm, err := StartControllerManager(ctx, cp, bin, dir, controllers)
	if err != nil {
		t.Fatalf("start kube-controller-manager: %v", err)
	}
	t.Cleanup(kcm.Stop)
	return kcm
}

// VirtcObjects runs virtc with args and parses the objects it prints; t
// fails, with what (the run as the failure names it) and virtc's stderr,
// when virtc does not exit 0.
func VirtcObjects(t testing.TB, what string, args ...string) []Object {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Main(args, strings.NewReader(""), &stdout, &stderr); code != cli.ExitOK {
		t.Fatalf("%s (exit %d):\n%s", what, code, stderr.String())
	}
	objs, err := ParseObjects(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
