package extapi

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// NetworkAttachmentDefinition is k8s.cni.cncf.io/v1
// NetworkAttachmentDefinition.
type NetworkAttachmentDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              NetworkAttachmentDefinitionSpec `json:"spec"`
}

// NetworkAttachmentDefinitionSpec holds the CNI configuration as JSON.
type NetworkAttachmentDefinitionSpec struct {
	Config string `json:"config"`
}

// UserDefinedNetwork is k8s.ovn.org/v1 UserDefinedNetwork.
type UserDefinedNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              UserDefinedNetworkSpec `json:"spec"`
}

// UserDefinedNetworkSpec is a Layer2 network.
type UserDefinedNetworkSpec struct {
	Topology string        `json:"topology"`
	Layer2   *Layer2Config `json:"layer2,omitempty"`
}

// Layer2Config is an OVN-Kubernetes Layer2 network.
type Layer2Config struct {
	Role    string      `json:"role"`
	Subnets []string    `json:"subnets,omitempty"`
	IPAM    *IPAMConfig `json:"ipam,omitempty"`
}

// IPAMConfig configures address management.
type IPAMConfig struct {
	Mode      string `json:"mode,omitempty"`
	Lifecycle string `json:"lifecycle,omitempty"`
}

// ClusterUserDefinedNetwork is k8s.ovn.org/v1 ClusterUserDefinedNetwork.
type ClusterUserDefinedNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ClusterUserDefinedNetworkSpec `json:"spec"`
}

// ClusterUserDefinedNetworkSpec selects namespaces and defines the network.
type ClusterUserDefinedNetworkSpec struct {
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`
	Network           CUDNNetwork          `json:"network"`
}

// CUDNNetwork is the network of a ClusterUserDefinedNetwork.
type CUDNNetwork struct {
	Topology string          `json:"topology"`
	Localnet *LocalnetConfig `json:"localnet,omitempty"`
}

// LocalnetConfig is an OVN-Kubernetes localnet.
type LocalnetConfig struct {
	Role                string      `json:"role"`
	PhysicalNetworkName string      `json:"physicalNetworkName"`
	VLAN                *VLANConfig `json:"vlan,omitempty"`
	IPAM                *IPAMConfig `json:"ipam,omitempty"`
	MTU                 *int64      `json:"mtu,omitempty"`
}

// VLANConfig is an access VLAN.
type VLANConfig struct {
	Mode   string      `json:"mode"`
	Access *VLANAccess `json:"access,omitempty"`
}

// VLANAccess is the VLAN ID.
type VLANAccess struct {
	ID int64 `json:"id"`
}
