package diff

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/resolve"
)

// Cluster is what virtc assumes about the KubeVirt settings of the cluster
// when it says whether a running VM takes a change live.
type Cluster struct {
	// LiveUpdate is KubeVirt's spec.configuration.vmRolloutStrategy
	// LiveUpdate: changes to a VM propagate to the running VM where KubeVirt
	// can hot-plug them. With Stage, every change waits for a restart.
	LiveUpdate bool
	// MaxHotplugRatio is liveUpdateConfiguration.maxHotplugRatio: a VM can
	// be hot-plugged up to this many times the CPU sockets and memory it
	// booted with.
	MaxHotplugRatio int64
}

// DefaultCluster is OpenShift Virtualization with the LiveUpdate rollout
// strategy, KubeVirt's default hot-plug ratio (virtconfig
// DefaultMaxHotplugRatio = 4; HCO documents liveUpdateConfiguration.
// maxHotplugRatio "defaults to 4") and no cluster-wide maxCpuSockets or
// maxGuest.
var DefaultCluster = Cluster{LiveUpdate: true, MaxHotplugRatio: 4}

// KubeVirt's memory hot-plug constraints, from pkg/liveupdate/memory
// (ValidateLiveUpdateMemory): guest memory must be a multiple of the 2MiB
// hot-plug block (HotplugBlockAlignmentBytes), and memory hot-plug is only
// enabled for VMs that boot with at least 1GiB (requiredMinGuestMemory).
const (
	hotplugBlockBytes = 2 << 20
	hotplugMinMemory  = 1 << 30
	// With 1Gi huge pages the block is 1Gi
	// (Hotplug1GHugePagesBlockAlignmentBytes).
	hotplug1GiHugepagesBlockBytes = 1 << 30
)

// sizeChange says how a VM running with instance type from takes instance
// type to. virtc's VMs name a VirtualMachineClusterInstancetype with
// spec.cpu.guest and spec.memory.guest; unless their preference says
// otherwise (topology), KubeVirt spreads the vCPUs as sockets
// (applyGuestCPUTopology defaults to PreferSockets, and common-instancetypes'
// rhel, centos and fedora preferences set no CPU topology): a vCPU change
// is a socket change.
//
// With LiveUpdate, KubeVirt expands the instance type into the VM before it
// decides (virt-controller pkg/virt-controller/watch/vm/vm.go,
// addRestartRequiredIfNeeded), so an instance type change is treated as the
// equivalent edit of CPU sockets and guest memory:
//   - handleCPUChangeRequest: fewer sockets set RestartRequired ("Reduction
//     of CPU socket count requires a restart"); more sockets than the
//     VMI's maxSockets set RestartRequired; otherwise the sockets are
//     hot-plugged. maxSockets defaults to the boot sockets times
//     maxHotplugRatio (pkg/defaults setupCPUHotplug).
//   - handleMemoryHotplugRequest: a VM that is not live-migratable, or that
//     booted without memory hot-plug (maxGuest unset because
//     ValidateLiveUpdateMemory failed: under 1Gi or not 2Mi aligned), gets
//     RestartRequired; so does memory below what the VM booted with
//     ("memory updated in template spec to a value lower than what the VM
//     started with") or above maxGuest, which defaults to the boot memory
//     times maxHotplugRatio (setupMemoryHotplug).
//   - Both hot-plugs are carried out by live-migrating the VM (the workload
//     updater migrates a VMI with a HotVCPUChange or HotMemoryChange
//     condition; the user guide: "Current hotplug implementation involves
//     live-migration of the VM workload"), so a VM that cannot migrate
//     needs a restart.
//
// The result assumes the VM runs with the base size (maxSockets and
// maxGuest were computed at its last boot).
//
// Dedicated CPUs, huge pages and GPUs are instance type fields beyond CPU
// sockets and guest memory: a change of them is a template change KubeVirt
// does not live-update (addRestartRequiredIfNeeded). With 1Gi huge pages
// the memory hot-plug block is 1Gi (Hotplug1GHugePagesBlockAlignmentBytes).
//
// A preference that spreads vCPUs as cores, threads or both turns a vCPU
// change into a change of cores or threads, which KubeVirt does not
// hot-plug: addRestartRequiredIfNeeded copies only CPU.Sockets over before
// it compares.
func sizeChange(c Cluster, from, to *api.Size, topology string, migratable bool) (effect, detail string) {
	var what, blockers []string
	if !c.LiveUpdate {
		blockers = append(blockers, "the cluster's VM rollout strategy is Stage")
	}
	if from.Spec.DedicatedCPU != to.Spec.DedicatedCPU || from.Spec.Hugepages != to.Spec.Hugepages || !reflect.DeepEqual(from.Spec.GPUs, to.Spec.GPUs) {
		blockers = append(blockers, "dedicated CPUs, huge pages or GPUs change, which KubeVirt does not update in a running VM")
	}
	oldCPU, newCPU := from.Spec.CPU, to.Spec.CPU
	if newCPU != oldCPU && topology != "" && topology != "sockets" {
		blockers = append(blockers, fmt.Sprintf("the VM's preference spreads vCPUs as %s, and KubeVirt hot-plugs only CPU sockets", topology))
	}
	switch {
	case newCPU < oldCPU:
		what = append(what, "CPU sockets")
		blockers = append(blockers, "KubeVirt does not hot-unplug CPU sockets")
	case newCPU > oldCPU:
		what = append(what, "CPU sockets")
		if maxSockets := oldCPU * c.MaxHotplugRatio; newCPU > maxSockets {
			blockers = append(blockers, fmt.Sprintf("%d vCPUs exceed the %d CPU sockets the VM can hot-plug (%d× the %d it booted with)", newCPU, maxSockets, c.MaxHotplugRatio, oldCPU))
		}
	}
	oldMem, newMem := from.Spec.Memory, to.Spec.Memory
	switch oldMem.Cmp(newMem) {
	case 1:
		what = append(what, "memory")
		blockers = append(blockers, "KubeVirt does not hot-unplug memory below what the VM booted with")
	case -1:
		what = append(what, "memory")
		maxGuest := oldMem.Value() * c.MaxHotplugRatio
		block, blockName := int64(hotplugBlockBytes), "2Mi"
		if from.Spec.Hugepages == "1Gi" {
			block, blockName = hotplug1GiHugepagesBlockBytes, "1Gi"
		}
		switch {
		case oldMem.Value() < hotplugMinMemory:
			blockers = append(blockers, fmt.Sprintf("memory hot-plug is off for a VM that booted with less than 1Gi (%s)", oldMem.String()))
		case oldMem.Value()%block != 0 || newMem.Value()%block != 0:
			blockers = append(blockers, "memory hot-plug needs sizes in multiples of "+blockName)
		case newMem.Value() > maxGuest:
			blockers = append(blockers, fmt.Sprintf("%s exceeds the %s the VM can hot-plug (%d× the memory it booted with)", newMem.String(), quantity(maxGuest), c.MaxHotplugRatio))
		}
	}
	if len(what) == 0 {
		return EffectNone, "same vCPUs and memory: nothing changes for the running VM"
	}
	if len(blockers) == 0 && !migratable {
		blockers = append(blockers, "KubeVirt hot-plugs CPU and memory by live-migrating the VM, and this VM cannot live-migrate")
	}
	if len(blockers) > 0 {
		return EffectRestart, fmt.Sprintf("restart required: %s", strings.Join(blockers, "; "))
	}
	return EffectLive, "live update possible: KubeVirt hot-plugs the " + strings.Join(what, " and ") + " by live-migrating the VM"
}

// LiveSizeChange says how a running VM whose live size is from takes the
// size of the resolved VM to, by the rules of sizeChange (the cluster's
// rollout strategy and hot-plug ratio, no hot-unplug, maxSockets and
// maxGuest, the preference's topology from cat, migratability): virtc diff
// --live classifies a size difference with a live VM as virtc diff does
// between two commits.
func LiveSizeChange(c Cluster, cat *catalog.Catalog, from *api.Size, to *resolve.VM) (effect, detail string) {
	return sizeChange(c, from, to.Size, topologyOf(cat, to), to.CanMigrate())
}

func quantity(bytes int64) string {
	return resource.NewQuantity(bytes, resource.BinarySI).String()
}
