package diff

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
)

// The object-level safety net works without the resolved models: these
// results hold objects only, so every refusal below comes from
// deletedDisks, not from the VM-level rules.

func meta(name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: labels}
}

func pvc(name string, labels map[string]string) emit.Object {
	return emit.Object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "shop", Name: name, Body: &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: meta(name, labels),
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}},
	}}
}

// dataVolume is a standalone DataVolume as virtc's previous output had
// them for data disks.
func dataVolume(name string, labels map[string]string) emit.Object {
	return emit.Object{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume", Namespace: "shop", Name: name, Body: &cdiv1.DataVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume"},
		ObjectMeta: meta(name, labels),
		Spec:       cdiv1.DataVolumeSpec{Source: &cdiv1.DataVolumeSource{Blank: &cdiv1.DataVolumeBlankImage{}}},
	}}
}

func virtualMachine(name string, labels map[string]string, rootDisk string) emit.Object {
	return emit.Object{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Namespace: "shop", Name: name, Body: &kubevirtv1.VirtualMachine{
		TypeMeta:   metav1.TypeMeta{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine"},
		ObjectMeta: meta(name, labels),
		Spec: kubevirtv1.VirtualMachineSpec{DataVolumeTemplates: []kubevirtv1.DataVolumeTemplateSpec{{
			ObjectMeta: metav1.ObjectMeta{Name: rootDisk},
		}}},
	}}
}

func TestDeletedDisks(t *testing.T) {
	vmLabel := map[string]string{model.LabelVM: "web"}
	retired := map[string]string{model.LabelVM: "web", model.LabelRetired: "true"}
	platform := map[string]string{model.LabelPlatform: "prod"}
	cases := []struct {
		name       string
		base, head []emit.Object
		refused    []string // Finding.Object of each disk-deleted refusal
	}{
		{
			name:    "standalone DataVolume of a disk dropped (the old output's data disk)",
			base:    []emit.Object{pvc("web-data", vmLabel), dataVolume("web-data", vmLabel)},
			head:    []emit.Object{pvc("web-data", vmLabel)},
			refused: []string{"DataVolume shop/web-data"},
		},
		{
			name:    "data disk claim dropped",
			base:    []emit.Object{pvc("web-data", vmLabel)},
			head:    nil,
			refused: []string{"PersistentVolumeClaim shop/web-data"},
		},
		{
			name: "retired disk dropped",
			base: []emit.Object{pvc("web-data", retired), dataVolume("web-data", retired)},
		},
		{
			name: "golden-image DataVolume replaced by a new one (not a VM disk)",
			base: []emit.Object{dataVolume("rhel9-0123456789", platform)},
			head: []emit.Object{dataVolume("rhel9-abcdefabcd", platform)},
		},
		{
			name:    "VM removed: its root disk is garbage-collected",
			base:    []emit.Object{virtualMachine("web", vmLabel, "web-root")},
			refused: []string{"DataVolume shop/web-root"},
		},
		{
			name: "retired VM removed",
			base: []emit.Object{virtualMachine("web", retired, "web-root")},
		},
		{
			name:    "root disk template renamed",
			base:    []emit.Object{virtualMachine("web", vmLabel, "web-root")},
			head:    []emit.Object{virtualMachine("web", vmLabel, "web-rootdisk")},
			refused: []string{"DataVolume shop/web-root"},
		},
		{
			name: "VM unchanged",
			base: []emit.Object{virtualMachine("web", vmLabel, "web-root"), pvc("web-data", vmLabel)},
			head: []emit.Object{virtualMachine("web", vmLabel, "web-root"), pvc("web-data", vmLabel)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Compare(compile.Result{Objects: tc.base}, compile.Result{Objects: tc.head}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range r.Refusals {
				if f.Rule != RuleDiskDeleted {
					t.Errorf("unexpected refusal %s: %s", f.Rule, f.Message)
					continue
				}
				got = append(got, f.Object)
			}
			if strings.Join(got, "\n") != strings.Join(tc.refused, "\n") {
				t.Errorf("refused %q, want %q", got, tc.refused)
			}
			if r.Allowed != (len(tc.refused) == 0) {
				t.Errorf("allowed = %v with refusals %q", r.Allowed, got)
			}
		})
	}
}
