// Package eligibility places each VM in the platform's workload
// eligibility matrix and lists the evidence its class and profiles still
// require before it may run in production.
package eligibility

import (
	"fmt"
	"slices"

	"github.com/virtc/virtc/fn/api"
	"github.com/virtc/virtc/fn/resolve"
)

// Status of a class in the matrix.
type Status string

const (
	Eligible    Status = "eligible"
	Conditional Status = "conditional"
	Excluded    Status = "excluded"
)

// Class is a row of the eligibility matrix.
type Class struct {
	// Name is the class's label value.
	Name   string
	Status Status
	// Title describes the class.
	Title string
	// Evidence is what every VM of the class must show, with %s standing
	// for the VM's profiles where the line names them.
	Evidence []string
}

// Classes is the matrix, most restrictive first: a VM falls in the first
// class it matches.
var Classes = []Class{
	{Name: "confidential-or-tech-preview", Status: Excluded, Title: "confidential VM or Technology Preview feature"},
	{Name: "hardware-passthrough", Status: Excluded, Title: "GPU, host device, SR-IOV, dedicated CPU or huge pages"},
	{Name: "worker-virtualization", Status: Conditional, Title: "VM running a Kubernetes worker node",
		Evidence: []string{"node drain and VM restart test of the nested worker", "capacity plan for the nested cluster's workloads"}},
	{Name: "live-migration", Status: Conditional, Title: "VM requiring live migration",
		Evidence: []string{"planned migration and maintenance test on storage profile %s and network profiles %s"}},
	{Name: "additional-network", Status: Conditional, Title: "VM on an additional network or a user-defined network",
		Evidence: []string{"connectivity and failover test on network profile %s"}},
	{Name: "standard", Status: Eligible, Title: "standard business VM"},
}

// Result is a VM's place in the matrix.
type Result struct {
	Class Class
	// Reasons say why the VM is in its class.
	Reasons []string
	// Evidence is still required before onboarding: the class's, the
	// profiles' and the backup policy's.
	Evidence []string
}

func class(name string) Class {
	for _, c := range Classes {
		if c.Name == name {
			return c
		}
	}
	panic("eligibility: no class " + name)
}

// Classify places a resolved VM in the matrix.
func Classify(vm *resolve.VM) Result {
	var excludedTP, passthrough, extraNets []string
	if vm.Spec.Confidential != "" {
		excludedTP = append(excludedTP, "confidential: "+vm.Spec.Confidential)
	}
	if s := vm.Size; s != nil {
		if len(s.Spec.GPUs) > 0 {
			passthrough = append(passthrough, fmt.Sprintf("size %s passes GPUs through", vm.SizeName))
		}
		if s.Spec.DedicatedCPU {
			passthrough = append(passthrough, fmt.Sprintf("size %s has dedicated CPUs", vm.SizeName))
		}
		if s.Spec.Hugepages != "" {
			passthrough = append(passthrough, fmt.Sprintf("size %s uses %s huge pages", vm.SizeName, s.Spec.Hugepages))
		}
	}
	if len(vm.Spec.GPUs) > 0 {
		passthrough = append(passthrough, "GPU passthrough")
	}
	if len(vm.Spec.HostDevices) > 0 {
		passthrough = append(passthrough, "host device passthrough")
	}
	for _, n := range vm.Networks {
		switch n.Spec.Type {
		case api.NetworkSRIOV:
			passthrough = append(passthrough, "SR-IOV network "+n.Name)
		case api.NetworkPod:
		default:
			extraNets = append(extraNets, n.Name)
		}
	}
	var r Result
	switch {
	case len(excludedTP) > 0:
		r.Class, r.Reasons = class("confidential-or-tech-preview"), excludedTP
	case len(passthrough) > 0:
		r.Class, r.Reasons = class("hardware-passthrough"), passthrough
	case vm.Spec.WorkerNode:
		r.Class, r.Reasons = class("worker-virtualization"), []string{"spec.workerNode"}
	case vm.Migration == api.MigrationRequired:
		r.Class, r.Reasons = class("live-migration"), []string{"migration: Required"}
	case len(extraNets) > 0:
		r.Class = class("additional-network")
		for _, n := range extraNets {
			r.Reasons = append(r.Reasons, "network "+n)
		}
	default:
		r.Class = class("standard")
	}
	r.Evidence = evidence(vm, r.Class, extraNets)
	return r
}

func evidence(vm *resolve.VM, c Class, extraNets []string) []string {
	var out []string
	add := func(lines ...string) {
		for _, l := range lines {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	switch c.Name {
	case "live-migration":
		nets := ""
		for i, n := range vm.Networks {
			if i > 0 {
				nets += ", "
			}
			nets += n.Name
		}
		add(fmt.Sprintf(c.Evidence[0], vm.RootStorage.Name, nets))
	case "additional-network":
		for _, n := range extraNets {
			add(fmt.Sprintf(c.Evidence[0], n))
		}
	default:
		add(c.Evidence...)
	}
	if c.Status == Excluded {
		return out
	}
	add(vm.RootStorage.Spec.Evidence...)
	for _, d := range vm.Disks {
		if d.Storage.StorageProfile != nil {
			add(d.Storage.Spec.Evidence...)
		}
	}
	if st := vm.StateStorage; st != nil && st.StorageProfile != nil {
		// The VM's persistent EFI and TPM state lives there.
		add(st.Spec.Evidence...)
	}
	for _, n := range vm.Networks {
		add(n.Spec.Evidence...)
	}
	if vm.Backup.BackupPolicy != nil {
		add(vm.Backup.Spec.Evidence...)
	}
	return out
}
