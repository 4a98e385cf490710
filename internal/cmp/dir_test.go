package cmp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readDir lists what os.ReadDir lists, also past one read of the kernel's
// records (2,000 long names), and refuses a directory that holds a
// symlink.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 2000 {
		name := fmt.Sprintf("tenant-%04d-%s.yaml", i, strings.Repeat("x", i%40))
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	for _, d := range []string{"catalog", ".git"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		want = append(want, d+"/")
	}
	list, ok := readDir(dir)
	if !ok {
		t.Fatal("readDir failed")
	}
	var got []string
	for _, e := range list {
		if e.dir {
			got = append(got, e.name+"/")
		} else {
			got = append(got, e.name)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("readDir listed %d entries, want %d", len(got), len(want))
	}
	if err := os.Symlink("catalog", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, ok := readDir(dir); ok {
		t.Errorf("a directory with a symlink was listed")
	}
	if _, ok := readDir(filepath.Join(dir, "nosuch")); ok {
		t.Errorf("a missing directory was listed")
	}
}
