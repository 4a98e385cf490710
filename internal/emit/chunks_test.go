package emit

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

// WriteChunks and WriteEach are Write in pieces: joined (the chunks as
// they are, the pieces with separators) they are Write's bytes, over
// several chunks; with release the bodies are let go of.
func TestChunksAndPiecesJoinToWrite(t *testing.T) {
	objs := make([]Object, 3*chunkSize+7)
	for i := range objs {
		objs[i] = Object{Kind: "ConfigMap", Name: fmt.Sprint(i), Body: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprint("cm-", i)},
			"data":     map[string]any{"n": fmt.Sprint(i), "list": []any{"a", i}},
		}}
	}
	want, err := Write(objs)
	if err != nil {
		t.Fatal(err)
	}
	pieces, err := WriteEach(objs)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Join(pieces, []byte("---\n")); !bytes.Equal(got, want) {
		t.Errorf("WriteEach joined differs from Write:\n%s\nwant:\n%s", got, want)
	}
	chunks, err := WriteChunks(objs, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 {
		t.Fatalf("%d chunks; the test needs several", len(chunks))
	}
	if got := bytes.Join(chunks, nil); !bytes.Equal(got, want) {
		t.Errorf("WriteChunks joined differs from Write")
	}
	for i, o := range objs {
		if o.Body != nil {
			t.Fatalf("object %d kept its body after WriteChunks with release", i)
		}
	}
}

// Objects serialized group by group and put in order by JoinSorted are
// Write's bytes of the sorted objects: kinds of every rank and none, equal
// names in several groups (input order decides) and within one group.
func TestJoinSortedIsSortThenWrite(t *testing.T) {
	kinds := []string{"VirtualMachine", "Namespace", "ConfigMap", "Zebra", "PersistentVolumeClaim", "Alpha"}
	var groups [][]Object
	for g := range 5 {
		var objs []Object
		for i := range 13 {
			kind := kinds[(g*7+i)%len(kinds)]
			ns, name := fmt.Sprint("ns-", i%3), fmt.Sprint("o-", (g+i)%4)
			objs = append(objs, Object{Kind: kind, Namespace: ns, Name: name, Body: map[string]any{
				"apiVersion": "v1", "kind": kind,
				"metadata": map[string]any{"name": name, "namespace": ns},
				"data":     map[string]any{"group": g, "index": i},
			}})
		}
		groups = append(groups, objs)
	}
	var all []Object
	for _, objs := range groups {
		all = append(all, objs...)
	}
	Sort(all)
	want, err := Write(all)
	if err != nil {
		t.Fatal(err)
	}
	var keyed []Keyed
	for g, objs := range groups {
		pieces, err := WriteEach(objs)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range objs {
			keyed = append(keyed, Keyed{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Group: g, Index: i, Piece: pieces[i]})
		}
	}
	// The groups arrive in any order (rendered concurrently).
	slices.Reverse(keyed)
	if got := bytes.Join(JoinSorted(keyed), nil); !bytes.Equal(got, want) {
		t.Errorf("JoinSorted differs from Sort then Write:\n%s\nwant:\n%s", got, want)
	}
}
