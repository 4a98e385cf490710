package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/resolve"
)

// Fits reports whether a size meets a preference's requirements (KubeVirt
// v1.8.4 pkg/instancetype/preference/requirements: the instance type's
// guest vCPUs and memory are at least the preference's).
func Fits(size api.SizeSpec, r *api.PreferenceRequirements) bool {
	if r == nil {
		return true
	}
	if size.CPU < r.CPU {
		return false
	}
	return r.Memory == nil || size.Memory.Cmp(*r.Memory) >= 0
}

// requirements refuses a VM whose size is below its image's preference's
// requirements: KubeVirt's VM admission denies it ("failure checking
// preference requirements"). The message names the sizes the tenant may
// use that fit, smallest first.
func requirements(m *resolve.Model, vm *resolve.VM, diags *diag.List) {
	if vm.Size == nil {
		return
	}
	if p := m.Platform; p != nil && vm.Size.Spec.Builtin && !p.Release.HasBuiltinSize(vm.SizeName) {
		// Not installed: size (decide.go) refuses it.
		return
	}
	if vm.Preference == nil {
		return
	}
	r := vm.Preference.Spec.Requirements
	if Fits(vm.Size.Spec, r) {
		return
	}
	need := []string{}
	if r.CPU > 0 {
		need = append(need, plural(r.CPU, "vCPU"))
	}
	if r.Memory != nil {
		need = append(need, r.Memory.String()+" of memory")
	}
	fit := FittingSizes(m, vm.Tenant, r, series(vm.SizeName), 3)
	hint := "no size the tenant may use fits"
	if len(fit) > 0 {
		hint = "sizes that fit: " + strings.Join(fit, ", ")
	}
	diags.Errorf(vm.Doc.Pos("spec.size"), "spec.size", "size %q (%s, %s) is below what image %q needs: its preference %q requires at least %s, and KubeVirt refuses the VM (%s)",
		vm.SizeName, plural(vm.Size.Spec.CPU, "vCPU"), vm.Size.Spec.Memory.String(), vm.ImageName, vm.Image.Spec.Preference, strings.Join(need, " and "), hint)
}

// series is the series of a size name (u1 of u1.small).
func series(name string) string {
	s, _, _ := strings.Cut(name, ".")
	return s
}

// FittingSizes lists up to n sizes that meet r, that tenant t may use and
// that the platform baseline does not exclude, smallest first (by memory,
// then vCPUs, then name), those of the series prefer first.
func FittingSizes(m *resolve.Model, t *resolve.Tenant, r *api.PreferenceRequirements, prefer string, n int) []string {
	on := enabled(m)
	type cand struct {
		name string
		spec api.SizeSpec
	}
	var cands []cand
	for _, name := range m.Catalog.Sizes.Names() {
		s, _ := m.Catalog.Sizes.Get(name)
		if !Fits(s.Spec, r) || !t.AllowsSize(name, s.Spec.Restricted) || len(baselineNeeds(s.Spec, on)) > 0 {
			continue
		}
		if p := m.Platform; p != nil && s.Spec.Builtin && !p.Release.HasBuiltinSize(name) {
			continue
		}
		cands = append(cands, cand{name, s.Spec})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		other := func(c cand) bool { return series(c.name) != prefer }
		return cmp.Or(boolCmp(other(a), other(b)), a.spec.Memory.Cmp(b.spec.Memory), cmp.Compare(a.spec.CPU, b.spec.CPU), cmp.Compare(a.name, b.name))
	})
	var out []string
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, fmt.Sprintf("%s (%s, %s)", c.name, plural(c.spec.CPU, "vCPU"), c.spec.Memory.String()))
	}
	return out
}

// baselineNeeds lists the features a size needs that the platform baseline
// excludes and the Platform does not enable.
func baselineNeeds(s api.SizeSpec, on []string) []string {
	var out []string
	add := func(feature string, needed bool) {
		if needed && !slices.Contains(on, feature) {
			out = append(out, feature)
		}
	}
	add("gpu", len(s.GPUs) > 0)
	add("dedicatedCPU", s.DedicatedCPU)
	add("hugepages", s.Hugepages != "")
	return out
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
