package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/source"
)

// confine refuses, in the Argo CD plugin, every input path that leaves the
// repository's copy: the marker file's paths, catalogDirs and appProjects
// and the Application's catalog and app-projects parameters all reach the
// build as spec. The sidecar unpacks every Application's repository side
// by side, so a path out of the copy would read another team's repository
// (or the sidecar's files) into this one's output and messages. Argo CD
// confines Helm value files to the repository the same way
// (util/io/path/resolved.go, ResolveValueFilePathOrUrl). A path is judged
// by where it leads once symlinks are followed; an absolute path is
// refused whatever it names, since the copy's own location is a new
// temporary directory each call.
func (p place) confine(spec api.CompilerSpec, stderr io.Writer) bool {
	root := p.base
	if root == "" {
		// Argo CD did not say where the application sits in the
		// repository: the application's directory is all that is known
		// to be the copy.
		root = "."
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err == nil {
		realRoot, err = filepath.Abs(realRoot)
	}
	if err != nil {
		fmt.Fprintf(stderr, "virtc cmp: cannot resolve the repository's copy: %v\n", err)
		return false
	}
	ok := true
	check := func(what string, paths []string) {
		for _, f := range paths {
			if why := outside(realRoot, f); why != "" {
				fmt.Fprintf(stderr, "virtc cmp: %s %q: %s (the plugin reads only inside the repository's copy: name a file or directory of the repository, relative to the application's directory)\n", what, f, why)
				ok = false
			}
		}
	}
	check("path", spec.Paths)
	check("catalog", spec.CatalogDirs)
	check("app-projects", spec.AppProjects)
	return ok
}

// outside says why f, named from the working directory, is not inside
// the directory realRoot (absolute, symlinks resolved), or "" when it is.
// A path that does not exist is judged by its name: reading it reports
// that it is missing.
func outside(realRoot, f string) string {
	if filepath.IsAbs(f) || filepath.VolumeName(f) != "" {
		return "an absolute path"
	}
	abs, err := filepath.Abs(f)
	if err != nil {
		return err.Error()
	}
	// The name first, then where its symlinks lead.
	wd, err := os.Getwd()
	if err != nil {
		return err.Error()
	}
	realWD, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return err.Error()
	}
	if !source.Within(realRoot, filepath.Join(realWD, f)) {
		return "outside the repository"
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if os.IsNotExist(err) {
			return ""
		}
		return "cannot be resolved"
	}
	if real, err = filepath.Abs(real); err != nil || !source.Within(realRoot, real) {
		return "a symlink that leads outside the repository"
	}
	return ""
}
