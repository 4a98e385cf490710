package emit

import (
	"bytes"
	"fmt"
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
