package model

import (
	"maps"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/resolve"
)

// VMLabels are the labels of the VirtualMachine: the intent's and virtc's.
func VMLabels(vm *resolve.VM) map[string]string {
	labels := maps.Clone(vm.Metadata.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelBackupPolicy] = vm.Backup.Name
	labels[LabelVM] = vm.Name
	labels[LabelEligibility] = eligibility.Classify(vm).Class.Name
	if e := vm.Tenant.Spec.Environment; e != "" {
		labels[LabelEnvironment] = e
	}
	return labels
}

// TemplateLabels are the labels of the VM's template, which KubeVirt puts
// on the VirtualMachineInstance and its virt-launcher pod: the VM's, with
// its worker pool and spread group. Migration policies select VMs by them
// (the VMI's labels), and spread groups keep apart the pods that carry
// the same group label.
func TemplateLabels(vm *resolve.VM) map[string]string {
	l := PlacementLabels(vm, VMLabels(vm))
	l[LabelManagedBy] = ManagedBy
	return l
}

// PlacementLabels adds the VM's pool and spread group to labels.
func PlacementLabels(vm *resolve.VM, labels map[string]string) map[string]string {
	if vm.Pool != nil {
		labels[LabelPool] = vm.Pool.Name
	}
	if vm.Spread != nil {
		labels[LabelSpreadGroup] = vm.Spread.Group
	}
	return labels
}

// NamespaceLabels are the labels of the tenant's namespace in the
// cluster: virtc's and the API server's kubernetes.io/metadata.name
// (which migration policies' namespace selectors may also match).
func NamespaceLabels(t *resolve.Tenant) map[string]string {
	l := TenantNamespaceLabels(t)
	l[LabelManagedBy] = ManagedBy
	l["kubernetes.io/metadata.name"] = t.Name
	return l
}

// TenantNamespaceLabels are the labels virtc writes on the tenant's
// Namespace.
func TenantNamespaceLabels(t *resolve.Tenant) map[string]string {
	labels := map[string]string{LabelTenant: t.Name}
	if t.Spec.Retired {
		labels[LabelRetired] = "true"
	}
	if e := t.Spec.Environment; e != "" {
		labels[LabelEnvironment] = e
	}
	for k, v := range t.Metadata.Labels {
		labels[k] = v
	}
	if t.PrimaryNetwork != nil {
		labels[LabelPrimaryUDN] = ""
	}
	return labels
}

// MigrationPolicyLabels are the selectors of a catalog migration policy
// as KubeVirt matches them: the VMI's labels (pool and the intent's
// labels) and its namespace's (the tenant label).
func MigrationPolicyLabels(p *api.MigrationPolicy) (vmi, namespace map[string]string) {
	sel := p.Spec.Selector
	if sel.Pool != "" || len(sel.VMLabels) > 0 {
		vmi = map[string]string{}
		for k, v := range sel.VMLabels {
			vmi[k] = v
		}
		if sel.Pool != "" {
			vmi[LabelPool] = sel.Pool
		}
	}
	if sel.Tenant != "" {
		namespace = map[string]string{LabelTenant: sel.Tenant}
	}
	return vmi, namespace
}
