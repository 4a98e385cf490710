// Package eligibility places each VM in the platform's workload
// eligibility matrix and lists the evidence its class and profiles still
// require before it may run in production.
package eligibility

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/virtc/virtc/fn/decode"

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
	// for the VM's profiles where the description names them.
	Evidence []api.EvidenceRequirement
}

// Classes is the matrix, most restrictive first: a VM falls in the first
// class it matches.
var Classes = []Class{
	{Name: "confidential-or-tech-preview", Status: Excluded, Title: "confidential VM or Technology Preview feature"},
	// "Separate architecture and vendor support assessment" (target
	// architecture, workload eligibility matrix): one per excluded feature
	// the VM uses, a device by its resource name. With every assessment
	// accepted (and the Platform's spec.enable) the class is lifted.
	{Name: "hardware-passthrough", Status: Excluded, Title: "GPU, host device, SR-IOV, dedicated CPU or huge pages",
		Evidence: []api.EvidenceRequirement{{Check: AssessmentCheck, Description: "architecture and vendor support assessment of %s"}}},
	{Name: "worker-virtualization", Status: Conditional, Title: "VM running a Kubernetes worker node",
		Evidence: []api.EvidenceRequirement{
			{Check: "node-drain-test", Description: "node drain and VM restart test of the nested worker"},
			{Check: "capacity-plan", Description: "capacity plan for the nested cluster's workloads"}}},
	{Name: "live-migration", Status: Conditional, Title: "VM requiring live migration",
		Evidence: []api.EvidenceRequirement{{Check: "migration-test", Description: "planned migration and maintenance test on storage profile %s and network profiles %s"}}},
	{Name: "additional-network", Status: Conditional, Title: "VM on an additional network or a user-defined network",
		Evidence: []api.EvidenceRequirement{{Check: "network-failover", Description: "connectivity and failover test on network profile %s"}}},
	{Name: "standard", Status: Eligible, Title: "standard business VM"},
}

// AssessmentCheck is the check that lifts an excluded hardware feature
// for the VMs that use it.
const AssessmentCheck = "architecture-assessment"

// Features are the excluded hardware features a VM uses, as an
// assessment's covers.feature names them: each passed-through device by
// its resource name, then sriov, dedicatedCPU and hugepages.
func Features(vm *resolve.VM) []string {
	var out []string
	for _, d := range vm.Devices() {
		if !slices.Contains(out, d.ResourceName) {
			out = append(out, d.ResourceName)
		}
	}
	if slices.ContainsFunc(vm.Networks, func(n resolve.Network) bool { return n.NetworkProfile != nil && n.Spec.Type == api.NetworkSRIOV }) {
		out = append(out, "sriov")
	}
	if s := vm.Size; s != nil {
		if s.Spec.DedicatedCPU {
			out = append(out, "dedicatedCPU")
		}
		if s.Spec.Hugepages != "" {
			out = append(out, "hugepages")
		}
	}
	return out
}

// Requirement is one check a VM needs accepted evidence for: the check's
// identifier, what it must cover, and for how long evidence counts.
type Requirement struct {
	Check       string
	Description string
	// What the evidence must cover (empty: not part of the requirement).
	StorageProfile  string
	NetworkProfiles []string
	BackupPolicy    string
	Class           string
	// Feature is the excluded feature an assessment covers.
	Feature string
	// ValidFor is how long after its date evidence counts; zero: always.
	ValidFor time.Duration
	// ValidForText is ValidFor as the catalog wrote it (90d), for messages.
	ValidForText string
}

// Subject says what the requirement's evidence must cover, for messages.
func (r Requirement) Subject() string {
	var parts []string
	if r.StorageProfile != "" {
		parts = append(parts, "storage profile "+r.StorageProfile)
	}
	if len(r.NetworkProfiles) > 0 {
		parts = append(parts, "network profiles "+strings.Join(r.NetworkProfiles, ", "))
	}
	if r.BackupPolicy != "" {
		parts = append(parts, "backup policy "+r.BackupPolicy)
	}
	if r.Class != "" {
		parts = append(parts, "class "+r.Class)
	}
	if r.Feature != "" {
		parts = append(parts, "feature "+r.Feature)
	}
	return strings.Join(parts, ", ")
}

// Result is a VM's place in the matrix.
type Result struct {
	Class Class
	// Reasons say why the VM is in its class.
	Reasons []string
	// Evidence is still required before onboarding: the class's, the
	// profiles' and the backup policy's, as descriptions.
	Evidence []string
	// Requirements are the same as checks that Evidence can satisfy.
	Requirements []Requirement
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
	for _, u := range vm.PreviewFeatures {
		excludedTP = append(excludedTP, fmt.Sprintf("feature gate %s (%s): %s", u.Gate, resolve.PreviewPhase(u.Phase), u.Why))
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
	r.Requirements = evidence(vm, r.Class, extraNets)
	for _, q := range r.Requirements {
		r.Evidence = append(r.Evidence, q.Description)
	}
	return r
}

func evidence(vm *resolve.VM, c Class, extraNets []string) []Requirement {
	var out []Requirement
	add := func(reqs ...Requirement) {
		for _, r := range reqs {
			// One check of the same thing is one requirement, whichever
			// entries ask for it (an additional-network class and its
			// profile both ask for its network failover test).
			if !slices.ContainsFunc(out, func(o Requirement) bool { return o.Check == r.Check && o.Subject() == r.Subject() }) {
				out = append(out, r)
			}
		}
	}
	switch c.Name {
	case "live-migration":
		var nets []string
		for _, n := range vm.Networks {
			nets = append(nets, n.Name)
		}
		e := c.Evidence[0]
		add(Requirement{Check: e.Check, Description: fmt.Sprintf(e.Description, vm.RootStorage.Name, strings.Join(nets, ", ")),
			StorageProfile: vm.RootStorage.Name, NetworkProfiles: nets})
	case "hardware-passthrough":
		e := c.Evidence[0]
		for _, f := range Features(vm) {
			add(Requirement{Check: e.Check, Description: fmt.Sprintf(e.Description, f), Class: c.Name, Feature: f})
		}
	case "additional-network":
		for _, n := range extraNets {
			e := c.Evidence[0]
			add(Requirement{Check: e.Check, Description: fmt.Sprintf(e.Description, n), NetworkProfiles: []string{n}})
		}
	default:
		for _, e := range c.Evidence {
			add(Requirement{Check: e.Check, Description: e.Description, Class: c.Name})
		}
	}
	if c.Status == Excluded && len(c.Evidence) == 0 {
		// No evidence lifts the class (confidential VMs, Technology
		// Preview features).
		return out
	}
	storage := func(st resolve.Storage) {
		for _, e := range st.Spec.Evidence {
			add(Requirement{Check: e.Check, Description: e.Description, StorageProfile: st.Name})
		}
	}
	storage(vm.RootStorage)
	for _, d := range vm.Disks {
		if d.Storage.StorageProfile != nil {
			storage(d.Storage)
		}
	}
	if st := vm.StateStorage; st != nil && st.StorageProfile != nil {
		// The VM's persistent EFI and TPM state lives there.
		storage(*st)
	}
	for _, n := range vm.Networks {
		for _, e := range n.Spec.Evidence {
			add(Requirement{Check: e.Check, Description: e.Description, NetworkProfiles: []string{n.Name}})
		}
	}
	if p := vm.Backup.BackupPolicy; p != nil {
		var valid time.Duration
		if p.Spec.DrillInterval != "" {
			valid, _ = decode.ParseRetention(p.Spec.DrillInterval)
		}
		for _, e := range p.Spec.Evidence {
			add(Requirement{Check: e.Check, Description: e.Description, BackupPolicy: vm.Backup.Name, ValidFor: valid, ValidForText: p.Spec.DrillInterval})
		}
	}
	return out
}
