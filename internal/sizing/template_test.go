package sizing

import (
	"testing"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
)

// A VM without a preference (spec.preference none: a common-template VM)
// gets the TPM its firmware states, whatever its image's preference says:
// swtpm's 53Mi in the launcher (kubevirt.io/kubevirt v1.8.4
// pkg/virt-controller/services/renderresources.go) counts only for a VM
// that has a TPM.
func TestShapeOfTemplateVMTPM(t *testing.T) {
	on := true
	for _, tc := range []struct {
		name     string
		pref     *api.Preference
		firmware *api.Firmware
		want     bool
	}{
		{"preference without TPM, firmware with one", &api.Preference{}, &api.Firmware{Bootloader: "efi", TPM: &api.TPM{Persistent: &on}}, true},
		{"preference with TPM, firmware without", &api.Preference{Spec: api.PreferenceSpec{TPM: api.TPMPersistent}}, &api.Firmware{Bootloader: "bios"}, false},
		{"TPM disabled", &api.Preference{}, &api.Firmware{Bootloader: "efi", TPM: &api.TPM{Enabled: new(bool)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := linuxVM(api.MigrationIfPossible, false)
			vm.Preference = tc.pref
			vm.VM = decode.VM{VM: &api.VM{Spec: api.VMSpec{Preference: "none", Firmware: tc.firmware}}}
			if got := ShapeOf(vm).TPM; got != tc.want {
				t.Errorf("TPM %v, want %v", got, tc.want)
			}
		})
	}
}
