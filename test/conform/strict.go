// Package conform checks generated manifests against the real API types:
// every document must decode strictly (no unknown or misspelled field) into
// the Go type of its kind. The tests use it (it is no part of virtc).
package conform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"go.yaml.in/yaml/v3"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	migrationsv1alpha1 "kubevirt.io/api/migrations/v1alpha1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/virtc/virtc/internal/extapi"
)

// types maps apiVersion/kind to the Go type that decodes it.
var types = map[string]reflect.Type{
	"v1/Namespace":                                                       reflect.TypeFor[corev1.Namespace](),
	"v1/ResourceQuota":                                                   reflect.TypeFor[corev1.ResourceQuota](),
	"v1/PersistentVolumeClaim":                                           reflect.TypeFor[corev1.PersistentVolumeClaim](),
	"rbac.authorization.k8s.io/v1/RoleBinding":                           reflect.TypeFor[rbacv1.RoleBinding](),
	"networking.k8s.io/v1/NetworkPolicy":                                 reflect.TypeFor[networkingv1.NetworkPolicy](),
	"admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy":          reflect.TypeFor[admissionv1.ValidatingAdmissionPolicy](),
	"admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding":   reflect.TypeFor[admissionv1.ValidatingAdmissionPolicyBinding](),
	"rbac.authorization.k8s.io/v1/Role":                                  reflect.TypeFor[rbacv1.Role](),
	"v1/ServiceAccount":                                                  reflect.TypeFor[corev1.ServiceAccount](),
	"batch/v1/Job":                                                       reflect.TypeFor[batchv1.Job](),
	"kubevirt.io/v1/VirtualMachine":                                      reflect.TypeFor[kubevirtv1.VirtualMachine](),
	"cdi.kubevirt.io/v1beta1/DataVolume":                                 reflect.TypeFor[cdiv1.DataVolume](),
	"cdi.kubevirt.io/v1beta1/DataSource":                                 reflect.TypeFor[cdiv1.DataSource](),
	"instancetype.kubevirt.io/v1beta1/VirtualMachineClusterInstancetype": reflect.TypeFor[instancetypev1beta1.VirtualMachineClusterInstancetype](),
	"instancetype.kubevirt.io/v1beta1/VirtualMachineClusterPreference":   reflect.TypeFor[instancetypev1beta1.VirtualMachineClusterPreference](),
	"migrations.kubevirt.io/v1alpha1/MigrationPolicy":                    reflect.TypeFor[migrationsv1alpha1.MigrationPolicy](),
	// Kinds whose API modules virtc does not import: their local types
	// (package extapi) are checked against the upstream schemas in
	// extapi's tests and by kubeconform.
	"hco.kubevirt.io/v1beta1/HyperConverged":               reflect.TypeFor[extapi.HyperConverged](),
	"operators.coreos.com/v1/OperatorGroup":                reflect.TypeFor[extapi.OperatorGroup](),
	"operators.coreos.com/v1alpha1/Subscription":           reflect.TypeFor[extapi.Subscription](),
	"operators.coreos.com/v1alpha1/CatalogSource":          reflect.TypeFor[extapi.CatalogSource](),
	"k8s.cni.cncf.io/v1/NetworkAttachmentDefinition":       reflect.TypeFor[extapi.NetworkAttachmentDefinition](),
	"k8s.ovn.org/v1/UserDefinedNetwork":                    reflect.TypeFor[extapi.UserDefinedNetwork](),
	"k8s.ovn.org/v1/ClusterUserDefinedNetwork":             reflect.TypeFor[extapi.ClusterUserDefinedNetwork](),
	"oadp.openshift.io/v1alpha1/DataProtectionApplication": reflect.TypeFor[extapi.DataProtectionApplication](),
	"velero.io/v1/Schedule":                                reflect.TypeFor[extapi.Schedule](),
	"velero.io/v1/Backup":                                  reflect.TypeFor[extapi.Backup](),
	"velero.io/v1/Restore":                                 reflect.TypeFor[extapi.Restore](),
	"snapshot.kubevirt.io/v1beta1/VirtualMachineSnapshot":  reflect.TypeFor[extapi.VirtualMachineSnapshot](),
	"snapshot.kubevirt.io/v1beta1/VirtualMachineRestore":   reflect.TypeFor[extapi.VirtualMachineRestore](),
	"monitoring.coreos.com/v1/PrometheusRule":              reflect.TypeFor[extapi.PrometheusRule](),
	"monitoring.coreos.com/v1/ServiceMonitor":              reflect.TypeFor[extapi.ServiceMonitor](),
	"monitoring.coreos.com/v1alpha1/AlertmanagerConfig":    reflect.TypeFor[extapi.AlertmanagerConfig](),
}

// Register adds a Go type for apiVersion/kind (for kinds whose API module
// virtc does not import and declares locally).
func Register(apiVersion, kind string, t reflect.Type) { types[apiVersion+"/"+kind] = t }

// Strict decodes every document of a YAML stream into its real Go type,
// rejecting unknown fields, and reports each failure.
func Strict(stream []byte) []error {
	var errs []error
	dec := yaml.NewDecoder(bytes.NewReader(stream))
	for i := 0; ; i++ {
		var doc map[string]any
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			return append(errs, fmt.Errorf("document %d: %v", i+1, err))
		}
		if doc == nil {
			continue
		}
		av, _ := doc["apiVersion"].(string)
		kind, _ := doc["kind"].(string)
		t, ok := types[av+"/"+kind]
		if !ok {
			errs = append(errs, fmt.Errorf("document %d: no Go type registered for %s %s", i+1, av, kind))
			continue
		}
		data, err := json.Marshal(doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("document %d (%s): %v", i+1, kind, err))
			continue
		}
		v := reflect.New(t).Interface()
		if err := sigsyaml.UnmarshalStrict(data, v); err != nil {
			errs = append(errs, fmt.Errorf("document %d (%s): %v", i+1, kind, err))
		}
	}
	return errs
}
