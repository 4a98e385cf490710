package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/jsonnet"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/schemas"
	"github.com/virtc/virtc/test/conform"
)

const repo = "../.."

// TestUpToDate: the committed schemas are what the generator writes from
// the current Go types (else: make generate).
func TestUpToDate(t *testing.T) {
	files, err := Generate(filepath.Join(repo, "api"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := fs.Glob(schemas.Files, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for name := range files {
		want = append(want, name)
	}
	sort.Strings(want)
	if !slices.Equal(want, committed) {
		t.Errorf("schema files %v, generator writes %v (run make generate)", committed, want)
	}
	for name, data := range files {
		got, err := schemas.Files.ReadFile(name)
		if err != nil {
			continue
		}
		if !bytes.Equal(got, data) {
			t.Errorf("schemas/%s is out of date (run make generate)", name)
		}
	}
	for _, kind := range decode.Kinds {
		if _, ok := files[FileName(kind)]; !ok {
			t.Errorf("no schema for kind %s", kind)
		}
	}
}

// TestPatterns: the patterns accept exactly what the decoder accepts.
func TestPatterns(t *testing.T) {
	quantities := []string{
		"0", "1", "512Mi", "40Gi", "1.5Gi", ".5", "5.", "100m", "1k", "2M", "1e3", "1E3", "1e-3", "1e+3",
		"+1Gi", "0.5Ti", "16Ei", "3P", "007",
		"-1Gi", "-5", "1GB", "1 Gi", "1gi", "1.2.3", "", "1e", "1Ki5", "1Kb", "1e1.5", "Mi1", "1K",
	}
	// Spellings of zero that Kubernetes parses and the pattern refuses: no
	// one means them, and zero is refused wherever a size matters.
	for _, q := range []string{"-0", "Gi", "."} {
		if _, err := resource.ParseQuantity(q); err != nil || matches(QuantityPattern, q) {
			t.Errorf("quantity %q: the documented difference no longer holds", q)
		}
	}
	for _, q := range quantities {
		parsed, err := resource.ParseQuantity(q)
		decoderTakes := err == nil && parsed.Sign() >= 0
		if got := matches(QuantityPattern, q); got != decoderTakes {
			t.Errorf("quantity %q: pattern %v, decoder %v", q, got, decoderTakes)
		}
	}
	names := []string{"a", "web-01", "0abc", "a.b", "a..b", "-a", "a-", "A", "web_01", "ü", strings.Repeat("a", 63), "a.b-c.d", ".a", "a."}
	for _, n := range names {
		if got, want := matches(DNSLabelPattern, n), len(validation.IsDNS1123Label(n)) == 0; got != want && len(n) <= DNSLabelMaxLength {
			t.Errorf("DNS label %q: pattern %v, Kubernetes %v", n, got, want)
		}
		if got, want := matches(DNSSubdomainPattern, n), len(validation.IsDNS1123Subdomain(n)) == 0; got != want {
			t.Errorf("DNS subdomain %q: pattern %v, Kubernetes %v", n, got, want)
		}
	}
	if DNSLabelMaxLength != validation.DNS1123LabelMaxLength || DNSSubdomainMaxLen != validation.DNS1123SubdomainMaxLength {
		t.Error("maximum lengths differ from Kubernetes'")
	}
}

func matches(pattern, s string) bool {
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://p.json", map[string]any{"type": "string", "pattern": pattern}); err != nil {
		panic(err)
	}
	return c.MustCompile("mem://p.json").Validate(s) == nil
}

// validator holds the compiled schemas.
type validator struct {
	kinds map[string]*jsonschema.Schema
	all   *jsonschema.Schema
}

func newValidator(t *testing.T) *validator {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	names, _ := fs.Glob(schemas.Files, "*.json")
	for _, name := range names {
		data, _ := schemas.Files.ReadFile(name)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.AddResource("mem://schemas/"+name, doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	v := &validator{kinds: map[string]*jsonschema.Schema{}}
	for _, kind := range decode.Kinds {
		s, err := c.Compile("mem://schemas/" + FileName(kind))
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		v.kinds[kind] = s
	}
	var err error
	if v.all, err = c.Compile("mem://schemas/" + AllFile); err != nil {
		t.Fatal(err)
	}
	return v
}

// check validates one virtc document against its kind's schema and the
// schema of any virtc object; both must agree.
func (v *validator) check(doc *source.Doc) error {
	var y any
	if err := doc.Node.Decode(&y); err != nil {
		return fmt.Errorf("not representable as JSON: %v", err)
	}
	data, err := json.Marshal(y)
	if err != nil {
		return fmt.Errorf("not representable as JSON: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	errAll := v.all.Validate(inst)
	_, kind := decode.Header(doc.Node)
	s, ok := v.kinds[kind]
	if !ok {
		if errAll == nil {
			return fmt.Errorf("unknown kind %q passes %s", kind, AllFile)
		}
		return errAll
	}
	errKind := s.Validate(inst)
	if (errKind == nil) != (errAll == nil) {
		return fmt.Errorf("%s and %s disagree: %v / %v", FileName(kind), AllFile, errKind, errAll)
	}
	return errKind
}

// input is a set of documents from one place.
type input struct {
	name    string
	docs    []*source.Doc
	mayFail bool // a golden scenario that fails on purpose
}

// inputs are the examples, the golden scenarios' inputs and the embedded
// catalog, YAML and Jsonnet (evaluated).
func inputs(t *testing.T) []input {
	t.Helper()
	var out []input
	read := func(name string, paths []string, ext map[string]string, mayFail bool) {
		var d diag.List
		docs := source.Read(paths, source.Options{Evaluate: jsonnet.Options{ExtStr: ext}.Evaluate}, &d)
		if !mayFail && d.HasErrors() {
			t.Errorf("%s: %s", name, diag.Format(d.Errors()))
		}
		out = append(out, input{name: name, docs: docs, mayFail: mayFail})
	}
	examples, _ := os.ReadDir(filepath.Join(repo, "examples"))
	for _, e := range examples {
		if e.IsDir() {
			read("examples/"+e.Name(), []string{filepath.Join(repo, "examples", e.Name())}, nil, false)
		}
	}
	scenarios, _ := os.ReadDir(filepath.Join(repo, "golden"))
	for _, s := range scenarios {
		if !s.IsDir() {
			continue
		}
		dir := filepath.Join(repo, "golden", s.Name())
		entries, _ := os.ReadDir(dir)
		var paths []string
		ext := map[string]string{}
		// virtc init's repositories hold the approver image placeholder,
		// which the schema refuses as the build does (golden/init/*/errors.txt)
		mayFail := s.Name() == "init"
		for _, e := range entries {
			switch e.Name() {
			case "errors.txt":
				mayFail = true
			case "expected.yaml", "warnings.txt", "command", "expected.txt", "exit", "README", "stdin", "stdin.jsonnet":
			case "flags":
				flags, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				f := strings.Fields(string(flags))
				for i := 0; i+1 < len(f); i++ {
					switch f[i] {
					case "--ext-str":
						k, v, _ := strings.Cut(f[i+1], "=")
						ext[k] = v
					case "--cluster":
						ext["cluster"] = f[i+1]
					}
				}
			default:
				paths = append(paths, filepath.Join(dir, e.Name()))
			}
		}
		read("golden/"+s.Name(), paths, ext, mayFail)
	}
	var d diag.List
	docs := source.Read([]string{filepath.Join(repo, "catalog")}, source.Options{Evaluate: func(file, rel, _ string, data []byte, diags *diag.List) []*source.Doc {
		return jsonnet.EvaluateEmbedded(file, rel, data, diags)
	}}, &d)
	if d.HasErrors() {
		t.Errorf("catalog: %s", diag.Format(d.Errors()))
	}
	return append(out, input{name: "catalog (embedded)", docs: docs})
}

// schemaCatches are the golden scenarios that fail for a reason a schema
// can express: at least one of their documents must fail validation. The
// others fail on what only the compiler knows (the catalog, quota,
// duplicates across files, YAML syntax).
var schemaCatches = []string{
	"err-backup-location",
	"err-bad-names",
	"err-bad-quantity",
	"err-forbidden-fields",
	"err-huge-numbers",
	"err-image-provenance",
	"err-image-url",
	"err-jsonnet-output",
	"err-missing-required",
	"err-network-profiles",
	"err-platform-version",
	"err-production-no-backup",
	"err-tenant-quota-values",
	"err-tenant-refs",
	"err-unknown-field",
	"err-unknown-kind-apiversion",
	"err-wrong-types",
}

// TestInputsAgainstSchemas: every example, golden input and catalog entry
// that the compiler accepts passes the schemas, and the golden scenarios
// that fail on schema-level mistakes fail them.
func TestInputsAgainstSchemas(t *testing.T) {
	v := newValidator(t)
	seen := map[string]bool{}
	checked := 0
	for _, in := range inputs(t) {
		failed := 0
		for _, doc := range in.docs {
			if !decode.IsVirtc(doc.Node) {
				continue
			}
			checked++
			if err := v.check(doc); err != nil {
				failed++
				if !in.mayFail {
					t.Errorf("%s: %s (document %d) fails the schema: %v", in.name, doc.File, doc.Index+1, err)
				}
			}
		}
		name := strings.TrimPrefix(in.name, "golden/")
		seen[name] = true
		if in.mayFail {
			t.Logf("%s: %d of %d documents fail the schemas", in.name, failed, len(in.docs))
		}
		if slices.Contains(schemaCatches, name) && failed == 0 {
			t.Errorf("%s fails the compiler on a schema-level mistake, but passes the schemas", in.name)
		}
	}
	for _, s := range schemaCatches {
		if !seen[s] {
			t.Errorf("golden scenario %s is gone: update schemaCatches", s)
		}
	}
	t.Logf("%d documents checked", checked)
	if checked < 100 {
		t.Errorf("only %d documents checked", checked)
	}
}

// TestKnownBad: each file of testdata/bad is refused by the schemas and by
// the decoder alike.
func TestKnownBad(t *testing.T) {
	v := newValidator(t)
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	if len(files) < 10 {
		t.Fatalf("only %d known-bad files", len(files))
	}
	for _, f := range files {
		var d diag.List
		docs := source.Read([]string{f}, source.Options{}, &d)
		if len(docs) != 1 || d.HasErrors() {
			t.Errorf("%s: want one readable document, got %d: %s", f, len(docs), diag.Format(d.Sorted()))
			continue
		}
		if err := v.check(docs[0]); err == nil {
			t.Errorf("%s passes the schemas", f)
		}
		decode.Decode(docs, false, &d)
		if !d.HasErrors() {
			t.Errorf("%s passes the decoder", f)
		}
	}
}

// TestKubeconform validates the inputs with kubeconform and the generated
// schemas, as a repository's CI would: the accepted inputs pass, the
// known-bad files fail.
func TestKubeconform(t *testing.T) {
	bin, err := conform.Tool("kubeconform", "KUBECONFORM_BIN")
	if err != nil {
		conform.Skip(t, err)
	}
	dir, err := filepath.Abs(filepath.Join(repo, "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	location := dir + "/{{.ResourceKind}}.json"
	run := func(files ...string) ([]byte, error) {
		args := append([]string{"-strict", "-summary", "-schema-location", location}, files...)
		return exec.Command(bin, args...).CombinedOutput()
	}
	// Accepted inputs: YAML as it is, Jsonnet as its evaluated JSON.
	tmp := t.TempDir()
	var good []string
	for _, in := range inputs(t) {
		if in.mayFail {
			continue
		}
		for i, doc := range in.docs {
			if !decode.IsVirtc(doc.Node) {
				continue
			}
			var y any
			if err := doc.Node.Decode(&y); err != nil {
				t.Fatal(err)
			}
			data, _ := json.Marshal(y)
			f := filepath.Join(tmp, fmt.Sprintf("%s-%d.json", strings.NewReplacer("/", "_", " ", "_").Replace(in.name), i))
			if err := os.WriteFile(f, data, 0o644); err != nil {
				t.Fatal(err)
			}
			good = append(good, f)
		}
	}
	if out, err := run(good...); err != nil {
		t.Errorf("kubeconform rejects accepted inputs: %v\n%s", err, out)
	}
	bad, _ := filepath.Glob("testdata/bad/*.yaml")
	for _, f := range bad {
		if out, err := run(f); err == nil {
			t.Errorf("kubeconform accepts %s:\n%s", f, out)
		}
	}
}
