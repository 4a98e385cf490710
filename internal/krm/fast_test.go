package krm

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// list writes a ResourceList in kustomize's layout (compact sequences) or,
// with wide, with the items' dashes indented by two.
func list(items []string, config string, wide bool, extra string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	dash := "- "
	pad := "  "
	if wide {
		dash, pad = "  - ", "    "
	}
	for _, it := range items {
		for i, l := range strings.Split(strings.TrimRight(it, "\n"), "\n") {
			switch {
			case i == 0:
				b.WriteString(dash + l + "\n")
			case l == "":
				b.WriteString("\n")
			default:
				b.WriteString(pad + l + "\n")
			}
		}
	}
	if config != "" {
		b.WriteString("functionConfig:\n")
		for _, l := range strings.Split(strings.TrimRight(config, "\n"), "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString(extra)
	return b.String()
}

func readFile(t *testing.T, name string, ann string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	switch {
	case ann == "":
	case strings.Contains(s, "\n  annotations:\n"):
		s = strings.Replace(s, "\n  annotations:\n", "\n  annotations:\n"+ann, 1)
	default:
		s = strings.Replace(s, "metadata:\n", "metadata:\n  annotations:\n"+ann, 1)
	}
	return s
}

const cmItem = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: payments
  annotations:
    internal.config.kubernetes.io/path: 'settings.yaml'
    internal.config.kubernetes.io/index: '0'
data:
  script: |
    #!/bin/sh

    echo "a: b"
  empty: ""
`

// TestFastEqualsFramework runs the fast path and kyaml's framework.Execute
// on the same lists and compares what they write, parsed: items (input and
// generated), functionConfig and results; and the error.
func TestFastEqualsFramework(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", "examples", "kustomize-transformer"))
	local := "    internal.config.kubernetes.io/path: '%s'\n"
	var intents []string
	for _, f := range []string{"tenant.yaml", "web01.yaml", "db01.yaml"} {
		intents = append(intents, readFile(t, f, strings.Replace(local, "%s", f, 1)))
	}
	cfg := "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: virtc}\n"
	bad := strings.Replace(intents[1], "spec:\n", "spec:\n  bogus: 1\n", 1)
	oldResults := "results:\n- message: from an earlier function\n  severity: info\n"
	cases := map[string]string{
		"transformer":          list(append(append([]string{}, intents...), cmItem), cfg, false, ""),
		"wide":                 list(append(append([]string{}, intents...), cmItem), cfg, true, ""),
		"error":                list([]string{intents[0], bad, cmItem}, cfg, false, ""),
		"earlier results kept": list(intents, cfg, false, oldResults),
		"earlier results, new": list([]string{intents[0], bad}, cfg, false, oldResults),
		"no functionConfig":    list(intents, "", false, ""),
		"empty flow items":     "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: virtc.dev/v1alpha1\n  kind: Compiler\n  metadata: {name: virtc}\n  spec: {paths: [.]}\n",
		"no items":             "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: virtc.dev/v1alpha1\n  kind: Compiler\n  metadata: {name: virtc}\n  spec: {paths: [.]}\n",
		"items first":          "items:\n" + strings.TrimPrefix(list(intents, cfg, false, ""), "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n") + "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n",
		"item comments":        list([]string{"# the tenant\n# of payments\n" + intents[0], intents[1], intents[2]}, cfg, false, ""),
		"comment":              "# from kpt\n" + strings.Replace(list(intents, cfg, false, ""), "functionConfig:", "# the config\nfunctionConfig:", 1),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			l, fast, err := parseLayout([]byte(in))
			if err != nil || !fast {
				t.Fatalf("the fast path does not take this list (error %v)", err)
			}
			// kustomize's compact layout is parsed item by item; the wide
			// one (and comments between items) as a whole. Both give the same nodes.
			_, chunked := parseChunked([]byte(in))
			if want := name != "wide" && name != "comment"; chunked != want {
				t.Errorf("parsed item by item: %v, want %v", chunked, want)
			}
			if chunked {
				var whole yaml.Node
				if err := yaml.Unmarshal([]byte(in), &whole); err != nil {
					t.Fatal(err)
				}
				_, items := field(whole.Content[0], "items")
				if items != nil && items.Kind == yaml.SequenceNode && !sameNodes(items.Content, l.items) {
					t.Errorf("the items parsed one by one differ from the list parsed whole")
				}
			}
			var f, k bytes.Buffer
			_, ferr := runFast(l, &f)
			_, kerr := runFramework([]byte(in), &k)
			if (ferr == nil) != (kerr == nil) || (ferr != nil && ferr.Error() != kerr.Error()) {
				t.Fatalf("errors differ: fast %v, framework %v", ferr, kerr)
			}
			var fo, ko map[string]any
			if err := yaml.Unmarshal(f.Bytes(), &fo); err != nil {
				t.Fatalf("fast output is not YAML: %v\n%s", err, f.String())
			}
			if err := yaml.Unmarshal(k.Bytes(), &ko); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ko, fo); diff != "" {
				t.Errorf("fast path differs from framework.Execute (-framework +fast):\n%s", diff)
			}
		})
	}
}

// TestFastFallsBack: lists the fast path cannot write back line by line go
// through the framework, and what is not a ResourceList is refused.
func TestFastFallsBack(t *testing.T) {
	for name, in := range map[string]string{
		"flow":           `{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": []}`,
		"two documents":  "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n---\na: 1\n",
		"flow item":      "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n",
		"dash alone":     "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n-\n  apiVersion: v1\n  kind: ConfigMap\n",
		"item comment":   "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n# a\n- apiVersion: v1\n  kind: ConfigMap\n",
		"crlf":           "apiVersion: config.kubernetes.io/v1\r\nkind: ResourceList\r\nitems: []\r\n",
		"items on line":  "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: # x\n- apiVersion: v1\n  kind: ConfigMap\n",
		"indented root ": "  apiVersion: config.kubernetes.io/v1\n  kind: ResourceList\n  items: []\n",
	} {
		if _, fast, err := parseLayout([]byte(in)); err != nil || fast {
			t.Errorf("%s: fast %v, error %v; want the framework's path", name, fast, err)
		}
	}
	for _, in := range []string{"", "kind: List\n", "a: [\n", "- 1\n"} {
		if _, _, err := parseLayout([]byte(in)); err == nil {
			t.Errorf("%q: accepted as a ResourceList", in)
		}
	}
}

// sameNodes compares node trees without their positions.
func sameNodes(a, b []*yaml.Node) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind != y.Kind || x.Style != y.Style || x.Tag != y.Tag || x.Value != y.Value || x.Anchor != y.Anchor ||
			x.HeadComment != y.HeadComment || x.LineComment != y.LineComment || x.FootComment != y.FootComment ||
			!sameNodes(x.Content, y.Content) {
			return false
		}
	}
	return true
}
