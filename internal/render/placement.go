package render

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	migrationsv1 "kubevirt.io/api/migrations/v1alpha1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// vmPlacement puts the VM on its worker pool and keeps it apart from its
// spread group. KubeVirt copies the template's nodeSelector, tolerations
// and affinity onto the virt-launcher pod (kubevirt v1.8.4
// pkg/virt-controller/services/template.go: NodeSelector through the node
// selector renderer, Tolerations and a deep copy of Affinity), and sets
// the pod's labels from the VMI's, which come from the template's labels:
// the anti-affinity selects the group label on the other pods of the
// namespace. A pool's cpuModel becomes spec.domain.cpu.model (KubeVirt
// then selects nodes labelled cpu-model.node.kubevirt.io/<model>; virtc's
// instance types set no CPU model, so it does not conflict with them,
// pkg/instancetype/apply/cpu.go).
func vmPlacement(vm *resolve.VM, spec *kubevirtv1.VirtualMachineInstanceSpec) {
	if p := vm.Pool; p != nil {
		spec.NodeSelector = p.Spec.NodeSelector
		spec.Tolerations = model.Tolerations(p.Spec.Taints)
		if p.Spec.CPUModel != "" {
			spec.Domain.CPU = &kubevirtv1.CPU{Model: p.Spec.CPUModel}
		}
	}
	if s := vm.Spread; s != nil {
		key := SpreadTopologyKey(vm)
		if key == "" {
			return
		}
		term := corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{model.LabelSpreadGroup: s.Group}},
			TopologyKey:   key,
		}
		anti := &corev1.PodAntiAffinity{}
		if s.Mode == api.SpreadPreferred {
			anti.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: term}}
		} else {
			anti.RequiredDuringSchedulingIgnoredDuringExecution = []corev1.PodAffinityTerm{term}
		}
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: anti}
	}
}

// SpreadTopologyKey is the node label that the VM's spread group keeps
// apart: the host name, or the rack or zone label of its pool ("" when
// the pool has no such level, which policy refuses).
func SpreadTopologyKey(vm *resolve.VM) string {
	s := vm.Spread
	if s == nil {
		return ""
	}
	if vm.Pool != nil {
		return vm.Pool.TopologyKey(s.Across)
	}
	switch s.Across {
	case api.DomainHost:
		return api.HostTopologyKey
	case api.DomainZone:
		return api.ZoneTopologyKey
	}
	return ""
}

// Probe timings. The readiness probe marks the VMI (and its pod) ready
// once the guest agent answers; the liveness probe restarts a guest whose
// agent has not answered for failureThreshold × periodSeconds, after a
// first delay long enough for a slow (Windows) boot.
var (
	readinessProbe = kubevirtv1.Probe{
		Handler:             kubevirtv1.Handler{GuestAgentPing: &kubevirtv1.GuestAgentPing{}},
		InitialDelaySeconds: 30, PeriodSeconds: 10, TimeoutSeconds: 5, FailureThreshold: 3,
	}
	livenessProbe = kubevirtv1.Probe{
		Handler:             kubevirtv1.Handler{GuestAgentPing: &kubevirtv1.GuestAgentPing{}},
		InitialDelaySeconds: 300, PeriodSeconds: 20, TimeoutSeconds: 10, FailureThreshold: 6,
	}
)

// health adds the guest-agent probes: a readiness probe for every VM whose
// image runs the QEMU guest agent, a liveness probe only when the VM asks
// (a failed liveness probe restarts the guest). KubeVirt's webhook wants
// exactly one handler per probe, and guestAgentPing, unlike httpGet and
// tcpSocket, needs no pod network (kubevirt v1.8.4
// pkg/virt-api/webhooks/validating-webhook/admitters/vmi-create-admitter.go
// validateProbe).
func health(vm *resolve.VM, spec *kubevirtv1.VirtualMachineInstanceSpec) {
	if !model.GuestHealth(vm) {
		return
	}
	r := readinessProbe
	spec.ReadinessProbe = &r
	if vm.Spec.Health != nil && vm.Spec.Health.Liveness {
		l := livenessProbe
		spec.LivenessProbe = &l
	}
}

// MigrationPolicies renders the catalog's migration policies as KubeVirt
// MigrationPolicies (cluster-scoped, migrations.kubevirt.io/v1alpha1).
func MigrationPolicies(cat *catalog.Catalog) []emit.Object {
	var objs []emit.Object
	for _, name := range cat.MigrationPolicies.Names() {
		e, _ := cat.MigrationPolicies.Entry(name)
		p := e.Obj
		vmi, ns := model.MigrationPolicyLabels(p)
		obj := &migrationsv1.MigrationPolicy{
			TypeMeta:   typeMeta(migrationsv1.SchemeGroupVersion.String(), "MigrationPolicy"),
			ObjectMeta: objectMeta("MigrationPolicy", "", name, e.Doc.Rel, p.Metadata.Labels, p.Metadata.Annotations),
			Spec: migrationsv1.MigrationPolicySpec{
				Selectors:               &migrationsv1.Selectors{VirtualMachineInstanceSelector: vmi, NamespaceSelector: ns},
				AllowAutoConverge:       p.Spec.AllowAutoConverge,
				BandwidthPerMigration:   p.Spec.BandwidthPerMigration,
				CompletionTimeoutPerGiB: p.Spec.CompletionTimeoutPerGiB,
				AllowPostCopy:           p.Spec.AllowPostCopy,
			},
		}
		objs = append(objs, emit.Object{APIVersion: migrationsv1.SchemeGroupVersion.String(), Kind: "MigrationPolicy", Name: name, Scope: emit.Cluster, Body: obj})
	}
	return objs
}
