package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/virtc/virtc/fn/api"
	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/eligibility"
	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/rules/secret"
	"github.com/virtc/virtc/fn/versions"
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

// excluded refuses what the platform baseline excludes (target
// architecture, workload eligibility matrix: "GPU/vGPU, SR-IOV, PCI
// passthrough, or other hardware passthrough: Excluded from initial
// baseline; separate architecture and vendor support assessment"), unless
// the Platform enables it for prepared nodes and an assessment of it on the
// Platform's exact version is recorded, in every tier. Confidential VMs
// cannot be enabled at all ("Excluded ... Not part of the 4.22 baseline").
func excluded(m *resolve.Model, vm *resolve.VM, ctx eligibility.Context, diags *diag.List) {
	on := enabled(m)
	// missing: the assessments without evidence that counts, by feature.
	var missing map[string]eligibility.Judged
	refused := map[string]bool{}
	// need reports a feature the Platform does not enable (once per field
	// and feature), or one whose assessment is missing.
	need := func(feature, field, what, assessed string) {
		if !slices.Contains(on, feature) {
			if !refused[field+" "+feature] {
				refused[field+" "+feature] = true
				diags.Errorf(vm.Doc.Pos(field), field, "%s, which is excluded from the platform baseline (a Platform enables it for prepared nodes with spec.enable: [%s])", what, feature)
			}
			return
		}
		if missing == nil {
			missing = map[string]eligibility.Judged{}
			for _, j := range eligibility.Assessments(vm, ctx) {
				if j.Evidence == "" {
					missing[j.Feature] = j
				}
			}
		}
		j, ok := missing[assessed]
		if !ok || vm.Doc.Shadows(field) {
			return
		}
		diags.Errorf(vm.Doc.Pos(field), field, "%s, which is excluded from the platform baseline: the Platform enables %s, but the workload eligibility matrix asks for a separate architecture and vendor support assessment first, in every tier, and %s has none that counts: %s (record an Evidence of check %s with covers.class hardware-passthrough, covers.feature %q and covers.platformVersion %s)",
			what, feature, assessed, j.Why, eligibility.AssessmentCheck, assessed, cmp.Or(ctx.PlatformVersion, "<the Platform's version>"))
	}
	for _, d := range vm.Devices() {
		feature, what, field := "hostDevices", "host (PCI) device passthrough", d.List
		if d.GPU {
			feature, what = "gpu", "GPU passthrough"
			if d.List == "spec.size" {
				what = fmt.Sprintf("size %q passes GPUs through", vm.SizeName)
			}
		}
		if slices.Contains(on, feature) {
			// An assessment counts only for a device the tenant may use
			// and the cluster permits.
			if !device(m, vm, d, diags) {
				continue
			}
			what, field = fmt.Sprintf("%s of %q", what, d.ResourceName), d.Field
		}
		need(feature, field, what, d.ResourceName)
	}
	if s := vm.Size; s != nil {
		if s.Spec.DedicatedCPU {
			need("dedicatedCPU", "spec.size", fmt.Sprintf("size %q needs dedicated CPUs", vm.SizeName), "dedicatedCPU")
		}
		if s.Spec.Hugepages != "" {
			need("hugepages", "spec.size", fmt.Sprintf("size %q needs %s huge pages", vm.SizeName, s.Spec.Hugepages), "hugepages")
		}
	}
	for i, n := range vm.Networks {
		if n.NetworkProfile != nil && n.Spec.Type == api.NetworkSRIOV {
			need("sriov", fmt.Sprintf("spec.networks[%d]", i), fmt.Sprintf("network %q is SR-IOV", n.Name), "sriov")
		}
	}
	if c := vm.Spec.Confidential; c != "" {
		diags.Errorf(vm.Doc.Pos("spec.confidential"), "spec.confidential", "confidential VMs (%s) are excluded from the platform baseline: memory encryption is a Technology Preview in OpenShift Virtualization and cannot be enabled; remove spec.confidential", c)
	}
}

// device refuses a device the tenant is not entitled to or the cluster
// does not permit, and reports whether it may be used. The target
// architecture grants tenants "no implied device entitlement" and no
// "unrestricted privileged-device access" (workload eligibility matrix;
// authorization and lifecycle boundaries): a tenant uses only the devices
// its spec.allow.devices names. KubeVirt v1.8.4's virt-controller renders
// no virt-launcher pod for a VMI whose deviceName is not in the KubeVirt
// CR's permittedHostDevices (pkg/virt-controller/services/renderresources.go,
// validatePermittedHostDevices), which HCO fills from the HyperConverged
// (the Platform's spec.hostDevices).
func device(m *resolve.Model, vm *resolve.VM, d resolve.DeviceUse, diags *diag.List) bool {
	if d.ResourceName == "" || vm.Doc.Shadows(d.Field) {
		return false
	}
	ok := true
	if t := vm.Tenant; !t.AllowsDevice(d.ResourceName) {
		ok = false
		why := fmt.Sprintf("tenant %q allows no devices (a platform team entitles it in the tenant's spec.allow.devices)", t.Name)
		if a := t.Spec.Allow; a != nil && len(a.Devices) > 0 {
			why = fmt.Sprintf("tenant %q does not allow it (spec.allow.devices: %s)", t.Name, strings.Join(a.Devices, ", "))
			if s, near := diag.Nearest(d.ResourceName, a.Devices); near {
				why += fmt.Sprintf("; did you mean %q?", s)
			}
		}
		diags.Errorf(vm.Doc.Pos(d.Field), d.Field, "device %q: %s", d.ResourceName, why)
	}
	if p := m.Platform; p != nil && !slices.Contains(p.PermittedDevices(), d.ResourceName) {
		ok = false
		permitted := p.PermittedDevices()
		which := "the Platform's spec.hostDevices permits none"
		if len(permitted) > 0 {
			which = "the Platform's spec.hostDevices permits " + strings.Join(permitted, ", ")
			if s, near := diag.Nearest(d.ResourceName, permitted); near {
				which += fmt.Sprintf("; did you mean %q?", s)
			}
		}
		diags.Errorf(vm.Doc.Pos(d.Field), d.Field, "device %q is not permitted on cluster %s, so KubeVirt would start no virt-launcher pod for the VM (%s)", d.ResourceName, p.Name, which)
	}
	return ok
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

// limits refuses names the cluster cannot hold and sizes beyond the
// platform's bounds.
func limits(m *resolve.Model, vm *resolve.VM, diags *diag.List) {
	maxDisks, maxSize := int64(DefaultMaxDataDisks), defaultMaxDiskSize
	if m.Platform != nil && m.Platform.Obj.Spec.Limits != nil {
		l := m.Platform.Obj.Spec.Limits
		if l.MaxDataDisks != nil {
			maxDisks = *l.MaxDataDisks
		}
		if l.MaxDiskSize != nil {
			maxSize = l.MaxDiskSize.Value()
		}
	}
	if n := int64(len(vm.Disks)); n > maxDisks {
		diags.Errorf(vm.Doc.Pos("spec.disks"), "spec.disks", "%d data disks, more than the platform allows (%d)", n, maxDisks)
	}
	if vm.RootDisk.Value() > maxSize {
		diags.Errorf(vm.Doc.Pos("spec.rootDisk"), "spec.rootDisk", "root disk %s is larger than the platform allows (%s)", vm.RootDisk.String(), humanBytes(maxSize))
	}
	// CDI refuses DataVolume names longer than a DNS label: they end up in
	// label values. Data disks' claims keep the same limit.
	if name := vm.Name + "-root"; len(name) > 63 {
		diags.Errorf(vm.Doc.Pos("metadata.name"), "metadata.name", "the root disk would be named %q (%d characters, at most 63): shorten the VM name", name, len(name))
	}
	for i, d := range vm.Disks {
		path := fmt.Sprintf("spec.disks[%d]", i)
		if d.Size.Value() > maxSize {
			diags.Errorf(vm.Doc.Pos(path+".size"), path+".size", "disk %s is larger than the platform allows (%s)", d.Size.String(), humanBytes(maxSize))
		}
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

// inlineSecrets refuses inline cloud-init data that holds secret material.
func inlineSecrets(vm *resolve.VM, diags *diag.List) {
	ci := vm.Spec.CloudInit
	if ci == nil || ci.UserData == "" {
		return
	}
	if ci.UserDataSecret != "" {
		diags.Errorf(vm.Doc.Pos("spec.cloudInit.userData"), "spec.cloudInit.userData", "set userData or userDataSecret, not both")
	}
	var found []string
	for i, re := range secretRegexps() {
		if re.MatchString(ci.UserData) {
			found = append(found, secret.Patterns[i].What)
		}
	}
	if len(found) > 0 {
		diags.Errorf(vm.Doc.Pos("spec.cloudInit.userData"), "spec.cloudInit.userData", "inline cloud-init holds %s: secrets must not be in Git (put the user data in a Secret and name it in spec.cloudInit.userDataSecret)", strings.Join(found, ", "))
	}
}

// urlImage explains an image given as a URL instead of a catalog name.
func urlImage(vm *resolve.VM, diags *diag.List) {
	if vm.Image != nil || !strings.Contains(vm.ImageName, "://") {
		return
	}
	diags.Errorf(vm.Doc.Pos("spec.image"), "spec.image", "an image is a catalog name, not a URL: the platform team adds images to the catalog with a pinned digest or checksum (see `virtc catalog`)")
}
