package diff

import (
	"fmt"
	"maps"

	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/placement"
	"github.com/virtc/virtc/internal/resolve"
)

func poolName(vm *resolve.VM) string {
	if vm.Pool == nil {
		return ""
	}
	return vm.Pool.Name
}

func cpuModel(vm *resolve.VM) string {
	if vm.Pool == nil {
		return ""
	}
	return vm.Pool.Spec.CPUModel
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// placement explains a change of pool, spread group or migration policy
// as KubeVirt v1.8.4 applies it to a running VM. With the LiveUpdate
// rollout strategy, the template's nodeSelector, affinity and tolerations
// are live-updatable: pkg/virt-controller/watch/vm/vm.go
// addRestartRequiredIfNeeded copies them over before it compares, and
// handleAffinityChangeRequest and handleTolerationsChangeRequest patch
// them onto the VMI. The running virt-launcher pod stays where it is: the
// new placement applies when the VM is next scheduled (a live migration's
// target pod, or a restart). spec.domain.cpu.model is not among the
// live-updatable fields, so a new CPU model needs a restart. The
// template's labels (virtc.dev/pool, virtc.dev/spread-group) are not
// compared and not synced to a running VMI (syncDynamicAnnotationsAndLabelsToVMI
// syncs only KubeVirt's own keys): they follow at the next start.
func (v *vmChange) placement() {
	old, new := v.old, v.new
	if op, np := poolName(old), poolName(new); op != np {
		ch := Change{Field: "pool", From: orNone(op), To: orNone(np)}
		what := fmt.Sprintf("pool %s → %s", orNone(op), orNone(np))
		switch {
		case !v.running || v.stopping:
			e, why := v.templateEffect()
			ch.Effect, ch.Detail = e, what+": "+why
		case cpuModel(old) != cpuModel(new):
			ch.Effect = EffectRestart
			ch.what = what
			ch.Detail = fmt.Sprintf("%s: restart required: the CPU model changes (%s → %s), which KubeVirt does not update in a running VM; the VM moves at its restart", what, orNone(cpuModel(old)), orNone(cpuModel(new)))
		case !v.cluster.LiveUpdate:
			ch.Effect, ch.Detail = EffectRestart, what+": restart required: the cluster's VM rollout strategy is Stage"
		case old.CanMigrate():
			ch.Effect = EffectManual
			ch.Detail = what + ": KubeVirt updates the running VM's node selector and tolerations (LiveUpdate) but does not move it: it stays in the old pool until it is live-migrated (virtctl migrate: the target pod is scheduled in the new pool) or restarted"
		default:
			ch.Effect = EffectManual
			ch.Detail = what + ": KubeVirt updates the running VM's node selector and tolerations (LiveUpdate) but does not move it, and it cannot live-migrate: it stays in the old pool until it is restarted"
		}
		v.add(ch)
	}
	spread := func(vm *resolve.VM) string {
		if s := vm.Spread; s != nil {
			return fmt.Sprintf("%s (%s, across %s)", s.Group, s.Mode, s.Across)
		}
		return "none"
	}
	if os, ns := spread(old), spread(new); os != ns {
		ch := Change{Field: "spread", From: os, To: ns}
		switch {
		case !v.running || v.stopping:
			e, why := v.templateEffect()
			ch.Effect, ch.Detail = e, fmt.Sprintf("spread group %s → %s: %s", os, ns, why)
		default:
			ch.Effect = EffectNone
			ch.Detail = fmt.Sprintf("spread group %s → %s: the anti-affinity is live-updated on the VMI and applies when the VM is next scheduled (a live migration or a restart); the running VM is not moved", os, ns)
			if groupOf(old) != groupOf(new) {
				ch.Effect = EffectManual
				if groupOf(new) != "" {
					ch.Detail += fmt.Sprintf("; its pod carries the group label %s only once the VM restarts (template labels are not synced to a running VMI), so until then the group's other VMs do not avoid it", groupOf(new))
				} else {
					ch.Detail += fmt.Sprintf("; its pod keeps the group label %s until the VM restarts", groupOf(old))
				}
			}
		}
		v.add(ch)
	}
	if op, np := policyOf(v.oldPlacement, old), policyOf(v.newPlacement, new); op != np {
		ch := Change{Field: "migrationPolicy", From: orNone(op), To: orNone(np), Effect: EffectNone,
			Detail: fmt.Sprintf("migration policy %s → %s: KubeVirt picks a VM's policy when a migration starts, so the next migration uses %s", orNone(op), orNone(np), policyTerms(np))}
		if !maps.Equal(model.TemplateLabels(old), model.TemplateLabels(new)) && v.running && !v.stopping {
			ch.Effect = EffectManual
			ch.Detail = fmt.Sprintf("migration policy %s → %s: KubeVirt matches policies on the VMI's labels, and the running VMI keeps its labels until the VM restarts (template labels are not synced to it): migrations use %s only after the next start", orNone(op), orNone(np), policyTerms(np))
		}
		v.add(ch)
	}
}

func groupOf(vm *resolve.VM) string {
	if vm.Spread == nil {
		return ""
	}
	return vm.Spread.Group
}

func policyOf(r *placement.Result, vm *resolve.VM) string {
	if r == nil {
		return ""
	}
	if pv, ok := r.VMs[vm]; ok {
		return pv.Policy
	}
	return ""
}

func policyTerms(name string) string {
	if name == "" {
		return "the cluster's settings"
	}
	return "policy " + name
}

// health reports a change of the guest-agent probes: probes are template
// fields KubeVirt does not live-update (addRestartRequiredIfNeeded).
func (v *vmChange) health() {
	h := func(vm *resolve.VM) string {
		switch {
		case !model.GuestHealth(vm):
			return "none"
		case vm.Spec.Health != nil && vm.Spec.Health.Liveness:
			return "readiness and liveness probes"
		}
		return "readiness probe"
	}
	oh, nh := h(v.old), h(v.new)
	if oh == nh {
		return
	}
	e, why := v.templateEffect()
	v.add(Change{Field: "health", From: oh, To: nh, Effect: e, what: fmt.Sprintf("guest health %s → %s", oh, nh),
		Detail: fmt.Sprintf("guest health %s → %s: %s", oh, nh, why)})
}
