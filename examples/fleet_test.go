package examples

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/jsonnet"
	"github.com/virtc/virtc/internal/source"
)

var update = flag.Bool("update", false, "rewrite testdata/fleet-jsonnet.yaml from examples/fleet-jsonnet")

const fleetYAML = "testdata/fleet-jsonnet.yaml"

func build(t *testing.T, docs []*source.Doc, diags *diag.List) []byte {
	t.Helper()
	res := compile.Compile(docs, compile.Options{}, diags)
	if diags.HasErrors() {
		t.Fatalf("build failed:\n%s", diag.Format(diags.Sorted()))
	}
	return res.YAML
}

// TestFleetJsonnetEqualsYAML: the dozen lines of fleet.jsonnet and the
// 40-VM YAML file written out in full compile to the same bytes.
func TestFleetJsonnetEqualsYAML(t *testing.T) {
	diags := &diag.List{}
	docs := source.Read([]string{"fleet-jsonnet"}, source.Options{Evaluate: jsonnet.Options{}.Evaluate}, diags)
	if *update {
		writeYAML(t, docs)
	}
	fromJsonnet := build(t, docs, diags)

	data, err := os.ReadFile(fleetYAML)
	if err != nil {
		t.Fatal(err)
	}
	diags = &diag.List{}
	yamlDocs := source.Parse(fleetYAML, source.SourcePath("fleet-jsonnet/fleet.jsonnet", "fleet-jsonnet"), data, diags)
	// The YAML stands for fleet.jsonnet: its objects carry the same
	// virtc.dev/source annotation, so that every other byte can be compared.
	fromYAML := build(t, yamlDocs, diags)

	if n := strings.Count(string(fromJsonnet), "\nkind: VirtualMachine\n"); n != 40 {
		t.Errorf("the fleet has %d VirtualMachines, want 40", n)
	}
	if lines := strings.Count(string(mustRead(t, "fleet-jsonnet/fleet.jsonnet")), "\n"); lines > 15 {
		t.Errorf("fleet.jsonnet has %d lines; the example is meant to be about a dozen", lines)
	}
	if !bytes.Equal(fromJsonnet, fromYAML) {
		t.Errorf("Jsonnet and YAML outputs differ (-jsonnet +yaml):\n%s", cmp.Diff(string(fromJsonnet), string(fromYAML)))
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeYAML writes the evaluated documents as the YAML a person would
// otherwise write by hand.
func writeYAML(t *testing.T, docs []*source.Doc) {
	var b bytes.Buffer
	b.WriteString("# What examples/fleet-jsonnet/fleet.jsonnet evaluates to, written out as\n")
	b.WriteString("# YAML (go test ./examples -update rewrites it). Both build the same manifests.\n")
	for _, d := range docs {
		b.WriteString("---\n")
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(d.Node); err != nil {
			t.Fatal(err)
		}
		enc.Close()
	}
	if err := os.MkdirAll(filepath.Dir(fleetYAML), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fleetYAML, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
