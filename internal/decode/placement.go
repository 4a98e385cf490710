package decode

import (
	"fmt"
	"strings"

	"github.com/virtc/virtc/api"
)

// workerPool checks a pool's own values; references to profiles are
// checked by the catalog.
func (d *decoder) workerPool(o *api.WorkerPool) {
	s := o.Spec
	if len(s.NodeSelector) == 0 {
		d.fail("spec.nodeSelector", "a pool needs node labels that select its nodes (for example node-role.kubernetes.io/worker-vm: \"\")")
	}
	if s.Nodes < 1 {
		d.fail("spec.nodes", "must be at least 1 node")
	}
	if s.Allocatable.CPU.Sign() <= 0 {
		d.fail("spec.allocatable.cpu", "must be greater than zero")
	}
	if s.Allocatable.Memory.Sign() <= 0 {
		d.fail("spec.allocatable.memory", "must be greater than zero")
	}
	for i, t := range s.Taints {
		if t.Key == "" {
			d.fail(fmt.Sprintf("spec.taints[%d].key", i), "a taint needs a key")
		}
	}
	if fd := s.FailureDomain; fd != nil {
		switch {
		case fd.Domains < 1:
			d.fail("spec.failureDomain.domains", "must be at least 1")
		case fd.Domains > s.Nodes && s.Nodes >= 1:
			d.fail("spec.failureDomain.domains", "%d %ss for %d nodes: a %s without nodes is no failure domain (at most spec.nodes)", fd.Domains, fd.Level, s.Nodes, fd.Level)
		}
		if fd.Level == api.DomainRack && fd.TopologyKey == "" {
			d.fail("spec.failureDomain", "a rack failure domain needs spec.failureDomain.topologyKey (the node label that names the rack)")
		}
	}
	if m := s.CPUModel; m != "" && strings.ContainsAny(m, " /=") {
		d.fail("spec.cpuModel", "invalid CPU model %q (a libvirt model name such as Cascadelake-Server)", m)
	}
	for i, n := range s.Networks {
		d.catalogRef(fmt.Sprintf("spec.networks[%d]", i), n)
	}
	for i, n := range s.Storage {
		d.catalogRef(fmt.Sprintf("spec.storage[%d]", i), n)
	}
}

// migrationPolicy checks a policy's values and that it selects something:
// KubeVirt matches a policy without selectors to no VM.
func (d *decoder) migrationPolicy(o *api.MigrationPolicy) {
	s := o.Spec
	sel := s.Selector
	if sel.Pool == "" && sel.Tenant == "" && len(sel.VMLabels) == 0 {
		d.fail("spec.selector", "a migration policy selects VMs by pool, tenant or vmLabels (at least one)")
	}
	if sel.Pool != "" {
		d.catalogRef("spec.selector.pool", sel.Pool)
	}
	if sel.Tenant != "" {
		d.dnsLabel("spec.selector.tenant", "tenant name", sel.Tenant)
	}
	if b := s.BandwidthPerMigration; b != nil && b.Sign() < 0 {
		d.fail("spec.bandwidthPerMigration", "must not be negative (0: unlimited)")
	}
	if t := s.CompletionTimeoutPerGiB; t != nil && *t < 1 {
		d.fail("spec.completionTimeoutPerGiB", "must be at least 1 second")
	}
	if s.BandwidthPerMigration == nil && s.CompletionTimeoutPerGiB == nil && s.AllowAutoConverge == nil && s.AllowPostCopy == nil {
		d.fail("spec", "the policy sets nothing: give bandwidthPerMigration, completionTimeoutPerGiB, allowAutoConverge or allowPostCopy")
	}
}
