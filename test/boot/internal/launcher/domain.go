// Package boot boots the VMs virtc compiles (issue 30): each VM goes
// through KubeVirt v1.8.4's own code to a libvirt domain (the VM
// controller's and webhooks' steps to a VMI, test/internal/admission StartedVMIs;
// virt-launcher's cloud-init generator pkg/cloud-init and converter
// pkg/virt-launcher/virtwrap/converter), only what a virt-launcher pod
// provides is changed (podChanges, the one list of them), and the domain
// boots under Debian's libvirt and QEMU with a Debian guest built by
// tools/build-image.sh.
package launcher

import (
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	virtv1 "kubevirt.io/api/core/v1"
	cloudinit "kubevirt.io/kubevirt/pkg/cloud-init"
	diskutils "kubevirt.io/kubevirt/pkg/ephemeral-disk-utils"
	cmdv1 "kubevirt.io/kubevirt/pkg/handler-launcher-com/cmd/v1"
	"kubevirt.io/kubevirt/pkg/network/domainspec"
	virtconfig "kubevirt.io/kubevirt/pkg/virt-config"
	"kubevirt.io/kubevirt/pkg/virt-launcher/virtwrap/api"
	"kubevirt.io/kubevirt/pkg/virt-launcher/virtwrap/converter"
	"kubevirt.io/kubevirt/pkg/virt-launcher/virtwrap/converter/arch"
	convertertypes "kubevirt.io/kubevirt/pkg/virt-launcher/virtwrap/converter/types"
	"kubevirt.io/kubevirt/pkg/virt-launcher/virtwrap/efi"
)

// ovmfNames maps the firmware file names virt-launcher's image has
// (pkg/virt-launcher/virtwrap/efi/efi.go) to Debian 12's ovmf package:
// KubeVirt's image ships edk2's 4 MiB builds under those names; Debian
// names them *_4M and the Microsoft-enrolled variables OVMF_VARS_4M.ms.fd
// (Debian's 2 MiB OVMF_CODE.secboot.fd does not get past SMM
// initialisation under TCG here: no output in minutes).
var ovmfNames = map[string]string{
	efi.EFICode:           "/usr/share/OVMF/OVMF_CODE_4M.fd",
	efi.EFIVars:           "/usr/share/OVMF/OVMF_VARS_4M.fd",
	efi.EFICodeSecureBoot: "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd",
	efi.EFIVarsSecureBoot: "/usr/share/OVMF/OVMF_VARS_4M.ms.fd",
}

var convertMu sync.Mutex

// launcher is one VMI's virt-launcher pod, as far as the domain needs it:
// its private directory stands in for the pod's /var/run/kubevirt-private,
// /var/run/kubevirt-ephemeral-disks and the OVMF directory.
type launcher struct {
	dir     string // private directory of this VMI
	hostKVM bool   // /dev/kvm can run the guest (else TCG: useEmulation)
	marker  string // the user data's marker, which KubeVirt must read ("": none)
	blockDV map[string]bool
	disks   map[string]*podDisk // by volume: the claims the pod gets
}

// podDisk is a claim of the VMI's pod: a qcow2 file of the claim's size
// stands in for it, an overlay of the guest image for the boot disk's.
type podDisk struct {
	claim string
	size  int64
	boot  bool
	file  string
}

// podDisks are the VMI's volumes backed by a claim (a DataVolume or a
// PVC), each with its claim's size and volume mode from claims (by claim
// name); the boot disk's (the first disk, or the lowest bootOrder) gets
// the guest image. blockDV says which DataVolume volumes are block
// claims, as virt-launcher finds them in its pod.
func podDisks(vmi *virtv1.VirtualMachineInstance, claims map[string]Claim) (disks map[string]*podDisk, blockDV map[string]bool, err error) {
	boot, bootOrder := "", uint(0)
	for i, d := range vmi.Spec.Domain.Devices.Disks {
		if d.Disk == nil {
			continue
		}
		if i == 0 || boot == "" {
			boot = d.Name
		}
		if d.BootOrder != nil && (bootOrder == 0 || *d.BootOrder < bootOrder) {
			boot, bootOrder = d.Name, *d.BootOrder
		}
	}
	disks, blockDV = map[string]*podDisk{}, map[string]bool{}
	for _, v := range vmi.Spec.Volumes {
		claim := ""
		switch {
		case v.DataVolume != nil:
			claim = v.DataVolume.Name
		case v.PersistentVolumeClaim != nil:
			claim = v.PersistentVolumeClaim.ClaimName
		default:
			continue
		}
		c, ok := claims[claim]
		if !ok {
			return nil, nil, fmt.Errorf("volume %s: no claim %s", v.Name, claim)
		}
		disks[v.Name] = &podDisk{claim: claim, size: c.Size, boot: v.Name == boot}
		if c.Block && v.DataVolume != nil {
			blockDV[v.Name] = true
		}
	}
	return disks, blockDV, nil
}

// Claim is what a launcher pod finds of a claim: its size in bytes and
// whether it is a block device (volumeMode Block).
type Claim struct {
	Size  int64
	Block bool
}

// createDisks writes each claim's file.
func (l *launcher) createDisks(image string) error {
	if err := os.MkdirAll(filepath.Join(l.dir, "disks"), 0o755); err != nil {
		return err
	}
	for vol, d := range l.disks {
		args := []string{"create", "-q", "-f", "qcow2"}
		if d.boot {
			args = append(args, "-F", "qcow2", "-b", image)
		}
		args = append(args, l.diskFile(vol), fmt.Sprint(d.size))
		if out, err := exec.Command("qemu-img", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("qemu-img %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

func (l *launcher) diskFile(vol string) string {
	return filepath.Join(l.dir, "disks", vol+".qcow2")
}

// serialBytes is how much of a disk's serial a guest can see on a bus: a
// virtio-blk device's ID string has 20 bytes (Linux
// include/uapi/linux/virtio_blk.h VIRTIO_BLK_ID_BYTES, QEMU's
// virtio-blk GET_ID), an ATA disk's IDENTIFY serial number 20 characters
// (words 10-19). An adopted vSphere disk's 32-character serial reaches
// the guest cut to 20, on the source's KubeVirt VM as on virtc's.
var serialBytes = map[virtv1.DiskBus]int{virtv1.DiskBusVirtio: 20, virtv1.DiskBusSATA: 20}

// wantDisks are the disks the guest must see: each claim's size, with
// the serial the VMI gives its disk.
func (l *launcher) wantDisks(vmi *virtv1.VirtualMachineInstance) []wantDisk {
	var out []wantDisk
	for _, d := range vmi.Spec.Domain.Devices.Disks {
		if pd := l.disks[d.Name]; pd != nil && d.Disk != nil {
			serial := d.Serial
			if n := serialBytes[d.Disk.Bus]; n > 0 && len(serial) > n {
				serial = serial[:n]
			}
			out = append(out, wantDisk{volume: d.Name, size: pd.size, serial: serial})
		}
	}
	return out
}

// domain is the libvirt domain XML virt-launcher defines for vmi
// (pkg/virt-launcher/virtwrap/manager.go generateConverterContext and
// SyncVMI at v1.8.4), then podChanges. The cloud-init disk is written by
// KubeVirt's own generator, as preStartHook and generateCloudInitISO do.
func (l *launcher) domain(vmi *virtv1.VirtualMachineInstance) (string, []string, error) {
	// KubeVirt's cloud-init package keeps its directory in a package
	// variable (SetLocalDirectory), which the converter reads for the ISO's
	// path: one VMI at a time.
	convertMu.Lock()
	defer convertMu.Unlock()
	ovmf := filepath.Join(l.dir, "ovmf")
	if err := os.MkdirAll(ovmf, 0o755); err != nil {
		return "", nil, err
	}
	for name, target := range ovmfNames {
		if err := os.Symlink(target, filepath.Join(ovmf, name)); err != nil && !os.IsExist(err) {
			return "", nil, err
		}
	}
	// virt-launcher hands its files to the pod's user "qemu", which runs
	// QEMU; here QEMU runs as root (podPaths' seclabel) and the files stay
	// root's: KubeVirt's no-op ownership manager.
	diskutils.MockDefaultOwnershipManager()
	if err := cloudinit.SetLocalDirectory(filepath.Join(l.dir, "cloud-init-data")); err != nil {
		return "", nil, err
	}
	secrets := filepath.Join(l.dir, "secrets")
	data, err := cloudinit.ReadCloudInitVolumeDataSource(vmi, secrets)
	if err != nil {
		return "", nil, fmt.Errorf("ReadCloudInitVolumeDataSource: %v", err)
	}
	if data != nil {
		if l.marker != "" && !strings.Contains(data.UserData, l.marker) {
			return "", nil, fmt.Errorf("the cloud-init user data KubeVirt reads lacks the suite's marker %s:\n%s", l.marker, data.UserData)
		}
		if err := cloudinit.PrepareLocalPath(vmi.Name, vmi.Namespace); err != nil {
			return "", nil, err
		}
		instancetype := vmi.Annotations[virtv1.ClusterInstancetypeAnnotation]
		if instancetype == "" {
			instancetype = vmi.Annotations[virtv1.InstancetypeAnnotation]
		}
		if err := cloudinit.GenerateLocalData(vmi, instancetype, data); err != nil {
			return "", nil, fmt.Errorf("GenerateLocalData: %v", err)
		}
	}

	var efiConf *convertertypes.EFIConfiguration
	if vmi.IsBootloaderEFI() {
		env := efi.DetectEFIEnvironment(runtime.GOARCH, ovmf)
		secureBoot := vmi.Spec.Domain.Firmware.Bootloader.EFI.SecureBoot == nil || *vmi.Spec.Domain.Firmware.Bootloader.EFI.SecureBoot
		if !env.Bootable(secureBoot, efi.None) {
			return "", nil, fmt.Errorf("EFI OVMF roms missing for booting in EFI mode with SecureBoot=%v", secureBoot)
		}
		efiConf = &convertertypes.EFIConfiguration{
			EFICode:      env.EFICode(secureBoot, efi.None),
			EFIVars:      env.EFIVars(secureBoot, efi.None),
			SecureLoader: secureBoot,
		}
	}
	permanent := map[string]virtv1.VolumeStatus{}
	for _, v := range vmi.Spec.Volumes {
		permanent[v.Name] = virtv1.VolumeStatus{Name: v.Name}
	}
	// virt-handler's options (pkg/virt-handler/options.go
	// virtualMachineOptions) with the cluster defaults HCO leaves alone.
	c := &convertertypes.ConverterContext{
		Architecture:              arch.NewConverter(runtime.GOARCH),
		VirtualMachine:            vmi,
		AllowEmulation:            !l.hostKVM,
		HypervisorDeviceAvailable: l.hostKVM,
		IsBlockPVC:                map[string]bool{},
		IsBlockDV:                 l.blockDV,
		EFIConfiguration:          efiConf,
		UseVirtioTransitional:     vmi.Spec.Domain.Devices.UseVirtioTransitional != nil && *vmi.Spec.Domain.Devices.UseVirtioTransitional,
		PermanentVolumes:          permanent,
		HotplugVolumes:            map[string]virtv1.VolumeStatus{},
		FreePageReporting:         freePageReporting(vmi),
		SerialConsoleLog:          vmi.Spec.Domain.Devices.LogSerialConsole == nil || *vmi.Spec.Domain.Devices.LogSerialConsole,
		SMBios: &cmdv1.SMBios{
			Family:       virtconfig.SmbiosConfigDefaultFamily,
			Manufacturer: virtconfig.SmbiosConfigDefaultManufacturer,
			Product:      virtconfig.SmbiosConfigDefaultProduct,
		},
		MemBalloonStatsPeriod:           10, // virt-config's MemBalloonStatsPeriod default
		BochsForEFIGuests:               true,
		Topology:                        &cmdv1.Topology{},
		DomainAttachmentByInterfaceName: domainspec.DomainAttachmentByInterfaceName(vmi.Spec.Domain.Devices.Interfaces, nil),
	}
	dom := &api.Domain{}
	if err := converter.Convert_v1_VirtualMachineInstance_To_api_Domain(vmi, dom, c); err != nil {
		return "", nil, fmt.Errorf("converter: %v", err)
	}
	// "Set defaults which are not coming from the cluster" (SyncVMI).
	api.NewDefaulter(c.Architecture.GetArchitecture()).SetObjectDefaults_Domain(dom)
	changes, err := l.podChanges(&dom.Spec)
	if err != nil {
		return "", nil, err
	}
	out, err := xml.MarshalIndent(dom.Spec, "", "  ")
	if err != nil {
		return "", nil, err
	}
	text := string(out)
	text, more := l.podPaths(text)
	changes = append(changes, more...)
	if strings.Contains(text, "/var/run/kubevirt") || strings.Contains(text, "/var/lib/kubevirt") {
		return "", nil, fmt.Errorf("a pod path is left in the domain:\n%s", text)
	}
	return text, changes, nil
}

// freePageReporting is virt-launcher's isFreePageReportingEnabled with the
// cluster default (not disabled).
func freePageReporting(vmi *virtv1.VirtualMachineInstance) bool {
	d := vmi.Spec.Domain.Devices
	return !(d.AutoattachMemBalloon != nil && !*d.AutoattachMemBalloon) && !vmi.IsHighPerformanceVMI() &&
		vmi.GetAnnotations()[virtv1.FreePageReportingDisabledAnnotation] != "true"
}

// podChanges are the only changes made to the converted domain: what a
// virt-launcher pod provides that this machine provides differently. Each
// is returned as a line for the test log and the README.
func (l *launcher) podChanges(spec *api.DomainSpec) ([]string, error) {
	var changes []string
	// 1. Disks: the pod gets each claim (a block device /dev/<volume>
	// for volumeMode Block, or <mount>/disk.img) with the boot disk's
	// image imported by CDI; here a qcow2 file of the claim's size stands
	// in for it, an overlay of the guest image for the boot disk.
	for i := range spec.Devices.Disks {
		d := &spec.Devices.Disks[i]
		src := d.Source.Dev + d.Source.File
		vol := ""
		switch {
		case strings.HasPrefix(src, "/dev/"):
			vol = strings.TrimPrefix(src, "/dev/")
		case strings.HasPrefix(src, "/var/run/kubevirt-private/vmi-disks/"):
			vol = strings.Split(strings.TrimPrefix(src, "/var/run/kubevirt-private/vmi-disks/"), "/")[0]
		default:
			continue
		}
		pd := l.disks[vol]
		if pd == nil {
			return nil, fmt.Errorf("disk %s: no claim for volume %s", d.Alias.GetName(), vol)
		}
		d.Type = "file"
		d.Source.Dev = ""
		d.Source.File = l.diskFile(vol)
		if d.Driver == nil {
			d.Driver = &api.DiskDriver{Name: "qemu"}
		}
		d.Driver.Type = "qcow2"
		what := "empty qcow2 of the claim's size"
		if pd.boot {
			what = "qcow2 overlay of the guest image, of the claim's size"
		}
		changes = append(changes, fmt.Sprintf("disk %s: claim %s at %s (CDI-imported or empty) -> %s (driver type raw -> qcow2)", d.Alias.GetName(), pd.claim, src, what))
	}
	// 2. NIC: the pod's network (masquerade/bridge binding: a tap device
	// virt-handler creates in the pod's namespace, managed='no') is
	// replaced by libvirt's user-mode networking: no host bridging here.
	for i := range spec.Devices.Interfaces {
		n := &spec.Devices.Interfaces[i]
		if n.Type != "ethernet" && n.Type != "bridge" {
			continue
		}
		changes = append(changes, fmt.Sprintf("interface %s: type %s (the pod's tap) -> user (libvirt user-mode networking)", n.Alias.GetName(), n.Type))
		n.Type = "user"
		n.Target = nil
		n.Source = api.InterfaceSource{}
		n.MTU = nil
	}
	// 3. <maxMemory slots="0">: virt-launcher's libvirt (10.x) accepts a
	// maxMemory without slots; libvirt 9.0 refuses slots='0'.
	if spec.MaxMemory != nil && spec.MaxMemory.Slots == 0 {
		changes = append(changes, "maxMemory slots=0 removed (refused by libvirt 9.0)")
		spec.MaxMemory = nil
	}
	// 4. Machine type: virt-launcher's QEMU is RHEL's build, with the
	// pc-q35-rhelX.Y.0 machine types; Debian's QEMU 7.2 has the upstream
	// ones, of which q35 is the newest.
	if m := spec.OS.Type.Machine; strings.HasPrefix(m, "pc-q35-rhel") {
		changes = append(changes, "machine type "+m+" -> q35 (RHEL's QEMU build in the launcher image; Debian's QEMU has the upstream machine types)")
		spec.OS.Type.Machine = "q35"
	}
	// 5. Under TCG only (no usable /dev/kvm): the Hyper-V
	// enlightenments (features/hyperv and the hypervclock timer) are
	// removed. QEMU implements them for KVM only and refuses them under
	// TCG ("kernel doesn't allow setting HyperV VP_INDEX"); a KubeVirt
	// node with useEmulation would refuse the same domain. On a KVM host
	// they stay.
	if !l.hostKVM {
		if spec.Features != nil && spec.Features.Hyperv != nil {
			spec.Features.Hyperv = nil
			changes = append(changes, "Hyper-V enlightenments removed (TCG only: QEMU implements them for KVM)")
		}
		if spec.Clock != nil {
			timers := spec.Clock.Timer[:0]
			for _, tm := range spec.Clock.Timer {
				if tm.Name == "hypervclock" {
					changes = append(changes, "hypervclock timer removed (TCG only: QEMU implements it for KVM)")
					continue
				}
				timers = append(timers, tm)
			}
			spec.Clock.Timer = timers
		}
	}
	return changes, nil
}

// podPaths moves the pod's private runtime directories (NVRAM, serial
// console socket and log, guest agent channel) under the launcher's
// directory, and runs QEMU as root with no relabelling: in the pod QEMU
// runs as the pod's user, which owns the pod's files; here they are root's.
func (l *launcher) podPaths(text string) (string, []string) {
	var changes []string
	for _, p := range []string{"/var/run/kubevirt-private/", "/var/run/kubevirt/"} {
		if strings.Contains(text, p) {
			// short: a UNIX socket path has at most 107 bytes
			text = strings.ReplaceAll(text, p, filepath.Join(l.dir, "p", filepath.Base(p)[len("kubevirt"):])+"/")
			changes = append(changes, "paths under "+p+" (NVRAM, serial console socket and log, VNC socket) -> the launcher's private directory")
		}
	}
	const seclabel = `  <seclabel type="static" model="dac" relabel="no"><label>+0:+0</label></seclabel>` + "\n</domain>"
	text = strings.Replace(text, "\n</domain>", "\n"+seclabel, 1)
	changes = append(changes, "seclabel dac +0:+0 relabel=no (QEMU runs as root, who owns the files here)")
	return text, changes
}

// mkdirs creates the directories the rewritten paths of a domain name.
func (l *launcher) mkdirs(text string) error {
	root := filepath.Join(l.dir, "p")
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == '"' || r == '\'' || r == '<' || r == '>' }) {
		if strings.HasPrefix(f, root) {
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

// overlay creates a qcow2 overlay of base of the given virtual size.
func overlay(base, path, size string) error {
	out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", base, path, size).CombinedOutput()
	if err != nil {
		return fmt.Errorf("qemu-img create: %v: %s", err, out)
	}
	return nil
}
