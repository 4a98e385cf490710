package cli

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/schema"
	"github.com/virtc/virtc/schemas"
)

// TestExplainEveryField explains every field of every kind's schema (the
// files editors use): each is found, with its own description.
func TestExplainEveryField(t *testing.T) {
	n := 0
	for _, kind := range decode.Kinds {
		data, err := schemas.Files.ReadFile(schema.FileName(kind))
		if err != nil {
			t.Fatal(err)
		}
		var s *jsonSchema
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		var walk func(path string, s *jsonSchema)
		walk = func(path string, s *jsonSchema) {
			var stdout, stderr bytes.Buffer
			if code := Main([]string{"explain", path}, nil, &stdout, &stderr); code != ExitOK {
				t.Errorf("explain %s: exit %d: %s", path, code, stderr.String())
				return
			}
			n++
			first := strings.Fields(s.Description)
			if len(first) > 0 && !strings.Contains(stdout.String(), "    "+first[0]) {
				t.Errorf("explain %s lacks its description %q", path, s.Description)
			}
			obj := s.fields()
			for name, f := range obj.Properties {
				walk(path+"."+name, f)
			}
		}
		walk(kind, s)
	}
	if n < 300 {
		t.Errorf("explained %d fields; the schemas have more", n)
	}
}

func TestExplainErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"VM.spec.diskz"}, "virtc explain: VM.spec: unknown field \"diskz\"; did you mean \"disks\"?\n"},
		{[]string{"vm.spec.disks.sise"}, "virtc explain: VM.spec.disks: unknown field \"sise\"; did you mean \"size\"?\n"},
		{[]string{"Tenat"}, "virtc explain: unknown kind \"Tenat\"; did you mean \"Tenant\"?\n"},
		{nil, "virtc explain: name one kind or field, such as VM or VM.spec.disks\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"explain"}, c.args...), nil, &stdout, &stderr)
		if code != ExitUsage || stdout.Len() > 0 || !strings.HasPrefix(stderr.String(), c.want) {
			t.Errorf("explain %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout.String(), stderr.String(), c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	Main([]string{"explain", "VM.spec.disks"}, nil, &stdout, &stderr)
	lines := strings.Split(stdout.String(), "\n")
	if !slices.Contains(lines, "  name\t<string> -required-") || !slices.Contains(lines, "FIELD:    disks <[]object>") {
		t.Errorf("explain VM.spec.disks:\n%s", stdout.String())
	}
}
