package jsonnet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

// tree writes files (path -> content) under a new root and returns it.
// Content "->target" makes a symlink to target instead.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// eval evaluates root/main with root as the input root and returns the
// documents and the diagnostics, with the root left out of file names.
func eval(t *testing.T, o Options, root, main string) ([]*source.Doc, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, main))
	if err != nil {
		t.Fatal(err)
	}
	var d diag.List
	docs := o.Evaluate(filepath.Join(root, main), main, root, data, &d)
	return docs, strings.ReplaceAll(diag.Format(d.Sorted()), root+string(filepath.Separator), "")
}

func yamlOf(t *testing.T, docs []*source.Doc) string {
	t.Helper()
	var b strings.Builder
	for _, d := range docs {
		out, err := yaml.Marshal(d.Node)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("--- " + filepath.Base(d.File) + "\n")
		b.Write(out)
	}
	return b.String()
}

func TestObjectAndArray(t *testing.T) {
	root := tree(t, map[string]string{
		"one.jsonnet":  `{ apiVersion: 'virtc.dev/v1alpha1', kind: 'Tenant', metadata: { name: 'a' } }`,
		"many.jsonnet": `local v = import 'virtc.libsonnet'; v.fleet('ci', 'agent', 2, { size: 'u1.small', image: 'rhel9', rootDisk: 40 * 1024 * 1024 * 1024 })`,
	})
	docs, diags := eval(t, Options{}, root, "one.jsonnet")
	if diags != "" || len(docs) != 1 {
		t.Fatalf("one object: %d docs, diagnostics:\n%s", len(docs), diags)
	}
	if d := docs[0]; d.Rel != "one.jsonnet" || d.Index != 0 || !d.NoLines || d.File != filepath.Join(root, "one.jsonnet") {
		t.Errorf("doc = %+v", d)
	}
	docs, diags = eval(t, Options{}, root, "many.jsonnet")
	if diags != "" {
		t.Fatalf("diagnostics:\n%s", diags)
	}
	want := `--- many.jsonnet[0]
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata:
    name: agent-01
    namespace: ci
spec:
    image: rhel9
    rootDisk: 42949672960
    size: u1.small
--- many.jsonnet[1]
apiVersion: virtc.dev/v1alpha1
kind: VM
metadata:
    name: agent-02
    namespace: ci
spec:
    image: rhel9
    rootDisk: 42949672960
    size: u1.small
`
	if diff := cmp.Diff(want, yamlOf(t, docs)); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	for i, d := range docs {
		if d.Index != i || d.Rel != "many.jsonnet" || !d.NoLines {
			t.Errorf("doc %d = %+v", i, d)
		}
	}
	if n := docs[0].Node.Content[7].Content[3]; n.Tag != "!!int" {
		t.Errorf("rootDisk has tag %s, want !!int", n.Tag)
	}
}

func TestOutputShape(t *testing.T) {
	root := tree(t, map[string]string{
		"string.jsonnet": `'hello'`,
		"mixed.jsonnet":  `[{ kind: 'VM' }, 3, [1]]`,
		"empty.jsonnet":  `[]`,
	})
	for main, want := range map[string]string{
		"string.jsonnet": "string.jsonnet: evaluates to a string: a Jsonnet file must yield an object or an array of objects\n",
		"mixed.jsonnet": "mixed.jsonnet[1]: must be an object with apiVersion and kind, not a number (a Jsonnet file yields an object or an array of objects)\n" +
			"mixed.jsonnet[2]: must be an object with apiVersion and kind, not an array (a Jsonnet file yields an object or an array of objects)\n",
		"empty.jsonnet": "empty.jsonnet: warning: evaluates to an empty array: no objects\n",
	} {
		_, got := eval(t, Options{}, root, main)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", main, diff)
		}
	}
}

func TestExtStr(t *testing.T) {
	root := tree(t, map[string]string{"main.jsonnet": `{ cluster: std.extVar('cluster') }`})
	docs, diags := eval(t, Options{ExtStr: map[string]string{"cluster": "prod-east"}}, root, "main.jsonnet")
	if diags != "" {
		t.Fatal(diags)
	}
	if got := yamlOf(t, docs); !strings.Contains(got, "cluster: prod-east") {
		t.Errorf("output:\n%s", got)
	}
	_, diags = eval(t, Options{}, root, "main.jsonnet")
	if want := "main.jsonnet:1:12: evaluation failed: Undefined external variable: cluster\n"; diags != want {
		t.Errorf("without the variable: got %q, want %q", diags, want)
	}

	m, err := ParseExtStr([]string{"cluster=prod-east", "empty=", "eq=a=b", "cluster=prod-west"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"cluster": "prod-west", "empty": "", "eq": "a=b"}, m); diff != "" {
		t.Errorf("ParseExtStr (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"cluster", "=x"} {
		if _, err := ParseExtStr([]string{bad}); err == nil {
			t.Errorf("ParseExtStr(%q) accepted", bad)
		}
	}
}

func TestImports(t *testing.T) {
	outside := tree(t, map[string]string{"secret.libsonnet": `{ secret: 'leaked' }`})
	root := tree(t, map[string]string{
		"lib/a.libsonnet":         `{ a: 1 }`,
		"lib/b.libsonnet":         `(import 'a.libsonnet') + { b: 2 }`,
		"lib/link.libsonnet":      "->a.libsonnet",
		"lib/escape.libsonnet":    "->" + filepath.Join(outside, "secret.libsonnet"),
		"lib/dir.libsonnet/x":     "",
		"ok-relative.jsonnet":     `import 'lib/b.libsonnet'`,
		"sub/ok-parent.jsonnet":   `import '../lib/a.libsonnet'`,
		"sub/ok-root.jsonnet":     `import 'lib/a.libsonnet'`,
		"ok-link.jsonnet":         `import 'lib/link.libsonnet'`,
		"ok-virtc.jsonnet":        `(import 'virtc.libsonnet').tenant('a')`,
		"ok-importstr.jsonnet":    `{ text: importstr 'lib/a.libsonnet' }`,
		"bad-absolute.jsonnet":    `import '` + filepath.Join(outside, "secret.libsonnet") + `'`,
		"bad-etc.jsonnet":         "{\n  x: importstr '/etc/passwd',\n}",
		"bad-parent.jsonnet":      `import '../` + filepath.Base(outside) + `/secret.libsonnet'`,
		"sub/bad-up.jsonnet":      `import '../../x.libsonnet'`,
		"bad-symlink.jsonnet":     `import 'lib/escape.libsonnet'`,
		"bad-missing.jsonnet":     `import 'lib/nope.libsonnet'`,
		"bad-dir.jsonnet":         `import 'lib/dir.libsonnet'`,
		"bad-importbin.jsonnet":   `{ x: importbin '/etc/hostname' }`,
		"sub/bad-missing.jsonnet": `import 'nope.libsonnet'`,
	})
	for _, main := range []string{"ok-relative.jsonnet", "sub/ok-parent.jsonnet", "sub/ok-root.jsonnet", "ok-link.jsonnet", "ok-virtc.jsonnet", "ok-importstr.jsonnet"} {
		docs, diags := eval(t, Options{}, root, main)
		if diags != "" || len(docs) != 1 {
			t.Errorf("%s: %d docs, diagnostics:\n%s", main, len(docs), diags)
		}
	}
	refused := "(imports resolve only inside the input root " + root + " and to virtc.libsonnet)"
	for main, want := range map[string]string{
		"bad-absolute.jsonnet":    "bad-absolute.jsonnet:1:1: evaluation failed: import \"" + filepath.Join(outside, "secret.libsonnet") + "\": refused: it is an absolute path " + refused,
		"bad-etc.jsonnet":         "bad-etc.jsonnet:2:6: evaluation failed: import \"/etc/passwd\": refused: it is an absolute path " + refused,
		"bad-parent.jsonnet":      "bad-parent.jsonnet:1:1: evaluation failed: import \"../" + filepath.Base(outside) + "/secret.libsonnet\": refused: it leaves the input root " + refused,
		"sub/bad-up.jsonnet":      "sub/bad-up.jsonnet:1:1: evaluation failed: import \"../../x.libsonnet\": refused: it leaves the input root " + refused,
		"bad-symlink.jsonnet":     "bad-symlink.jsonnet:1:1: evaluation failed: import \"lib/escape.libsonnet\": refused: it is a symlink that leads outside the input root " + refused,
		"bad-missing.jsonnet":     "bad-missing.jsonnet:1:1: evaluation failed: import \"lib/nope.libsonnet\": no such file in " + root,
		"bad-dir.jsonnet":         "bad-dir.jsonnet:1:1: evaluation failed: import \"lib/dir.libsonnet\": lib/dir.libsonnet is not a regular file",
		"bad-importbin.jsonnet":   "bad-importbin.jsonnet:1:6: evaluation failed: import \"/etc/hostname\": refused: it is an absolute path " + refused,
		"sub/bad-missing.jsonnet": "sub/bad-missing.jsonnet:1:1: evaluation failed: import \"nope.libsonnet\": no such file in sub or in the input root " + root,
	} {
		docs, diags := eval(t, Options{}, root, main)
		if len(docs) != 0 {
			t.Errorf("%s: the import was not refused", main)
		}
		if diff := cmp.Diff(want+"\n", diags); diff != "" {
			t.Errorf("%s (-want +got):\n%s", main, diff)
		}
	}
}

func TestEmbeddedOnlyImports(t *testing.T) {
	var d diag.List
	docs := EvaluateEmbedded("<embedded>/x.jsonnet", "x.jsonnet", []byte(`[(import 'virtc.libsonnet').tenant('a')]`), &d)
	if len(docs) != 1 || d.Len() != 0 {
		t.Fatalf("%d docs, %s", len(docs), diag.Format(d.Sorted()))
	}
	docs = EvaluateEmbedded("<embedded>/x.jsonnet", "x.jsonnet", []byte(`import 'sizes.yaml'`), &d)
	want := "<embedded>/x.jsonnet:1:1: evaluation failed: import \"sizes.yaml\": refused: files cannot be imported here, only virtc.libsonnet\n"
	if got := diag.Format(d.Sorted()); len(docs) != 0 || got != want {
		t.Errorf("got %d docs and %q, want %q", len(docs), got, want)
	}
}

func TestErrorLocations(t *testing.T) {
	root := tree(t, map[string]string{
		"runtime.jsonnet":      "local x = 1;\n{\n  a: if x == 1 then error 'x must not be 1' else x,\n}\n",
		"syntax.jsonnet":       "{\n  a: 1,\n  b: ]\n}\n",
		"unknown.jsonnet":      "{\n  a: nope,\n}\n",
		"lib/bad.libsonnet":    "{\n  f(n):: if n > 2 then error 'n too large: ' + n else n,\n}\n",
		"inlib.jsonnet":        "local bad = import 'lib/bad.libsonnet';\n{ a: bad.f(3) }\n",
		"embedded.jsonnet":     "local v = import 'virtc.libsonnet';\n\nv.fleet('ci', 'agent', 0, {})\n",
		"parselib.jsonnet":     "import 'lib/broken.libsonnet'",
		"lib/broken.libsonnet": "{ a: }",
	})
	for main, want := range map[string]string{
		"runtime.jsonnet":  "runtime.jsonnet:3:21: evaluation failed: x must not be 1\n",
		"syntax.jsonnet":   "syntax.jsonnet:3:6: invalid Jsonnet: Unexpected: \"]\" while parsing terminal\n",
		"unknown.jsonnet":  "unknown.jsonnet:2:6: invalid Jsonnet: Unknown variable: nope\n",
		"inlib.jsonnet":    "lib/bad.libsonnet:2:24: evaluation failed: n too large: 3\n",
		"embedded.jsonnet": "embedded.jsonnet:3:1: evaluation failed: fleet: count must be a whole number of at least 1 (at <embedded>/lib/virtc.libsonnet:",
		"parselib.jsonnet": "lib/broken.libsonnet:1:6: invalid Jsonnet: Unexpected: \"}\" while parsing terminal\n",
	} {
		_, got := eval(t, Options{}, root, main)
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", main, got, want)
		}
	}
}

func TestRunawayRecursion(t *testing.T) {
	root := tree(t, map[string]string{
		"deep.jsonnet":       "local f(n) = 1 + f(n + 1);\n{ a: f(0) }\n",
		"tail.jsonnet":       "local f(n) =\n  f(n + 1) tailstrict;\nf(0)\n",
		"lib/tail.libsonnet": "{ f(n):: self.f(n + 1) tailstrict }",
		"tailimport.jsonnet": "(import 'lib/tail.libsonnet').f(0)",
		"deep-small.jsonnet": "local f(n) = if n == 0 then 0 else 1 + f(n - 1);\n{ a: f(40) }\n",
	})
	for main, want := range map[string]string{
		"deep.jsonnet":       "deep.jsonnet:1:18: evaluation failed: calls nested deeper than 500, the stack limit (a runaway recursion?)\n",
		"tail.jsonnet":       "tail.jsonnet:2:3: tailstrict is not accepted: virtc cannot bound the depth of tail calls (remove it; recursion is then limited like any other call)\n",
		"tailimport.jsonnet": "lib/tail.libsonnet:1:10: " + tailstrictMsg + "\n",
	} {
		_, got := eval(t, Options{}, root, main)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", main, diff)
		}
	}
	_, got := eval(t, Options{MaxStack: 30}, root, "deep-small.jsonnet")
	if !strings.Contains(got, "calls nested deeper than 30") {
		t.Errorf("MaxStack 30: got %q", got)
	}
	if _, got := eval(t, Options{}, root, "deep-small.jsonnet"); got != "" {
		t.Errorf("default stack: %s", got)
	}
}

func TestLimits(t *testing.T) {
	defer waitAbandoned()
	root := tree(t, map[string]string{
		// A fraction of a second of work, and several MiB of allocations.
		"slow.jsonnet": "{ n: std.foldl(function(a, b) a + b, std.range(1, 50000), 0) }",
		"big.jsonnet":  "{ a: std.range(1, 5000) }",
	})
	_, got := eval(t, Options{Timeout: time.Millisecond}, root, "slow.jsonnet")
	if want := "slow.jsonnet: evaluation stopped: it took longer than 1ms, the time limit for one Jsonnet file (a runaway loop?)\n"; got != want {
		t.Errorf("time limit: got %q, want %q", got, want)
	}
	waitAbandoned()
	_, got = eval(t, Options{MaxMemory: 1 << 20}, root, "slow.jsonnet")
	if want := "slow.jsonnet: evaluation stopped: it allocated more than 1 MiB, the memory limit for one Jsonnet file (a runaway, or a huge output?)\n"; got != want {
		t.Errorf("memory limit: got %q, want %q", got, want)
	}
	waitAbandoned()
	_, got = eval(t, Options{MaxOutput: 4 << 10}, root, "big.jsonnet")
	if want := "big.jsonnet: output is 58911 bytes, larger than the 4 KiB limit for one Jsonnet file (split it into several files)\n"; got != want {
		t.Errorf("output limit: got %q, want %q", got, want)
	}
	if _, got := eval(t, Options{}, root, "big.jsonnet"); got != "" {
		t.Errorf("default limits: %s", got)
	}
}

// TestAbandoned: while an evaluation stopped by a limit still runs, other
// files are not evaluated (its allocations would count against them).
func TestAbandoned(t *testing.T) {
	release := make(chan struct{})
	testHookEvaluating = func() { <-release }
	defer func() { testHookEvaluating = nil }()
	root := tree(t, map[string]string{"a.jsonnet": "{}", "b.jsonnet": "{}"})
	_, got := eval(t, Options{Timeout: time.Millisecond}, root, "a.jsonnet")
	if !strings.Contains(got, "evaluation stopped: it took longer than 1ms") {
		t.Fatalf("a: %q", got)
	}
	_, got = eval(t, Options{}, root, "b.jsonnet")
	if want := "b.jsonnet: not evaluated: the evaluation of a.jsonnet was stopped by a limit and still runs\n"; got != want {
		t.Errorf("b while a runs: got %q, want %q", got, want)
	}
	testHookEvaluating = nil
	close(release)
	waitAbandoned()
	if _, got := eval(t, Options{}, root, "b.jsonnet"); got != "" {
		t.Errorf("b after a ended: %q", got)
	}
}

func TestTrace(t *testing.T) {
	root := tree(t, map[string]string{"main.jsonnet": "{\n  a: std.trace('size is ' + 4, 4),\n}\n"})
	docs, got := eval(t, Options{}, root, "main.jsonnet")
	if len(docs) != 1 {
		t.Fatalf("%d docs", len(docs))
	}
	if want := "main.jsonnet:2:1: warning: std.trace: size is 4\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestRead: a directory walk evaluates .jsonnet files and skips libraries;
// a library named on its own is skipped with a warning.
func TestRead(t *testing.T) {
	root := tree(t, map[string]string{
		"tenant.jsonnet":  "(import 'lib/t.libsonnet')('a')",
		"lib/t.libsonnet": "function(name) (import 'virtc.libsonnet').tenant(name)",
		"vm.yaml":         "apiVersion: virtc.dev/v1alpha1\nkind: VM\n",
	})
	var d diag.List
	docs := source.Read([]string{root, filepath.Join(root, "lib/t.libsonnet")}, source.Options{Evaluate: Options{}.Evaluate}, &d)
	var got []string
	for _, doc := range docs {
		got = append(got, doc.Rel)
	}
	if diff := cmp.Diff([]string{"tenant.jsonnet", "vm.yaml"}, got); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	want := filepath.Join(root, "lib/t.libsonnet") + ": warning: Jsonnet library skipped: it is not an input, .jsonnet files that import it are\n"
	if diff := cmp.Diff(want, diag.Format(d.Sorted())); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}
