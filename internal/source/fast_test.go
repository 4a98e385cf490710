package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// v3 parses data with yaml.v3 the way Parse does, keeping every document.
func v3(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(n.Content) == 0 {
			out = append(out, nil)
			continue
		}
		out = append(out, n.Content[0])
	}
}

// sameAsV3 fails t unless fastParse either declines data or returns
// exactly the nodes yaml.v3 builds. It reports whether fastParse took it.
func sameAsV3(t *testing.T, name string, data []byte) bool {
	t.Helper()
	fast, ok := fastParse(data)
	if !ok {
		return false
	}
	want, err := v3(data)
	if err != nil {
		t.Errorf("%s: fast parser accepted what yaml.v3 refuses (%v):\n%s", name, err, data)
		return true
	}
	if len(fast) != len(want) {
		t.Errorf("%s: %d documents, yaml.v3 has %d:\n%s", name, len(fast), len(want), data)
		return true
	}
	for i := range fast {
		if !reflect.DeepEqual(fast[i], want[i]) {
			t.Errorf("%s: document %d differs from yaml.v3's:\nfast: %s\nyaml: %s\n%s", name, i, dump(fast[i]), dump(want[i]), data)
		}
	}
	return true
}

func dump(n *yaml.Node) string {
	if n == nil {
		return "nil"
	}
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "\n%skind=%d style=%d tag=%s value=%q at %d:%d comments=%q|%q|%q",
			strings.Repeat("  ", depth), n.Kind, n.Style, n.Tag, n.Value, n.Line, n.Column, n.HeadComment, n.LineComment, n.FootComment)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// cases are small inputs around the edges of the subset; some are taken,
// some left to yaml.v3.
var cases = []string{
	"a: 1\n",
	"a: b\nc: d\n",
	"---\na: 1\n---\nb: 2\n",
	"a: 1\n---\nb: 2\n",
	"---\na: 1\n",
	"a: 1\n---\n",
	"---\n---\na: 1\n",
	"",
	"\n\n",
	"---\n",
	"a:\n  b: 1\n  c:\n    d: x\ne: f\n",
	"a:\n- 1\n- two\nb: 3\n",
	"a:\n  - 1\n  - two\nb: 3\n",
	"- a\n- b\n",
	"- a: 1\n  b: 2\n- c: 3\n",
	"list:\n- name: data\n  size: 10Gi\n- name: logs\n  size: 20Gi\n",
	"a: [x, y, z]\n",
	"a: [x,y]\n",
	"a: [ x , y ]\n",
	"a: []\n",
	"a: {}\n",
	"a: [x, ]\n",
	"a: [x,, y]\n",
	"a: [1, true, null, ~, 0x1F, 1e3, .inf, -.Inf, .nan, 2026-01-01, 0o17, 0b101, -0b1, +1, 1_000, 12:30]\n",
	"a: true\nb: False\nc: NULL\nd: ~\ne: yes\nf: on\ng: Off\nh: n\n",
	"a: 1.5\nb: .5\nc: -1\nd: +2\ne: 0755\nf: 08\ng: 1e400\nh: 18446744073709551615\ni: 18446744073709551616\nj: -9223372036854775809\n",
	"a: 2026-12-01\nb: 2026-12-01T10:00:00Z\nc: 2026-12-01-upgrade\nd: 2001-12-14 21:59:43.10 -5\n",
	"a: 40Gi\nb: 512Mi\nc: 0.055\nd: 1.2.3\ne: 4.22\n",
	"a: hello world\nb: two  spaces\n",
	"a: x # comment\n",
	"# head\na: 1\n",
	"a: 'quoted'\n",
	"a: \"quoted\"\n",
	"a: ''\nb: \"\"\nc: 'it''s'\nd: \"a\\\"b\"\ne: \"a\\nb\"\nf: 'a\"b'\ng: \"a'b\"\n",
	"a: 'true'\nb: '0'\nc: \"1\"\nd: 'x: y'\ne: '- x'\nf: '[a]'\ng: ' lead'\nh: 'trail '\n",
	"a: 'x\n  y'\n",
	"a: 'x'y\nb: 'x' \n",
	"- 'a'\n- \"b\"\n",
	"a: |\n  text\n",
	"a: >\n  text\n",
	"a: &x 1\nb: *x\n",
	"a: !!str 1\n",
	"a:\n",
	"a:\nb: 1\n",
	"a: b\n  c\n",
	"a:\n  b\n",
	"- a\n  b\n",
	"a:\n   b: 1\n  c: 2\n",
	"a: 1\n b: 2\n",
	"  a: 1\n",
	"a: 1\r\nb: 2\r\n",
	"a:\tb\n",
	"a: b \n",
	"a: ü\n",
	"a: b:c\n",
	"a: b: c\n",
	"a: -\n",
	"a: -1\n",
	"a: -x\n",
	"- - a\n",
	"- -1\n",
	"-\n  a: 1\n",
	"a:b\n",
	"-a: 1\n",
	"? a\n: b\n",
	"a: 1\n...\n",
	"%YAML 1.2\n---\na: 1\n",
	"--- a: 1\n",
	"a: 1\na: 2\n",
	"<<: 1\n",
	"a: <<\n",
	"1: one\ntrue: yes\nnull: x\n",
	"a: @x\n",
	"a: x,y\n",
	"a: [x y]\n",
	"a: [[x]]\n",
	"a: [x]]\n",
	"a: {b: 1}\n",
	"a: (x)\n",
	"a: $x^y;z\\w\n",
	"a: ~x\n",
	"a: =\n",
	"a: .\n",
	"a: +\n",
	"a: -.5\n",
	"a:\n- b:\n  - c\n",
	"a:\n- b:\n  c: 1\n",
	"a:\n  - b: 1\n    c: 2\n  - d\n",
	"a:\n  -   b: 1\n      c: 2\n",
	"a:  b\n",
	"a: x\n\n\nb: y\n",
	"a: x\n  \nb: y\n",
	"apiVersion: virtc.dev/v1alpha1\nkind: VM\nmetadata:\n  name: web01\n  namespace: payments\n  labels: {app: shop}\nspec:\n  size: u1.medium\n",
	// Literal block scalars (cloud-init user data).
	"a: |\n  x\n  y\nb: c\n",
	"a: |-\n  x\n  y\nb: c\n",
	"a: |\n  #cloud-config\n  users:\n    - name: x # not a comment\n\n  runcmd: [a, b]\nb: c\n",
	"a: |\n  x\n\n\nb: c\n",
	"a: |-\n  x\n\n\nb: c\n",
	"a: |\n  x\n",
	"a: |\n  x\n\n",
	"a: |\n  x",
	"a:\n- b: |\n    x\n  c: d\n",
	"a:\n- b: |\n   x\n  c: d\n",
	"a:\n- b: |\n  x\n",
	"a: |\n\n  x\n",
	"a: |\n  x\n y\nb: c\n",
	"a: |\n    x\n  y\nb: c\n",
	"a: |\nb: c\n",
	"a: |\n  x  \nb: c\n",
	"a: |\n  x\n   \n  y\n",
	"a: |\n  x\n\ty\n",
	"a: |\n  - x\n  - y: z\n---\nb: |-\n  w\n",
	"a:  |\n  x\n",
	"a: |+\n  x\n",
	"a: |2\n  x\n",
	"a: b: |\n  x\n",
	"- |\n  x\n",
	"a:\n  b: |\n    x\n      y\n    z\n  c: |-\n    w\n",
	// Commas in plain scalars.
	"a: Prune=confirm,Delete=confirm\n",
	"a: x, y\n",
	"a: x,\n",
	"a: 1,000\n",
	"a: [x,y]\n",
	"a: [x, y,z]\n",
	"a: x,[y]\n",
	"a: x,{y}\n",
	"- a,b\n- c\n",
	"a: -1,2\n",
}

func TestFastParseMatchesYAML(t *testing.T) {
	taken := 0
	for i, c := range cases {
		if sameAsV3(t, fmt.Sprint("case ", i), []byte(c)) {
			taken++
		}
	}
	if taken < len(cases)/3 {
		t.Errorf("the fast parser took only %d of %d cases", taken, len(cases))
	}
}

// Every YAML file of the repository (intents, catalogs, golden scenarios,
// their outputs) parses to yaml.v3's nodes or is left to yaml.v3.
func TestFastParseMatchesYAMLOnRepositoryFiles(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	taken, files := 0, 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(p) != ".yaml" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if sameAsV3(t, p, data) {
			taken++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 || taken == 0 {
		t.Errorf("%d files, %d taken by the fast parser", files, taken)
	}
}

func FuzzFastParse(f *testing.F) {
	for _, c := range cases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sameAsV3(t, "fuzz", []byte(s))
	})
}
