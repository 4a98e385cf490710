package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
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
	goFiles(t, func(rel string, _ *ast.File, _ *token.FileSet) {
		dirs = append(dirs, filepath.ToSlash(filepath.Dir(rel)))
	})
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

// goFiles calls f with every Go file of the repository (its path relative
// to the root, slash-separated), skipping what TestArchitecturePackages
// skips: hidden directories, testdata, bin and node_modules.
func goFiles(t *testing.T, f func(rel string, file *ast.File, fset *token.FileSet)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
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
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel("..", p)
		if err != nil {
			return err
		}
		f(filepath.ToSlash(rel), file, fset)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// maxFuncLines is the longest a function may be (issue 40): a longer one
// is steps that want names of their own.
const maxFuncLines = 150

// TestNoLongFunctions: no function or method of the repository, tests
// included, is longer than maxFuncLines lines.
func TestNoLongFunctions(t *testing.T) {
	n := 0
	goFiles(t, func(rel string, file *ast.File, fset *token.FileSet) {
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n++
			start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
			if lines := end - start + 1; lines > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines long, more than %d (split it into named steps)", rel, start, fd.Name.Name, lines, maxFuncLines)
			}
		}
	})
	if n < 1000 {
		t.Fatalf("found only %d functions: the walk missed the repository", n)
	}
}

// TestNoSingleImporterPackages: a package outside internal/ directories
// and api/ is imported by more than one other package (issue 40): a
// package that serves one other belongs under that one's internal/.
// Importers count by directory, tests included; the modules of test/ and
// tools/ count as the repository.
func TestNoSingleImporterPackages(t *testing.T) {
	const module = "github.com/virtc/virtc/"
	importers := map[string]map[string]bool{}
	goFiles(t, func(rel string, file *ast.File, _ *token.FileSet) {
		dir := filepath.ToSlash(filepath.Dir(rel))
		for _, im := range file.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			pkg, ok := strings.CutPrefix(path, module)
			if !ok || pkg == dir {
				continue
			}
			if importers[pkg] == nil {
				importers[pkg] = map[string]bool{}
			}
			importers[pkg][dir] = true
		}
	})
	if len(importers) < 20 {
		t.Fatalf("found only %d imported packages of the repository: the walk missed it", len(importers))
	}
	var single []string
	for pkg, dirs := range importers {
		if len(dirs) != 1 || pkg == "api" || strings.HasPrefix(pkg, "api/") || slices.Contains(strings.Split(pkg, "/"), "internal") {
			continue
		}
		for d := range dirs {
			single = append(single, fmt.Sprintf("%s/ is imported by %s/ only (move it under %s/internal/, or into it)", pkg, d, d))
		}
	}
	slices.Sort(single)
	for _, s := range single {
		t.Error(s)
	}
}
