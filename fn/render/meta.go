// Package render turns the resolved model into Kubernetes objects, built
// with the real API types. One file per output kind; no renderer reads the
// catalog files: everything it needs is in the resolved model.
package render

import (
	"maps"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtc/virtc/fn/emit"
	"github.com/virtc/virtc/fn/resolve"
)

// Labels and annotations virtc sets.
const (
	LabelManagedBy     = "app.kubernetes.io/managed-by"
	ManagedBy          = "virtc"
	LabelTenant        = "virtc.dev/tenant"
	LabelVM            = "virtc.dev/vm"
	LabelBackupPolicy  = "virtc.dev/backup-policy"
	AnnotationSource   = "virtc.dev/source"
	AnnotationSyncWave = "argocd.argoproj.io/sync-wave"
)

// syncWaves order an Argo CD sync: namespaces and quota, then networks,
// then disks, then VMs, then backups.
var syncWaves = map[string]int{
	"Namespace":                   0,
	"ResourceQuota":               0,
	"RoleBinding":                 0,
	"NetworkAttachmentDefinition": 1,
	"UserDefinedNetwork":          1,
	"DataVolume":                  2,
	"VirtualMachine":              3,
	"Schedule":                    4,
	"Backup":                      4,
}

// objectMeta is the metadata every generated object carries: who manages
// it, the intent file it came from, and its sync wave.
func objectMeta(kind, namespace, name, source string, labels, annotations map[string]string) metav1.ObjectMeta {
	l := map[string]string{LabelManagedBy: ManagedBy}
	maps.Copy(l, labels)
	a := map[string]string{}
	maps.Copy(a, annotations)
	if source != "" {
		a[AnnotationSource] = source
	}
	if w, ok := syncWaves[kind]; ok {
		a[AnnotationSyncWave] = strconv.Itoa(w)
	}
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: l, Annotations: a}
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// Options are the settings renderers take from outside the model.
type Options struct{}

// All renders every object of the model.
func All(m *resolve.Model, opts Options) []emit.Object {
	var objs []emit.Object
	for _, t := range m.Tenants {
		objs = append(objs, Namespace(t))
		objs = append(objs, ResourceQuota(t))
		objs = append(objs, RoleBindings(t)...)
		for _, vm := range t.VMs {
			objs = append(objs, DataVolumes(vm)...)
			objs = append(objs, VirtualMachine(vm))
		}
	}
	return objs
}
