package krm

import (
	"strings"
	"testing"

	"github.com/virtc/virtc/fn/diag"
)

func TestToNodesKeepsOrder(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString("kind: K\nmetadata:\n  name: n" + strings.Repeat("x", i%7) + "\n  annotations:\n    a: \"---\"\n")
	}
	diags := &diag.List{}
	nodes := toNodes([]byte(b.String()), diags)
	if diags.Len() > 0 || len(nodes) != 300 {
		t.Fatalf("%d nodes, diagnostics:\n%s", len(nodes), diag.Format(diags.Sorted()))
	}
	for i, n := range nodes {
		if want := "n" + strings.Repeat("x", i%7); n.GetName() != want {
			t.Fatalf("node %d is %q, want %q", i, n.GetName(), want)
		}
	}
	if nodes := toNodes([]byte("a: 1\n---\nb: [\n"), diags); nodes != nil || !diags.HasErrors() {
		t.Errorf("invalid YAML: %d nodes, no error", len(nodes))
	}
	if nodes := toNodes(nil, &diag.List{}); nodes != nil {
		t.Errorf("empty output gave %d nodes", len(nodes))
	}
}
