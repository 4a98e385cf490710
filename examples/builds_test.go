package examples

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildsFile: the repository's examples/builds.txt covers every
// example folder, and the checks of Builds can fail.
func TestBuildsFile(t *testing.T) {
	builds, err := Builds("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, b := range builds {
		seen[b.Dir] = true
	}
	for _, dir := range []string{"argocd/clusters/east", "argocd/clusters/west", "argocd/kustomize-app"} {
		if !seen[dir] {
			t.Errorf("examples/builds.txt has no line for %s", dir)
		}
	}

	root := t.TempDir()
	for _, d := range []string{"examples/a", "examples/b/c", "examples/testdata"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ file, want string }{
		{"a .\nb/c --catalog x .\n", ""},
		{"a .\n", "examples/b has no line"},
		{"a .\nb/c .\nd .\n", "examples/d is not a folder"},
		{"a .\nb/c -\n", "say why it is not built"},
		{"a\nb/c .\n", "a folder and its build arguments"},
	} {
		if err := os.WriteFile(filepath.Join(root, "examples", "builds.txt"), []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Builds(root)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.file, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want %q", tc.file, err, tc.want)
		}
	}
}
