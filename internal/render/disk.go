package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/sizing"
)

// AnnotationBindImmediate asks CDI to bind the claim it creates for a
// DataVolume at once, even on a WaitForFirstConsumer class. CDI copies a
// DataVolume's annotations to the claim it creates and reads this one
// there (containerized-data-importer v1.65.0, pkg/controller/common/util.go
// ImmediateBindingRequested, called by the import and upload controllers,
// the populators and the DataVolume controller with the PVC). It has no
// effect on a claim CDI does not create, so virtc sets it only on the
// golden-image DataVolumes, whose claims CDI creates and nobody consumes
// until a VM clones them (CDI's own DataImportCron controller sets it on
// its DataVolumes for the same reason).
const AnnotationBindImmediate = "cdi.kubevirt.io/storage.bind.immediate.requested"

// DataDisks renders each data disk as a PersistentVolumeClaim and nothing
// else: the VM uses it as a persistentVolumeClaim volume.
//
// Not a DataVolume, because CDI refuses every change to a DataVolume's
// spec (v1.65.0 pkg/apiserver/webhooks/datavolume-validate.go: "Cannot
// update DataVolume Spec"), so a DataVolume carrying the disk's size would
// wedge Argo CD's sync the day the disk grows. A blank disk needs no import
// either: on a Filesystem claim KubeVirt creates the sparse disk.img itself
// (kubevirt v1.8.4 pkg/host-disk ReplacePVCByHostDisk: "ExistsOrCreate", at
// the claim's request, or its capacity when that is smaller), a Block claim
// is the disk. Growing the disk grows the claim, which the cluster accepts
// when the StorageClass allows expansion, and KubeVirt's ExpandDisks (set
// by HCO v1.18.1 in every KubeVirt CR, controllers/handlers/kubevirt.go
// hardCodeKvFgs) shows the running guest the larger disk
// (pkg/virt-launcher/virtwrap/manager.go: BlockResize online, qemu-img
// resize at boot).
//
// The claim is not owned by the VM: deleting a VM does not delete its data
// disks. The claim's size on Filesystem volumes includes CDI's file system
// overhead, so the guest gets at least the disk's size.
func DataDisks(vm *resolve.VM, safe safety) []emit.Object {
	var objs []emit.Object
	for _, d := range vm.Disks {
		if d.Existing() {
			// An adopted VM's claim or DataVolume: not virtc's to write.
			continue
		}
		name := model.DiskName(vm.Name, d.Name)
		mode := corev1.PersistentVolumeMode(d.Storage.Spec.VolumeMode)
		class := d.Storage.Spec.StorageClass
		pvc := &corev1.PersistentVolumeClaim{
			TypeMeta:   typeMeta("v1", "PersistentVolumeClaim"),
			ObjectMeta: safe.meta(objectMeta("PersistentVolumeClaim", vm.Namespace, name, vm.Doc.Rel, dataDiskLabels(vm, d), nil)),
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.PersistentVolumeAccessMode(d.Storage.Spec.AccessMode)},
				VolumeMode:       &mode,
				StorageClassName: &class,
				Resources:        storageRequest(sizing.PVCQuantity(d.Size, sizing.FilesystemOverhead(d.Storage))),
			},
		}
		objs = append(objs, emit.Object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: vm.Namespace, Name: name, Scope: emit.VMScope, Body: pvc})
	}
	return objs
}

func diskLabels(vm *resolve.VM) map[string]string {
	// The backup-policy label selects the disks with their VM.
	return map[string]string{model.LabelVM: vm.Name, model.LabelBackupPolicy: vm.Backup.Name}
}

// dataDiskLabels are a data disk's labels: a disk is retired with its VM
// or on its own.
func dataDiskLabels(vm *resolve.VM, d resolve.Disk) map[string]string {
	l := diskLabels(vm)
	if vm.Spec.Retired || d.Retired {
		l[model.LabelRetired] = "true"
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
