package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// TestDiagnosticsFormats: the problems of a refused build as one JSON
// document and as GitHub Actions annotations, each with its file, line,
// column, field and guardrail rule; nothing on stdout.
func TestDiagnosticsFormats(t *testing.T) {
	t.Chdir("../../golden")
	in := "err-image-auto-updated/inputs.yaml"
	code, stdout, stderr := runMain("build", "--diagnostics", "json", in)
	if code != ExitFailed || stdout != "" {
		t.Fatalf("exit %d, %d bytes on stdout", code, len(stdout))
	}
	var got struct {
		Diagnostics []jsonDiagnostic `json:"diagnostics"`
		Errors      int              `json:"errors"`
		Warnings    int              `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stderr), &got); err != nil {
		t.Fatalf("stderr is not one JSON document: %v\n%s", err, stderr)
	}
	if got.Errors != 1 || got.Warnings != 1 || len(got.Diagnostics) != 2 {
		t.Fatalf("%d errors, %d warnings, %d diagnostics; want 1, 1, 2\n%s", got.Errors, got.Warnings, len(got.Diagnostics), stderr)
	}
	e := got.Diagnostics[1]
	if e.File != in || e.Line != 82 || e.Column != 10 || e.Severity != "error" || e.Field != "spec.image" || e.Rule != "image-source" || e.Subject != "ops/bastion" || !strings.Contains(e.Message, "auto-updated boot sources") {
		t.Errorf("the refusal: %+v", e)
	}
	if w := got.Diagnostics[0]; w.Severity != "warning" || w.Field != "spec.approver" {
		t.Errorf("the warning: %+v", w)
	}

	code, stdout, stderr = runMain("validate", "--diagnostics", "github", in)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != ExitFailed || stdout != "" || len(lines) != 3 {
		t.Fatalf("github: exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.HasPrefix(lines[0], "::warning file="+in+",line=10,col=3,title=virtc::spec.approver: no InstallPlan approver") {
		t.Errorf("the warning's annotation: %s", lines[0])
	}
	if !strings.HasPrefix(lines[1], "::error file="+in+",line=82,col=10,title=virtc image-source::spec.image: VM ops/bastion is production tier") {
		t.Errorf("the refusal's annotation: %s", lines[1])
	}
	if lines[2] != "virtc: 1 error" {
		t.Errorf("summary %q", lines[2])
	}

	// A build that passes: an empty list, exit 0.
	code, _, stderr = runMain("validate", "--diagnostics", "json", "../examples/quickstart")
	if code != ExitOK || !strings.Contains(stderr, `"diagnostics": [`) || !strings.Contains(stderr, `"errors": 0`) {
		t.Errorf("a good build: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runMain("build", "--diagnostics", "xml", in); code != ExitUsage || !strings.Contains(stderr, `unknown --diagnostics "xml" (text, json, github)`) {
		t.Errorf("--diagnostics xml: exit %d, %q", code, stderr)
	}
}

// TestGitHubEscaping: a message or file with the characters a workflow
// command gives meaning to stays one annotation.
func TestGitHubEscaping(t *testing.T) {
	if got := ghData("50% of a\nb"); got != "50%25 of a%0Ab" {
		t.Errorf("ghData: %q", got)
	}
	if got := ghProperty("a,b:c"); got != "a%2Cb%3Ac" {
		t.Errorf("ghProperty: %q", got)
	}
}

// TestBuildJSON: build -o json is one List whose items are the YAML
// build's objects, read as the API machinery reads YAML (sigs.k8s.io/yaml,
// what kubectl apply -f uses), for every golden scenario's output.
func TestBuildJSON(t *testing.T) {
	files, _ := filepath.Glob("../../golden/*/expected.yaml")
	if len(files) < 20 {
		t.Fatalf("%d golden outputs", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		list, err := jsonList([][]byte{data})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var got struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(list, &got); err != nil || got.Kind != "List" {
			t.Fatalf("%s: %v, kind %q", f, err, got.Kind)
		}
		var want []json.RawMessage
		for _, doc := range strings.Split("\n"+string(data), "\n---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			j, err := sigsyaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if string(j) != "null" {
				want = append(want, j)
			}
		}
		if len(got.Items) != len(want) {
			t.Fatalf("%s: %d items, want %d", f, len(got.Items), len(want))
		}
		norm := func(raw []byte) any {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		for i := range want {
			if a, b := norm(got.Items[i]), norm(want[i]); !reflect.DeepEqual(a, b) {
				t.Errorf("%s: item %d differs:\n%s\n%s", f, i, got.Items[i], want[i])
			}
		}
	}
	if code, _, stderr := runMain("build", "-o", "xml", "x"); code != ExitUsage || !strings.Contains(stderr, `unknown -o "xml" (yaml or json)`) {
		t.Errorf("build -o xml: exit %d, %q", code, stderr)
	}
}
