package diag

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShape(t *testing.T) {
	same := [][2]Diagnostic{
		{{Field: "spec.disks[0].size", Message: `disk 2Ti is larger than the platform allows (1Ti)`},
			{Field: "spec.disks[12].size", Message: `disk 40Gi is larger than the platform allows (16Ti)`}},
		{{Field: "spec.image", Message: `unknown image "rhel8"; did you mean "rhel9"?`},
			{Field: "spec.image", Message: `unknown image "fedra"; did you mean "fedora"?`}},
		{{Field: "spec.quota.cpu", Message: `tenant "a \"b\"": its VMs need 6 vCPUs`},
			{Field: "spec.quota.cpu", Message: `tenant "c": its VMs need 10 vCPUs`}},
	}
	for _, p := range same {
		if p[0].Shape() != p[1].Shape() {
			t.Errorf("%v and %v have different shapes", p[0], p[1])
		}
	}
	differ := [][2]Diagnostic{
		{{Field: "spec.size", Message: `unknown size "x"`}, {Field: "spec.image", Message: `unknown size "x"`}},
		{{Field: "spec.size", Message: `unknown size "x"`}, {Field: "spec.size", Message: `unknown size "x"`, Severity: Warning}},
		// Digits inside a name are part of the name.
		{{Field: "spec", Message: `size u1.small is excluded`}, {Field: "spec", Message: `size u2.small is excluded`}},
	}
	for _, p := range differ {
		if p[0].Shape() == p[1].Shape() {
			t.Errorf("%v and %v have the same shape %q", p[0], p[1], p[0].Shape())
		}
	}
}

func TestFix(t *testing.T) {
	for msg, want := range map[string]string{
		`unknown size "u1.meduim"; did you mean "u1.medium"?`:                                 `did you mean "u1.medium"?`,
		`not marked x; without it y (add the annotation (to each input))`:                     `add the annotation (to each input)`,
		`quota (over by 2; raise spec.quota.cpu or shrink the VMs)`:                           `over by 2; raise spec.quota.cpu or shrink the VMs`,
		`name "a)" is wrong (use "b(" instead)`:                                               `use "b(" instead`,
		`set userData or userDataSecret, not both`:                                            ``,
		`disk 2Ti is larger than the platform allows (1Ti)`:                                   ``,
		`it cannot migrate (disk "a" is RWO; disk "b" is RWO): it is stopped`:                 ``,
		`two primary networks; a namespace has one primary network`:                           ``,
		`(all in parentheses)`:                                                                ``,
		`unknown field "x" (` + "`virtc schema VM`" + ` lists the fields); did you mean "y"?`: `did you mean "y"?`,
	} {
		if got := Fix(msg); got != want {
			t.Errorf("Fix(%q) = %q, want %q", msg, got, want)
		}
	}
}

func lines(es []Entry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func TestCondense(t *testing.T) {
	var l List
	for i := range 8 {
		l.Errorf(Pos{File: fmt.Sprintf("vm%02d.yaml", i), Line: 7, Col: 10}, "spec.image", `unknown image "rhel8"; did you mean "rhel9"?`)
	}
	for i := range GroupMin - 1 {
		l.Errorf(Pos{File: fmt.Sprintf("vm%02d.yaml", i), Line: 9, Col: 3}, fmt.Sprintf("spec.disks[%d].size", i), "disk %dTi is larger than the platform allows (1Ti)", i+2)
	}
	l.Warnf(Pos{File: "a.yaml"}, "spec.migration", "cannot migrate")
	for i := range GroupMin {
		l.Errorf(Pos{File: "t.yaml", Line: i + 1, Col: 1}, fmt.Sprintf("spec.disks[%d].size", i), "quota over by %d (raise spec.quota.storage by %d)", i, i)
	}
	got := lines(Condense(l.Sorted()))
	// The image errors sort by file: vm00 (line 7) comes before vm00
	// (line 9); the first three of the group are shown at the first's place.
	want := `a.yaml: warning: spec.migration: cannot migrate
t.yaml:1:1: spec.disks[0].size: quota over by 0 (raise spec.quota.storage by 0)
t.yaml:2:1: spec.disks[1].size: quota over by 1 (raise spec.quota.storage by 1)
t.yaml:3:1: spec.disks[2].size: quota over by 2 (raise spec.quota.storage by 2)
... and 3 more errors like these (6 in all)
vm00.yaml:7:10: spec.image: unknown image "rhel8"; did you mean "rhel9"?
vm01.yaml:7:10: spec.image: unknown image "rhel8"; did you mean "rhel9"?
vm02.yaml:7:10: spec.image: unknown image "rhel8"; did you mean "rhel9"?
... and 5 more errors like these (8 in all); fix for all: did you mean "rhel9"?
vm00.yaml:9:3: spec.disks[0].size: disk 2Ti is larger than the platform allows (1Ti)
vm01.yaml:9:3: spec.disks[1].size: disk 3Ti is larger than the platform allows (1Ti)
vm02.yaml:9:3: spec.disks[2].size: disk 4Ti is larger than the platform allows (1Ti)
vm03.yaml:9:3: spec.disks[3].size: disk 5Ti is larger than the platform allows (1Ti)
vm04.yaml:9:3: spec.disks[4].size: disk 6Ti is larger than the platform allows (1Ti)
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("condensed (-want +got):\n%s", diff)
	}
	if got := Format(l.Sorted()); got != want {
		t.Errorf("Format differs from Condense:\n%s", got)
	}
	es := Condense(l.Sorted())
	if r := es[4].Repeat; r == nil || r.Field != "spec.disks[*].size" || r.Total != GroupMin || r.Omitted != GroupMin-GroupShown {
		t.Errorf("repeat of the quota errors: %+v", r)
	}
	if r := es[8].Repeat; r == nil || r.Field != "spec.image" {
		t.Errorf("repeat of the image errors: %+v", r)
	}
}

func TestCovers(t *testing.T) {
	for _, c := range []struct {
		broken, field string
		want          bool
	}{
		{"spec.size", "spec.size", true},
		{"spec", "spec.size", true},
		{"spec.disks[0]", "spec.disks[0].name", true},
		{"spec.disks", "spec.disks[0]", true},
		{"spec.size", "spec", true},
		{"spec.size", "", true},
		{"", "metadata.name", true},
		{"spec.hostDevices[0].deviceName", "spec.hostDevices[0]", true},
		{"spec.hostDevices[0].deviceName", "spec.hostDevices", false},
		{"spec.hostDevices[0].deviceName", "spec.hostDevices[1].deviceName", false},
		{"spec.size", "spec.sizes", false},
		{"spec.size", "spec.image", false},
		{"metadata.namespace", "metadata", true},
		{"metadata.namespace", "spec.image", false},
	} {
		if got := Covers(c.broken, c.field); got != c.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", c.broken, c.field, got, c.want)
		}
	}
}

func TestShadowedDropped(t *testing.T) {
	var l List
	l.Errorf(Pos{File: "a", Shadowed: true}, "spec.size", "consequence")
	l.Errorf(Pos{File: "a"}, "spec.size", "cause")
	if got := Format(l.Sorted()); got != "a: spec.size: cause\n" {
		t.Errorf("got %q", got)
	}
}

func TestUnknownField(t *testing.T) {
	fields := []string{"size", "image", "rootDisk", "disks", "networks", "runStrategy", "migration", "backup", "backupBefore", "cloudInit", "sshKeySecrets", "gpus", "hostDevices", "retired"}
	for name, want := range map[string]string{
		"sise":           "unknown field \"sise\" (`virtc schema VM` lists the fields); did you mean \"size\"?",
		"snapshotBefore": "unknown field \"snapshotBefore\" (`virtc schema VM` lists the fields); did you mean \"backupBefore\"?",
		"flavor":         "unknown field \"flavor\" (`virtc schema VM` lists the fields)",
	} {
		if got := UnknownField("VM", name, fields); got != want {
			t.Errorf("UnknownField(%q) = %q, want %q", name, got, want)
		}
	}
	disk := []string{"name", "size", "storage", "retired"}
	if got, want := UnknownField("VM", "zone", disk), "unknown field \"zone\" (known here: \"name\", \"size\", \"storage\", \"retired\"; `virtc schema VM` describes them)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := UnknownField("VM", "storageClass", disk), "unknown field \"storageClass\" (`virtc schema VM` lists the fields); did you mean \"storage\"?"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestUnknownNames(t *testing.T) {
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("entry-%c%c", 'a'+i, 'a'+i)
	}
	if got := Unknown("size", "zzzzzzzz", many); !strings.Contains(got, "run `virtc catalog` to list them") {
		t.Errorf("catalog name: %q", got)
	}
	if got := UnknownName("feature gate", "zzzzzzzz", many); strings.Contains(got, "virtc catalog") || !strings.Contains(got, "none of the 20 known is close") {
		t.Errorf("other name: %q", got)
	}
}
