package compile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

// seeds adds every golden input file as a seed.
func seeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(examplesDir(""), "..", "golden", "*", "*.yaml"))
	for _, file := range files {
		base := filepath.Base(file)
		if base == "expected.yaml" {
			continue
		}
		data, err := os.ReadFile(file)
		if err == nil && len(data) < 64<<10 {
			f.Add(data)
		}
	}
}

// Random and mutated intents must give either a complete, parseable output
// or located errors, never a panic, and never both output and errors.
func FuzzCompile(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		diags := &diag.List{}
		docs := source.Parse("fuzz.yaml", "fuzz.yaml", data, diags)
		res := Compile(docs, Options{}, diags)
		if diags.HasErrors() {
			if len(res.YAML) != 0 || len(res.Objects) != 0 {
				t.Fatalf("errors and output together")
			}
			for _, d := range diags.Errors() {
				if d.File == "" || d.Message == "" || strings.HasPrefix(d.Message, " ") {
					t.Fatalf("unlocated or empty diagnostic: %+v", d)
				}
			}
			return
		}
		dec := yaml.NewDecoder(strings.NewReader(string(res.YAML)))
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				if err.Error() == "EOF" {
					break
				}
				t.Fatalf("output does not parse: %v", err)
			}
		}
	})
}
