package rules

import (
	"strings"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/resolve"
)

// recoveryOwners refuses production VMs whose recovery document would name
// nobody. Doc 001, "Upgrade and recovery planning": "Keep a recovery
// document that identifies who restores the cluster service, who restores
// guest data, and who validates the application." virtc's recovery
// document is the restore plan (virtc restore-plan), and the people are
// facts only Git can give it: the Platform names who restores the cluster
// service, each tenant with production VMs who restores its guest data and
// who validates its application. Production only: that is where doc 000
// asks recovery to be proven before onboarding; a standard tenant's plans
// say who is not named.
func recoveryOwners(m *resolve.Model, diags *diag.List) {
	prod := productionVMs(m)
	if len(prod) == 0 {
		return
	}
	if p := m.Platform; p != nil && (p.Obj.Spec.Recovery == nil || p.Obj.Spec.Recovery.RestoresClusterService == "") {
		diags.Errorf(p.Doc.Pos("spec.recovery"), "spec.recovery.restoresClusterService", "platform %q runs production %s but names nobody who restores the cluster service (doc 001: the recovery document identifies who restores the cluster service, who restores guest data and who validates the application) (set spec.recovery.restoresClusterService to the team or on-call rota that does)",
			p.Name, productionWhat(prod))
	}
	seen := map[*resolve.Tenant]bool{}
	for _, vm := range prod {
		t := vm.Tenant
		if seen[t] {
			continue
		}
		seen[t] = true
		var missing []string
		r := t.Spec.Recovery
		if r == nil || r.RestoresGuestData == "" {
			missing = append(missing, "restoresGuestData")
		}
		if r == nil || r.ValidatesApplication == "" {
			missing = append(missing, "validatesApplication")
		}
		if len(missing) == 0 {
			continue
		}
		var vms []*resolve.VM
		for _, v := range prod {
			if v.Tenant == t {
				vms = append(vms, v)
			}
		}
		fields := make([]string, len(missing))
		for i, f := range missing {
			fields[i] = "spec.recovery." + f
		}
		diags.Errorf(t.Doc.Pos("spec.recovery"), fields[0], "tenant %q runs production %s but its recovery document names nobody who %s (doc 001: the recovery document identifies who restores the cluster service, who restores guest data and who validates the application) (set %s)",
			t.Name, productionWhat(vms), ownerDuties(missing), strings.Join(fields, " and "))
	}
}

func ownerDuties(fields []string) string {
	duty := map[string]string{"restoresGuestData": "restores its guest data", "validatesApplication": "validates its application"}
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = duty[f]
	}
	return strings.Join(out, " and nobody who ")
}
