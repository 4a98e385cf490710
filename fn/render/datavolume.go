package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/virtc/virtc/fn/emit"
	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/sizing"
)

// CDI annotations on standalone DataVolumes.
const (
	// Keep the DataVolume object after its PVC is populated: Argo CD
	// manages it, and a vanished DataVolume would be re-created as a new,
	// empty disk.
	AnnotationDeleteAfterCompletion = "cdi.kubevirt.io/storage.deleteAfterCompletion"
	// Bind at once even on WaitForFirstConsumer classes, so that an Argo CD
	// health wait on the disk cannot deadlock with the VM that consumes it.
	AnnotationBindImmediate = "cdi.kubevirt.io/storage.bind.immediate.requested"
)

// DiskName is the DataVolume name of a VM's disk.
func DiskName(vm, disk string) string { return vm + "-" + disk }

// RootDiskName is the DataVolume name of a VM's root disk.
func RootDiskName(vm string) string { return vm + "-root" }

// AnnotationPopulatedFor marks a PVC as already populated for the
// DataVolume of that name: CDI then adopts it instead of creating one.
const AnnotationPopulatedFor = "cdi.kubevirt.io/storage.populatedFor"

// DataVolumes renders each data disk as a standalone DataVolume (unlike
// dataVolumeTemplates not owned by the VM, so a disk outlives its VM and can
// be detached deliberately) over a PersistentVolumeClaim that virtc writes
// itself. CDI refuses any change to a DataVolume's spec, but a PVC can grow:
// the PVC carries the disk's size, so growing a disk in Git is a PVC change
// the cluster accepts (online, with KubeVirt's disk expansion). A blank disk
// needs no import, so CDI adopts the PVC as populated for the DataVolume.
func DataVolumes(vm *resolve.VM, safe safety) []emit.Object {
	var objs []emit.Object
	for _, d := range vm.Disks {
		name := DiskName(vm.Name, d.Name)
		mode := corev1.PersistentVolumeMode(d.Storage.Spec.VolumeMode)
		class := d.Storage.Spec.StorageClass
		pvc := &corev1.PersistentVolumeClaim{
			TypeMeta: typeMeta("v1", "PersistentVolumeClaim"),
			ObjectMeta: safe.meta(objectMeta("PersistentVolumeClaim", vm.Namespace, name, vm.Doc.Rel, dataDiskLabels(vm, d), map[string]string{
				AnnotationPopulatedFor: name,
			})),
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.PersistentVolumeAccessMode(d.Storage.Spec.AccessMode)},
				VolumeMode:       &mode,
				StorageClassName: &class,
				Resources:        storageRequest(sizing.PVCQuantity(d.Size, sizing.FilesystemOverhead(d.Storage))),
			},
		}
		objs = append(objs, emit.Object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: vm.Namespace, Name: name, Scope: emit.VMScope, Body: pvc})
		dv := &cdiv1.DataVolume{
			TypeMeta: typeMeta("cdi.kubevirt.io/v1beta1", "DataVolume"),
			ObjectMeta: safe.meta(objectMeta("DataVolume", vm.Namespace, name, vm.Doc.Rel, dataDiskLabels(vm, d), map[string]string{
				AnnotationDeleteAfterCompletion: "false",
				AnnotationBindImmediate:         "true",
			})),
			Spec: cdiv1.DataVolumeSpec{
				Source:  &cdiv1.DataVolumeSource{Blank: &cdiv1.DataVolumeBlankImage{}},
				Storage: storageSpec(d.Storage, d.Size),
			},
		}
		objs = append(objs, emit.Object{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume", Namespace: vm.Namespace, Name: name, Scope: emit.VMScope, Body: dv})
	}
	return objs
}

func diskLabels(vm *resolve.VM) map[string]string {
	// The backup-policy label selects the disks with their VM.
	return map[string]string{LabelVM: vm.Name, LabelBackupPolicy: vm.Backup.Name}
}

// dataDiskLabels are a data disk's labels: a disk is retired with its VM
// or on its own.
func dataDiskLabels(vm *resolve.VM, d resolve.Disk) map[string]string {
	l := diskLabels(vm)
	if vm.Spec.Retired || d.Retired {
		l[LabelRetired] = "true"
	}
	return l
}

// storageSpec uses CDI's storage API: CDI completes it from the
// StorageProfile and adds the file system overhead itself.
func storageSpec(st resolve.Storage, size resource.Quantity) *cdiv1.StorageSpec {
	mode := corev1.PersistentVolumeMode(st.Spec.VolumeMode)
	class := st.Spec.StorageClass
	return &cdiv1.StorageSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.PersistentVolumeAccessMode(st.Spec.AccessMode)},
		VolumeMode:       &mode,
		StorageClassName: &class,
		Resources:        storageRequest(size),
	}
}

func storageRequest(size resource.Quantity) corev1.VolumeResourceRequirements {
	return corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}}
}
