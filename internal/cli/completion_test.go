package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/virtc/virtc/test/conform"
)

// shell is a shell the completion script of name is run in, or a skip
// (recorded by make test) when it is not installed; .ci/run installs all
// three.
func shell(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		conform.Skipped(t, name+" is not installed (apt-get install "+name+")")
	}
	return p
}

func completionScript(t *testing.T, sh string) string {
	t.Helper()
	code, stdout, stderr := runMain("completion", sh)
	if code != ExitOK || stderr != "" {
		t.Fatalf("completion %s: exit %d\n%s", sh, code, stderr)
	}
	file := filepath.Join(t.TempDir(), "virtc."+sh)
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestCompletionBash completes command lines with bash's own completion
// machinery: the script's function with COMP_WORDS and COMP_CWORD set as
// bash sets them.
func TestCompletionBash(t *testing.T) {
	bash := shell(t, "bash")
	script := completionScript(t, "bash")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "platform"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"virtc", "bu"}, "build"},
		{[]string{"virtc", "re"}, "report restore-plan"},
		{[]string{"virtc", "build", "--cat"}, "--catalog"},
		{[]string{"virtc", "build", "--no-def"}, "--no-default-catalog"},
		{[]string{"virtc", "build", "--catalog", "pla"}, "platform"}, // a flag's value: a file
		{[]string{"virtc", "build", "-catalog", "pla"}, "platform"},
		{[]string{"virtc", "diff", "--he"}, "--head"},
		{[]string{"virtc", "version", "-"}, "-o"},
		{[]string{"virtc", "completion", "f"}, "fish"},
		{[]string{"virtc", "explain", "Sto"}, "StorageProfile"},
		{[]string{"virtc", "build", "pla"}, "platform"}, // an argument: a file
	} {
		words := make([]string, len(c.words))
		for i, w := range c.words {
			words[i] = "'" + w + "'"
		}
		prog := "source " + script + "; COMP_WORDS=(" + strings.Join(words, " ") + "); COMP_CWORD=" + strconv.Itoa(len(c.words)-1) + "; _virtc; echo \"${COMPREPLY[*]}\""
		cmd := exec.Command(bash, "--noprofile", "--norc", "-c", prog)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("%s<TAB>: %q, want %q", strings.Join(c.words, " "), got, c.want)
		}
	}
}

// TestCompletionFish asks fish itself what it completes (complete -C).
func TestCompletionFish(t *testing.T) {
	fish := shell(t, "fish")
	script := completionScript(t, "fish")
	for _, c := range []struct{ line, want string }{
		{"virtc bu", "build\tcompile intents and catalog into manifests on stdout"},
		{"virtc build --cat", "--catalog\ta catalog file or directory to read besides the PATHs"},
		{"virtc version -", "-o\toutput format"},
		{"virtc completion z", "zsh"},
		{"virtc schema Pla", "Platform\nPlatformFacts"},
	} {
		out, err := exec.Command(fish, "--no-config", "-c", "source "+script+"; complete -C '"+c.line+"'").CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.line, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("%s<TAB>: %q, want %q", c.line, got, c.want)
		}
	}
}

// TestCompletionZsh checks the zsh script's syntax with zsh and that it
// names every command and flag; completing needs zsh's line editor.
func TestCompletionZsh(t *testing.T) {
	zsh := shell(t, "zsh")
	script := completionScript(t, "zsh")
	if out, err := exec.Command(zsh, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(script)
	for _, s := range commandSpecs() {
		if !strings.Contains(string(data), "'"+s.name+":") {
			t.Errorf("the zsh script lacks the command %s", s.name)
		}
		for _, f := range s.flags {
			if !strings.Contains(string(data), "'"+dashes(f.name)+f.name) {
				t.Errorf("the zsh script lacks %s's flag %s", s.name, f.name)
			}
		}
	}
}

// TestCompletionKnowsEveryFlag: the scripts are made from the commands'
// own flag sets, so a flag added to a command completes.
func TestCompletionKnowsEveryFlag(t *testing.T) {
	specs := map[string]cmdSpec{}
	for _, s := range commandSpecs() {
		specs[s.name] = s
	}
	has := func(cmd, flag string, value bool) {
		t.Helper()
		for _, f := range specs[cmd].flags {
			if f.name == flag {
				if f.takesValue != value {
					t.Errorf("%s --%s takes a value: %v, want %v", cmd, flag, f.takesValue, value)
				}
				return
			}
		}
		t.Errorf("%s has no flag %s among %v", cmd, flag, specs[cmd].flags)
	}
	has("build", "catalog", true)
	has("build", "no-default-catalog", false)
	has("cmp", "tenant", true)
	has("diff", "head", true)
	has("init", "approver-image", true)
	if len(specs) != len(commands()) {
		t.Errorf("%d commands have specs, want %d", len(specs), len(commands()))
	}
	if code, _, stderr := runMain("completion", "powershell"); code != ExitUsage || !strings.Contains(stderr, `unknown shell "powershell"`) {
		t.Errorf("completion powershell: exit %d, %q", code, stderr)
	}
}
