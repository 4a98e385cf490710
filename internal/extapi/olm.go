package extapi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorGroup is operators.coreos.com/v1 OperatorGroup.
type OperatorGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              OperatorGroupSpec `json:"spec"`
}

// OperatorGroupSpec selects the namespaces the operator watches.
type OperatorGroupSpec struct {
	TargetNamespaces []string `json:"targetNamespaces,omitempty"`
}

// Subscription is operators.coreos.com/v1alpha1 Subscription.
type Subscription struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              SubscriptionSpec `json:"spec"`
}

// SubscriptionSpec names the package, channel and pinned CSV.
type SubscriptionSpec struct {
	Channel             string              `json:"channel,omitempty"`
	Name                string              `json:"name"`
	Source              string              `json:"source"`
	SourceNamespace     string              `json:"sourceNamespace"`
	StartingCSV         string              `json:"startingCSV,omitempty"`
	InstallPlanApproval string              `json:"installPlanApproval,omitempty"`
	Config              *SubscriptionConfig `json:"config,omitempty"`
}

// SubscriptionConfig places the operator's pods.
type SubscriptionConfig struct {
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
}

// CatalogSource is operators.coreos.com/v1alpha1 CatalogSource: an index
// image that OLM's catalog operator serves from a registry pod (sourceType
// grpc with spec.image; operator-lifecycle-manager v0.42.0
// pkg/controller/registry/reconciler/grpc.go) and that Subscriptions name
// in spec.source and spec.sourceNamespace.
type CatalogSource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              CatalogSourceSpec `json:"spec"`
}

// CatalogSourceSpec is the image and how the catalog is shown.
type CatalogSourceSpec struct {
	SourceType  string `json:"sourceType"`
	Image       string `json:"image,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Publisher   string `json:"publisher,omitempty"`
}
