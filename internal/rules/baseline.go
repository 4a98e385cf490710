package rules

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/secret"
	"github.com/virtc/virtc/internal/versions"
)

// Default limits when the Platform sets none.
const (
	DefaultMaxDataDisks = 16
	defaultMaxDiskSize  = int64(16) << 40
)

// enabled lists the excluded features the Platform enables.
func enabled(m *resolve.Model) []string {
	if m.Platform == nil {
		return nil
	}
	return m.Platform.Obj.Spec.Enable
}

// previewGates refuses a preview feature gate the Platform accepts without
// a recorded support review: the target architecture excludes Technology
// Preview features from the 4.22 baseline ("Separate approved scope after
// product maturity and support review", workload eligibility matrix;
// Decisions: "Excluded: Technology Preview features"), and a Developer
// Preview is further from support still. Every HyperConverged gate of HCO
// v1.18.1 is one or the other (api/v1/hyperconverged_types.go,
// FeatureGates "Phase:" lines; catalog/versions/versions.yaml).
func previewGates(m *resolve.Model, ctx eligibility.Context, diags *diag.List) {
	p := m.Platform
	if p == nil {
		return
	}
	for i, g := range p.Obj.Spec.AcceptPreviewGates {
		field := fmt.Sprintf("spec.acceptPreviewGates[%d]", i)
		phase := p.Release.GatePhase(g)
		if (phase != versions.PhaseAlpha && phase != versions.PhaseBeta) || p.Doc.Shadows(field) {
			continue // refused by the Platform's resolution
		}
		j := eligibility.JudgeGate(g, ctx)
		if j.Evidence != "" {
			continue
		}
		diags.Errorf(p.Doc.Pos(field), field, "feature gate %q is %s in OpenShift Virtualization %s, which the target architecture excludes from the baseline until a separate support review approves its scope, and it has none that counts: %s (record an Evidence of check %s with covers.class %s, covers.feature %q and covers.platformVersion %s, or remove the gate)",
			g, resolve.PreviewPhase(phase), p.Release.Minor, j.Why, eligibility.PreviewCheck, eligibility.PreviewClass, g, ctx.PlatformVersion)
	}
}

// previewInProduction refuses a production VM that runs a preview feature:
// the target architecture leaves Technology Preview features out of the
// 4.22 baseline ("Not part of the 4.22 baseline", workload eligibility
// matrix), so no availability commitment rests on one; a standard-tier VM
// may run it once the gate's support review is recorded (previewGates).
func previewInProduction(vm *resolve.VM, diags *diag.List) {
	if len(vm.PreviewFeatures) == 0 || vm.Tier != resolve.TierProduction || vm.Doc.Shadows("spec.tier") {
		return
	}
	var uses []string
	for _, u := range vm.PreviewFeatures {
		uses = append(uses, fmt.Sprintf("feature gate %s (%s) applies to it: %s", u.Gate, resolve.PreviewPhase(u.Phase), u.Why))
	}
	doc := vm.Doc
	if vm.Spec.Tier == "" {
		doc = vm.Tenant.Doc
	}
	diags.Errorf(doc.Pos("spec.tier"), "spec.tier", "VM %s/%s is production tier but runs a preview feature, which is not part of the platform baseline: %s (use tier standard, or remove the gate from the Platform)",
		vm.Namespace, vm.Name, strings.Join(uses, "; "))
}

// diskLimits refuses more data disks, and disks larger, than the platform
// allows (rule disk-limits).
func diskLimits(m *resolve.Model, vm *resolve.VM, diags *diag.List) {
	maxDisks, maxSize := platformLimits(m)
	if n := int64(len(vm.Disks)); n > maxDisks {
		diags.Errorf(vm.Doc.Pos("spec.disks"), "spec.disks", "%d data disks, more than the platform allows (%d)", n, maxDisks)
	}
	if vm.RootDisk.Value() > maxSize {
		diags.Errorf(vm.Doc.Pos("spec.rootDisk"), "spec.rootDisk", "root disk %s is larger than the platform allows (%s)", vm.RootDisk.String(), humanBytes(maxSize))
	}
	for i, d := range vm.Disks {
		path := fmt.Sprintf("spec.disks[%d]", i)
		if d.Size.Value() > maxSize {
			diags.Errorf(vm.Doc.Pos(path+".size"), path+".size", "disk %s is larger than the platform allows (%s)", d.Size.String(), humanBytes(maxSize))
		}
	}
}

// platformLimits are the Platform's limits, or the defaults.
func platformLimits(m *resolve.Model) (maxDisks, maxSize int64) {
	maxDisks, maxSize = int64(DefaultMaxDataDisks), defaultMaxDiskSize
	if m.Platform != nil && m.Platform.Obj.Spec.Limits != nil {
		l := m.Platform.Obj.Spec.Limits
		if l.MaxDataDisks != nil {
			maxDisks = *l.MaxDataDisks
		}
		if l.MaxDiskSize != nil {
			maxSize = l.MaxDiskSize.Value()
		}
	}
	return maxDisks, maxSize
}

// names refuses names the cluster cannot hold: CDI refuses DataVolume
// names longer than a DNS label (they end up in label values), and data
// disks' claims keep the same limit.
func names(vm *resolve.VM, diags *diag.List) {
	if name := vm.Name + "-root"; len(name) > 63 {
		diags.Errorf(vm.Doc.Pos("metadata.name"), "metadata.name", "the root disk would be named %q (%d characters, at most 63): shorten the VM name", name, len(name))
	}
	for i, d := range vm.Disks {
		path := fmt.Sprintf("spec.disks[%d]", i)
		if name := vm.Name + "-" + d.Name; len(name) > 63 {
			diags.Errorf(vm.Doc.Pos(path+".name"), path+".name", "the disk would be named %q (%d characters, at most 63): shorten the VM or disk name", name, len(name))
		}
	}
}

// secretRegexps are compiled on first use: a process that checks no
// cloud-init (a cached virtc cmp call) does not pay for them.
var secretRegexps = sync.OnceValue(func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(secret.Patterns))
	for i, p := range secret.Patterns {
		out[i] = regexp.MustCompile(p.Pattern)
	}
	return out
})

// bothUserData refuses inline user data beside a Secret's.
func bothUserData(vm *resolve.VM, diags *diag.List) {
	if ci := vm.Spec.CloudInit; ci != nil && ci.UserData != "" && ci.UserDataSecret != "" {
		diags.Errorf(vm.Doc.Pos("spec.cloudInit.userData"), "spec.cloudInit.userData", "set userData or userDataSecret, not both")
	}
}
