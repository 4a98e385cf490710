package diff

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/virtc/virtc/test/conform"
)

// apply applies a unified diff (as Unified writes it) to old.
func apply(t *testing.T, old, patch string) string {
	t.Helper()
	a := splitLines(old)
	var out []string
	next := 0 // next line of a to copy
	lines := splitLines(patch)
	for i := 0; i < len(lines); {
		h := trim(lines[i])
		fields := strings.Fields(h)
		if len(fields) != 4 || fields[0] != "@@" || fields[3] != "@@" || fields[1][0] != '-' || fields[2][0] != '+' {
			t.Fatalf("bad hunk header %q", h)
		}
		aStart, aLen := parseRange(t, fields[1][1:])
		_, bLen := parseRange(t, fields[2][1:])
		// A range of length 0 names the line before it.
		from := aStart - 1
		if aLen == 0 {
			from = aStart
		}
		for ; next < from; next++ {
			out = append(out, trim(a[next]))
		}
		i++
		gotA, gotB := 0, 0
		for ; i < len(lines) && !strings.HasPrefix(lines[i], "@@"); i++ {
			l := trim(lines[i])
			switch l[0] {
			case ' ':
				if trim(a[next]) != l[1:] {
					t.Fatalf("context line %q does not match %q", l[1:], trim(a[next]))
				}
				out = append(out, l[1:])
				next++
				gotA++
				gotB++
			case '-':
				if trim(a[next]) != l[1:] {
					t.Fatalf("deleted line %q does not match %q", l[1:], trim(a[next]))
				}
				next++
				gotA++
			case '+':
				out = append(out, l[1:])
				gotB++
			default:
				t.Fatalf("bad diff line %q", l)
			}
		}
		if gotA != aLen || gotB != bLen {
			t.Fatalf("hunk %q has %d/%d lines, header says %d/%d", h, gotA, gotB, aLen, bLen)
		}
	}
	for ; next < len(a); next++ {
		out = append(out, trim(a[next]))
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

func parseRange(t *testing.T, s string) (start, n int) {
	t.Helper()
	n = 1
	if i := strings.IndexByte(s, ','); i >= 0 {
		var err error
		if n, err = strconv.Atoi(s[i+1:]); err != nil {
			t.Fatal(err)
		}
		s = s[:i]
	}
	start, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return start, n
}

func randomText(r *rand.Rand, base []string) string {
	var lines []string
	for _, l := range base {
		switch r.IntN(6) {
		case 0: // drop
		case 1:
			lines = append(lines, l+" changed")
		case 2:
			lines = append(lines, l, fmt.Sprintf("inserted %d", r.IntN(100)))
		default:
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestUnifiedRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		var base []string
		for j := range r.IntN(40) {
			base = append(base, fmt.Sprintf("line %d", j))
		}
		a, b := randomText(r, base), randomText(r, base)
		d := Unified(a, b)
		if (d == "") != (a == b) {
			t.Fatalf("case %d: empty diff %v for equal texts %v", i, d == "", a == b)
		}
		if got := apply(t, a, d); got != b {
			t.Fatalf("case %d: applying the diff gives\n%s\nwant\n%s\ndiff:\n%s", i, got, b, d)
		}
	}
}

func TestUnifiedHunks(t *testing.T) {
	var a []string
	for i := range 20 {
		a = append(a, fmt.Sprintf("l%d", i))
	}
	old := strings.Join(a, "\n") + "\n"
	b := append([]string{}, a...)
	b[1] = "changed1"
	b[18] = "changed18"
	got := Unified(old, strings.Join(b, "\n")+"\n")
	want := "@@ -1,5 +1,5 @@\n l0\n-l1\n+changed1\n l2\n l3\n l4\n" +
		"@@ -16,5 +16,5 @@\n l15\n l16\n l17\n-l18\n+changed18\n l19\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := Unified("", "a\nb\n"); got != "@@ -0,0 +1,2 @@\n+a\n+b\n" {
		t.Errorf("added file: got %q", got)
	}
	if got := Unified("a\n", ""); got != "@@ -1 +0,0 @@\n-a\n" {
		t.Errorf("removed file: got %q", got)
	}
}

// TestUnifiedMatchesDiffU compares the hunk line counts with GNU diff -u,
// when it is installed: both find a minimal diff, so they change the same
// number of lines (they may choose different but equivalent lines).
func TestUnifiedMatchesDiffU(t *testing.T) {
	bin, err := exec.LookPath("diff")
	if err != nil {
		conform.Skip(t, fmt.Errorf("diff -u not installed: %v", err))
	}
	r := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	count := func(d string) (minus, plus int) {
		for _, l := range splitLines(d) {
			switch {
			case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
			case strings.HasPrefix(l, "-"):
				minus++
			case strings.HasPrefix(l, "+"):
				plus++
			}
		}
		return minus, plus
	}
	for i := range 100 {
		var base []string
		for j := range 5 + r.IntN(30) {
			base = append(base, fmt.Sprintf("line %d", j))
		}
		a, b := randomText(r, base), randomText(r, base)
		fa, fb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		if err := os.WriteFile(fa, []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fb, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(bin, "-u", fa, fb).Output()
		gm, gp := count(Unified(a, b))
		wm, wp := count(string(out))
		if gm != wm || gp != wp {
			t.Fatalf("case %d: -%d +%d lines, diff -u has -%d +%d\nours:\n%s\ndiff -u:\n%s", i, gm, gp, wm, wp, Unified(a, b), out)
		}
	}
}
