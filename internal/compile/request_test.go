package compile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

// A Request compiles what its options say, as the options of a compile
// set by hand would: its scope and tenant limit the output, its catalogs
// are read before its paths, and an unknown scope is an error with no
// output.
func TestRequest(t *testing.T) {
	dir := examplesDir("platform")
	diags := &diag.List{}
	docs := source.Read([]string{dir}, source.Options{}, diags)
	want := Compile(docs, Options{Tenant: "web"}, diags)
	if diags.HasErrors() {
		t.Fatal(diag.Format(diags.Sorted()))
	}

	diags = &diag.List{}
	got := Run(Request{CompilerSpec: api.CompilerSpec{Paths: []string{dir}, Tenant: "web"}}, nil, diags)
	if diags.HasErrors() {
		t.Fatal(diag.Format(diags.Sorted()))
	}
	if !bytes.Equal(got.YAML, want.YAML) || len(got.YAML) == 0 {
		t.Fatalf("Run of the request: %d bytes, a compile with the same options %d bytes", len(got.YAML), len(want.YAML))
	}

	r := Request{CompilerSpec: api.CompilerSpec{Paths: []string{"b"}, CatalogDirs: []string{"a"}, Scope: "vms,tenants"}}
	if in := r.Inputs(); strings.Join(in, ",") != "a,b" {
		t.Errorf("Inputs() = %v, want the catalogs first: [a b]", in)
	}
	opts, err := r.Options()
	if err != nil || len(opts.Scopes) != 2 {
		t.Errorf("Options() of scope %q: %v scopes, %v", r.Scope, opts.Scopes, err)
	}

	diags = &diag.List{}
	bad := Run(Request{CompilerSpec: api.CompilerSpec{Paths: []string{dir}, Scope: "vm"}}, nil, diags)
	if !diags.HasErrors() || len(bad.YAML) != 0 || len(bad.Objects) != 0 {
		t.Fatalf("unknown scope: errors %v, %d bytes of output; want an error and nothing", diags.HasErrors(), len(bad.YAML))
	}
	if msg := diag.Format(diags.Sorted()); !strings.Contains(msg, `unknown scope "vm"`) {
		t.Errorf("unknown scope reported as %q", msg)
	}
}
