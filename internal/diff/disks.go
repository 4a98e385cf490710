package diff

import (
	"fmt"
	"slices"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
)

// RuleDiskDeleted is the object-level safety net's rule.
const RuleDiskDeleted = "disk-deleted"

// deletedDisks is a safety net under the VM-level rules, working on the
// generated objects alone: whatever the change in intent terms, a VM disk
// that the base output holds and the head output drops, when neither the
// disk nor its VM is retired on the base side, is refused. A disk object is
//
//   - a PersistentVolumeClaim or a standalone DataVolume labelled
//     virtc.dev/vm: gone from the output, Argo CD prunes it, and a
//     DataVolume takes its claim with it (CDI sets itself as the claim's
//     controller owner, also for a claim it adopted through
//     cdi.kubevirt.io/storage.populatedFor: containerized-data-importer
//     v1.65.0 pkg/controller/datavolume/controller-base.go validatePVC →
//     addOwnerRef);
//   - an entry of a VirtualMachine's dataVolumeTemplates (the root disk):
//     KubeVirt creates that DataVolume owned by the VM, so when the VM goes
//     Kubernetes garbage collection deletes the DataVolume and its claim;
//     when the entry is renamed, KubeVirt creates a new disk under the new
//     name (kubevirt v1.8.4 pkg/virt-controller/watch/vm/vm.go
//     handleDataVolumes) and the VM no longer uses the old one.
//
// An object the VM-level rules already refused (same kind and name) is not
// reported twice.
func (c *comparison) deletedDisks() {
	for _, o := range c.objects {
		// Only removed disks and changed or removed VMs can lose a disk:
		// an unchanged object (equal bytes) keeps every disk it had.
		if o.baseObj == nil || o.Status == Unchanged {
			continue
		}
		switch o.Kind {
		case "PersistentVolumeClaim", "DataVolume", "VirtualMachine":
		default:
			continue
		}
		base, err := emit.Generic(o.baseObj.Body)
		if err != nil {
			continue
		}
		switch o.Kind {
		case "PersistentVolumeClaim", "DataVolume":
			if o.Status != Removed {
				continue
			}
			labels := LabelsOf(base)
			vm := labels[model.LabelVM]
			if vm == "" || labels[model.LabelRetired] == "true" {
				continue
			}
			f := DiskDeleted(o.Kind, o.Namespace, o.Name, vm, "is no longer in the output")
			c.refuseDisk(f.Object, f.Message, f.Fix)
		case "VirtualMachine":
			if LabelsOf(base)[model.LabelRetired] == "true" {
				continue
			}
			var kept []string
			if o.headObj != nil {
				head, err := emit.Generic(o.headObj.Body)
				if err != nil {
					continue
				}
				kept = templateNames(head)
			}
			for _, name := range templateNames(base) {
				if slices.Contains(kept, name) {
					continue
				}
				dv := ref("DataVolume", o.Namespace, name)
				if o.headObj == nil {
					f := VMDiskDeleted(o.Namespace, o.Name, name)
					c.refuseDisk(f.Object, f.Message, f.Fix)
					continue
				}
				c.refuseDisk(dv,
					fmt.Sprintf("the dataVolumeTemplates entry %s of VirtualMachine %s/%s is renamed or removed: KubeVirt creates a new disk under the new name and the VM stops using %s", name, o.Namespace, o.Name, dv),
					"keep the disk's name; a different disk is a new VM (or a new data disk), the old one retired")
			}
		}
	}
}

// DiskDeleted is the refusal of a disk object of VM vm (a
// PersistentVolumeClaim, or a DataVolume and the claim it owns) that Argo
// CD prunes because the output no longer holds it; gone says why it is
// pruned. virtc diff --live uses it for a live object Argo CD tracks that
// virtc no longer writes.
func DiskDeleted(kind, namespace, name, vm, gone string) Finding {
	what := "Argo CD prunes it, data included"
	if kind == "DataVolume" {
		what = "Argo CD prunes it, and with it the PersistentVolumeClaim it owns (CDI is the claim's controller owner, also of a claim it adopted), data included"
	}
	object := ref(kind, namespace, name)
	if vm == "" {
		// A DataVolume no VM uses (virtc diff --live): it still owns
		// its claim.
		return Finding{Rule: RuleDiskDeleted, Object: object,
			Message: fmt.Sprintf("%s, a disk of no VM, %s: %s", object, gone, what),
			Fix:     "keep the disk in the output, or remove Argo CD's tracking from it (or delete it yourself) if its data may go"}
	}
	return Finding{Rule: RuleDiskDeleted, Object: object,
		Message: fmt.Sprintf("%s, a disk of VM %s/%s, %s and neither the disk nor the VM is retired: %s", object, namespace, vm, gone, what),
		Fix:     fmt.Sprintf("keep the disk in the output; to remove it, retire it (or VM %s) first, sync, and remove it in a later change", vm)}
}

// VMDiskDeleted is the refusal of VirtualMachine namespace/vm, deleted by
// Argo CD while not retired, for the DataVolume dv of its
// dataVolumeTemplates.
func VMDiskDeleted(namespace, vm, dv string) Finding {
	object := ref("DataVolume", namespace, dv)
	return Finding{Rule: RuleDiskDeleted, Object: object,
		Message: fmt.Sprintf("%s, the disk KubeVirt created from a dataVolumeTemplates entry of VirtualMachine %s/%s and owned by it, is deleted by Kubernetes garbage collection with its claim when Argo CD deletes the VM, which is not retired", object, namespace, vm),
		Fix:     "keep the VM; to remove it, retire it first (spec.retired: true), sync, and remove it in a later change"}
}

// TemplateNames are the names of a VirtualMachine's dataVolumeTemplates.
func TemplateNames(vm map[string]any) []string { return templateNames(vm) }

func (c *comparison) refuseDisk(object, message, fix string) {
	if slices.ContainsFunc(c.report.Refusals, func(f Finding) bool { return f.Object == object }) {
		return
	}
	c.refuse(RuleDiskDeleted, object, message, fix)
}

// LabelsOf are the string labels of an object's metadata.
func LabelsOf(obj map[string]any) map[string]string {
	meta, _ := obj["metadata"].(map[string]any)
	raw, _ := meta["labels"].(map[string]any)
	out := map[string]string{}
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// templateNames are the names of a VirtualMachine's dataVolumeTemplates.
func templateNames(vm map[string]any) []string {
	spec, _ := vm["spec"].(map[string]any)
	templates, _ := spec["dataVolumeTemplates"].([]any)
	var out []string
	for _, t := range templates {
		tm, _ := t.(map[string]any)
		meta, _ := tm["metadata"].(map[string]any)
		if name, _ := meta["name"].(string); name != "" {
			out = append(out, name)
		}
	}
	return out
}
