// Command virtc-cmp is the generate command of virtc's Argo CD config
// management plugin (examples/argocd/plugin.yaml): it answers a call the
// plugin's output cache holds (package internal/cmp) and otherwise runs
// `virtc cmp` with the same arguments and environment, in its place (exec:
// the same process, the same standard streams, virtc's exit status).
//
// virtc is the file named virtc in this command's own directory (the image
// has both in /usr/local/bin; `make build` puts both in bin/). The cache
// key names virtc's binary, as virtc names itself (os.Executable, the
// path with its symlinks resolved): when that file is a symlink, or not
// there, this command leaves the cache to virtc.
//
// Why a command of its own: a cached call's work is to hash the names of
// the repository copy's files and copy one tenant's file, under a
// millisecond, but starting virtc's 30 MB binary costs 2 to 3 ms of CPU
// before any of it (the runtime's own start-up grows with the binary: its
// function table is checked and its itabs and GC programs laid out, then
// dozens of packages are initialised even when package internal/cmp/hit answers
// from virtc's init). This command links the standard library and
// package internal/cmp only.
package main

import (
	"fmt"
	"os"
	"path"
	"syscall"

	"github.com/virtc/virtc/internal/cmp"
)

func main() {
	args := os.Args[1:]
	env := os.Environ()
	virtc, err := sibling("virtc")
	if err != nil {
		fmt.Fprintf(os.Stderr, "virtc-cmp: %v\n", err)
		os.Exit(1) // cli.ExitFailed
	}
	if regular(virtc) {
		// A miss while another call of the commit compiles waits here, in
		// this small process, and is answered from that call's entry; the
		// call that compiles hands the commit's lock to virtc (cmp.Front).
		code, ok, execEnv := cmp.Front(virtc, args, env, os.Stdout, os.Stderr)
		if ok {
			os.Exit(code)
		}
		env = execEnv
	}
	err = syscall.Exec(virtc, append([]string{"virtc", "cmp"}, args...), env)
	fmt.Fprintf(os.Stderr, "virtc-cmp: run %s: %v\n", virtc, err)
	os.Exit(1)
}

// sibling is the file name in this command's directory.
func sibling(name string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find virtc beside this command: %v", err)
	}
	return path.Join(path.Dir(exe), name), nil
}

// regular reports whether file is a regular file itself, not a symlink:
// then os.Executable in virtc returns the same path.
func regular(file string) bool {
	info, err := os.Lstat(file)
	return err == nil && info.Mode().IsRegular()
}
