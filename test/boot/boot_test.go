package boot

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/virtc/virtc/test/admission"
)

// repoRoot is the root module's directory.
const repoRoot = "../.."

// scenario is one VM of virtc's goldens or examples that the suite boots.
type scenario struct {
	name   string
	dir    string   // the golden scenario (its inputs are built)
	inputs []string // its input files
	vm     string   // namespace/name of the VM booted
	family string   // the firmware/preference family it covers
	// domainHas are strings the converted domain has for the family.
	domainHas []string
}

var scenarios = []scenario{
	{
		name: "efi-secureboot", dir: "golden/basic-vm", inputs: []string{"intents.yaml"},
		vm: "team-a/app01", family: "EFI + Secure Boot + SMM (fedora preference)",
		domainHas: []string{`secure="yes"`, "OVMF_CODE.secboot.fd", "OVMF_VARS.secboot.fd", "<smm"},
	},
}

func TestBoot(t *testing.T) {
	require := os.Getenv("VIRTC_REQUIRE_TOOLS") == "1"
	var missing []string
	for _, tool := range []string{"qemu-system-x86_64", "qemu-img", "libvirtd", "virtlogd", "virsh", "xorrisofs", "debootstrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if os.Geteuid() != 0 {
		missing = append(missing, "root (debootstrap, loop devices, libvirtd)")
	}
	if len(missing) > 0 {
		if require {
			t.Fatalf("boot suite needs %s (apt-get install qemu-system-x86 qemu-utils libvirt-daemon-system ovmf swtpm swtpm-tools debootstrap xorriso fdisk dosfstools)", strings.Join(missing, ", "))
		}
		t.Skipf("boot suite needs %s", strings.Join(missing, ", "))
	}
	start := time.Now()
	out, err := exec.Command("tools/build-image.sh").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("building the guest image: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("building the guest image: %v", err)
	}
	image := strings.TrimSpace(string(out))
	t.Logf("guest image %s (%s)", image, time.Since(start).Round(time.Second))

	kvm, why := hostKVM()
	if !kvm {
		t.Logf("running under QEMU TCG (KubeVirt's useEmulation): %s", why)
	}
	bin := virtcBinary(t)
	// short: the domain's UNIX socket paths have at most 107 bytes
	work, err := os.MkdirTemp("/tmp", "vb.")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("VIRTC_BOOT_KEEP") == "" {
		t.Cleanup(func() { os.RemoveAll(work) })
	} else {
		t.Logf("keeping %s", work)
	}
	lv, err := startLibvirt(filepath.Join(work, "libvirt"), kvm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lv.stop)

	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			bootScenario(t, sc, bin, image, kvm, lv, filepath.Join(work, sc.name))
		})
	}
}

// TestDomains converts each scenario's VM to its domain without booting
// it (no root, no tools but virtc): KubeVirt's code accepts virtc's
// output, the pod-provided changes leave no pod path, and the firmware is
// the family's.
func TestDomains(t *testing.T) {
	bin := virtcBinary(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			dir := t.TempDir()
			l, vmi, _, stream := prepare(t, sc, bin, dir, false)
			domXML, changes, err := l.domain(vmi)
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) == 0 {
				t.Error("no pod-provided change applied")
			}
			if vm := vmOf(t, stream, sc.vm); vm.Spec.Template.Spec.Domain.Firmware == nil && vmi.Spec.Domain.Firmware == nil {
				t.Errorf("%s: no firmware in the VMI", sc.vm)
			}
			for _, want := range sc.domainHas {
				if !strings.Contains(domXML, want) {
					t.Errorf("domain of %s lacks %s:\n%s", sc.vm, want, domXML)
				}
			}
		})
	}
}

// prepare builds the scenario's inputs with the marker's user data, runs
// KubeVirt's steps to the VMI and returns the launcher of its domain.
func prepare(t *testing.T, sc scenario, bin, dir string, kvm bool) (*launcher, *virtv1.VirtualMachineInstance, string, []byte) {
	t.Helper()
	marker := "virtc-boot-" + randomHex(8)
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	// The cloud-init user data goes in through the VM's intent
	// (spec.cloudInit.userData), so virtc writes it into the VM.
	userData := "#cloud-config\nruncmd:\n  - [sh, -c, \"echo " + marker + " > /dev/ttyS0\"]\n"
	for _, in := range sc.inputs {
		data, err := os.ReadFile(filepath.Join(repoRoot, sc.dir, in))
		if err != nil {
			t.Fatal(err)
		}
		data, err = withUserData(data, sc.vm, userData)
		if err != nil {
			t.Fatalf("%s/%s: %v", sc.dir, in, err)
		}
		if err := os.WriteFile(filepath.Join(src, in), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append([]string{"build"}, sc.inputs...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = src, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("virtc build: %v\n%s", err, stderr.String())
	}
	if !bytes.Contains(stdout.Bytes(), []byte(marker)) {
		t.Fatalf("virtc's output lacks the user data given through the intent")
	}
	vmis, err := admission.StartedVMIs(sc.dir, stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	vmi := vmis[sc.vm]
	if vmi == nil {
		t.Fatalf("no VirtualMachine %s in virtc's output", sc.vm)
	}
	// The API server gives the VMI its UID.
	vmi.UID = types.UID("0b0a7e5c-30b0-4a11-9c3e-" + randomHex(12))
	l := &launcher{dir: dir, hostKVM: kvm, rootDisk: filepath.Join(dir, "root.qcow2"), blockDV: blockDataVolumes(t, stdout.Bytes(), sc.vm)}
	return l, vmi, marker, stdout.Bytes()
}

func bootScenario(t *testing.T, sc scenario, bin, image string, kvm bool, lv *libvirt, dir string) {
	l, vmi, marker, stream := prepare(t, sc, bin, dir, kvm)
	if vmi.Spec.Domain.Devices.AutoattachSerialConsole != nil && !*vmi.Spec.Domain.Devices.AutoattachSerialConsole {
		t.Fatalf("%s has no serial console: the boot suite reads the marker from it", sc.vm)
	}
	if err := overlay(image, l.rootDisk, rootDiskSize(t, stream, sc.vm)); err != nil {
		t.Fatal(err)
	}
	domXML, changes, err := l.domain(vmi)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		t.Logf("pod-provided change: %s", c)
	}
	if err := l.mkdirs(domXML); err != nil {
		t.Fatal(err)
	}
	domFile := filepath.Join(dir, "domain.xml")
	if err := os.WriteFile(domFile, []byte(domXML), 0o644); err != nil {
		t.Fatal(err)
	}
	name := vmi.Namespace + "_" + vmi.Name
	ctx := context.Background()
	if _, err := lv.virsh(ctx, "define", domFile); err != nil {
		t.Fatalf("%v\n%s", err, domXML)
	}
	t.Cleanup(func() {
		_, _ = lv.virsh(ctx, "destroy", name)
		_, _ = lv.virsh(ctx, "undefine", "--nvram", name)
	})
	booted := time.Now()
	if _, err := lv.virsh(ctx, "start", name); err != nil {
		t.Fatal(err)
	}
	serial := serialLog(t, domXML)

	// The marker of virtc's user data on the serial console.
	if err := waitFor(10*time.Minute, func() (bool, error) {
		data, _ := os.ReadFile(serial)
		return bytes.Contains(data, []byte(marker+"\r\n")) || bytes.Contains(data, []byte(marker+"\n")), domainAlive(ctx, lv, name)
	}); err != nil {
		tail, _ := os.ReadFile(serial)
		t.Fatalf("cloud-init user data marker %s not on the serial console: %v\n--- serial console (last 4000 bytes) ---\n%s", marker, err, lastBytes(tail, 4000))
	}
	t.Logf("%s: cloud-init user data ran (marker on the serial console) %s after start", sc.vm, time.Since(booted).Round(time.Second))

	// The guest agent answers guest-ping.
	if err := waitFor(3*time.Minute, func() (bool, error) {
		out, err := lv.virsh(ctx, "qemu-agent-command", name, `{"execute":"guest-ping"}`)
		return err == nil && strings.TrimSpace(out) == `{"return":{}}`, domainAlive(ctx, lv, name)
	}); err != nil {
		t.Fatalf("guest agent did not answer guest-ping: %v", err)
	}
	t.Logf("%s: guest agent answered guest-ping %s after start (%s)", sc.vm, time.Since(booted).Round(time.Second), sc.family)
}

// withUserData sets spec.cloudInit.userData of the VM intent vm
// (namespace/name) in a stream of intent documents.
func withUserData(data []byte, vm, userData string) ([]byte, error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs [][]byte
	found := false
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		if doc == nil {
			continue
		}
		meta, _ := doc["metadata"].(map[string]any)
		if doc["kind"] == "VM" && meta != nil && fmt.Sprint(meta["namespace"], "/", meta["name"]) == vm {
			spec, _ := doc["spec"].(map[string]any)
			ci, _ := spec["cloudInit"].(map[string]any)
			if ci == nil {
				ci = map[string]any{}
			}
			ci["userData"] = userData
			spec["cloudInit"] = ci
			found = true
		}
		out, err := yaml.Marshal(doc)
		if err != nil {
			return nil, err
		}
		docs = append(docs, out)
	}
	if !found {
		return data, nil
	}
	return bytes.Join(docs, []byte("---\n")), nil
}

// vmOf is the VirtualMachine namespace/name of virtc's output.
func vmOf(t *testing.T, stream []byte, key string) *virtv1.VirtualMachine {
	t.Helper()
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		vm := &virtv1.VirtualMachine{}
		if err := json.Unmarshal(raw, vm); err != nil || vm.Kind != "VirtualMachine" {
			continue
		}
		if vm.Namespace+"/"+vm.Name == key {
			return vm
		}
	}
	t.Fatalf("no VirtualMachine %s in virtc's output", key)
	return nil
}

// blockDataVolumes says which of the VM's DataVolume volumes are block
// PVCs (volumeMode Block), as virt-launcher finds them in its pod.
func blockDataVolumes(t *testing.T, stream []byte, key string) map[string]bool {
	vm := vmOf(t, stream, key)
	out := map[string]bool{}
	for _, dvt := range vm.Spec.DataVolumeTemplates {
		mode := dvt.Spec.Storage
		if mode != nil && mode.VolumeMode != nil && string(*mode.VolumeMode) == "Block" {
			for _, v := range vm.Spec.Template.Spec.Volumes {
				if v.DataVolume != nil && v.DataVolume.Name == dvt.Name {
					out[v.Name] = true
				}
			}
		}
	}
	return out
}

// rootDiskSize is the storage request of the VM's boot disk's
// DataVolume: the size of the PVC the guest's disk is.
func rootDiskSize(t *testing.T, stream []byte, key string) string {
	vm := vmOf(t, stream, key)
	for _, dvt := range vm.Spec.DataVolumeTemplates {
		if dvt.Spec.Storage != nil {
			if q, ok := dvt.Spec.Storage.Resources.Requests["storage"]; ok {
				return fmt.Sprint(q.Value())
			}
		}
	}
	t.Fatalf("VirtualMachine %s has no dataVolumeTemplate with a storage request", key)
	return ""
}

var logFileRE = regexp.MustCompile(`<log file="([^"]+)"`)

// serialLog is the file the domain's serial console is logged to
// (virt-launcher's SerialConsoleLog, on by default).
func serialLog(t *testing.T, domXML string) string {
	m := logFileRE.FindStringSubmatch(domXML)
	if m == nil {
		t.Fatalf("the domain logs no serial console:\n%s", domXML)
	}
	return m[1]
}

func domainAlive(ctx context.Context, lv *libvirt, name string) error {
	out, err := lv.virsh(ctx, "domstate", name)
	if err != nil {
		return err
	}
	if s := strings.TrimSpace(out); s != "running" {
		return fmt.Errorf("domain %s is %s", name, s)
	}
	return nil
}

// waitFor polls cond every 2 s until it holds, it errs, or d passes.
func waitFor(d time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(d)
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", d)
		}
		time.Sleep(2 * time.Second)
	}
}

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)[:n]
}

// virtcBinary is $VIRTC_BIN (the Makefile passes bin/virtc), or virtc
// built from the root module.
func virtcBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("VIRTC_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	bin, err := filepath.Abs(filepath.Join(t.TempDir(), "virtc"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/virtc")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building virtc: %v\n%s", err, out)
	}
	return bin
}
