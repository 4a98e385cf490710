package render

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// NetworkPolicyName names the NetworkPolicy that isolates a tenant's
// namespace.
const NetworkPolicyName = "virtc-tenant-isolation"

// OpenShift's namespace labels of the router's and the monitoring stack's
// namespaces, the form OpenShift's multitenant isolation procedure selects
// them by (openshift-docs modules/nw-networkpolicy-multitenant-isolation.adoc;
// the ingress label also matches routers on the host network).
const (
	labelPolicyGroupIngress       = "policy-group.network.openshift.io/ingress"
	labelPolicyGroup              = "network.openshift.io/policy-group"
	policyGroupMonitoring         = "monitoring"
	labelNamespaceName            = "kubernetes.io/metadata.name"
	cdiComponentLabel             = "cdi.kubevirt.io"
	kubevirtAppLabel              = "kubevirt.io"
	cdiServerPort           int32 = 8443
)

// NetworkPolicy isolates a tenant's namespace from the others (doc 000,
// "Authorization and lifecycle boundaries" and the acceptance evidence
// "approved network reachability and isolation"): its pods, the VMs'
// virt-launcher pods among them, take connections only from the same
// namespace, OpenShift's router and monitoring, and the platform
// components that reach into a tenant's namespace by design. Ingress only:
// what a VM may reach is the network profiles' business.
//
// What connects into a tenant's namespace (none of live migration, the
// consoles or VM metrics does: virt-handler reaches a launcher through its
// unix socket, pkg/virt-handler/cmd-client/client.go, and migrates
// handler to handler, pkg/virt-handler/migration-proxy/migration-proxy.go,
// KubeVirt v1.8.4):
//   - CDI's upload proxy posts an upload to the upload server pod on 8443
//     (CDI v1.65.0 pkg/controller/upload-controller.go GetUploadServerURL;
//     the proxy's pods are labelled cdi.kubevirt.io: cdi-uploadproxy,
//     pkg/operator/resources/namespaced/uploadproxy.go);
//   - a host-assisted clone's source pod, in the image's namespace, posts
//     the disk to the target's upload server on 8443 (clone-controller.go
//     CreateCloneSourcePod, label cdi.kubevirt.io: cdi-clone-source);
//   - cdi-deployment reads an importer's progress on 8443
//     (pkg/controller/common/util.go);
//   - virt-exportproxy serves a VirtualMachineExport from the export pod
//     on 8443 (KubeVirt pkg/storage/export/export/export.go);
//   - virt-api dials a launcher for virtctl port-forward, ssh and scp, on
//     the port the user names (pkg/virt-api/rest/dialers.go).
//
// kubelet's probes need no rule: OVN-Kubernetes admits traffic from the
// node's management port whatever the policy.
func NetworkPolicy(t *resolve.Tenant) emit.Object {
	port := intstr.FromInt32(cdiServerPort)
	tcp := corev1.ProtocolTCP
	cnv := func(key string, values ...string) networkingv1.NetworkPolicyPeer {
		pods := &metav1.LabelSelector{MatchLabels: map[string]string{key: values[0]}}
		if len(values) > 1 {
			pods = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: key, Operator: metav1.LabelSelectorOpIn, Values: values},
			}}
		}
		return networkingv1.NetworkPolicyPeer{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelNamespaceName: model.CNVNamespace}},
			PodSelector:       pods,
		}
	}
	dataPaths := []networkingv1.NetworkPolicyPeer{
		cnv(cdiComponentLabel, "cdi-deployment", "cdi-uploadproxy"),
		cnv(kubevirtAppLabel, "virt-exportproxy"),
	}
	for _, ns := range cloneSourceNamespaces(t) {
		dataPaths = append(dataPaths, networkingv1.NetworkPolicyPeer{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelNamespaceName: ns}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{cdiComponentLabel: "cdi-clone-source"}},
		})
	}
	np := &networkingv1.NetworkPolicy{
		TypeMeta:   typeMeta("networking.k8s.io/v1", "NetworkPolicy"),
		ObjectMeta: objectMeta("NetworkPolicy", t.Name, NetworkPolicyName, t.Doc.Rel, map[string]string{model.LabelTenant: t.Name}, nil),
		Spec: networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{
				{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}},
				{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelPolicyGroupIngress: ""}}}}},
				{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelPolicyGroup: policyGroupMonitoring}}}}},
				{From: dataPaths, Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}}},
				{From: []networkingv1.NetworkPolicyPeer{cnv(kubevirtAppLabel, "virt-api")}},
			},
		},
	}
	return emit.Object{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy", Namespace: t.Name, Name: NetworkPolicyName, Scope: emit.TenantScope, Body: np}
}

// cloneSourceNamespaces are the namespaces, other than the tenant's own,
// whose DataSources the tenant's VMs clone their root disks from.
func cloneSourceNamespaces(t *resolve.Tenant) []string {
	var out []string
	for _, vm := range t.VMs {
		if ns := vm.DataSource.Namespace; ns != "" && ns != t.Name && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}
