package importer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/fn/api"
)

// namespaceQuota is the quota, in VM terms, of a namespace in which some VMs
// are refused: it covers every live VM of the namespace, refused ones
// included, so that the ResourceQuota virtc compiles from it is never below
// what the running VMs use. Without it virtc would derive the quota from the
// imported VMs alone, and once Argo CD applies it the namespace's usage
// exceeds it: no virt-launcher pod could start any more (restart, migration
// target). The refused VMs are counted from their live spec: the catalog
// size of their instance type, or their explicit sockets × cores × threads
// and guest memory (or memory request); their disks from the live
// DataVolume and claim sizes. A VM whose vCPUs or memory cannot be read that
// way is returned in unknown: the namespace cannot be given a safe quota.
func (im *importer) namespaceQuota(ns string) (q *api.TenantQuota, unknown []string) {
	var vms, cpu int64
	var mem, storage resource.Quantity
	for _, o := range im.objs {
		if o.Kind != "VirtualMachine" || o.Namespace != ns {
			continue
		}
		var kv kubevirtv1.VirtualMachine
		if err := decodeInto(o.Body, &kv); err != nil || kv.Spec.Template == nil {
			unknown = append(unknown, o.Name+" (not a KubeVirt v1 VirtualMachine with a template)")
			continue
		}
		c, m, ok := im.liveShape(kv)
		if !ok {
			unknown = append(unknown, o.Name+" (neither a catalog instance type nor explicit CPU and memory)")
			continue
		}
		vms++
		cpu += c
		mem.Add(m)
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
			size, _, _, found := im.claimFacts(kv, ns, name)
			if !found {
				unknown = append(unknown, fmt.Sprintf("%s (the size of its disk %s is not in the export)", o.Name, name))
				continue
			}
			storage.Add(size)
		}
	}
	return &api.TenantQuota{VMs: &vms, CPU: &cpu, Memory: &mem, Storage: &storage}, unknown
}

// liveShape is a live VM's vCPUs and guest memory: those of the catalog size
// its instance type names, else its explicit domain CPU and memory.
func (im *importer) liveShape(kv kubevirtv1.VirtualMachine) (int64, resource.Quantity, bool) {
	if it := kv.Spec.Instancetype; it != nil {
		sz, ok := im.cat.Sizes.Get(it.Name)
		if !ok || it.InferFromVolume != "" {
			return 0, resource.Quantity{}, false
		}
		return sz.Spec.CPU, sz.Spec.Memory, true
	}
	d := kv.Spec.Template.Spec.Domain
	cpu := int64(1)
	if c := d.CPU; c != nil {
		cpu = max(int64(c.Sockets), 1) * max(int64(c.Cores), 1) * max(int64(c.Threads), 1)
	}
	var mem resource.Quantity
	switch {
	case d.Memory != nil && d.Memory.Guest != nil:
		mem = *d.Memory.Guest
	case d.Resources.Requests != nil && !d.Resources.Requests.Memory().IsZero():
		mem = *d.Resources.Requests.Memory()
	default:
		return 0, resource.Quantity{}, false
	}
	return cpu, mem, true
}
