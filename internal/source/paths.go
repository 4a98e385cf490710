package source

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/virtc/virtc/internal/diag"
)

// BaseEnv names the environment variable that fixes the directory
// virtc.dev/source paths are relative to, for builds outside a git
// checkout that must still record repository paths (an exported tree, a
// test that compares outputs).
const BaseEnv = "VIRTC_SOURCE_BASE"

// SourcePath is the path recorded in a generated object's virtc.dev/source
// annotation for file, read from the input root root. It is one path
// however the file was named (`virtc build .`, `virtc build tenants/a.yaml`
// and `cd tenants && virtc build a.yaml` agree), with slashes, relative to
// the first of these that holds the file:
//
//  1. the directory $VIRTC_SOURCE_BASE names;
//  2. the top of the git repository holding the file: the nearest
//     directory above it with a .git entry (a directory, or the file of a
//     worktree or submodule); git itself is not run;
//  3. the current directory;
//
// and otherwise relative to the input root (a file outside the current
// directory and outside any repository).
func SourcePath(file, root string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return relTo(root, file)
	}
	if b := os.Getenv(BaseEnv); b != "" {
		if r, ok := below(b, abs); ok {
			return r
		}
	}
	if top := repoTop(filepath.Dir(abs)); top != "" {
		if r, ok := below(top, abs); ok {
			return r
		}
	}
	if wd, err := os.Getwd(); err == nil {
		if r, ok := below(wd, abs); ok {
			return r
		}
	}
	return relTo(root, file)
}

// below returns file relative to dir, with slashes, when file is below dir.
func below(dir, file string) (string, bool) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	absFile, err := filepath.Abs(file)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(absDir, absFile)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Within reports whether file is dir or below it (both absolute and
// clean, symlinks resolved as the caller needs): the confinement test of
// inputs, Jsonnet imports and the plugin's paths.
func Within(dir, file string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// repoTops caches repoTop by directory: a fleet has thousands of files in
// a few directories, read on all CPUs.
var repoTops sync.Map

// repoTop is the nearest directory at or above dir (absolute, clean) that
// holds a .git entry, or "".
func repoTop(dir string) string {
	if top, ok := repoTops.Load(dir); ok {
		return top.(string)
	}
	top := ""
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		top = dir
	} else if parent := filepath.Dir(dir); parent != dir {
		top = repoTop(parent)
	}
	repoTops.Store(dir, top)
	return top
}

// confined reports whether file, found under the input root root, stays
// inside it once symlinks are followed, and reports the file when it does
// not: a symlink whose target leaves the root is refused, like a Jsonnet
// import that leaves it (internal/jsonnet/importer.go).
func confined(root, file string, diags *diag.List) bool {
	info, err := os.Lstat(file)
	if err != nil || info.Mode()&os.ModeSymlink == 0 {
		return true // not a link; reading it reports any other problem
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		diags.Errorf(diag.Pos{File: file}, "", "cannot read: cannot resolve the input root %s: %v", root, unwrapPathError(err))
		return false
	}
	realRoot, _ = filepath.Abs(realRoot)
	target, _ := os.Readlink(file)
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		diags.Errorf(diag.Pos{File: file}, "", "cannot read: it is a symlink to %s, which cannot be followed: %v", target, unwrapPathError(err))
		return false
	}
	real, _ = filepath.Abs(real)
	if _, ok := below(realRoot, real); ok {
		return true
	}
	to := target
	if filepath.Clean(target) != real {
		to += " (" + real + ")"
	}
	diags.Errorf(diag.Pos{File: file}, "", "refused: it is a symlink to %s, outside the input root %s (symlinks are followed only inside the input root; copy what it points to into the root)", to, root)
	return false
}
