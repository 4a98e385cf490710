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
	byTenant := map[*resolve.Tenant][]*resolve.VM{}
	var tenants []*resolve.Tenant
	for _, vm := range prod {
		if byTenant[vm.Tenant] == nil {
			tenants = append(tenants, vm.Tenant)
		}
		byTenant[vm.Tenant] = append(byTenant[vm.Tenant], vm)
	}
	for _, t := range tenants {
		var fields, duties []string
		r := t.Spec.Recovery
		if r == nil || r.RestoresGuestData == "" {
			fields, duties = append(fields, "spec.recovery.restoresGuestData"), append(duties, "restores its guest data")
		}
		if r == nil || r.ValidatesApplication == "" {
			fields, duties = append(fields, "spec.recovery.validatesApplication"), append(duties, "validates its application")
		}
		if len(fields) == 0 {
			continue
		}
		diags.Errorf(t.Doc.Pos("spec.recovery"), fields[0], "tenant %q runs production %s but its recovery document names nobody who %s (doc 001: the recovery document identifies who restores the cluster service, who restores guest data and who validates the application) (set %s)",
			t.Name, productionWhat(byTenant[t]), strings.Join(duties, " and nobody who "), strings.Join(fields, " and "))
	}
}
