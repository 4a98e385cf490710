package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/virtc/virtc/fn/api"
	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/resolve"
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

// excluded refuses what the platform baseline excludes, unless the
// Platform enables it: passthrough devices, SR-IOV, dedicated CPUs and huge
// pages need prepared nodes; confidential VMs cannot be enabled at all.
func excluded(m *resolve.Model, vm *resolve.VM, diags *diag.List) {
	on := enabled(m)
	need := func(feature, field, what string) {
		if slices.Contains(on, feature) {
			return
		}
		diags.Errorf(vm.Doc.Pos(field), field, "%s, which is excluded from the platform baseline (a Platform enables it for prepared nodes with spec.enable: [%s])", what, feature)
	}
	if s := vm.Size; s != nil {
		if len(s.Spec.GPUs) > 0 {
			need("gpu", "spec.size", fmt.Sprintf("size %q passes GPUs through", vm.SizeName))
		}
		if s.Spec.DedicatedCPU {
			need("dedicatedCPU", "spec.size", fmt.Sprintf("size %q needs dedicated CPUs", vm.SizeName))
		}
		if s.Spec.Hugepages != "" {
			need("hugepages", "spec.size", fmt.Sprintf("size %q needs %s huge pages", vm.SizeName, s.Spec.Hugepages))
		}
	}
	if len(vm.Spec.GPUs) > 0 {
		need("gpu", "spec.gpus", "GPU passthrough")
	}
	if len(vm.Spec.HostDevices) > 0 {
		need("hostDevices", "spec.hostDevices", "host (PCI) device passthrough")
	}
	for i, n := range vm.Networks {
		if n.Spec.Type == api.NetworkSRIOV {
			need("sriov", fmt.Sprintf("spec.networks[%d]", i), fmt.Sprintf("network %q is SR-IOV", n.Name))
		}
	}
	if c := vm.Spec.Confidential; c != "" {
		diags.Errorf(vm.Doc.Pos("spec.confidential"), "spec.confidential", "confidential VMs (%s) are excluded from the platform baseline: memory encryption is a Technology Preview in OpenShift Virtualization and cannot be enabled; remove spec.confidential", c)
	}
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

// secretPatterns find secret material in inline cloud-init data.
var secretPatterns = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`(?im)^\s*(chpasswd|plain_text_passwd|hashed_passwd|passwd|password)\s*:`), "a password"},
	{regexp.MustCompile(`\$(1|2[aby]?|5|6|y|gy|7)\$[^\s:]{8,}`), "a password hash"},
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), "a private key"},
	{regexp.MustCompile(`(?im)^\s*[a-z0-9_-]*(token|secret|api_?key|access_?key)[a-z0-9_-]*\s*[:=]`), "a token or secret key"},
	{regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`), "an AWS access key"},
	{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}\b`), "a GitHub token"},
}

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
	for _, p := range secretPatterns {
		if p.re.MatchString(ci.UserData) {
			found = append(found, p.what)
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
