package diag

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Nearest returns the candidate closest to name by edit distance, if it is
// close enough to be a plausible misspelling.
func Nearest(name string, candidates []string) (string, bool) {
	best, bestD := "", -1
	for _, c := range candidates {
		d := distance(name, c)
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if bestD < 0 {
		return "", false
	}
	limit := max(2, len(name)/3)
	return best, bestD <= limit
}

// Unknown phrases the error for a catalog name that is not among
// candidates: `unknown size "u1.meduim"; did you mean "u1.medium"?`. When
// none is close and there are too many to name, it points to `virtc
// catalog`.
func Unknown(what, name string, candidates []string) string {
	return unknown(what, name, candidates, "the catalog has none", "run `virtc catalog` to list them")
}

// UnknownName phrases the error for a name that is not among candidates
// and not a catalog name (a kind, a feature gate, a VM).
func UnknownName(what, name string, candidates []string) string {
	return unknown(what, name, candidates, "none is known", fmt.Sprintf("none of the %d known is close", len(candidates)))
}

func unknown(what, name string, candidates []string, none, many string) string {
	if s, ok := Nearest(name, candidates); ok {
		return fmt.Sprintf("unknown %s %q; did you mean %q?", what, name, s)
	}
	if len(candidates) == 0 {
		return fmt.Sprintf("unknown %s %q (%s)", what, name, none)
	}
	if len(candidates) <= 12 {
		return fmt.Sprintf("unknown %s %q (known: %s)", what, name, quoteList(candidates))
	}
	return fmt.Sprintf("unknown %s %q (%s)", what, name, many)
}

// UnknownField phrases the error for a field that objects of kind do not
// have at that place; fields are the ones they have there. It suggests
// the nearest field (a misspelling, or a name that shares a word with
// it: snapshotBefore and backupBefore) and points to `virtc schema KIND`,
// which describes them all.
func UnknownField(kind, name string, fields []string) string {
	schema := fmt.Sprintf("`virtc schema %s`", kind)
	if s, ok := nearestField(name, fields); ok {
		return fmt.Sprintf("unknown field %q (%s lists the fields); did you mean %q?", name, schema, s)
	}
	if len(fields) <= 12 {
		return fmt.Sprintf("unknown field %q (known here: %s; %s describes them)", name, quoteList(fields), schema)
	}
	return fmt.Sprintf("unknown field %q (%s lists the fields)", name, schema)
}

// nearestField is Nearest, or else the field closest by edit distance
// among those that share a word of four letters or more with name
// (storageClass and storage), if it is at most half the name away.
func nearestField(name string, fields []string) (string, bool) {
	if s, ok := Nearest(name, fields); ok {
		return s, true
	}
	words := camelWords(name)
	best, bestD := "", -1
	for _, f := range fields {
		shared := false
		for _, w := range camelWords(f) {
			shared = shared || slices.Contains(words, w)
		}
		if !shared {
			continue
		}
		if d := distance(name, f); bestD < 0 || d < bestD || (d == bestD && f < best) {
			best, bestD = f, d
		}
	}
	return best, bestD >= 0 && bestD <= max(2, len(name)/2)
}

// camelWords splits a camelCase name into its lowercase words of four
// letters or more: snapshotBefore gives snapshot and before.
func camelWords(name string) []string {
	var out []string
	start := 0
	flush := func(end int) {
		if w := strings.ToLower(name[start:end]); len(w) >= 4 {
			out = append(out, w)
		}
		start = end
	}
	for i := 1; i < len(name); i++ {
		if unicode.IsUpper(rune(name[i])) && !unicode.IsUpper(rune(name[i-1])) {
			flush(i)
		}
	}
	flush(len(name))
	return out
}

func quoteList(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", x)
	}
	return s
}

// distance is the optimal string alignment distance: Levenshtein plus
// transposition of two adjacent characters, the commonest typo.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
