package diff

import (
	"strings"
	"testing"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/resolve"
)

// TestSafetyPoints: a snapshotBefore or backupBefore added (or given a new
// label) in the same change as a change of the VM's size, image or disks,
// or of anything that restarts, starts, stops or live-updates it, is
// refused; alone, or with a change that leaves the running VM alone (its
// labels), or already merged, it is not. The snapshot and the backup are
// at sync wave 3, the VM at wave 2 (internal/render/meta.go syncWaves).
func TestSafetyPoints(t *testing.T) {
	vm := func(snapshot, backup string) *resolve.VM {
		v := &resolve.VM{VM: decode.VM{VM: &api.VM{}}, Name: "db01", Namespace: "shop"}
		v.Spec.SnapshotBefore, v.Spec.BackupBefore = snapshot, backup
		return v
	}
	for _, tc := range []struct {
		name     string
		old, new *resolve.VM
		changes  []Change
		refused  string // the risky change the refusal names; "" for none
		reported bool   // a snapshotBefore/backupBefore change is listed
	}{
		{"snapshot alone", vm("", ""), vm("a", ""), nil, "", true},
		{"snapshot and labels", vm("", ""), vm("a", ""), []Change{{Field: "labels", Effect: EffectNone}}, "", true},
		{"snapshot and size", vm("", ""), vm("a", ""), []Change{{Field: "size", Effect: EffectRestart}}, "size", true},
		{"snapshot and live size", vm("", ""), vm("a", ""), []Change{{Field: "size", Effect: EffectLive}}, "size", true},
		{"snapshot and stop", vm("", ""), vm("a", ""), []Change{{Field: "runStrategy", Effect: EffectStops}}, "runStrategy", true},
		{"snapshot and cloud-init", vm("", ""), vm("a", ""), []Change{{Field: "cloudInit", Effect: EffectRestart}}, "cloudInit", true},
		{"new label and root disk", vm("a", ""), vm("b", ""), []Change{{Field: "rootDisk", Effect: EffectManual}}, "rootDisk", true},
		{"backup and image", vm("", ""), vm("", "x"), []Change{{Field: "image", Effect: EffectNone}}, "image", true},
		{"backup and disk", vm("", ""), vm("", "x"), []Change{{Field: "disk", Name: "data", Effect: EffectRestart}}, "disk data", true},
		{"snapshot merged earlier", vm("a", ""), vm("a", ""), []Change{{Field: "size", Effect: EffectRestart}}, "", false},
		{"snapshot removed", vm("a", ""), vm("", ""), []Change{{Field: "size", Effect: EffectRestart}}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &vmChange{comparison: &comparison{report: &Report{}}, old: tc.old, new: tc.new}
			v.subject.Changes = append(v.subject.Changes, tc.changes...)
			v.safetyPoints()
			refusals := v.report.Refusals
			switch {
			case tc.refused == "" && len(refusals) > 0:
				t.Errorf("refused: %v", refusals)
			case tc.refused != "" && (len(refusals) != 1 || refusals[0].Rule != RuleSafetyPointSameChange || !strings.Contains(refusals[0].Message, "its "+tc.refused+":")):
				t.Errorf("refusals %v, want one %s naming %q", refusals, RuleSafetyPointSameChange, tc.refused)
			}
			listed := len(v.subject.Changes) > len(tc.changes)
			if listed != tc.reported {
				t.Errorf("listed %v, want %v: %v", listed, tc.reported, v.subject.Changes)
			}
		})
	}
}
