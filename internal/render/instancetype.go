package render

import (
	kubevirtv1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

const instancetypeAPI = "instancetype.kubevirt.io/v1beta1"

// Instancetypes publishes the catalog's own sizes (not the builtin ones
// OpenShift Virtualization installs) as cluster instance types.
func Instancetypes(cat *catalog.Catalog, p *resolve.Platform) []emit.Object {
	var objs []emit.Object
	for _, name := range cat.Sizes.Names() {
		e, _ := cat.Sizes.Entry(name)
		if e.Obj.Spec.Builtin || e.Obj.Spec.Inline != nil {
			continue
		}
		it := &instancetypev1beta1.VirtualMachineClusterInstancetype{
			TypeMeta:   typeMeta(instancetypeAPI, "VirtualMachineClusterInstancetype"),
			ObjectMeta: objectMeta("VirtualMachineClusterInstancetype", "", name, e.Doc.Rel, map[string]string{model.LabelPlatform: p.Name}, nil),
			Spec:       instancetypeSpec(e.Obj.Spec),
		}
		objs = append(objs, emit.Object{APIVersion: instancetypeAPI, Kind: "VirtualMachineClusterInstancetype", Name: name, Scope: emit.Cluster, Body: it})
	}
	return objs
}

// Preferences publishes the catalog's own preferences.
func Preferences(cat *catalog.Catalog, p *resolve.Platform) []emit.Object {
	var objs []emit.Object
	for _, name := range cat.Preferences.Names() {
		e, _ := cat.Preferences.Entry(name)
		spec := e.Obj.Spec
		if spec.Builtin {
			continue
		}
		ps := instancetypev1beta1.VirtualMachinePreferenceSpec{}
		if spec.DiskBus != "" || spec.InterfaceModel != "" {
			ps.Devices = &instancetypev1beta1.DevicePreferences{
				PreferredDiskBus:        kubevirtv1.DiskBus(spec.DiskBus),
				PreferredInterfaceModel: spec.InterfaceModel,
			}
		}
		if spec.CPUTopology != "" {
			topo := instancetypev1beta1.PreferredCPUTopology(spec.CPUTopology)
			ps.CPU = &instancetypev1beta1.CPUPreferences{PreferredCPUTopology: &topo}
		}
		switch spec.Firmware {
		case "bios":
			yes := true
			ps.Firmware = &instancetypev1beta1.FirmwarePreferences{PreferredUseBios: &yes}
		case "efi", "efi-secureboot":
			secure := spec.Firmware == "efi-secureboot"
			efi := &kubevirtv1.EFI{SecureBoot: &secure}
			if spec.PersistentEFI {
				yes := true
				efi.Persistent = &yes
			}
			ps.Firmware = &instancetypev1beta1.FirmwarePreferences{PreferredEfi: efi}
			if secure {
				// Secure Boot needs SMM.
				ps.Features = &instancetypev1beta1.FeaturePreferences{PreferredSmm: &kubevirtv1.FeatureState{}}
			}
		}
		if spec.TPM != "" {
			persistent := spec.TPM == api.TPMPersistent
			if ps.Devices == nil {
				ps.Devices = &instancetypev1beta1.DevicePreferences{}
			}
			ps.Devices.PreferredTPM = &kubevirtv1.TPMDevice{Persistent: &persistent}
		}
		if spec.Architecture != "" {
			arch := spec.Architecture
			ps.PreferredArchitecture = &arch
		}
		if r := spec.Requirements; r != nil {
			ps.Requirements = &instancetypev1beta1.PreferenceRequirements{}
			if r.CPU > 0 {
				ps.Requirements.CPU = &instancetypev1beta1.CPUPreferenceRequirement{Guest: uint32(r.CPU)}
			}
			if r.Memory != nil {
				ps.Requirements.Memory = &instancetypev1beta1.MemoryPreferenceRequirement{Guest: *r.Memory}
			}
		}
		pref := &instancetypev1beta1.VirtualMachineClusterPreference{
			TypeMeta:   typeMeta(instancetypeAPI, "VirtualMachineClusterPreference"),
			ObjectMeta: objectMeta("VirtualMachineClusterPreference", "", name, e.Doc.Rel, map[string]string{model.LabelPlatform: p.Name}, nil),
			Spec:       ps,
		}
		objs = append(objs, emit.Object{APIVersion: instancetypeAPI, Kind: "VirtualMachineClusterPreference", Name: name, Scope: emit.Cluster, Body: pref})
	}
	return objs
}

func instancetypeSpec(s api.SizeSpec) instancetypev1beta1.VirtualMachineInstancetypeSpec {
	spec := instancetypev1beta1.VirtualMachineInstancetypeSpec{
		CPU:    instancetypev1beta1.CPUInstancetype{Guest: uint32(s.CPU)},
		Memory: instancetypev1beta1.MemoryInstancetype{Guest: s.Memory},
	}
	if s.DedicatedCPU {
		yes := true
		spec.CPU.DedicatedCPUPlacement = &yes
		spec.CPU.IsolateEmulatorThread = &yes
	}
	if s.Hugepages != "" {
		spec.Memory.Hugepages = &kubevirtv1.Hugepages{PageSize: s.Hugepages}
	}
	spec.Memory.OvercommitPercent = int(s.MemoryOvercommitPercent)
	for _, g := range s.GPUs {
		spec.GPUs = append(spec.GPUs, kubevirtv1.GPU{Name: g.Name, DeviceName: g.DeviceName})
	}
	return spec
}
