package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// baseTree is a git ref checked out in a temporary worktree, so that the
// working tree (and its uncommitted changes) stays untouched.
type baseTree struct {
	ref string
	// top is the repository's top-level directory; dir the worktree.
	top, dir string
	once     sync.Once
	stop     chan struct{}
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// repoDir is the directory whose git repository holds path: path itself,
// or the nearest existing directory above it (a PATH may not exist in the
// working tree, or be a file).
func repoDir(path string) string {
	for p := path; ; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		if p == filepath.Dir(p) || p == "." {
			return "."
		}
	}
}

// isCommit reports whether ref names a commit of the repository that
// holds dir.
func isCommit(dir, ref string) bool {
	if _, err := exec.LookPath("git"); err != nil {
		return false
	}
	_, err := git(dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	return err == nil
}

// checkoutBase checks ref of the repository that holds the directory at
// out, detached, in a new temporary directory. The caller must call
// remove; an interrupt removes it too.
func checkoutBase(ref, at string) (*baseTree, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("comparing git revisions needs git: %v", err)
	}
	top, err := git(at, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is not in a git repository: %v", at, err)
	}
	commit, err := git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%s: not a commit of the repository %s", ref, top)
	}
	dir, err := os.MkdirTemp("", "virtc-diff-base-")
	if err != nil {
		return nil, err
	}
	t := &baseTree{ref: ref, top: top, dir: dir, stop: make(chan struct{})}
	t.cleanupOnSignal()
	if _, err := git(top, "worktree", "add", "--detach", "--quiet", dir, commit); err != nil {
		t.remove()
		return nil, err
	}
	return t, nil
}

// cleanupOnSignal removes the worktree when virtc is interrupted, then
// exits as an interrupted program does.
func (t *baseTree) cleanupOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer signal.Stop(sig)
		select {
		case <-sig:
			t.remove()
			os.Exit(130)
		case <-t.stop:
		}
	}()
}

// remove deletes the worktree and its administrative files; it is safe to
// call more than once.
func (t *baseTree) remove() {
	t.once.Do(func() {
		close(t.stop)
		// --force: the worktree is ours and may hold nothing of value.
		git(t.top, "worktree", "remove", "--force", t.dir)
		os.RemoveAll(t.dir)
		git(t.top, "worktree", "prune")
	})
}

// mapPaths translates PATHs of the working tree into the worktree.
func (t *baseTree) mapPaths(paths []string) ([]string, error) {
	top, err := filepath.EvalSymlinks(t.top)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		abs = resolveExisting(abs)
		rel, err := filepath.Rel(top, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s is outside the git repository %s", p, t.top)
		}
		out[i] = filepath.Join(t.dir, rel)
	}
	return out, nil
}

// resolveExisting resolves symbolic links in the longest existing prefix of
// path (a PATH may not exist in the working tree).
func resolveExisting(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path
	}
	return filepath.Join(resolveExisting(parent), filepath.Base(path))
}

// display shows files of the worktree as REF:path, in a file name or in a
// message that names another file.
func (t *baseTree) display(text string) string {
	return strings.ReplaceAll(text, t.dir+string(filepath.Separator), t.ref+":")
}
