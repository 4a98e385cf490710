package resolve

import (
	"fmt"
	"slices"

	"github.com/virtc/virtc/internal/versions"
)

// PreviewUse is a preview feature (a HyperConverged feature gate that is
// on) that changes what a VM runs.
type PreviewUse struct {
	// Gate is the feature gate.
	Gate string
	// Phase is its phase in the release (alpha, beta).
	Phase string
	// Why says what of the VM the gate applies to.
	Why string
}

// previewTraits are the VM traits a release's featureGates.vmUse names:
// whether the VM has the trait, and what of it, for messages.
var previewTraits = map[string]func(*VM) (bool, string){
	"dedicatedCPU": func(v *VM) (bool, string) {
		if v.Size == nil || !v.Size.Spec.DedicatedCPU {
			return false, ""
		}
		return true, fmt.Sprintf("size %s isolates the emulator thread of its dedicated CPUs", v.SizeName)
	},
}

// GatesOn are the feature gates that are on in the cluster: the ones
// enabled, and the beta gates (on by default) the Platform accepts.
func (p *Platform) GatesOn() []string {
	on := slices.Clone(p.FeatureGates)
	for _, g := range p.Release.FeatureGates.Beta {
		if !slices.Contains(p.DisabledGates, g) {
			on = append(on, g)
		}
	}
	slices.Sort(on)
	return slices.Compact(on)
}

// previewUses lists the preview features that are on in the cluster and
// apply to the VM, by gate.
func previewUses(p *Platform, v *VM) []PreviewUse {
	if p == nil {
		return nil
	}
	var out []PreviewUse
	for _, g := range p.GatesOn() {
		trait, ok := p.Release.FeatureGates.VMUse[g]
		if !ok {
			continue
		}
		has := previewTraits[trait]
		if has == nil {
			panic(fmt.Sprintf("versions: featureGates.vmUse of %s names unknown VM trait %q", p.Release.Minor, trait))
		}
		if yes, why := has(v); yes {
			out = append(out, PreviewUse{Gate: g, Phase: p.Release.GatePhase(g), Why: why})
		}
	}
	return out
}

// PreviewPhase phrases a gate's phase for people.
func PreviewPhase(phase string) string {
	if phase == versions.PhaseBeta {
		return "a Technology Preview"
	}
	return "a Developer Preview"
}
