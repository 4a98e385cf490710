package vap

import (
	"encoding/json"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Split parses a YAML stream into objects.
func Split(data []byte) ([]map[string]any, error) {
	var out []map[string]any
	for _, doc := range strings.Split("\n"+string(data), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, err
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// Policies compiles the ValidatingAdmissionPolicies of an output, by the
// tenant (namespace) they guard.
func Policies(objs []map[string]any) (map[string]*Policy, error) {
	out := map[string]*Policy{}
	for _, o := range objs {
		if o["kind"] != "ValidatingAdmissionPolicy" {
			continue
		}
		var p admissionv1.ValidatingAdmissionPolicy
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, &p); err != nil {
			return nil, err
		}
		c, err := Compile(&p)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", p.Name, err)
		}
		out[p.Spec.MatchConstraints.NamespaceSelector.MatchLabels["virtc.dev/tenant"]] = c
	}
	return out, nil
}

// KubeVirtMutated is a VirtualMachine as KubeVirt's VM mutating webhook
// hands it on to the policies on create (kubevirt v1.8.4
// pkg/virt-api/webhooks/mutating-webhook/mutators/vm-mutator.go Mutate):
// /spec replaced by its Go type written out (so domain.resources is at
// least {}), firmware's uuid and serial filled (setFirmwareDefaultsIfEmpty),
// architecture and machine type defaulted (pkg/defaults/defaults.go
// SetVirtualMachineDefaults), and the template annotation
// kubevirt.io/pci-topology-version set to v3 (vmi-mutator.go
// setDefaultPciTopologyVersion; q35, the only machine type virtc writes,
// supports PCIe hotplug). The real webhook decides in test/argocd, whose
// clusters run virt-api.
func KubeVirtMutated(obj map[string]any) (map[string]any, error) {
	var vm kubevirtv1.VirtualMachine
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &vm); err != nil {
		return nil, err
	}
	if t := vm.Spec.Template; t != nil {
		d := &t.Spec.Domain
		if d.Firmware == nil {
			d.Firmware = &kubevirtv1.Firmware{}
		}
		if d.Firmware.UUID == "" {
			d.Firmware.UUID = "6a1a24a1-4061-4607-8bf4-a3963d0c5895"
		}
		if d.Firmware.Serial == "" {
			d.Firmware.Serial = "4b8b9e4b-2b7c-4b8e-9bd8-7e8f0b0c2a11"
		}
		if t.Spec.Architecture == "" {
			t.Spec.Architecture = "amd64"
		}
		if d.Machine == nil {
			d.Machine = &kubevirtv1.Machine{}
		}
		if d.Machine.Type == "" {
			d.Machine.Type = "q35"
		}
		if _, ok := t.ObjectMeta.Annotations[kubevirtv1.PciTopologyVersionAnnotation]; !ok {
			if t.ObjectMeta.Annotations == nil {
				t.ObjectMeta.Annotations = map[string]string{}
			}
			t.ObjectMeta.Annotations[kubevirtv1.PciTopologyVersionAnnotation] = kubevirtv1.PciTopologyVersionV3
		}
	}
	data, err := json.Marshal(vm)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(data, &out)
}
