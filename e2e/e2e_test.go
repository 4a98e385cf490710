// Package e2e runs virtc inside the tools it plugs into: the real kustomize
// binary (KRM exec function) and an emulation of Argo CD's config
// management plugin contract. Every example under examples/ with a
// kustomization is built and compared with its golden output under
// testdata/golden; `go test ./e2e -update` rewrites those.
//
// The tests work on a copy of examples/ and testdata/ in a temporary
// directory, with the virtc binary built to bin/virtc there, the path the
// examples name relative to themselves (`make build` puts it at the same
// place in a checkout).
package e2e

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden outputs under testdata/golden")

// root is the temporary copy: examples/, e2e/testdata/, bin/virtc.
var root string

func TestMain(m *testing.M) {
	flag.Parse()
	code, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		code = 1
	} else {
		code = m.Run()
	}
	if root != "" {
		os.RemoveAll(root)
	}
	os.Exit(code)
}

func setup() (int, error) {
	var err error
	root, err = os.MkdirTemp("", "virtc-e2e-")
	if err != nil {
		return 1, err
	}
	if err := copyTree(filepath.Join("..", "examples"), filepath.Join(root, "examples")); err != nil {
		return 1, err
	}
	if err := copyTree("testdata", filepath.Join(root, "e2e", "testdata")); err != nil {
		return 1, err
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return 1, fmt.Errorf("the go command is needed to build virtc: %v", err)
	}
	// virtc, and virtc-cmp (plugin.yaml's generate command) beside it.
	for _, name := range []string{"virtc", "virtc-cmp"} {
		cmd := exec.Command(gobin, "build", "-o", filepath.Join(root, "bin", name), "./cmd/"+name)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return 1, fmt.Errorf("go build %s: %v\n%s", name, err, out)
		}
	}
	return 0, nil
}

// copyTree copies a directory's regular files, keeping their modes.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}

// virtcBin is the binary the tests built.
func virtcBin() string { return filepath.Join(root, "bin", "virtc") }

// sourceDir is the e2e package directory in the checkout, where -update
// writes golden files.
func sourceDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
