package importer

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/sizing"
)

// namespaceQuota is the quota, in VM terms, of a namespace in which some VMs
// are refused: it covers every live VM of the namespace, refused ones
// included, so that the ResourceQuota virtc compiles from it is never below
// what the running VMs use. Without it virtc would derive the quota from the
// imported VMs alone, and once Argo CD applies it the namespace's usage
// exceeds it: the ResourceQuota admission refuses every new virt-launcher
// pod (restart, migration target).
//
// Each VM counts with its live spec: the catalog size of its instance type,
// or its explicit sockets × cores × threads and guest memory; an explicit
// memory request above the guest memory counts instead, and an explicit CPU
// request or dedicated CPUs count as the vCPUs that request as much (virtc
// turns vCPUs into requests.cpu at 1/CPUAllocationRatio each). Storage is
// every live claim of the namespace (the ResourceQuota counts them all,
// backend-storage claims of persistent EFI/TPM included), plus the disks of
// VMs whose claim the export lacks (a DataVolume or dataVolumeTemplate).
//
// A refused VM with hot-plugged volumes runs a hot-plug attachment pod
// beside its virt-launcher (sizing.Model.Attachment, 10m CPU and 2M
// memory), and one more for the target of a live migration (counted
// whether or not the VM can migrate: the export's status, which says it,
// is not read, and the pod is small), which virtc counts for its own VMs
// only: the quota adds, for those pods and the spare one a change of
// volumes needs (sizing.Usage.AttachmentPods, held already when an imported
// VM of the namespace has hot-plugged volumes), their memory to the guest
// memory
// (rounded up to MiB) and as many vCPUs as request their CPU (hotplug is
// how many pods).
//
// A refused VM whose use cannot be stated in VM terms (its size unknown,
// huge pages, a disk whose size the export lacks) is returned in unknown:
// the namespace cannot be given a safe quota.
func (im *importer) namespaceQuota(ns string, refused map[string]bool) (q *api.TenantQuota, hotplug int64, unknown []string) {
	var vms, cpu int64
	importedHot := false
	var mem, storage resource.Quantity
	claims := map[string]bool{}
	for _, o := range im.objs {
		if o.Kind != "PersistentVolumeClaim" || o.Namespace != ns {
			continue
		}
		var pvc corev1.PersistentVolumeClaim
		if err := decodeInto(o.Body, &pvc); err != nil {
			unknown = append(unknown, fmt.Sprintf("claim %s (not a v1 PersistentVolumeClaim)", o.Name))
			continue
		}
		claims[o.Name] = true
		storage.Add(pvc.Spec.Resources.Requests[corev1.ResourceStorage])
	}
	for _, o := range im.objs {
		if o.Kind != "VirtualMachine" || o.Namespace != ns {
			continue
		}
		var kv kubevirtv1.VirtualMachine
		if err := decodeInto(o.Body, &kv); err != nil || kv.Spec.Template == nil {
			unknown = append(unknown, o.Name+" (not a KubeVirt v1 VirtualMachine with a template)")
			continue
		}
		c, m, why := im.liveShape(kv)
		if why != "" && (refused[o.Namespace+"/"+o.Name] || c == 0) {
			unknown = append(unknown, o.Name+" ("+why+")")
			continue
		}
		vms++
		cpu += c
		mem.Add(m)
		if refused[o.Namespace+"/"+o.Name] && im.hasTPM(kv) {
			// virtc adds the swtpm memory for its own VMs' TPM only.
			mem.Add(*resource.NewQuantity(sizing.KubeVirt.TPM, resource.BinarySI))
		}
		if hasHotplug(kv) {
			if refused[o.Namespace+"/"+o.Name] {
				hotplug += 2 // and one for a migration target
			} else {
				importedHot = true
			}
		}
		for _, v := range kv.Spec.Template.Spec.Volumes {
			name := ""
			switch {
			case v.DataVolume != nil:
				name = v.DataVolume.Name
			case v.PersistentVolumeClaim != nil:
				name = v.PersistentVolumeClaim.ClaimName
			default:
				continue
			}
			if claims[name] {
				continue
			}
			size, _, _, found := im.claimFacts(kv, ns, name)
			if !found || size.IsZero() {
				unknown = append(unknown, fmt.Sprintf("%s (the size of its disk %s is not in the export)", o.Name, name))
				continue
			}
			storage.Add(size)
		}
	}
	if hotplug > 0 && !importedHot {
		hotplug++ // the spare for a change of volumes
	}
	a, ratio := sizing.KubeVirt.Attachment, sizing.KubeVirt.CPUAllocationRatio
	// Whole MiB, so that the quota still reads in Mi.
	mem.Add(*resource.NewQuantity((hotplug*a.Memory+1<<20-1)>>20<<20, resource.BinarySI))
	// A vCPU in the quota requests 1000/ratio millicores.
	cpu += (hotplug*a.MilliCPU*ratio + 999) / 1000
	return &api.TenantQuota{VMs: &vms, CPU: &cpu, Memory: &mem, Storage: &storage}, hotplug, unknown
}

// hasHotplug reports whether a live VM has hot-plugged volumes (virtctl
// addvolume persists them in the VM's spec as hot-pluggable dataVolume or
// persistentVolumeClaim volumes): KubeVirt runs an attachment pod for them.
func hasHotplug(kv kubevirtv1.VirtualMachine) bool {
	for _, v := range kv.Spec.Template.Spec.Volumes {
		if v.DataVolume != nil && v.DataVolume.Hotpluggable || v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.Hotpluggable {
			return true
		}
	}
	return false
}

// liveShape is what a live VM counts as in a quota in VM terms: vCPUs and
// guest memory. why is set when VM terms cannot state what its pod requests
// (the vCPUs and memory are still returned when known: an imported VM is
// covered by virtc's own sizing where VM terms fall short, huge pages).
func (im *importer) liveShape(kv kubevirtv1.VirtualMachine) (cpu int64, mem resource.Quantity, why string) {
	ratio := sizing.KubeVirt.CPUAllocationRatio
	d := kv.Spec.Template.Spec.Domain
	if it := kv.Spec.Instancetype; it != nil {
		sz, ok := im.cat.Sizes.Get(it.Name)
		if !ok || it.InferFromVolume != "" {
			return 0, resource.Quantity{}, fmt.Sprintf("instance type %q is not a size of the catalog", it.Name)
		}
		cpu, mem = sz.Spec.CPU, sz.Spec.Memory
		if sz.Spec.DedicatedCPU {
			cpu *= ratio
		}
		if sz.Spec.Hugepages != "" {
			why = "its guest memory is in huge pages, which a quota in VM terms does not bound"
		}
		return cpu, mem, why
	}
	cpu = 1
	if c := d.CPU; c != nil {
		cpu = max(int64(c.Sockets), 1) * max(int64(c.Cores), 1) * max(int64(c.Threads), 1)
		if c.DedicatedCPUPlacement {
			cpu *= ratio
		}
	}
	if d.Memory != nil && d.Memory.Guest != nil {
		mem = *d.Memory.Guest
	}
	if r := d.Resources.Requests; r != nil {
		if m := r.Memory(); m.Cmp(mem) > 0 {
			mem = *m
		}
		if c := r.Cpu(); !c.IsZero() {
			cpu = max(cpu, (c.MilliValue()*ratio+999)/1000)
		}
	}
	if mem.IsZero() {
		return 0, resource.Quantity{}, "neither a catalog instance type nor guest memory or a memory request"
	}
	if d.Memory != nil && d.Memory.Hugepages != nil {
		why = "its guest memory is in huge pages, which a quota in VM terms does not bound"
	}
	return cpu, mem, why
}

// hasTPM reports whether a live VM has a TPM: in its domain, or from the
// catalog preference it names.
func (im *importer) hasTPM(kv kubevirtv1.VirtualMachine) bool {
	if kv.Spec.Template.Spec.Domain.Devices.TPM != nil {
		return true
	}
	if p := kv.Spec.Preference; p != nil {
		if pref, ok := im.cat.Preferences.Get(p.Name); ok {
			return pref.Spec.TPM != ""
		}
	}
	return false
}
