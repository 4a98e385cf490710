package docs

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the counts table of contract.md from its rows")

// The statuses of the table's "how virtc holds it" column. held are the
// ones that claim virtc holds the requirement (partial: part of it), so
// need a golden or a test; a partial row also names what is missing.
var (
	statuses = []string{"refused", "generated", "reported", "partial", "documented", "out of scope", "gap"}
	held     = []string{"refused", "generated", "reported", "partial"}
	// documents are the three design documents, in table order.
	documents = []string{"000", "001", "003"}
)

const (
	requirementsHeader = "| id | section | requirement | how virtc holds it | proof |"
	countsHeader       = "| status | 000 | 001 | 003 | all |"
	outOfScopeHeading  = "## Out of scope for a compiler"
)

var (
	docHeading = regexp.MustCompile(`^## (\d{3}): `)
	idPattern  = regexp.MustCompile(`^(\d{3})-R(\d+)$`)
	idMention  = regexp.MustCompile(`\b\d{3}-R\d+\b`)
	statusCell = regexp.MustCompile(`^\*\*([a-z ]+)\*\*:\s*(.*)$`)
	proofToken = regexp.MustCompile("`([^`]+)`")
	testName   = regexp.MustCompile(`^Test[A-Za-z0-9_]+$`)
	testFunc   = regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)
)

// row is one requirement of the table.
type row struct {
	line                  int
	doc, id, section, how string
	status                string
	proofs                []string
}

// repo is what a proof can name: the repository's files and its test
// functions.
type repo struct {
	root  string
	tests map[string]bool
}

func loadRepo(t *testing.T, root string) repo {
	t.Helper()
	r := repo{root: root, tests: map[string]bool{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllSubmatch(data, -1) {
			r.tests[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// cells splits a Markdown table line into its trimmed cells.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	parts := strings.Split(line, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// slug is GitHub's anchor for a heading: lower case, punctuation but
// hyphens and underscores dropped, spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(heading) {
		switch {
		case c == ' ':
			b.WriteByte('-')
		case c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteRune(c)
		}
	}
	return b.String()
}

// anchors lists the heading anchors of a Markdown file, outside code
// blocks.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		out[slug(h)] = true
	}
	return out
}

// checkProof says what is wrong with one proof, or "".
func (r repo) checkProof(p string) string {
	switch {
	case strings.HasPrefix(p, "golden/"):
		if fi, err := os.Stat(filepath.Join(r.root, p)); err != nil || !fi.IsDir() {
			return fmt.Sprintf("golden folder %s does not exist", p)
		}
	case testName.MatchString(p):
		if !r.tests[p] {
			return fmt.Sprintf("no test function %s in the repository (func %s( in a _test.go file)", p, p)
		}
	case strings.Contains(p, "#"):
		file, anchor, _ := strings.Cut(p, "#")
		data, err := os.ReadFile(filepath.Join(r.root, file))
		if err != nil {
			return fmt.Sprintf("%s: no file %s", p, file)
		}
		if !anchors(string(data))[anchor] {
			return fmt.Sprintf("%s: %s has no section with anchor #%s", p, file, anchor)
		}
	default:
		if _, err := os.Stat(filepath.Join(r.root, p)); err != nil {
			return fmt.Sprintf("no file %s in the repository", p)
		}
	}
	return ""
}

// isTestOrGolden says whether a proof runs: a golden scenario or a test.
func isTestOrGolden(p string) bool {
	return strings.HasPrefix(p, "golden/") || testName.MatchString(p)
}

// audit checks a contract table against the repository and returns its
// problems, each with its line.
func audit(text string, r repo) (rows []row, problems []string) {
	lines := strings.Split(text, "\n")
	bad := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("contract.md:%d: %s", line, fmt.Sprintf(format, args...)))
	}
	doc, table := "", ""
	type countRow struct {
		line  int
		cells []string
	}
	var counts []countRow
	countsSeen := false
	listed := map[string]int{}
	inOutOfScope := false
	for i, l := range lines {
		n := i + 1
		if strings.HasPrefix(l, "## ") {
			doc, table = "", ""
			inOutOfScope = strings.TrimSpace(l) == outOfScopeHeading
			if m := docHeading.FindStringSubmatch(l); m != nil {
				doc = m[1]
			}
			continue
		}
		if inOutOfScope {
			for _, id := range idMention.FindAllString(l, -1) {
				if prev, ok := listed[id]; ok {
					bad(n, "%s is listed twice under %q (also line %d)", id, outOfScopeHeading, prev)
				}
				listed[id] = n
			}
			continue
		}
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == requirementsHeader:
			if doc == "" {
				bad(n, "a requirements table outside a document's section (## 000: ...)")
			}
			table = "requirements"
			continue
		case trimmed == countsHeader:
			table, countsSeen = "counts", true
			continue
		case !strings.HasPrefix(trimmed, "|"):
			table = ""
			continue
		case strings.HasPrefix(trimmed, "|---"):
			continue
		}
		c := cells(trimmed)
		switch table {
		case "counts":
			counts = append(counts, countRow{n, c})
		case "requirements":
			if rw, ok := requirement(n, doc, c, r, bad); ok {
				rows = append(rows, rw)
			}
		}
	}

	// Ids: unique, and numbered 1, 2, 3, ... in each document's order.
	next := map[string]int{}
	seen := map[string]int{}
	for _, rw := range rows {
		if prev, ok := seen[rw.id]; ok {
			bad(rw.line, "duplicate id %s (also line %d)", rw.id, prev)
			continue
		}
		seen[rw.id] = rw.line
		if m := idPattern.FindStringSubmatch(rw.id); m != nil && m[1] == rw.doc {
			num, _ := strconv.Atoi(m[2])
			if num != next[rw.doc]+1 {
				bad(rw.line, "%s: ids of document %s are numbered in order without gaps (want %s-R%02d)", rw.id, rw.doc, rw.doc, next[rw.doc]+1)
			}
			next[rw.doc] = num
		}
	}
	for _, d := range documents {
		if next[d] == 0 {
			problems = append(problems, fmt.Sprintf("contract.md: no requirement of document %s", d))
		}
	}

	// The out-of-scope list names exactly the out-of-scope rows.
	for _, rw := range rows {
		_, ok := listed[rw.id]
		if rw.status == "out of scope" && !ok {
			bad(rw.line, "%s is out of scope but not listed under %q with its reason", rw.id, outOfScopeHeading)
		}
		if rw.status != "out of scope" && ok {
			bad(listed[rw.id], "%s is listed under %q but its row says %s", rw.id, outOfScopeHeading, rw.status)
		}
	}
	for id, n := range listed {
		if _, ok := seen[id]; !ok {
			bad(n, "%s is listed under %q but has no row", id, outOfScopeHeading)
		}
	}

	// The counts table matches the rows.
	if !countsSeen {
		problems = append(problems, "contract.md: no counts table ("+countsHeader+")")
	}
	want := tally(rows)
	for _, cr := range counts {
		if len(cr.cells) != len(documents)+2 {
			bad(cr.line, "counts row has %d cells, want %d", len(cr.cells), len(documents)+2)
			continue
		}
		st := cr.cells[0]
		if st != "all" && !slices.Contains(statuses, st) {
			bad(cr.line, "counts row for unknown status %q", st)
			continue
		}
		for j, col := range append(slices.Clone(documents), "all") {
			if got := cr.cells[j+1]; got != strconv.Itoa(want[st][col]) {
				bad(cr.line, "count of %s in %s is %s, the table has %d", st, col, got, want[st][col])
			}
		}
	}
	slices.Sort(problems)
	return rows, problems
}

// requirement checks one row (line n, cells c) of document doc's
// requirements table; false when it is not a row at all.
func requirement(n int, doc string, c []string, r repo, bad func(line int, format string, args ...any)) (row, bool) {
	if len(c) != 5 {
		bad(n, "%d cells, want 5 (id, section, requirement, how virtc holds it, proof)", len(c))
		return row{}, false
	}
	rw := row{line: n, doc: doc, id: c[0], section: c[1], how: c[3]}
	m := idPattern.FindStringSubmatch(rw.id)
	switch {
	case m == nil:
		bad(n, "id %q is not DOC-RNN", rw.id)
	case m[1] != doc:
		bad(n, "id %s in the table of document %s", rw.id, doc)
	}
	if rw.section == "" || c[2] == "" {
		bad(n, "%s: section and requirement must be given", rw.id)
	}
	sm := statusCell.FindStringSubmatch(rw.how)
	if sm == nil || !slices.Contains(statuses, sm[1]) {
		bad(n, "%s: how virtc holds it must start with **status**: one of %s", rw.id, strings.Join(statuses, ", "))
	} else {
		rw.status = sm[1]
		if strings.TrimSpace(sm[2]) == "" {
			bad(n, "%s: %s without saying how or why", rw.id, rw.status)
		}
	}
	rest := proofToken.ReplaceAllString(c[4], "")
	if strings.Trim(rest, ", ") != "" {
		bad(n, "%s: the proof cell holds only `proofs`, separated by commas (found %q)", rw.id, strings.TrimSpace(rest))
	}
	for _, pm := range proofToken.FindAllStringSubmatch(c[4], -1) {
		rw.proofs = append(rw.proofs, pm[1])
		if why := r.checkProof(pm[1]); why != "" {
			bad(n, "%s: %s", rw.id, why)
		}
	}
	switch {
	case slices.Contains(held, rw.status) && !slices.ContainsFunc(rw.proofs, isTestOrGolden):
		bad(n, "%s is %s but names no golden or test that proves it", rw.id, rw.status)
	case rw.status == "documented" && len(rw.proofs) == 0:
		bad(n, "%s is documented but names no documentation section or file", rw.id)
	case rw.status == "partial" && !strings.Contains(rw.how, "missing:"):
		bad(n, "%s is partial but does not say what is missing (\"missing: ...\")", rw.id)
	}
	return rw, true
}

// tally counts rows by status and document, with "all" totals.
func tally(rows []row) map[string]map[string]int {
	out := map[string]map[string]int{"all": {}}
	for _, s := range statuses {
		out[s] = map[string]int{}
	}
	for _, rw := range rows {
		if out[rw.status] == nil {
			continue
		}
		out[rw.status][rw.doc]++
		out[rw.status]["all"]++
		out["all"][rw.doc]++
		out["all"]["all"]++
	}
	return out
}

// writeCounts replaces the rows of the counts table with c.
func writeCounts(text string, c map[string]map[string]int) string {
	lines := strings.Split(text, "\n")
	var out []string
	in := false
	for _, l := range lines {
		switch {
		case strings.TrimSpace(l) == countsHeader:
			in = true
			out = append(out, l)
			continue
		case in && strings.HasPrefix(l, "|---"):
			out = append(out, l)
			for _, s := range append(slices.Clone(statuses), "all") {
				out = append(out, fmt.Sprintf("| %s | %d | %d | %d | %d |", s, c[s]["000"], c[s]["001"], c[s]["003"], c[s]["all"]))
			}
			continue
		case in && strings.HasPrefix(l, "|"):
			continue
		}
		in = false
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// TestContractProofs holds docs/contract.md to the repository: every
// golden folder, test function, README section and file it names exists,
// every requirement it says virtc holds names a golden or a test, and its
// counts and out-of-scope list agree with the tables.
func TestContractProofs(t *testing.T) {
	data, err := os.ReadFile("contract.md")
	if err != nil {
		t.Fatal(err)
	}
	r := loadRepo(t, "..")
	if *update {
		rows, _ := audit(string(data), r)
		data = []byte(writeCounts(string(data), tally(rows)))
		if err := os.WriteFile("contract.md", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows, problems := audit(string(data), r)
	for _, p := range problems {
		t.Error(p)
	}
	c := tally(rows)
	for _, s := range append(slices.Clone(statuses), "all") {
		t.Logf("%-12s 000 %3d  001 %3d  003 %3d  all %3d", s, c[s]["000"], c[s]["001"], c[s]["003"], c[s]["all"])
	}
}

// TestAuditCatchesBadTables shows the audit fails: a synthetic repository
// and tables with one mistake each.
func TestAuditCatchesBadTables(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "golden", "basic"), 0o755))
	must(t, os.MkdirAll(filepath.Join(root, "pkg", "testdata"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "pkg", "a_test.go"), []byte("package pkg\n\nfunc TestReal(t *testing.T) {}\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "pkg", "testdata", "b_test.go"), []byte("package pkg\n\nfunc TestInTestdata(t *testing.T) {}\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "README.md"), []byte("# x\n\n## Data protection\n\n```sh\n# not a heading\n```\n"), 0o644))
	r := loadRepo(t, root)

	table := func(rows000, rows001, rows003, outOfScope string, counts [][5]int) string {
		var b strings.Builder
		b.WriteString(countsHeader + "\n|---|---|---|---|---|\n")
		for i, s := range append(slices.Clone(statuses), "all") {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", s, counts[i][0], counts[i][1], counts[i][2], counts[i][3])
		}
		for i, rs := range []string{rows000, rows001, rows003} {
			fmt.Fprintf(&b, "\n## %s: a document\n\n%s\n|---|---|---|---|---|\n%s\n", documents[i], requirementsHeader, rs)
		}
		b.WriteString("\n" + outOfScopeHeading + "\n\n" + outOfScope + "\n")
		return b.String()
	}
	good000 := "| 000-R01 | S | A rule. | **refused**: by a check. | `golden/basic`, `TestReal` |\n" +
		"| 000-R02 | S | A decision. | **out of scope**: a person's decision. | |"
	good001 := "| 001-R01 | S | A rule. | **documented**: README says so. | `README.md#data-protection` |"
	good003 := "| 003-R01 | S | A rule. | **gap**: not yet. | |"
	goodCounts := [][5]int{{1, 0, 0, 1}, {}, {}, {}, {0, 1, 0, 1}, {1, 0, 0, 1}, {0, 0, 1, 1}, {2, 1, 1, 4}}
	goodOut := "- A person's decision: 000-R02."

	if _, problems := audit(table(good000, good001, good003, goodOut, goodCounts), r); len(problems) > 0 {
		t.Fatalf("a good table has problems:\n%s", strings.Join(problems, "\n"))
	}

	cases := []struct {
		name             string
		r000, r001, r003 string
		out              string
		counts           [][5]int
		want             string
	}{
		{name: "missing golden",
			r000: strings.Replace(good000, "golden/basic", "golden/no-such-scenario", 1),
			want: "golden folder golden/no-such-scenario does not exist"},
		{name: "missing test",
			r000: strings.Replace(good000, "TestReal", "TestNoSuchThing", 1),
			want: "no test function TestNoSuchThing"},
		{name: "test only in testdata",
			r000: strings.Replace(good000, "TestReal", "TestInTestdata", 1),
			want: "no test function TestInTestdata"},
		{name: "held without proof",
			r000: strings.Replace(good000, "`golden/basic`, `TestReal`", "", 1),
			want: "000-R01 is refused but names no golden or test"},
		{name: "held with only a README section",
			r000: strings.Replace(good000, "`golden/basic`, `TestReal`", "`README.md#data-protection`", 1),
			want: "000-R01 is refused but names no golden or test"},
		{name: "missing README section",
			r001: strings.Replace(good001, "#data-protection", "#not-a-heading", 1),
			want: "README.md has no section with anchor #not-a-heading"},
		{name: "documented without proof",
			r001: strings.Replace(good001, "`README.md#data-protection`", "", 1),
			want: "001-R01 is documented but names no documentation section or file"},
		{name: "missing file",
			r001: strings.Replace(good001, "README.md#data-protection", "examples/none.yaml", 1),
			want: "no file examples/none.yaml"},
		{name: "partial without what is missing",
			r000:   strings.Replace(good000, "**refused**: by a check.", "**partial**: by a check, not all of it.", 1),
			counts: [][5]int{{}, {}, {}, {1, 0, 0, 1}, {0, 1, 0, 1}, {1, 0, 0, 1}, {0, 0, 1, 1}, {2, 1, 1, 4}},
			want:   "000-R01 is partial but does not say what is missing"},
		{name: "unknown status",
			r003: strings.Replace(good003, "**gap**", "**partly**", 1),
			want: "must start with **status**"},
		{name: "proof outside backticks",
			r000: strings.Replace(good000, "`golden/basic`", "golden/basic", 1),
			want: "the proof cell holds only `proofs`"},
		{name: "duplicate id",
			r003: good003 + "\n" + good003,
			want: "duplicate id 003-R01"},
		{name: "skipped number",
			r003: strings.Replace(good003, "003-R01", "003-R02", 1),
			want: "want 003-R01"},
		{name: "id of another document",
			r003: strings.Replace(good003, "003-R01", "001-R02", 1),
			want: "id 001-R02 in the table of document 003"},
		{name: "a document without rows",
			r003: " ",
			want: "no requirement of document 003"},
		{name: "out of scope not listed",
			out:  "- nothing",
			want: "000-R02 is out of scope but not listed"},
		{name: "listed but held",
			out:  goodOut + " 000-R01.",
			want: "000-R01 is listed under"},
		{name: "wrong count",
			counts: [][5]int{{2, 0, 0, 2}, {}, {}, {}, {0, 1, 0, 1}, {1, 0, 0, 1}, {0, 0, 1, 1}, {2, 1, 1, 4}},
			want:   "count of refused in 000 is 2, the table has 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pick := func(s, def string) string {
				if s == "" {
					return def
				}
				return s
			}
			counts := tc.counts
			if counts == nil {
				counts = goodCounts
			}
			_, problems := audit(table(pick(tc.r000, good000), pick(tc.r001, good001), pick(tc.r003, good003), pick(tc.out, goodOut), counts), r)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("want a problem containing %q, got:\n%s", tc.want, strings.Join(problems, "\n"))
			}
		})
	}
}
