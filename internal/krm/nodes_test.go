package krm

import (
	"strings"
	"testing"
)

func TestToNodesKeepsOrder(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString("kind: K\nmetadata:\n  name: n" + strings.Repeat("x", i%7) + "\n  annotations:\n    a: \"---\"\n")
	}
	nodes, err := toNodes([]byte(b.String()))
	if err != nil || len(nodes) != 300 {
		t.Fatalf("%d nodes, error %v", len(nodes), err)
	}
	for i, n := range nodes {
		if want := "n" + strings.Repeat("x", i%7); n.GetName() != want {
			t.Fatalf("node %d is %q, want %q", i, n.GetName(), want)
		}
	}
	if nodes, err := toNodes([]byte("a: 1\n---\nb: [\n")); nodes != nil || err == nil {
		t.Errorf("invalid YAML: %d nodes, no error", len(nodes))
	}
	if nodes, _ := toNodes(nil); nodes != nil {
		t.Errorf("empty output gave %d nodes", len(nodes))
	}
}
