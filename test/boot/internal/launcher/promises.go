package launcher

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	virtv1 "kubevirt.io/api/core/v1"
	"kubevirt.io/kubevirt/pkg/util/net/dns"
)

// factsScript runs in the guest through its agent (guest-exec) and prints
// what the guest sees, one key=value a line.
const factsScript = `
echo "vcpus=$(nproc)"
echo "memtotal_kib=$(awk '/^MemTotal:/{print $2}' /proc/meminfo)"
echo "uuid=$(cat /sys/class/dmi/id/product_uuid)"
echo "serial=$(cat /sys/class/dmi/id/product_serial)"
echo "hostname=$(hostname)"
if [ -d /sys/firmware/efi ]; then echo efi=1; else echo efi=0; fi
sb=/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c
if [ -f "$sb" ]; then echo "secureboot=$(od -An -tu1 "$sb" | awk '{print $NF}')"; else echo secureboot=0; fi
if [ -e /sys/class/tpm/tpm0 ]; then echo "tpm=$(cat /sys/class/tpm/tpm0/tpm_version_major 2>/dev/null || echo 1)"; else echo tpm=0; fi
for d in /sys/block/*; do
  n=${d##*/}
  case $n in loop*|ram*|sr*) continue;; esac
  s=$(lsblk -dno SERIAL "/dev/$n" 2>/dev/null | tr -d ' ')
  [ -n "$s" ] || s=$(cat "$d/serial" 2>/dev/null)
  echo "disk=$n $(( $(cat "$d/size") * 512 )) $s"
done
for n in /sys/class/net/*; do
  [ -e "$n/device/driver" ] || continue
  echo "nic=${n##*/} $(basename "$(readlink -f "$n/device/driver")") $(cat "$n/address")"
done
for f in /root/.ssh/authorized_keys /home/*/.ssh/authorized_keys; do
  [ -f "$f" ] && sed "s|^|sshkey=|" "$f"
done
true
`

// guestFacts are what the guest reports about itself.
type guestFacts struct {
	vcpus      int
	memKiB     int64
	uuid       string
	serial     string
	hostname   string
	efi        bool
	secureBoot bool
	tpm        int // TPM major version, 0 without one
	disks      []guestDisk
	nics       []guestNIC
	sshKeys    []string
}

type guestDisk struct {
	name   string
	size   int64
	serial string
}

type guestNIC struct {
	name, driver, mac string
}

func parseFacts(out string) (guestFacts, error) {
	var f guestFacts
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		var err error
		switch k {
		case "vcpus":
			f.vcpus, err = strconv.Atoi(v)
		case "memtotal_kib":
			f.memKiB, err = strconv.ParseInt(v, 10, 64)
		case "uuid":
			f.uuid = strings.ToLower(v)
		case "serial":
			f.serial = v
		case "hostname":
			f.hostname = v
		case "efi":
			f.efi = v == "1"
		case "secureboot":
			f.secureBoot = v == "1"
		case "tpm":
			f.tpm, err = strconv.Atoi(v)
		case "disk":
			p := strings.Fields(v)
			if len(p) < 2 {
				return f, fmt.Errorf("disk line %q", line)
			}
			d := guestDisk{name: p[0]}
			d.size, err = strconv.ParseInt(p[1], 10, 64)
			if len(p) > 2 {
				d.serial = p[2]
			}
			f.disks = append(f.disks, d)
		case "nic":
			p := strings.Fields(v)
			if len(p) != 3 {
				return f, fmt.Errorf("nic line %q", line)
			}
			f.nics = append(f.nics, guestNIC{name: p[0], driver: p[1], mac: strings.ToLower(p[2])})
		case "sshkey":
			f.sshKeys = append(f.sshKeys, strings.TrimSpace(v))
		}
		if err != nil {
			return f, fmt.Errorf("%q: %v", line, err)
		}
	}
	if f.vcpus == 0 || f.memKiB == 0 {
		return f, fmt.Errorf("no vCPU or memory figure in the guest's answer:\n%s", out)
	}
	return f, nil
}

func (f guestFacts) String() string {
	return fmt.Sprintf("%d vCPUs, MemTotal %d KiB, UUID %s, serial %s, hostname %s, EFI %v, Secure Boot %v, TPM %d, disks %v, NICs %v, %d SSH keys",
		f.vcpus, f.memKiB, f.uuid, f.serial, f.hostname, f.efi, f.secureBoot, f.tpm, f.disks, f.nics, len(f.sshKeys))
}

// readFacts runs factsScript in the guest through the guest agent
// (guest-exec, then guest-exec-status until it exits).
func readFacts(ctx context.Context, lv *libvirt, domain string) (guestFacts, error) {
	cmd, _ := json.Marshal(map[string]any{
		"execute": "guest-exec",
		"arguments": map[string]any{
			"path": "/bin/sh", "arg": []string{"-c", factsScript}, "capture-output": true,
		},
	})
	out, err := lv.virsh(ctx, "qemu-agent-command", domain, string(cmd))
	if err != nil {
		return guestFacts{}, fmt.Errorf("guest-exec: %v", err)
	}
	var started struct {
		Return struct {
			PID int `json:"pid"`
		} `json:"return"`
	}
	if err := json.Unmarshal([]byte(out), &started); err != nil {
		return guestFacts{}, fmt.Errorf("guest-exec: %v: %s", err, out)
	}
	status := fmt.Sprintf(`{"execute":"guest-exec-status","arguments":{"pid":%d}}`, started.Return.PID)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := lv.virsh(ctx, "qemu-agent-command", domain, status)
		if err != nil {
			return guestFacts{}, fmt.Errorf("guest-exec-status: %v", err)
		}
		var st struct {
			Return struct {
				Exited   bool   `json:"exited"`
				ExitCode int    `json:"exitcode"`
				OutData  string `json:"out-data"`
				ErrData  string `json:"err-data"`
			} `json:"return"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			return guestFacts{}, fmt.Errorf("guest-exec-status: %v: %s", err, out)
		}
		if st.Return.Exited {
			stdout, _ := base64.StdEncoding.DecodeString(st.Return.OutData)
			stderr, _ := base64.StdEncoding.DecodeString(st.Return.ErrData)
			if st.Return.ExitCode != 0 {
				return guestFacts{}, fmt.Errorf("facts script exited %d: %s", st.Return.ExitCode, stderr)
			}
			return parseFacts(string(stdout))
		}
		if time.Now().After(deadline) {
			return guestFacts{}, fmt.Errorf("facts script still running after 2m")
		}
		time.Sleep(time.Second)
	}
}

// wantDisk is a disk of the VM as its claim gives it to the guest.
type wantDisk struct {
	volume string
	size   int64
	serial string
}

// nicDrivers are the Linux drivers of KubeVirt's interface models
// (the domain's <model type=...>: pkg/virt-launcher/virtwrap/converter
// network.go; virtio is the default).
var nicDrivers = map[string]string{
	"virtio": "virtio_net",
	"e1000e": "e1000e",
	"e1000":  "e1000",
}

// checkPromises compares what the VMI promises with what the guest sees,
// and returns each mismatch.
func checkPromises(vmi *virtv1.VirtualMachineInstance, disks []wantDisk, sshKeys []string, got guestFacts) []string {
	var bad []string
	mismatch := func(what string, want, have any) {
		bad = append(bad, fmt.Sprintf("%s: the VM promises %v, the guest sees %v", what, want, have))
	}
	if want := vcpus(vmi); got.vcpus != want {
		mismatch("vCPUs", want, got.vcpus)
	}
	if mem := guestMemory(vmi); mem > 0 {
		// The kernel keeps part of it (its image, page tables, firmware
		// reservations); what it reports is within 15% below.
		if have := got.memKiB * 1024; have > mem || have < mem*85/100 {
			mismatch("memory (MemTotal)", fmt.Sprintf("%d bytes less the kernel's share (at most 15%%)", mem), fmt.Sprintf("%d bytes", have))
		}
	}
	fw := vmi.Spec.Domain.Firmware
	if fw != nil && fw.UUID != "" && got.uuid != strings.ToLower(string(fw.UUID)) {
		mismatch("firmware UUID (SMBIOS system UUID)", fw.UUID, got.uuid)
	}
	if fw != nil && fw.Serial != "" && got.serial != fw.Serial {
		mismatch("firmware serial (SMBIOS system serial)", fw.Serial, got.serial)
	}
	if want := dns.SanitizeHostname(vmi); got.hostname != want {
		mismatch("hostname", want, got.hostname)
	}
	efi := vmi.IsBootloaderEFI()
	if got.efi != efi {
		mismatch("EFI firmware", efi, got.efi)
	}
	sb := efi && (fw.Bootloader.EFI.SecureBoot == nil || *fw.Bootloader.EFI.SecureBoot)
	if got.secureBoot != sb {
		mismatch("Secure Boot enforced", sb, got.secureBoot)
	}
	tpm := vmi.Spec.Domain.Devices.TPM != nil && (vmi.Spec.Domain.Devices.TPM.Enabled == nil || *vmi.Spec.Domain.Devices.TPM.Enabled)
	wantTPM := 0
	if tpm {
		wantTPM = 2 // KubeVirt's TPM is swtpm's TPM 2.0 (converter: version 2.0)
	}
	if got.tpm != wantTPM {
		mismatch("TPM major version", wantTPM, got.tpm)
	}
	seen := map[int]bool{}
	for _, d := range disks {
		found := -1
		for i, g := range got.disks {
			if seen[i] || g.size != d.size || (d.serial != "" && g.serial != d.serial) {
				continue
			}
			found = i
			break
		}
		if found < 0 {
			mismatch("disk "+d.volume, fmt.Sprintf("%d bytes%s", d.size, serialNote(d.serial)), fmt.Sprint(got.disks))
			continue
		}
		seen[found] = true
	}
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		model := iface.Model
		if model == "" {
			model = "virtio"
		}
		driver := nicDrivers[model]
		ok := false
		for _, n := range got.nics {
			if (driver == "" || n.driver == driver) && (iface.MacAddress == "" || n.mac == strings.ToLower(iface.MacAddress)) {
				ok = true
			}
		}
		if !ok {
			mismatch("interface "+iface.Name, fmt.Sprintf("model %s (driver %s) MAC %q", model, driver, iface.MacAddress), fmt.Sprint(got.nics))
		}
	}
	for _, k := range sshKeys {
		found := false
		for _, g := range got.sshKeys {
			found = found || g == k
		}
		if !found {
			mismatch("SSH key of the VM's Secret", k, fmt.Sprint(got.sshKeys))
		}
	}
	sort.Strings(bad)
	return bad
}

func serialNote(s string) string {
	if s == "" {
		return ""
	}
	return " serial " + s
}

// vcpus is the vCPU count the VMI's domain starts with.
func vcpus(vmi *virtv1.VirtualMachineInstance) int {
	c := vmi.Spec.Domain.CPU
	if c == nil {
		return 1
	}
	n := 1
	for _, v := range []uint32{c.Sockets, c.Cores, c.Threads} {
		if v > 0 {
			n *= int(v)
		}
	}
	return n
}

// guestMemory is the memory the VMI gives its guest, in bytes.
func guestMemory(vmi *virtv1.VirtualMachineInstance) int64 {
	if m := vmi.Spec.Domain.Memory; m != nil && m.Guest != nil {
		return m.Guest.Value()
	}
	if q, ok := vmi.Spec.Domain.Resources.Requests["memory"]; ok {
		return q.Value()
	}
	return 0
}
