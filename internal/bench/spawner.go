package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// spawner is the program Measure starts each command through (package
// internal/bench/spawn, built by UseSpawner): a command started by the
// driver itself reports a peak RSS of at least the driver's (spawn says
// why), one started through it about 1 MiB at least. Empty starts commands
// directly.
var spawner string

// UseSpawner builds the spawn command into dir with the go command of
// PATH and makes Measure start every command through it. The driver calls
// it first, while it is small, though its own size does not matter: only
// the spawner's does. Where the platform has no wait4 (not unix) it does
// nothing.
func UseSpawner(dir string) error {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		return nil
	}
	bin := filepath.Join(dir, "spawn")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/virtc/virtc/internal/bench/spawn")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the spawner: %v\n%s", err, out)
	}
	spawner = bin
	return nil
}

// spawned is cmd started through the spawner: the same directory,
// environment and standard streams, the command named by its absolute
// path, and a temporary file on the spawner's descriptor 3 for its report,
// which readReport reads once the command has ended and removes.
func spawned(ctx context.Context, cmd *exec.Cmd) (*exec.Cmd, *os.File, error) {
	if cmd.Err != nil {
		return nil, nil, cmd.Err
	}
	path := cmd.Path
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(filepath.Join(cmd.Dir, path))
		if err != nil {
			return nil, nil, err
		}
		path = abs
	}
	report, err := os.CreateTemp("", "virtc-bench-report-")
	if err != nil {
		return nil, nil, err
	}
	s := exec.CommandContext(ctx, spawner, append([]string{path}, cmd.Args[1:]...)...)
	s.Dir = cmd.Dir
	s.ExtraFiles = []*os.File{report}
	return s, report, nil
}

// readReport reads the spawner's report (spawn: peak RSS in bytes, user
// and system CPU in nanoseconds).
func readReport(f *os.File) (rss int64, cpu time.Duration, err error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, err
	}
	var user, sys int64
	if _, err := fmt.Fscan(f, &rss, &user, &sys); err != nil {
		return 0, 0, fmt.Errorf("the spawner reported nothing: %v", err)
	}
	return rss, time.Duration(user + sys), nil
}
