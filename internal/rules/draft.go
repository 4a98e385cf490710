package rules

import (
	"fmt"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/resolve"
)

// DraftProfile is a catalog profile a VM uses that is not promoted yet
// (spec.draft), with the intent field that chooses it and the guardrail
// that refuses it in the cluster (a draft profile's storage class or
// network is left out of the tenant policy's production allowances:
// storageAccepted, networkAccepted).
type DraftProfile struct {
	Kind, Name, Field, Rule string
}

func (d DraftProfile) String() string { return d.Kind + " " + d.Name }

// DraftProfiles are the draft profiles a VM uses: its disks' and state's
// storage profiles and its networks, each once.
func DraftProfiles(vm *resolve.VM) []DraftProfile {
	var out []DraftProfile
	seen := map[string]bool{}
	add := func(kind, name, field, rule string) {
		if !seen[kind+"/"+name] {
			seen[kind+"/"+name] = true
			out = append(out, DraftProfile{kind, name, field, rule})
		}
	}
	storage := func(field string, st resolve.Storage) {
		if st.StorageProfile != nil && st.Spec.Draft {
			add("storage profile", st.Name, field, "storage-class")
		}
	}
	storage("spec.rootDisk", vm.RootStorage)
	for i, d := range vm.Disks {
		if !d.Retired {
			storage(fmt.Sprintf("spec.disks[%d].storage", i), d.Storage)
		}
	}
	if st := vm.StateStorage; st != nil {
		storage("spec", *st)
	}
	for _, n := range vm.Networks {
		if n.NetworkProfile != nil && n.Spec.Draft {
			add("network profile", n.Name, n.Field, "networks")
		}
	}
	return out
}

// draftProfiles refuses a production VM on a catalog profile that is not
// promoted yet (spec.draft). Doc 000, "Acceptance evidence": "Before a
// profile is promoted beyond draft, capture evidence for the exact 4.22.z
// combination"; a draft profile serves the standard tier, where that
// evidence is gathered, and production only once the platform team
// promotes it (removes draft), after which production VMs on it need the
// evidence of their eligibility class (eligibility.Requirements).
func draftProfiles(vm *resolve.VM, diags *diag.List) {
	if vm.Tier != resolve.TierProduction || vm.Doc.Shadows("spec.tier") {
		return
	}
	for _, d := range DraftProfiles(vm) {
		diags.RuleFor(d.Rule, vm.Namespace+"/"+vm.Name).Errorf(vm.Doc.Pos(d.Field), d.Field, "VM %s/%s is production tier but %s %q is a draft (spec.draft in the catalog): doc 000 promotes a profile beyond draft only once its evidence for the exact 4.22.z combination is captured (use a promoted %s, use tier standard while the evidence is gathered, or have the platform team promote the profile)",
			vm.Namespace, vm.Name, d.Kind, d.Name, d.Kind)
	}
}
