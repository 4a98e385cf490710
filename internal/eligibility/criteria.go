package eligibility

import (
	"fmt"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/resolve"
)

// criteria implements the criteria matrix.yaml names: each returns why the
// VM meets it (nothing: it does not).
var criteria = map[string]func(vm *resolve.VM) []Reason{
	"confidential": func(vm *resolve.VM) []Reason {
		var out []Reason
		if vm.Spec.Confidential != "" {
			out = append(out, Reason{Text: "confidential: " + vm.Spec.Confidential, Field: "spec.confidential"})
		}
		for _, u := range vm.PreviewFeatures {
			out = append(out, Reason{Text: fmt.Sprintf("feature gate %s (%s): %s", u.Gate, resolve.PreviewPhase(u.Phase), u.Why), Field: "spec"})
		}
		return out
	},
	"passthrough": func(vm *resolve.VM) []Reason {
		var out []Reason
		if s := vm.Size; s != nil {
			if len(s.Spec.GPUs) > 0 {
				out = append(out, Reason{Text: fmt.Sprintf("size %s passes GPUs through", vm.SizeName), Field: "spec.size"})
			}
			if s.Spec.DedicatedCPU {
				out = append(out, Reason{Text: fmt.Sprintf("size %s has dedicated CPUs", vm.SizeName), Field: "spec.size"})
			}
			if s.Spec.Hugepages != "" {
				out = append(out, Reason{Text: fmt.Sprintf("size %s uses %s huge pages", vm.SizeName, s.Spec.Hugepages), Field: "spec.size"})
			}
		}
		if len(vm.Spec.GPUs) > 0 {
			out = append(out, Reason{Text: "GPU passthrough", Field: "spec.gpus"})
		}
		if len(vm.Spec.HostDevices) > 0 {
			out = append(out, Reason{Text: "host device passthrough", Field: "spec.hostDevices"})
		}
		for i, n := range vm.Networks {
			if n.Spec.Type == api.NetworkSRIOV {
				out = append(out, Reason{Text: "SR-IOV network " + n.Name, Field: fmt.Sprintf("spec.networks[%d]", i), Subject: n.Name})
			}
		}
		return out
	},
	"non-x86": func(vm *resolve.VM) []Reason {
		// The architecture is the image's preference's, as virtc writes it
		// on the VM's template (internal/render Architecture) and as KubeVirt
		// v1.8.4 would set an empty VMI spec.architecture from the
		// preference's preferredArchitecture
		// (pkg/instancetype/preference/apply/architecture.go
		// ApplyArchitecturePreferences).
		p := vm.Preference
		if p == nil || p.Spec.Architecture == "" || p.Spec.Architecture == "amd64" {
			return nil
		}
		return []Reason{{Text: fmt.Sprintf("image %s is for %s (preference %s)", vm.ImageName, p.Spec.Architecture, p.Metadata.Name), Field: "spec.image"}}
	},
	"worker-node": func(vm *resolve.VM) []Reason {
		if !vm.Spec.WorkerNode {
			return nil
		}
		return []Reason{{Text: "spec.workerNode", Field: "spec.workerNode"}}
	},
	"migration-required": func(vm *resolve.VM) []Reason {
		if vm.Migration != api.MigrationRequired {
			return nil
		}
		return []Reason{{Text: "migration: Required", Field: "spec.migration"}}
	},
	"additional-network": func(vm *resolve.VM) []Reason {
		var out []Reason
		for i, n := range vm.Networks {
			switch n.Spec.Type {
			case api.NetworkPod, api.NetworkSRIOV:
			default:
				out = append(out, Reason{Text: "network " + n.Name, Field: fmt.Sprintf("spec.networks[%d]", i), Subject: n.Name})
			}
		}
		return out
	},
	"unqualified-storage": func(vm *resolve.VM) []Reason {
		var out []Reason
		seen := map[string]bool{}
		check := func(what, field string, st resolve.Storage) {
			if st.StorageProfile == nil || st.Spec.Qualified && st.Spec.VolumeMode == api.VolumeModeBlock || seen[st.Name] {
				return
			}
			seen[st.Name] = true
			why := fmt.Sprintf("not qualified: %s, %s", st.Spec.VolumeMode, st.Spec.AccessMode)
			if st.Spec.Qualified {
				why = "volumeMode " + st.Spec.VolumeMode + ", not raw block"
			}
			out = append(out, Reason{Text: fmt.Sprintf("%s on storage profile %s (%s)", what, st.Name, why), Field: field, Subject: st.Name})
		}
		check("root disk", "spec.rootDisk", vm.RootStorage)
		for i, d := range vm.Disks {
			if d.Retired {
				continue
			}
			check("disk "+d.Name, fmt.Sprintf("spec.disks[%d]", i), d.Storage)
		}
		return out
	},
}

// Meets evaluates one criterion of the matrix (its id) on a VM: why the VM
// meets it, nothing when it does not.
func Meets(id string, vm *resolve.VM) []Reason { return criteria[id](vm) }
