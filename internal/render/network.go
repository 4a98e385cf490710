package render

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// migrationBridgeConfig is the CNI configuration of the live-migration
// network: virt-handler's own interface on the bridge, up and addressed
// by whereabouts (a VM attachment's is down and unaddressed).
type migrationBridgeConfig struct {
	CNIVersion string            `json:"cniVersion"`
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	Bridge     string            `json:"bridge"`
	VLAN       *int64            `json:"vlan,omitempty"`
	IPAM       whereaboutsConfig `json:"ipam"`
}

type whereaboutsConfig struct {
	Type  string `json:"type"`
	Range string `json:"range"`
}

// MigrationNetwork renders the NetworkAttachmentDefinition of the
// Platform's live-migration network in openshift-cnv, where KubeVirt looks
// it up for virt-handler (the HyperConverged names it without namespace).
// It comes after the namespace and before the HyperConverged: virt-handler
// pods created before it would fail to start.
func MigrationNetwork(m *resolve.Model, p *resolve.Platform) []emit.Object {
	mn := p.MigrationNetwork
	if mn == nil {
		return nil
	}
	br := mn.Spec.Bridge
	e, _ := m.Catalog.NetworkProfiles.Entry(mn.Name)
	cfg, _ := json.Marshal(migrationBridgeConfig{
		CNIVersion: "0.3.1", Name: mn.Name, Type: "bridge", Bridge: br.Name, VLAN: br.VLAN,
		IPAM: whereaboutsConfig{Type: "whereabouts", Range: br.IPRange},
	})
	// No k8s.v1.cni.cncf.io/resourceName: KubeVirt v1.8.4 turns it into
	// resource requests of virt-launcher pods only (virt-controller
	// services/template.go, multus.NetworkToResource), not of virt-handler. Every workload node needs the bridge: on
	// a node without it the bridge plugin creates an unconnected one.
	nad := &extapi.NetworkAttachmentDefinition{
		TypeMeta: typeMeta("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition"),
		ObjectMeta: withWave(objectMeta("NetworkAttachmentDefinition", model.CNVNamespace, mn.Name, e.Doc.Rel,
			map[string]string{model.LabelPlatform: p.Name}, nil), waveMigrationNetwork),
		Spec: extapi.NetworkAttachmentDefinitionSpec{Config: string(cfg)},
	}
	return []emit.Object{{APIVersion: "k8s.cni.cncf.io/v1", Kind: "NetworkAttachmentDefinition", Namespace: model.CNVNamespace, Name: mn.Name, Scope: emit.Cluster, Body: nad}}
}

// ClusterNetworks renders a ClusterUserDefinedNetwork per localnet profile,
// selecting the tenant namespaces allowed to use it.
func ClusterNetworks(m *resolve.Model, p *resolve.Platform) []emit.Object {
	var objs []emit.Object
	for _, name := range m.Catalog.NetworkProfiles.Names() {
		e, _ := m.Catalog.NetworkProfiles.Entry(name)
		ln := e.Obj.Spec.Localnet
		if e.Obj.Spec.Type != api.NetworkLocalnet || ln == nil {
			continue
		}
		var namespaces []string
		for _, t := range m.Tenants {
			if t.AllowsNetwork(name, e.Obj) {
				namespaces = append(namespaces, t.Name)
			}
		}
		if len(namespaces) == 0 {
			continue
		}
		cfg := &extapi.LocalnetConfig{
			Role:                "Secondary",
			PhysicalNetworkName: ln.PhysicalNetworkName,
			// VMs bring their own addresses on a physical network.
			IPAM: &extapi.IPAMConfig{Mode: "Disabled"},
			MTU:  ln.MTU,
		}
		if ln.VLAN != nil {
			cfg.VLAN = &extapi.VLANConfig{Mode: "Access", Access: &extapi.VLANAccess{ID: *ln.VLAN}}
		}
		cudn := &extapi.ClusterUserDefinedNetwork{
			TypeMeta:   typeMeta("k8s.ovn.org/v1", "ClusterUserDefinedNetwork"),
			ObjectMeta: objectMeta("ClusterUserDefinedNetwork", "", name, e.Doc.Rel, map[string]string{model.LabelPlatform: p.Name}, nil),
			Spec: extapi.ClusterUserDefinedNetworkSpec{
				NamespaceSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: namespaces,
				}}},
				Network: extapi.CUDNNetwork{Topology: "Localnet", Localnet: cfg},
			},
		}
		objs = append(objs, emit.Object{APIVersion: "k8s.ovn.org/v1", Kind: "ClusterUserDefinedNetwork", Name: name, Scope: emit.Cluster, Body: cudn})
	}
	return objs
}

// TenantNetworks renders the namespace-scoped network objects of a tenant:
// a NetworkAttachmentDefinition per bridge profile it may use, and the
// UserDefinedNetwork of its primary network.
func TenantNetworks(m *resolve.Model, t *resolve.Tenant) []emit.Object {
	var objs []emit.Object
	labels := map[string]string{model.LabelTenant: t.Name}
	for _, n := range model.TenantNADs(m, t) {
		e, _ := m.Catalog.NetworkProfiles.Entry(n.Name)
		name := n.Name
		nad := &extapi.NetworkAttachmentDefinition{
			TypeMeta: typeMeta("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition"),
			// The resource name makes the scheduler pick nodes that have the bridge.
			ObjectMeta: objectMeta("NetworkAttachmentDefinition", t.Name, name, e.Doc.Rel, labels, map[string]string{
				"k8s.v1.cni.cncf.io/resourceName": "bridge.network.kubevirt.io/" + n.Profile.Spec.Bridge.Name,
			}),
			Spec: extapi.NetworkAttachmentDefinitionSpec{Config: n.Config},
		}
		objs = append(objs, emit.Object{APIVersion: "k8s.cni.cncf.io/v1", Kind: "NetworkAttachmentDefinition", Namespace: t.Name, Name: name, Scope: emit.TenantScope, Body: nad})
	}
	if u := model.TenantUDN(t); u != nil {
		e, _ := m.Catalog.NetworkProfiles.Entry(u.Name)
		udn := &extapi.UserDefinedNetwork{
			TypeMeta:   typeMeta("k8s.ovn.org/v1", "UserDefinedNetwork"),
			ObjectMeta: objectMeta("UserDefinedNetwork", t.Name, u.Name, e.Doc.Rel, labels, nil),
			Spec:       u.Spec,
		}
		objs = append(objs, emit.Object{APIVersion: "k8s.ovn.org/v1", Kind: "UserDefinedNetwork", Namespace: t.Name, Name: u.Name, Scope: emit.TenantScope, Body: udn})
	}
	return objs
}
