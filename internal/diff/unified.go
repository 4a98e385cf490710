package diff

import (
	"fmt"
	"strings"
)

// contextLines is the number of unchanged lines shown around a change, as
// diff -u does.
const contextLines = 3

type opKind byte

const (
	opEqual  opKind = ' '
	opDelete opKind = '-'
	opInsert opKind = '+'
)

type op struct {
	kind opKind
	line string
	// a and b are the 0-based line numbers in the old and new text.
	a, b int
}

// Unified returns the unified diff of two texts (without file headers), or
// "" when they are equal. Objects are small, so a longest-common-subsequence
// table is cheap and gives the minimal diff; ties prefer deletions first, as
// diff -u prints them.
func Unified(oldText, newText string) string {
	a, b := splitLines(oldText), splitLines(newText)
	ops := lineOps(a, b)
	var out strings.Builder
	for _, h := range hunks(ops) {
		writeHunk(&out, ops[h[0]:h[1]])
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
}

func lineOps(a, b []string) []op {
	n, m := len(a), len(b)
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if trim(a[i]) == trim(b[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && trim(a[i]) == trim(b[j]):
			ops = append(ops, op{opEqual, trim(a[i]), i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{opDelete, trim(a[i]), i, j})
			i++
		default:
			ops = append(ops, op{opInsert, trim(b[j]), i, j})
			j++
		}
	}
	return ops
}

func trim(line string) string { return strings.TrimSuffix(line, "\n") }

// hunks groups the changes with their context: [start, end) ranges of ops.
func hunks(ops []op) [][2]int {
	var out [][2]int
	for i := 0; i < len(ops); {
		if ops[i].kind == opEqual {
			i++
			continue
		}
		start := max(0, i-contextLines)
		end := i
		for end < len(ops) {
			if ops[end].kind != opEqual {
				end++
				continue
			}
			// A run of equal lines longer than twice the context ends
			// the hunk.
			run := end
			for run < len(ops) && ops[run].kind == opEqual {
				run++
			}
			if run == len(ops) || run-end > 2*contextLines {
				end = min(end+contextLines, len(ops))
				break
			}
			end = run
		}
		if n := len(out); n > 0 && out[n-1][1] >= start {
			out[n-1][1] = end
		} else {
			out = append(out, [2]int{start, end})
		}
		i = end
	}
	return out
}

func writeHunk(out *strings.Builder, ops []op) {
	aStart, bStart := ops[0].a, ops[0].b
	var aLen, bLen int
	for _, o := range ops {
		if o.kind != opInsert {
			aLen++
		}
		if o.kind != opDelete {
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, o := range ops {
		out.WriteByte(byte(o.kind))
		out.WriteString(o.line)
		out.WriteByte('\n')
	}
}

// hunkRange writes a hunk's line range as diff -u does: 1-based, the count
// omitted when it is 1, and an empty range named by the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
