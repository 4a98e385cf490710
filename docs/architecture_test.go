package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packageLine is a line of the package tree in architecture.md: a
// directory (ending in /), two or more spaces, what it holds.
var packageLine = regexp.MustCompile(`^([a-z0-9][a-z0-9_./-]*/)\s{2,}(\S.*)$`)

// TestArchitecturePackages: docs/architecture.md has one line for every
// directory of the repository that holds Go files, and no line for one
// that does not.
func TestArchitecturePackages(t *testing.T) {
	data, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]int{}
	for i, l := range strings.Split(string(data), "\n") {
		if m := packageLine.FindStringSubmatch(l); m != nil {
			dir := strings.TrimSuffix(m[1], "/")
			if prev, ok := listed[dir]; ok {
				t.Errorf("architecture.md:%d: %s is listed twice (also line %d)", i+1, dir, prev)
			}
			listed[dir] = i + 1
		}
	}
	var dirs []string
	err = filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel("..", filepath.Dir(p))
			if err != nil {
				return err
			}
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	if len(dirs) < 40 {
		t.Fatalf("found only %d Go package directories: %v", len(dirs), dirs)
	}
	for _, d := range dirs {
		if _, ok := listed[d]; !ok {
			t.Errorf("architecture.md: package %s/ is not listed (add a line: %s/  what it owns)", d, d)
		}
		delete(listed, d)
	}
	for d, line := range listed {
		t.Errorf("architecture.md:%d: %s/ holds no Go package (remove the line, or fix its path)", line, d)
	}
}
