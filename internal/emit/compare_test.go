package emit_test

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/fleet"
	"github.com/virtc/virtc/internal/source"
)

// Every kind virtc renders, from a generated fleet and the platform
// example, is written byte for byte as the JSON path writes it.
func TestEncoderMatchesReferenceOnRenderedObjects(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	examples := filepath.Join(filepath.Dir(file), "..", "..", "examples")
	dir := t.TempDir()
	if _, err := fleet.Write(dir, fleet.Options{Tenants: 8, VMs: 200, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, inputs := range [][]string{{dir}, {filepath.Join(examples, "platform")}, {filepath.Join(examples, "quickstart")}} {
		diags := &diag.List{}
		docs := source.Read(inputs, source.Options{}, diags)
		res := compile.Compile(docs, compile.Options{}, diags)
		if diags.HasErrors() {
			t.Fatalf("%v: %s", inputs, diag.Format(diags.Errors()))
		}
		want, err := emit.ReferenceWrite(res.Objects)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, res.YAML) {
			t.Errorf("%v: the encoder's output differs from the JSON path's", inputs)
		}
		for _, o := range res.Objects {
			kinds[o.Kind] = true
		}
	}
	// The golden scenarios hold the remaining kinds (backups, data
	// protection, preferences, golden images, primary networks) to the
	// bytes the JSON path wrote.
	if len(kinds) < 13 {
		t.Errorf("only %d kinds compared: %v", len(kinds), kinds)
	}
}
