package admission

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	virtv1 "kubevirt.io/api/core/v1"

	netvmispec "kubevirt.io/kubevirt/pkg/network/vmispec"
	vmcontroller "kubevirt.io/kubevirt/pkg/virt-controller/watch/vm"
)

// StartedVMIs returns, for each VirtualMachine of stream (keyed
// "namespace/name"), the VirtualMachineInstance the cluster runs when the
// VM starts, for the boot suite (test/boot, issue 30): the VM as the VM
// mutating webhook and validating admitter admit it, its instancetype and
// preference applied (ApplyToVM, as checkVMI), the VMI the VM controller
// builds from it (pkg/virt-controller/watch/vm/vm.go startVMI:
// SetupVMIFromVM, AutoAttachInputDevice, netvmispec.SetDefaultNetworkInterface),
// then the VMI mutating webhook's patch (defaults, preset-free) and the VMI
// create admitter. Any denial is an error: a VM that does not get this far
// cannot start.
func StartedVMIs(input string, stream []byte) (map[string]*virtv1.VirtualMachineInstance, error) {
	quiet()
	objs, err := parseStream(stream)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", input, err)
	}
	c, err := newChecker(input, objs, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]*virtv1.VirtualMachineInstance{}
	for _, o := range objs {
		if o.group() != "kubevirt.io" || o.Kind != "VirtualMachine" {
			continue
		}
		c.checkVM(o)
		if len(c.report.Findings) > 0 {
			return nil, fmt.Errorf("%s", c.report.Findings[0])
		}
		mutated := c.mutate(o, o.raw, nil, "kubevirt VM mutating webhook")
		vm := &virtv1.VirtualMachine{}
		if err := json.Unmarshal(mutated, vm); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", input, about(o), err)
		}
		raw, failed, err := c.templateVMI(vm, true)
		if err != nil {
			return nil, fmt.Errorf("%s: VirtualMachine %s/%s: %s: %v", input, vm.Namespace, vm.Name, failed, err)
		}
		vmi := &virtv1.VirtualMachineInstance{}
		if err := json.Unmarshal(raw, vmi); err != nil {
			return nil, err
		}
		out[vm.Namespace+"/"+vm.Name] = vmi
	}
	return out, nil
}

// startedVMI is the VM controller's VMI of a VM whose instancetype and
// preference are applied (pkg/virt-controller/watch/vm/vm.go startVMI at
// KubeVirt v1.8.4).
func (c *checker) startedVMI(vm *virtv1.VirtualMachine) (*virtv1.VirtualMachineInstance, error) {
	vmi := vmcontroller.SetupVMIFromVM(vm)
	vmi.TypeMeta = metav1.TypeMeta{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance"}
	vmcontroller.AutoAttachInputDevice(vmi)
	if err := netvmispec.SetDefaultNetworkInterface(c.cl.config, &vmi.Spec); err != nil {
		return nil, err
	}
	return vmi, nil
}
