package diag

import "fmt"

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

// Unknown phrases the error for a name that is not among candidates:
// `unknown size "u1.meduim"; did you mean "u1.medium"?`.
func Unknown(what, name string, candidates []string) string {
	if s, ok := Nearest(name, candidates); ok {
		return fmt.Sprintf("unknown %s %q; did you mean %q?", what, name, s)
	}
	if len(candidates) == 0 {
		return fmt.Sprintf("unknown %s %q (the catalog has none)", what, name)
	}
	if len(candidates) <= 12 {
		return fmt.Sprintf("unknown %s %q (known: %s)", what, name, quoteList(candidates))
	}
	return fmt.Sprintf("unknown %s %q (run `virtc catalog` to list them)", what, name)
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
