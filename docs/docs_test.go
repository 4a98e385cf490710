package docs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The docs test holds README.md and the pages of docs/ to the program
// (docs/testing.md, "The docs test", says how to mark a block):
//
//   - every fenced block in a language of examples (sh, console, yaml,
//     json, jsonnet) carries a marker: run, compile, file=PATH, from=PATH
//     or norun;
//   - run blocks are shell sessions: each "$ " command runs with sh in the
//     page's work directory (a copy of examples/ and the page's file=
//     blocks so far), virtc on PATH, and its output (stdout and stderr as
//     one stream) must be the lines shown, where a line "..." stands for
//     any lines and a last line "[exit N]" for the exit code (else 0);
//   - compile blocks are virtc inputs: `virtc validate` of the block
//     alone, with the embedded catalog, succeeds;
//   - file=PATH blocks are written to PATH in the page's work directory
//     for the run blocks after them;
//   - from=PATH blocks quote a repository file: their text is in it;
//   - norun blocks are not run (they need a cluster or a registry), but
//     each `virtc COMMAND` in them names a command and flags virtc has,
//     and each `make TARGET` a target of the Makefile;
//   - every relative link and #anchor, in README.md and docs/, names a
//     file and a heading that exist, and README.md links every page.

// exampleLangs are the languages whose blocks must carry a marker.
var exampleLangs = []string{"sh", "bash", "console", "yaml", "yml", "json", "jsonnet"}

// block is one fenced code block of a Markdown file.
type block struct {
	file  string
	line  int // the opening fence's
	lang  string
	attrs map[string]string
	text  string
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var fence = regexp.MustCompile("^( *)(```+)(.*)$")

// blocks are the fenced blocks of a Markdown text, indented ones (in list
// items) with their indent taken off.
func blocks(file, text string) ([]block, []string) {
	var out []block
	var problems []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, ticks := m[1], m[2]
		words := strings.Fields(m[3])
		b := block{file: file, line: i + 1, attrs: map[string]string{}}
		if len(words) > 0 {
			b.lang = words[0]
			for _, w := range words[1:] {
				k, v, _ := strings.Cut(w, "=")
				b.attrs[k] = v
			}
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			l := lines[i]
			if strings.TrimSpace(l) == ticks {
				closed = true
				break
			}
			body = append(body, strings.TrimPrefix(l, indent))
		}
		if !closed {
			problems = append(problems, fmt.Sprintf("%s: the block is not closed", b))
		}
		b.text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out, problems
}

// markers are the words that say what the test does with a block.
var markers = []string{"run", "compile", "file", "from", "norun"}

// markerProblem says what is wrong with a block's marker, or "".
func markerProblem(b block) string {
	if !slices.Contains(exampleLangs, b.lang) {
		return ""
	}
	var have []string
	for _, m := range markers {
		if _, ok := b.attrs[m]; ok {
			have = append(have, m)
		}
	}
	switch {
	case len(have) == 0:
		return fmt.Sprintf("%s: a %s block without a marker: run, compile, file=PATH, from=PATH or norun (docs/testing.md, \"The docs test\")", b, b.lang)
	case slices.Contains(have, "norun") && len(have) > 1:
		return fmt.Sprintf("%s: norun with %s", b, strings.Join(have, ", "))
	case slices.Contains(have, "run") && !slices.Contains([]string{"sh", "bash", "console"}, b.lang):
		return fmt.Sprintf("%s: run on a %s block (run is for shell sessions)", b, b.lang)
	case slices.Contains(have, "compile") && !slices.Contains([]string{"yaml", "yml", "json", "jsonnet"}, b.lang):
		return fmt.Sprintf("%s: compile on a %s block (compile is for virtc inputs)", b, b.lang)
	case b.attrs["file"] == "" && slices.Contains(have, "file"), b.attrs["from"] == "" && slices.Contains(have, "from"):
		return fmt.Sprintf("%s: file= and from= need a path", b)
	}
	return ""
}

// step is one command of a run block and what it must print.
type step struct {
	command string
	want    []string // lines; "..." matches any lines
	exit    int
}

var exitLine = regexp.MustCompile(`^\[exit (\d+)\]$`)

// steps parses a run block: "$ " starts a command (a line ending in a
// backslash continues it), the lines up to the next command are its output.
func steps(b block) ([]step, error) {
	var out []step
	lines := strings.Split(strings.TrimSuffix(b.text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		cmd, ok := strings.CutPrefix(l, "$ ")
		if !ok {
			if len(out) == 0 {
				return nil, fmt.Errorf("%s: a run block starts with a command (\"$ \"), not %q", b, l)
			}
			out[len(out)-1].want = append(out[len(out)-1].want, l)
			continue
		}
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = cmd + "\n" + lines[i]
		}
		out = append(out, step{command: cmd})
	}
	for i := range out {
		if n := len(out[i].want); n > 0 {
			if m := exitLine.FindStringSubmatch(out[i].want[n-1]); m != nil {
				fmt.Sscan(m[1], &out[i].exit)
				out[i].want = out[i].want[:n-1]
			}
		}
	}
	return out, nil
}

// matchLines says whether got is want, where a want line "..." matches
// any number of lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && got[0] == want[0] && matchLines(want[1:], got[1:])
}

func splitOutput(out []byte) []string {
	s := strings.TrimSuffix(string(out), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// virtcBin builds virtc once for the test run.
var virtcBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "virtc-docs-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "virtc")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/virtc")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// runner runs commands with the built virtc first on PATH, in an
// environment of its own (no git configuration, no SOURCE_DATE_EPOCH).
type runner struct {
	bin   string
	home  string
	tools string // the checkout's .tools/bin (make tools), after virtc on PATH
}

func newRunner(t *testing.T) runner {
	t.Helper()
	bin, err := virtcBin()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := filepath.Abs(filepath.Join("..", ".tools", "bin"))
	if err != nil {
		t.Fatal(err)
	}
	return runner{bin: bin, home: t.TempDir(), tools: tools}
}

func (r runner) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "VIRTC_") || strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "ARGOCD_") || k == "SOURCE_DATE_EPOCH" || k == "HOME" || k == "PATH" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"PATH="+strings.Join([]string{filepath.Dir(r.bin), r.tools, os.Getenv("PATH")}, string(os.PathListSeparator)),
		"HOME="+r.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(r.home, "gitconfig"),
		"GIT_AUTHOR_NAME=docs", "GIT_AUTHOR_EMAIL=docs@example.com", "GIT_COMMITTER_NAME=docs", "GIT_COMMITTER_EMAIL=docs@example.com",
		"NO_COLOR=1", "LC_ALL=C")
}

// run runs one shell command in dir: its output (stdout and stderr as
// one stream) and exit code.
func (r runner) run(dir, command string) ([]byte, int) {
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = r.env()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code == -1 {
			fmt.Fprintf(&out, "%v\n", err)
		}
	}
	return out.Bytes(), code
}

// copyTree copies the directory src to dst (regular files and directories).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// page is a Markdown file of the documentation, by its repository path.
type page struct {
	path string // slash path from the repository's top
	text string
}

// pages are README.md and the Markdown files of docs/ (root is the
// repository's top).
func pages(root string) ([]page, error) {
	names := []string{"README.md"}
	m, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, p := range m {
		names = append(names, "docs/"+filepath.Base(p))
	}
	var out []page
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(n)))
		if err != nil {
			return nil, err
		}
		out = append(out, page{path: n, text: string(data)})
	}
	return out, nil
}

// checkPage runs or checks every marked block of one page and returns
// its problems. root is the repository's top, work the page's work
// directory.
func checkPage(r runner, root, work string, p page) (problems, notes []string) {
	bs, problems := blocks(p.path, p.text)
	for _, b := range bs {
		if why := markerProblem(b); why != "" {
			problems = append(problems, why)
			continue
		}
		if !slices.Contains(exampleLangs, b.lang) {
			continue
		}
		if f, ok := b.attrs["from"]; ok {
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: from=%s: %v", b, f, err))
			} else if !strings.Contains(string(data), b.text) {
				problems = append(problems, fmt.Sprintf("%s: the block is not the text of %s (copy it again)", b, f))
			}
		}
		if f, ok := b.attrs["file"]; ok {
			target := filepath.Join(work, filepath.FromSlash(f))
			if !strings.HasPrefix(target, work+string(filepath.Separator)) {
				problems = append(problems, fmt.Sprintf("%s: file=%s is outside the work directory", b, f))
				continue
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				problems = append(problems, err.Error())
				continue
			}
			if err := os.WriteFile(target, []byte(b.text), 0o644); err != nil {
				problems = append(problems, err.Error())
			}
		}
		if _, ok := b.attrs["compile"]; ok {
			problems = append(problems, compileBlock(r, b)...)
		}
		if _, ok := b.attrs["run"]; ok {
			if missing := r.missing(b.attrs["needs"]); missing != "" {
				if os.Getenv("VIRTC_REQUIRE_TOOLS") == "1" {
					problems = append(problems, fmt.Sprintf("%s: needs %s, not found on PATH or in .tools/bin (make tools); required in this run (VIRTC_REQUIRE_TOOLS=1)", b, missing))
				} else {
					notes = append(notes, fmt.Sprintf("%s: not run: needs %s (make tools)", b, missing))
				}
				continue
			}
			problems = append(problems, runBlock(r, work, b)...)
		}
		if _, ok := b.attrs["norun"]; ok && (b.lang == "sh" || b.lang == "bash" || b.lang == "console") {
			problems = append(problems, checkNorun(r, root, b)...)
		}
	}
	return problems, notes
}

// missing is the first of the comma-separated tools of a needs= marker
// that is neither on PATH nor in the checkout's .tools/bin, or "".
func (r runner) missing(needs string) string {
	for _, tool := range strings.Split(needs, ",") {
		if tool == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(r.tools, tool)); err == nil {
			continue
		}
		if _, err := exec.LookPath(tool); err != nil {
			return tool
		}
	}
	return ""
}

// compileBlock validates a virtc input block on its own.
func compileBlock(r runner, b block) []string {
	dir, err := os.MkdirTemp("", "virtc-docs-compile")
	if err != nil {
		return []string{err.Error()}
	}
	defer os.RemoveAll(dir)
	name := "input.yaml"
	if b.lang == "jsonnet" {
		name = "input.jsonnet"
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.text), 0o644); err != nil {
		return []string{err.Error()}
	}
	out, code := r.run(dir, "virtc validate "+name)
	if code != 0 {
		return []string{fmt.Sprintf("%s: the block does not compile (virtc validate exits %d):\n%s", b, code, out)}
	}
	return nil
}

// runBlock runs a run block's commands in work, in order.
func runBlock(r runner, work string, b block) []string {
	ss, err := steps(b)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, s := range ss {
		out, code := r.run(work, s.command)
		got := splitOutput(out)
		if code != s.exit || !matchLines(s.want, got) {
			problems = append(problems, fmt.Sprintf("%s: $ %s\nexits %d (want %d); output:\n%s\nwant:\n%s", b, s.command, code, s.exit,
				strings.Join(got, "\n"), strings.Join(s.want, "\n")))
		}
	}
	return problems
}

var (
	makeTarget = regexp.MustCompile(`(?m)^([A-Za-z0-9_.-]+( [A-Za-z0-9_.-]+)*):`)
	flagWord   = regexp.MustCompile(`^--?([a-z][a-z0-9-]*)`)
)

// checkNorun checks the virtc commands and make targets a block that is
// not run names.
func checkNorun(r runner, root string, b block) []string {
	var problems []string
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return []string{err.Error()}
	}
	targets := map[string]bool{}
	for _, m := range makeTarget.FindAllStringSubmatch(string(makefile), -1) {
		for _, t := range strings.Fields(m[1]) {
			targets[t] = true
		}
	}
	for _, l := range strings.Split(b.text, "\n") {
		l = strings.TrimPrefix(strings.TrimSpace(l), "$ ")
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		// each command of a pipeline or list
		for _, part := range regexp.MustCompile(`\|\||&&|\||;`).Split(l, -1) {
			words := strings.Fields(part)
			for len(words) > 0 && strings.Contains(words[0], "=") {
				words = words[1:] // VAR=value before a command
			}
			if len(words) == 0 {
				continue
			}
			switch filepath.Base(words[0]) {
			case "make":
				for _, w := range words[1:] {
					if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && !targets[w] {
						problems = append(problems, fmt.Sprintf("%s: make %s: no such target in the Makefile", b, w))
					}
				}
			case "virtc":
				problems = append(problems, checkVirtcCommand(r, b, words[1:])...)
			}
		}
	}
	return problems
}

// checkVirtcCommand checks that virtc has the command and each --flag of
// one command line.
func checkVirtcCommand(r runner, b block, args []string) []string {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil
	}
	sub := args[0]
	help := sub
	if sub == "cmp" {
		help = "build" // cmp takes build's flags
	}
	out, code := r.run(os.TempDir(), "virtc "+help+" -h")
	if code != 0 {
		return []string{fmt.Sprintf("%s: virtc %s: no such command (virtc %s -h exits %d)", b, sub, help, code)}
	}
	var problems []string
	for _, a := range args[1:] {
		m := flagWord.FindStringSubmatch(a)
		if m == nil || strings.HasPrefix(a, "---") {
			continue
		}
		if !bytes.Contains(out, []byte("\n  --"+m[1]+" ")) && !bytes.Contains(out, []byte("\n  --"+m[1]+"\n")) {
			problems = append(problems, fmt.Sprintf("%s: virtc %s has no flag --%s", b, sub, m[1]))
		}
	}
	return problems
}

var (
	linkPattern = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode  = regexp.MustCompile("`[^`]*`")
)

// checkLinks checks the relative links and anchors of the pages and that
// README.md links every page of docs/.
func checkLinks(root string, ps []page) []string {
	var problems []string
	linked := map[string]bool{}
	for _, p := range ps {
		open := "" // the fence of the block the line is in
		for i, l := range strings.Split(p.text, "\n") {
			if m := fence.FindStringSubmatch(l); m != nil && (open == "" || strings.TrimSpace(l) == open) {
				if open == "" {
					open = m[2]
				} else {
					open = ""
				}
				continue
			}
			if open != "" {
				continue
			}
			for _, m := range linkPattern.FindAllStringSubmatch(inlineCode.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				resolved := p.path
				if file != "" {
					resolved = filepath.ToSlash(filepath.Join(filepath.Dir(p.path), file))
				}
				if p.path == "README.md" {
					linked[resolved] = true
				}
				where := fmt.Sprintf("%s:%d: link %s", p.path, i+1, target)
				data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(resolved)))
				if err != nil {
					if st, serr := os.Stat(filepath.Join(root, filepath.FromSlash(resolved))); serr == nil && st.IsDir() && anchor == "" {
						continue
					}
					problems = append(problems, fmt.Sprintf("%s: no file %s", where, resolved))
					continue
				}
				if anchor != "" {
					if !strings.HasSuffix(resolved, ".md") {
						problems = append(problems, fmt.Sprintf("%s: an anchor into %s, which is not Markdown", where, resolved))
					} else if !anchors(string(data))[anchor] {
						problems = append(problems, fmt.Sprintf("%s: %s has no heading with anchor #%s", where, resolved, anchor))
					}
				}
			}
		}
	}
	for _, p := range ps {
		if strings.HasPrefix(p.path, "docs/") && !linked[p.path] {
			problems = append(problems, fmt.Sprintf("README.md: links no %s (the map of the documentation lists every page)", p.path))
		}
	}
	return problems
}

// goldenNamed are the golden scenarios the commands of a page's run
// blocks name (a folder of golden/ followed by a slash): the page's work
// directory gets a copy of each under golden/.
func goldenNamed(t *testing.T, root string, p page) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "golden"))
	if err != nil {
		t.Fatal(err)
	}
	bs, _ := blocks(p.path, p.text)
	var commands strings.Builder
	for _, b := range bs {
		if _, ok := b.attrs["run"]; !ok {
			continue
		}
		ss, _ := steps(b)
		for _, s := range ss {
			commands.WriteString(" " + s.command + "\n")
		}
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && regexp.MustCompile(`[\s/]`+regexp.QuoteMeta(e.Name())+`/`).MatchString(commands.String()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestDocs runs and checks the examples of README.md and docs/, and their
// links.
func TestDocs(t *testing.T) {
	ps, err := pages("..")
	if err != nil {
		t.Fatal(err)
	}
	// The examples' READMEs point into the documentation: their links
	// are checked too (their blocks are the examples' own tests').
	more, err := filepath.Glob(filepath.Join("..", "examples", "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := slices.Clone(ps)
	for _, m := range more {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel("..", m)
		linked = append(linked, page{path: filepath.ToSlash(rel), text: string(data)})
	}
	for _, p := range checkLinks("..", linked) {
		t.Error(p)
	}
	r := newRunner(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Run(strings.ReplaceAll(p.path, "/", "_"), func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			if err := copyTree(filepath.Join(root, "examples"), filepath.Join(work, "examples")); err != nil {
				t.Fatal(err)
			}
			for _, g := range goldenNamed(t, root, p) {
				if err := copyTree(filepath.Join(root, "golden", g), filepath.Join(work, "golden", g)); err != nil {
					t.Fatal(err)
				}
			}
			// the examples name virtc as ../../bin/virtc (make build)
			must(t, os.MkdirAll(filepath.Join(work, "bin"), 0o755))
			must(t, os.Symlink(r.bin, filepath.Join(work, "bin", "virtc")))
			problems, notes := checkPage(r, root, work, p)
			for _, n := range notes {
				t.Log(n)
			}
			for _, problem := range problems {
				t.Error(problem)
			}
		})
	}
}

// must stops the test at an error of its setup.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestDocsCatchBreakage shows the docs test fails: pages with one
// mistake each, checked as TestDocs checks the real ones.
func TestDocsCatchBreakage(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "docs"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "Makefile"), []byte("## test: tests\ntest: vet\n\tgo test ./...\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "docs", "page.md"), []byte("# Page\n\n## A section\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "quoted.yaml"), []byte("a: 1\nb: 2\n"), 0o644))
	r := newRunner(t)
	vm := "apiVersion: virtc.dev/v1alpha1\nkind: Tenant\nmetadata:\n  name: shop\n"

	good := "# Readme\n\nSee [the page](docs/page.md#a-section).\n\n" +
		"```yaml compile\n" + vm + "```\n\n" +
		"```yaml file=in/tenant.yaml\n" + vm + "```\n\n" +
		"```sh run\n$ virtc validate in && echo fine\nfine\n$ virtc version >/dev/null; exit 3\n[exit 3]\n$ printf 'a\\nb\\nc\\n'\na\n...\n```\n\n" +
		"```yaml from=quoted.yaml\nb: 2\n```\n\n" +
		"```sh norun\nmake test\nvirtc build --scope vms clusters/east | kubectl apply -f -\n```\n"
	check := func(readme string) []string {
		ps := []page{{path: "README.md", text: readme}, {path: "docs/page.md", text: "# Page\n\n## A section\n"}}
		problems := checkLinks(root, ps)
		more, _ := checkPage(r, root, t.TempDir(), ps[0])
		return append(problems, more...)
	}
	if problems := check(good); len(problems) > 0 {
		t.Fatalf("a good page has problems:\n%s", strings.Join(problems, "\n"))
	}
	t.Run("missing tool", func(t *testing.T) {
		text := good + "\n```sh run needs=no-such-tool\n$ no-such-tool\n```\n"
		t.Setenv("VIRTC_REQUIRE_TOOLS", "")
		if _, notes := checkPage(r, root, t.TempDir(), page{path: "README.md", text: text}); len(notes) != 1 {
			t.Errorf("want one note of a block not run, got %q", notes)
		}
		t.Setenv("VIRTC_REQUIRE_TOOLS", "1")
		if problems := check(text); !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "needs no-such-tool") }) {
			t.Errorf("want a problem with VIRTC_REQUIRE_TOOLS=1, got:\n%s", strings.Join(problems, "\n"))
		}
	})
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"broken link", "docs/page.md#", "docs/none.md#", "no file docs/none.md"},
		{"broken anchor", "#a-section", "#b-section", "has no heading with anchor #b-section"},
		{"page not linked", "[the page](docs/page.md#a-section)", "the page", "links no docs/page.md"},
		{"example no longer compiles", "```yaml compile\n" + vm, "```yaml compile\n" + vm + "spec:\n  quota: {cpux: 1}\n", "does not compile"},
		{"output changed", "fine\n$", "fine!\n$", "want:\nfine!"},
		{"exit code changed", "[exit 3]", "[exit 4]", "exits 3 (want 4)"},
		{"unmarked block", "```sh norun", "```sh", "without a marker"},
		{"quote no longer the file", "b: 2\n```", "b: 3\n```", "is not the text of quoted.yaml"},
		{"unknown make target", "make test", "make tset", "no such target"},
		{"unknown virtc flag", "--scope vms", "--scopes vms", "has no flag --scopes"},
		{"unknown virtc command", "virtc build --scope", "virtc biuld --scope", "virtc biuld: no such command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("the good page has no %q", tc.old)
			}
			problems := check(strings.Replace(good, tc.old, tc.new, 1))
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("want a problem containing %q, got:\n%s", tc.want, strings.Join(problems, "\n"))
			}
		})
	}
}

// standInHeader starts the header of a table of stand-ins: the components
// the end-to-end suites replace, each with what it replaces, why the real
// one cannot run and the upstream file its behaviour follows.
var standInHeader = regexp.MustCompile(`^\| stand-in \| replaces \| why [^|]+ \| behaviour follows \|$`)

// upstreamFile is a path or file name in a table cell: what "behaviour
// follows" must name.
var upstreamFile = regexp.MustCompile("[A-Za-z0-9_-]+/[A-Za-z0-9_./-]+|[A-Za-z0-9_-]+\\.(go|yaml|json|sh)\\b")

// standInProblems checks the stand-in tables of a page: at least want
// tables, every row with all four cells, the last naming a file.
func standInProblems(file, text string, want int) []string {
	var problems []string
	tables := 0
	in := false
	for i, l := range strings.Split(text, "\n") {
		switch {
		case standInHeader.MatchString(strings.TrimSpace(l)):
			tables++
			in = true
			continue
		case !in:
			continue
		case strings.HasPrefix(l, "|---"):
			continue
		case !strings.HasPrefix(l, "|"):
			in = false
			continue
		}
		c := cells(strings.ReplaceAll(l, `\|`, "/"))
		where := fmt.Sprintf("%s:%d", file, i+1)
		if len(c) != 4 || slices.Contains(c, "") {
			problems = append(problems, fmt.Sprintf("%s: a stand-in row needs four cells: stand-in, what it replaces, why the real one cannot run, the upstream file it follows", where))
			continue
		}
		if !upstreamFile.MatchString(c[3]) {
			problems = append(problems, fmt.Sprintf("%s: stand-in %s: \"behaviour follows\" names no upstream file", where, c[0]))
		}
	}
	if tables < want {
		problems = append(problems, fmt.Sprintf("%s: %d tables of stand-ins, want %d (| stand-in | replaces | why ... | behaviour follows |)", file, tables, want))
	}
	return problems
}

// TestStandInTables: docs/testing.md keeps its two tables of stand-ins
// (the Argo CD end-to-end's and the real controllers'), every stand-in
// with why the real component cannot run and the upstream file it
// follows.
func TestStandInTables(t *testing.T) {
	data, err := os.ReadFile("testing.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range standInProblems("docs/testing.md", string(data), 2) {
		t.Error(p)
	}
	table := "| stand-in | replaces | why the real one cannot run here | behaviour follows |\n|---|---|---|---|\n"
	good := table + "| Volumes (`test/x.go`) | the PV controller | no provisioner | kubernetes `pkg/controller/volume/pv_controller.go` |\n"
	if p := standInProblems("t.md", good, 1); len(p) > 0 {
		t.Fatalf("a good table has problems: %v", p)
	}
	for _, bad := range []string{
		table + "| Volumes | the PV controller | | `pv_controller.go` |\n",
		table + "| Volumes | the PV controller | no provisioner | the PV controller |\n",
		"no table\n",
	} {
		if p := standInProblems("t.md", bad, 1); len(p) == 0 {
			t.Errorf("no problem found in:\n%s", bad)
		}
	}
}
