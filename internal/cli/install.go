package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// runInstall copies the running virtc executable to a file: the image has
// no shell and no cp, so the init container of the kustomize wiring
// (examples/argocd/repo-server-kustomize-patch.yaml) runs `virtc install
// /virtc-bin/virtc` to put virtc on the repo-server's PATH.
func runInstall(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("install", "DEST", stderr)
	rest, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		fmt.Fprintln(stderr, "virtc install: takes one argument, the file to copy virtc to (a directory: DEST/virtc)")
		return ExitUsage
	}
	dest := rest[0]
	if info, err := os.Stat(dest); err == nil && info.IsDir() {
		dest = filepath.Join(dest, "virtc")
	}
	self, err := os.Executable()
	if err == nil {
		err = copyExecutable(self, dest)
	}
	if err != nil {
		fmt.Fprintf(stderr, "virtc install: %v\n", err)
		return ExitFailed
	}
	fmt.Fprintf(stdout, "installed virtc %s at %s\n", Version, dest)
	return ExitOK
}

func copyExecutable(src, dest string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".virtc-install-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dest)
}
