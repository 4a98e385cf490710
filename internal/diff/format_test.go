package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func bigReport(objects int) *Report {
	r := &Report{Base: "origin/main", Head: "working tree", Allowed: false,
		Refusals: []Finding{{Rule: "disk-shrink", Object: "DataVolume a/b", Message: "shrinks | badly <now>", Fix: "keep it"}},
		Warnings: []Finding{}, Tenants: []Subject{}, VMs: []Subject{}}
	for i := range objects {
		var d strings.Builder
		d.WriteString("@@ -1,300 +1,300 @@\n")
		for j := range 300 {
			fmt.Fprintf(&d, "-old line %d of object %d\n+new line %d of object %d\n", j, i, j, i)
		}
		r.Objects = append(r.Objects, Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: fmt.Sprintf("o%03d", i), Status: Changed, Diff: d.String()})
		r.VMs = append(r.VMs, Subject{Namespace: "ns", Name: fmt.Sprintf("vm%03d", i), Status: Changed,
			Changes: []Change{{Field: "size", Effect: EffectLive, Detail: "size a → b"}}})
	}
	r.Summary.Changed = objects
	return r
}

func TestMarkdownFitsInAComment(t *testing.T) {
	md := Markdown(bigReport(40), MarkdownLimit)
	if len(md) > MarkdownLimit {
		t.Fatalf("%d bytes, limit %d", len(md), MarkdownLimit)
	}
	if !strings.HasPrefix(md, Marker+"\n") {
		t.Error("the comment does not start with the marker")
	}
	if !strings.Contains(md, "✂️ Truncated:") {
		t.Error("no truncation note")
	}
	if !strings.Contains(md, "shrinks \\| badly &lt;now&gt;") {
		t.Error("the refusal is missing or not escaped")
	}
	if strings.Count(md, "<details>") != strings.Count(md, "</details>") {
		t.Error("a collapsible section is cut in the middle")
	}
}

func TestMarkdownSmallReportIsWhole(t *testing.T) {
	md := Markdown(bigReport(1), MarkdownLimit)
	if strings.Contains(md, "Truncated") {
		t.Error("a small report is truncated")
	}
	if !strings.Contains(md, "<details><summary>~ ConfigMap ns/o000 (changed)</summary>") {
		t.Errorf("no collapsible diff:\n%s", md)
	}
}

func TestMarkdownTinyLimitStillNotes(t *testing.T) {
	md := Markdown(bigReport(3), 600)
	if len(md) > 600 || !strings.Contains(md, "Truncated") {
		t.Errorf("%d bytes:\n%s", len(md), md)
	}
}

func TestJSONFieldNames(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, bigReport(1), WriteOptions{Format: FormatJSON, Diff: false}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"base", "head", "allowed", "summary", "refusals", "warnings", "tenants", "vms", "objects"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no field %q", k)
		}
	}
	if strings.Contains(b.String(), `"diff"`) {
		t.Error("--diff=false still writes diffs")
	}
	if strings.Contains(b.String(), `\u003c`) {
		t.Error("JSON escapes < as \\u003c")
	}
}
