package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/resolve"
)

// A guardrail's verdict on a value is made once, here, for both its
// enforcers: the compile asks it for each VM of Git and reports each
// refusal at the VM's intent field; the cluster's policy holds the
// verdicts for the tenant's values (Allowances), made on a VM of the
// tenant that Git does not know (hypothetical), and refuses an object
// whose value is not among the allowed ones with the same reasons.

// refusal is one reason a value is refused: the intent field it stands at
// (relative to the VM's document, or the tenant's for Tenant) and the
// message.
type refusal struct {
	Field   string
	Message string
	// Tenant: the field is the tenant's (its document).
	Tenant bool
}

// judge holds what every verdict reads: the model, the evidence it is
// judged against and the excluded features the Platform enables.
type judge struct {
	m   *resolve.Model
	ctx eligibility.Context
	on  []string
}

func newJudge(m *resolve.Model) *judge {
	return &judge{m: m, ctx: eligibility.ContextOf(m), on: enabled(m)}
}

// hypothetical is a VM of tenant t that Git does not know, as the
// cluster's policy judges a VM a tenant writes itself: narrowed evidence
// applies to it only through its tenant and size, never through a VM name.
// set fills what a verdict reads.
func (j *judge) hypothetical(t *resolve.Tenant, set func(vm *resolve.VM)) *resolve.VM {
	vm := &resolve.VM{VM: decode.VM{VM: &api.VM{}}, Tenant: t, Namespace: t.Name, Tier: cmp.Or(t.Spec.Tier, resolve.TierStandard)}
	vm.Metadata.Namespace = t.Name
	cat := j.m.Catalog
	if st, ok := cat.StorageProfiles.Get(cat.DefaultStorage); ok {
		vm.RootStorage = resolve.Storage{Name: cat.DefaultStorage, StorageProfile: st}
	}
	set(vm)
	return vm
}

// allowRefusal refuses a catalog entry the tenant's allow list does not
// admit (resolve.Allows): listed names or patterns, or, without a list,
// any entry that is not restricted.
func allowRefusal(t *resolve.Tenant, field, what, name string, list []string, restricted bool) []refusal {
	if resolve.Allows(list, name, restricted) {
		return nil
	}
	why := fmt.Sprintf("tenant %q does not allow it", t.Name)
	if len(list) == 0 {
		why = fmt.Sprintf("it is restricted and tenant %q does not list it in spec.allow", t.Name)
	} else {
		why += fmt.Sprintf(" (allowed: %s)", strings.Join(list, ", "))
	}
	return []refusal{{Field: field, Message: fmt.Sprintf("%s %q: %s", what, name, why)}}
}

func allowList(t *resolve.Tenant, pick func(*api.TenantAllow) []string) []string {
	if a := t.Spec.Allow; a != nil {
		return pick(a)
	}
	return nil
}

// excluder judges the features a VM uses that the platform baseline
// excludes (target architecture, workload eligibility matrix: "GPU/vGPU,
// SR-IOV, PCI passthrough, or other hardware passthrough: Excluded from
// initial baseline; separate architecture and vendor support assessment"),
// unless the Platform enables them for prepared nodes and an assessment of
// each on the Platform's exact version is recorded, in every tier.
type excluder struct {
	j  *judge
	vm *resolve.VM
	// refused: one refusal per field and feature the Platform does not
	// enable; missing: the assessments without evidence that counts.
	refused map[string]bool
	missing map[string]eligibility.Judged
	out     []refusal
}

func (j *judge) excluder(vm *resolve.VM) *excluder {
	return &excluder{j: j, vm: vm, refused: map[string]bool{}}
}

// need refuses a feature the Platform does not enable (once per field and
// feature), or one whose assessment is missing.
func (e *excluder) need(feature, field, what, assessed string) {
	if !slices.Contains(e.j.on, feature) {
		if !e.refused[field+" "+feature] {
			e.refused[field+" "+feature] = true
			e.out = append(e.out, refusal{Field: field, Message: fmt.Sprintf("%s, which is excluded from the platform baseline (a Platform enables it for prepared nodes with spec.enable: [%s])", what, feature)})
		}
		return
	}
	if e.missing == nil {
		e.missing = map[string]eligibility.Judged{}
		for _, j := range eligibility.Assessments(e.vm, e.j.ctx) {
			if j.Evidence == "" {
				e.missing[j.Feature] = j
			}
		}
	}
	j, ok := e.missing[assessed]
	if !ok || e.vm.Doc.Shadows(field) {
		return
	}
	e.out = append(e.out, refusal{Field: field, Message: fmt.Sprintf("%s, which is excluded from the platform baseline: the Platform enables %s, but the workload eligibility matrix asks for a separate architecture and vendor support assessment first, in every tier, and %s has none that counts: %s (record an Evidence of check %s with covers.class hardware-passthrough, covers.feature %q and covers.platformVersion %s)",
		what, feature, assessed, j.Why, eligibility.AssessmentCheck, assessed, cmp.Or(e.j.ctx.PlatformVersion, "<the Platform's version>"))})
}

// device judges one passed-through device (a GPU or host device of the
// VM, or a GPU of its size): feature gpu or hostDevices enabled, the
// device one the tenant is entitled to and the cluster permits, and
// assessed.
func (e *excluder) device(d resolve.DeviceUse) {
	feature, what, field := "hostDevices", "host (PCI) device passthrough", d.List
	if d.GPU {
		feature, what = "gpu", "GPU passthrough"
		if d.List == "spec.size" {
			what = fmt.Sprintf("size %q passes GPUs through", e.vm.SizeName)
		}
	}
	if slices.Contains(e.j.on, feature) {
		// An assessment counts only for a device the tenant may use and
		// the cluster permits.
		refused := e.j.entitled(e.vm, d)
		e.out = append(e.out, refused...)
		if len(refused) > 0 || d.ResourceName == "" || e.vm.Doc.Shadows(d.Field) {
			return
		}
		what, field = fmt.Sprintf("%s of %q", what, d.ResourceName), d.Field
	}
	e.need(feature, field, what, d.ResourceName)
}

// entitled refuses a device the tenant is not entitled to or the cluster
// does not permit. The target architecture grants tenants "no implied
// device entitlement" and no "unrestricted privileged-device access"
// (workload eligibility matrix; authorization and lifecycle boundaries): a
// tenant uses only the devices its spec.allow.devices names. KubeVirt
// v1.8.4's virt-controller renders no virt-launcher pod for a VMI whose
// deviceName is not in the KubeVirt CR's permittedHostDevices
// (pkg/virt-controller/services/renderresources.go,
// validatePermittedHostDevices), which HCO fills from the HyperConverged
// (the Platform's spec.hostDevices).
func (j *judge) entitled(vm *resolve.VM, d resolve.DeviceUse) []refusal {
	if d.ResourceName == "" || vm.Doc.Shadows(d.Field) {
		return nil
	}
	var out []refusal
	if t := vm.Tenant; !t.AllowsDevice(d.ResourceName) {
		why := fmt.Sprintf("tenant %q allows no devices (a platform team entitles it in the tenant's spec.allow.devices)", t.Name)
		if a := t.Spec.Allow; a != nil && len(a.Devices) > 0 {
			why = fmt.Sprintf("tenant %q does not allow it (spec.allow.devices: %s)", t.Name, strings.Join(a.Devices, ", "))
			if s, near := diag.Nearest(d.ResourceName, a.Devices); near {
				why += fmt.Sprintf("; did you mean %q?", s)
			}
		}
		out = append(out, refusal{Field: d.Field, Message: fmt.Sprintf("device %q: %s", d.ResourceName, why)})
	}
	if p := j.m.Platform; p != nil && !slices.Contains(p.PermittedDevices(), d.ResourceName) {
		permitted := p.PermittedDevices()
		which := "the Platform's spec.hostDevices permits none"
		if len(permitted) > 0 {
			which = "the Platform's spec.hostDevices permits " + strings.Join(permitted, ", ")
			if s, near := diag.Nearest(d.ResourceName, permitted); near {
				which += fmt.Sprintf("; did you mean %q?", s)
			}
		}
		out = append(out, refusal{Field: d.Field, Message: fmt.Sprintf("device %q is not permitted on cluster %s, so KubeVirt would start no virt-launcher pod for the VM (%s)", d.ResourceName, p.Name, which)})
	}
	return out
}

// size judges the VM's size (rule instancetype): one the tenant may use,
// installed by the platform's release, without an excluded feature the
// Platform does not enable and assess (its GPUs, dedicated CPUs, huge
// pages).
func (j *judge) size(vm *resolve.VM) []refusal {
	s := vm.Size
	if s == nil {
		return nil
	}
	t := vm.Tenant
	out := allowRefusal(t, "spec.size", "size", vm.SizeName, allowList(t, func(a *api.TenantAllow) []string { return a.Sizes }), s.Spec.Restricted)
	e := j.excluder(vm)
	for _, d := range vm.Devices() {
		if d.List == "spec.size" {
			e.device(d)
		}
	}
	if s.Spec.DedicatedCPU {
		e.need("dedicatedCPU", "spec.size", fmt.Sprintf("size %q needs dedicated CPUs", vm.SizeName), "dedicatedCPU")
	}
	if s.Spec.Hugepages != "" {
		e.need("hugepages", "spec.size", fmt.Sprintf("size %q needs %s huge pages", vm.SizeName, s.Spec.Hugepages), "hugepages")
	}
	out = append(out, e.out...)
	if p := j.m.Platform; p != nil && s.Spec.Builtin && !p.Release.HasBuiltinSize(vm.SizeName) {
		out = append(out, refusal{Field: "spec.size", Message: fmt.Sprintf("size %q is not installed by OpenShift Virtualization %s (KubeVirt %s deploys common-instancetypes %s, which has no such instance type)",
			vm.SizeName, p.Release.Minor, p.Release.KubeVirt, p.Release.CommonInstancetypes)})
	}
	return out
}

// devices judges the VM's own GPUs and host devices (rule devices).
func (j *judge) devices(vm *resolve.VM) []refusal {
	e := j.excluder(vm)
	for _, d := range vm.Devices() {
		if d.List != "spec.size" {
			e.device(d)
		}
	}
	return e.out
}

// sriov judges the VM's SR-IOV networks (rule sriov): excluded unless the
// Platform enables sriov and it is assessed.
func (j *judge) sriov(vm *resolve.VM) []refusal {
	e := j.excluder(vm)
	for i, n := range vm.Networks {
		if n.NetworkProfile != nil && n.Spec.Type == api.NetworkSRIOV {
			e.need("sriov", fmt.Sprintf("spec.networks[%d]", i), fmt.Sprintf("network %q is SR-IOV", n.Name), "sriov")
		}
	}
	return e.out
}

// confidential refuses memory encryption: confidential VMs cannot be
// enabled at all (workload eligibility matrix: "Excluded ... Not part of
// the 4.22 baseline").
func (j *judge) confidential(vm *resolve.VM) []refusal {
	c := vm.Spec.Confidential
	if c == "" {
		return nil
	}
	return []refusal{{Field: "spec.confidential", Message: fmt.Sprintf("confidential VMs (%s) are excluded from the platform baseline: memory encryption is a Technology Preview in OpenShift Virtualization and cannot be enabled; remove spec.confidential", c)}}
}

// image judges the VM's image (rule image-source): a catalog name, not a
// URL, and one the tenant may use.
func (j *judge) image(vm *resolve.VM) []refusal {
	if vm.Image == nil {
		if strings.Contains(vm.ImageName, "://") {
			return []refusal{{Field: "spec.image", Message: "an image is a catalog name, not a URL: the platform team adds images to the catalog with a pinned digest or checksum (see `virtc catalog`)"}}
		}
		return nil
	}
	t := vm.Tenant
	return allowRefusal(t, "spec.image", "image", vm.ImageName, allowList(t, func(a *api.TenantAllow) []string { return a.Images }), vm.Image.Spec.Restricted)
}

// architecture refuses an image for a CPU architecture other than amd64
// (rule architecture): the platform baseline is a dedicated x86 worker
// pool, and no class of the eligibility matrix admits another.
func (j *judge) architecture(vm *resolve.VM) []refusal {
	var out []refusal
	for _, r := range eligibility.Meets("non-x86", vm) {
		out = append(out, refusal{Field: "spec.image", Message: fmt.Sprintf("%s: the platform baseline is a dedicated x86 (amd64) worker pool, and no class of the eligibility matrix admits another architecture (use an amd64 image)", r.Text)})
	}
	return out
}

// cdroms judges the VM's CD-ROMs' container disks (rule container-disks).
func (j *judge) cdroms(vm *resolve.VM) []refusal {
	t := vm.Tenant
	var out []refusal
	for i, cd := range vm.Spec.CDROMs {
		c, ok := j.m.Catalog.ContainerDisks.Get(cd.ContainerDisk)
		if !ok {
			continue
		}
		out = append(out, allowRefusal(t, fmt.Sprintf("spec.cdroms[%d].containerDisk", i), "container disk", cd.ContainerDisk, allowList(t, func(a *api.TenantAllow) []string { return a.Images }), c.Spec.Restricted)...)
	}
	return out
}

// storage judges the storage profiles of the VM's data disks (rule
// storage-class); the root disk's is the catalog's default, which every
// tenant may use.
func (j *judge) storage(vm *resolve.VM) []refusal {
	t := vm.Tenant
	var out []refusal
	for _, d := range vm.Disks {
		if d.Storage.StorageProfile == nil || d.Disk.Storage == "" {
			continue
		}
		out = append(out, allowRefusal(t, d.Field+".storage", "storage profile", d.Disk.Storage, allowList(t, func(a *api.TenantAllow) []string { return a.Storage }), d.Storage.Spec.Restricted)...)
	}
	return out
}

// networks judges the VM's network profiles (rule networks): the pod
// network is open to every tenant; an additional network (doc 000:
// "available only for approved workload needs", "not enabled by default")
// only to a tenant whose spec.allow.networks names it.
func (j *judge) networks(vm *resolve.VM) []refusal {
	t := vm.Tenant
	var out []refusal
	for _, n := range vm.Networks {
		if n.NetworkProfile == nil || t.AllowsNetwork(n.Name, n.NetworkProfile) {
			continue
		}
		field := n.Field
		list := allowList(t, func(a *api.TenantAllow) []string { return a.Networks })
		allowed := "it allows no additional network"
		if len(list) > 0 {
			allowed = "allowed: " + strings.Join(list, ", ")
		}
		out = append(out, refusal{Field: field, Message: fmt.Sprintf("network profile %q is an additional network (%s), available only to tenants that list it: tenant %q does not (%s; the platform team adds it to the Tenant's spec.allow.networks for an approved need, or use the pod network)", n.Name, n.Spec.Type, t.Name, allowed)})
	}
	return out
}

// pool judges the VM's worker pool (rule placement).
func (j *judge) pool(vm *resolve.VM) []refusal {
	if vm.Pool == nil {
		return nil
	}
	t := vm.Tenant
	return allowRefusal(t, "spec.pool", "worker pool", vm.Pool.Name, allowList(t, func(a *api.TenantAllow) []string { return a.Pools }), vm.Pool.Spec.Restricted)
}
