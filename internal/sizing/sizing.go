// Package sizing computes what a VM costs the cluster in pod terms. KubeVirt
// runs each VM in a virt-launcher pod that requests the guest memory plus an
// overhead, and a share of a CPU per vCPU; ResourceQuota counts those pods, so
// a quota in VM terms must be translated with exactly these numbers.
package sizing

import (
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
)

const mi = 1 << 20

// Model is KubeVirt's resource model for a virt-launcher pod on KVM/amd64
// (GetMemoryOverhead and WithoutDedicatedCPU in virt-controller).
type Model struct {
	// Static is the fixed memory of the pod's processes: virt-launcher-monitor
	// 25Mi, virt-launcher 100Mi, virtlogd 25Mi, virtqemud 40Mi, qemu 30Mi.
	Static int64
	// PerVCPU is the memory added for each vCPU (CPU tables).
	PerVCPU int64
	// IOThread is the memory of the VM's IO thread, always added.
	IOThread int64
	// VideoRAM is the auto-attached graphics device (VNC console).
	VideoRAM int64
	// PagetableDivisor: one byte of page table per this many bytes of guest
	// memory.
	PagetableDivisor int64
	// CPUAllocationRatio: each vCPU requests 1/ratio of a CPU.
	CPUAllocationRatio int64
	// ConsoleLog is the guest-console-log container, present unless serial
	// console logging is disabled cluster-wide (HCO enables it by default).
	ConsoleLog Pod
	// ConsoleLogGuaranteed is that container in a Guaranteed-QoS pod
	// (dedicated CPUs), where requests equal its limits.
	ConsoleLogGuaranteed Pod
	// DedicatedOverhead is the memory added for dedicated CPUs.
	DedicatedOverhead int64
	// TPM is the memory of the swtpm process a VM with a TPM (transient or
	// persistent) runs in its launcher pod.
	TPM int64
	// Arm64UEFI is the memory of the two 64Mi UEFI flash devices QEMU
	// creates for an arm64 guest.
	Arm64UEFI int64
	// StatePVC is the size of the backend-storage PVC KubeVirt creates for
	// a VM with persistent EFI or TPM (Filesystem volume mode), before CDI
	// renders it (see StateClaim).
	StatePVC int64
	// Attachment is the request of a hot-plug attachment pod (hp-volume-*):
	// the one pod, beside the virt-launcher and in the VM's namespace, that
	// holds all hot-plugged volumes of a running VM. Its limits (100m CPU,
	// 80M memory) count only in a quota on limits.*, which virtc's does not
	// set.
	Attachment Pod
}

// KubeVirt is the model of the KubeVirt releases in OpenShift Virtualization
// 4.20 and 4.22 (v1.6, v1.8) with HCO's defaults: kubevirt.io/kubevirt
// v1.8.4 pkg/hypervisor/kvm/hypervisorbackend.go (GetMemoryOverhead of the
// kvm backend: the static processes, 8Mi per vCPU and for the IO thread,
// 32Mi video RAM, 128Mi on arm64, 53Mi for a TPM's swtpm, 100Mi for
// dedicated CPUs), pkg/instancetype/apply/memory.go (overcommitPercent) and
// pkg/storage/backend-storage/backend-storage.go (PVCSize 10Mi); the
// attachment pod's requests are pkg/virt-controller/services/
// renderresources.go hotplugContainerRequests (10m CPU, 2M memory, which
// only the KubeVirt CR's supportContainerResources would change and HCO
// v1.18.1 does not set).
var KubeVirt = Model{
	Static:               220 * mi,
	PerVCPU:              8 * mi,
	IOThread:             8 * mi,
	VideoRAM:             32 * mi,
	PagetableDivisor:     512,
	CPUAllocationRatio:   10,
	ConsoleLog:           Pod{MilliCPU: 5, Memory: 35_000_000},
	ConsoleLogGuaranteed: Pod{MilliCPU: 15, Memory: 60_000_000},
	DedicatedOverhead:    100 * mi,
	TPM:                  53 * mi,
	Arm64UEFI:            128 * mi,
	StatePVC:             10 * mi,
	Attachment:           Pod{MilliCPU: 10, Memory: 2_000_000},
}

// Pod is what a pod requests.
type Pod struct {
	// MilliCPU is the CPU request in millicores.
	MilliCPU int64
	// Memory is the memory request in bytes.
	Memory int64
	// Hugepages are huge-page requests in bytes, by page size (2Mi, 1Gi).
	Hugepages2Mi, Hugepages1Gi int64
}

// Add sums two requests.
func (p Pod) Add(q Pod) Pod {
	return Pod{p.MilliCPU + q.MilliCPU, p.Memory + q.Memory, p.Hugepages2Mi + q.Hugepages2Mi, p.Hugepages1Gi + q.Hugepages1Gi}
}

// Launcher is the request of the virt-launcher pod of a VM with vcpus vCPUs
// and guest bytes of memory: the compute container plus the console log.
func (m Model) Launcher(vcpus, guest int64) Pod {
	return m.LauncherFor(Shape{VCPUs: vcpus, Guest: guest})
}

// Shape is what decides a launcher pod's request.
type Shape struct {
	VCPUs, Guest int64
	// DedicatedCPU pins vCPUs (and the emulator thread) to host CPUs: the
	// pod is Guaranteed and requests whole CPUs.
	DedicatedCPU bool
	// Hugepages is the page size backing guest memory (2Mi, 1Gi), if any.
	Hugepages string
	// OvercommitPercent lowers the pod's memory request below the guest's
	// (the instance type's memory.overcommitPercent).
	OvercommitPercent int64
	// TPM: the VM has a TPM device (its preference's tpm, transient or
	// persistent).
	TPM bool
	// Arch is the VM's architecture (amd64 when empty).
	Arch string
}

// Request is the memory KubeVirt requests for the guest: the guest memory,
// less the overcommit (computed in float32 as KubeVirt does).
func (s Shape) Request() int64 {
	if s.OvercommitPercent <= 0 {
		return s.Guest
	}
	return int64(float32(s.Guest) * (1 - float32(s.OvercommitPercent)/100))
}

// LauncherFor is the request of the virt-launcher pod of a VM of a shape.
func (m Model) LauncherFor(s Shape) Pod {
	request := s.Request()
	overhead := m.MemoryOverhead(s.VCPUs, request)
	if s.TPM {
		overhead += m.TPM
	}
	if s.Arch == "arm64" {
		overhead += m.Arm64UEFI
	}
	compute := Pod{MilliCPU: s.VCPUs * 1000 / m.CPUAllocationRatio}
	console := m.ConsoleLog
	if s.DedicatedCPU {
		// One CPU per vCPU, and one for the isolated emulator thread.
		compute.MilliCPU = (s.VCPUs + 1) * 1000
		overhead += m.DedicatedOverhead
		console = m.ConsoleLogGuaranteed
	}
	switch s.Hugepages {
	case "2Mi":
		compute.Hugepages2Mi = s.Guest
		compute.Memory = overhead
	case "1Gi":
		compute.Hugepages1Gi = s.Guest
		compute.Memory = overhead
	default:
		compute.Memory = request + overhead
	}
	return compute.Add(console)
}

// MemoryOverhead is the memory the compute container requests beyond the
// guest's, for a VM without TPM, on amd64 (guest is the memory request).
func (m Model) MemoryOverhead(vcpus, guest int64) int64 {
	// KubeVirt scales the guest memory to kilobytes, rounding up, before it
	// divides: the page-table term is not exactly guest/512.
	kilo := (guest + 999) / 1000
	pagetable := kilo * 1000 / m.PagetableDivisor
	return pagetable + m.Static + vcpus*m.PerVCPU + m.IOThread + m.VideoRAM
}

// Milli is millicores as a quantity.
func Milli(m int64) resource.Quantity { return *resource.NewMilliQuantity(m, resource.DecimalSI) }

// Bytes is bytes as a binary quantity (Mi, Gi where exact).
func Bytes(b int64) resource.Quantity { return *resource.NewQuantity(b, resource.BinarySI) }

// PVC is the size of the PVC that CDI creates for a disk of size bytes. On
// Filesystem volumes CDI's storage API adds the file system overhead so that
// the disk image fits: size / (1 - overhead), rounded up to whole MiB.
func PVC(size int64, filesystemOverhead float64) int64 {
	if filesystemOverhead <= 0 {
		return size
	}
	raw := float64(size) / (1 - filesystemOverhead)
	n := int64(raw)
	if float64(n) < raw {
		n++
	}
	return (n + mi - 1) / mi * mi
}

// PVCQuantity is PVC as a quantity: the disk size itself where no overhead
// applies, so that the manifest says 100Gi rather than a byte count.
func PVCQuantity(size resource.Quantity, filesystemOverhead float64) resource.Quantity {
	if filesystemOverhead <= 0 {
		return size
	}
	return Bytes(PVC(size.Value(), filesystemOverhead))
}

// StateClaim is the storage request of a VM-state PVC once created, rounded
// up to whole MiB for the quota. KubeVirt requests StatePVC on a Filesystem
// claim labelled cdi.kubevirt.io/applyStorageProfile, and CDI's PVC
// rendering webhook (the WebhookPvcRendering gate, which HCO enables)
// inflates it by the class's file system overhead: aligned to 1MiB, times
// 1 + overhead, rounded up (containerized-data-importer v1.65.0
// pkg/apiserver/webhooks/pvc-mutate.go, pkg/controller/datavolume/util.go
// renderPvcSpecVolumeSize, pkg/util/util.go GetRequiredSpace).
func (m Model) StateClaim(filesystemOverhead float64) int64 {
	aligned := (m.StatePVC + mi - 1) / mi * mi
	inflated := int64(math.Ceil(float64(aligned) * (1 + filesystemOverhead)))
	return (inflated + mi - 1) / mi * mi
}
