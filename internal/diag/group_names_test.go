package diag

import (
	"fmt"
	"strings"
	"testing"
)

// Repeats of one shape that name different things (six VMs, six different
// unknown images) keep the names the summary hides; repeats of one name
// (fifty VMs with the same unknown image) add nothing.
func TestRepeatNamesWhatItHides(t *testing.T) {
	var ds []Diagnostic
	for i, img := range []string{"a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5", "b6", "b3"} {
		ds = append(ds, Diagnostic{Pos: Pos{File: "vms.yaml", Line: i + 1, Col: 10}, Field: "spec.image", Message: fmt.Sprintf("unknown image %q (run `virtc catalog`)", img)})
	}
	got := Condense(ds)
	if len(got) != GroupShown+1 || got[GroupShown].Repeat == nil {
		t.Fatalf("entries %v", got)
	}
	want := `... and 7 more errors like these (10 in all), about "b1", "b2", "b3", "b4", "b5" and 1 more`
	if s := got[GroupShown].String(); !strings.HasPrefix(s, want) {
		t.Errorf("summary %q, want it to start %q", s, want)
	}
	same := make([]Diagnostic, 8)
	for i := range same {
		same[i] = Diagnostic{Pos: Pos{File: "vms.yaml", Line: i + 1}, Field: "spec.image", Message: `unknown image "rhel-9"; did you mean "rhel9"?`}
	}
	if s := Condense(same)[GroupShown].String(); strings.Contains(s, "about") {
		t.Errorf("one name repeated: %q", s)
	}
}
