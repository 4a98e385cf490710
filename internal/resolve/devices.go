package resolve

import (
	"fmt"
	"path"
	"slices"

	"github.com/virtc/virtc/internal/diag"
)

// hostDevices checks the Platform's permitted host devices: each is a PCI
// device or a mediated device (HCO v1.18.1 api/v1/hyperconverged_types.go:
// pciHostDevices are keyed by pciDeviceSelector, mediatedDevices by
// mdevNameSelector), its resource name is unique (KubeVirt's device
// plugins advertise one resource per name), and passthrough is enabled.
func hostDevices(p *Platform, diags *diag.List) {
	e, spec := &p.Entry, p.Obj.Spec
	if len(spec.HostDevices) > 0 && !slices.Contains(spec.Enable, "gpu") && !slices.Contains(spec.Enable, "hostDevices") {
		diags.Errorf(e.Doc.Pos("spec.hostDevices"), "spec.hostDevices", "host devices are permitted but no VM may use one: device passthrough is excluded from the platform baseline (enable it for prepared nodes with spec.enable: [gpu] or [hostDevices], or remove spec.hostDevices)")
	}
	seen := map[string]int{}
	for i, d := range spec.HostDevices {
		field := fmt.Sprintf("spec.hostDevices[%d]", i)
		if e.Doc.Shadows(field) {
			continue
		}
		switch {
		case d.PCIDeviceSelector != "" && d.MdevNameSelector != "":
			diags.Errorf(e.Doc.Pos(field+".mdevNameSelector"), field+".mdevNameSelector", "a host device is a PCI device (pciDeviceSelector) or a mediated device (mdevNameSelector), not both")
		case d.PCIDeviceSelector == "" && d.MdevNameSelector == "":
			diags.Errorf(e.Doc.Pos(field), field, "host device %q names no device: set pciDeviceSelector (vendor_id:product_id of a PCI device) or mdevNameSelector (a mediated device type such as a vGPU)", d.ResourceName)
		case d.MdevType != "" && d.MdevNameSelector == "":
			diags.Errorf(e.Doc.Pos(field+".mdevType"), field+".mdevType", "mdevType is the mediated device type KubeVirt creates for mdevNameSelector: only with mdevNameSelector")
		case d.MdevType != "" && slices.Contains(p.FeatureGates, disableMDev):
			// HCO v1.18.1 controllers/handlers/kubevirt.go,
			// toKvMediatedDevicesConfiguration: enabled false.
			diags.Errorf(e.Doc.Pos(field+".mdevType"), field+".mdevType", "feature gate %s is on, so KubeVirt creates no mediated devices (HCO sets the KubeVirt CR's mediatedDevicesConfiguration.enabled false): remove mdevType and create the devices outside KubeVirt, or remove the gate", disableMDev)
		}
		if j, dup := seen[d.ResourceName]; dup {
			diags.Errorf(e.Doc.Pos(field+".resourceName"), field+".resourceName", "resource name %q is already spec.hostDevices[%d]: each permitted device is advertised under a name of its own", d.ResourceName, j)
		} else {
			seen[d.ResourceName] = i
		}
	}
}

// disableMDev is the HyperConverged gate that stops KubeVirt's handling of
// mediated devices.
const disableMDev = "disableMDevConfiguration"

// PermittedDevices are the resource names of the Platform's host devices.
func (p *Platform) PermittedDevices() []string {
	var out []string
	for _, d := range p.Obj.Spec.HostDevices {
		out = append(out, d.ResourceName)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// AllowsDevice reports whether the tenant may pass a device through: its
// spec.allow.devices names it or a pattern matching it. Absent allows
// none (no implied device entitlement).
func (t *Tenant) AllowsDevice(resourceName string) bool {
	if t.Spec.Allow == nil {
		return false
	}
	for _, p := range t.Spec.Allow.Devices {
		if ok, _ := path.Match(p, resourceName); ok {
			return true
		}
	}
	return false
}

// DeviceUse is one device a VM passes through, with the intent field that
// asks for it.
type DeviceUse struct {
	// List is the VM's list field (spec.gpus, spec.hostDevices; spec.size
	// for a size's GPUs), Field the entry's deviceName (spec.size).
	List, Field string
	// ResourceName is the device's resource name (deviceName).
	ResourceName string
	// GPU: a GPU (enable gpu); else a host device (enable hostDevices).
	GPU bool
}

// Devices lists the devices the VM passes through: its size's GPUs, its
// own GPUs and host devices.
func (v *VM) Devices() []DeviceUse {
	var out []DeviceUse
	if s := v.Size; s != nil {
		for _, g := range s.Spec.GPUs {
			out = append(out, DeviceUse{List: "spec.size", Field: "spec.size", ResourceName: g.DeviceName, GPU: true})
		}
	}
	if v.VM.VM == nil {
		// A VM built without its intent (tests of the sizing model).
		return out
	}
	for i, g := range v.Spec.GPUs {
		out = append(out, DeviceUse{List: "spec.gpus", Field: fmt.Sprintf("spec.gpus[%d].deviceName", i), ResourceName: g.DeviceName, GPU: true})
	}
	for i, h := range v.Spec.HostDevices {
		out = append(out, DeviceUse{List: "spec.hostDevices", Field: fmt.Sprintf("spec.hostDevices[%d].deviceName", i), ResourceName: h.DeviceName})
	}
	return out
}
