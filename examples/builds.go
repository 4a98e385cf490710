package examples

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Build is one line of builds.txt: how an example is deployed.
type Build struct {
	// Dir is the folder under examples/ the build runs in (slashes).
	Dir string
	// Args are the `virtc build` arguments, run in Dir; nil when the
	// folder is not a virtc build.
	Args []string
	// NotBuilt says why the folder is not a virtc build.
	NotBuilt string
}

// Builds reads examples/builds.txt of the repository at root and checks
// that every folder of examples/ (but testdata) is covered by a line and
// that every line names a folder that exists.
func Builds(root string) ([]Build, error) {
	file := filepath.Join(root, "examples", "builds.txt")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []Build
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: a folder and its build arguments (or - and a reason) expected", file, n)
		}
		b := Build{Dir: f[0]}
		if f[1] == "-" {
			b.NotBuilt = strings.Join(f[2:], " ")
			if b.NotBuilt == "" {
				return nil, fmt.Errorf("%s:%d: %s: say why it is not built", file, n, b.Dir)
			}
		} else {
			b.Args = f[1:]
		}
		if st, err := os.Stat(filepath.Join(root, "examples", filepath.FromSlash(b.Dir))); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%s:%d: examples/%s is not a folder", file, n, b.Dir)
		}
		out = append(out, b)
	}
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" {
			continue
		}
		covered := false
		for _, b := range out {
			if b.Dir == e.Name() || strings.HasPrefix(b.Dir, e.Name()+"/") {
				covered = true
			}
		}
		if !covered {
			return nil, fmt.Errorf("%s: examples/%s has no line: say how it is built (or why it is not)", file, e.Name())
		}
	}
	return out, nil
}
