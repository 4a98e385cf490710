package launcher

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
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/virtc/virtc/test/internal/admission"
)

// repoRoot is the root module's directory.
const repoRoot = "../../../.."

// scenario is one VM of virtc's goldens or examples that the suite boots.
type scenario struct {
	name   string
	family string   // the firmware/preference family it covers
	dir    string   // the folder copied to a temporary directory and built there
	args   []string // virtc build's arguments in that folder
	vm     string   // namespace/name of the VM booted
	// userDataSecret gives the marker's user data through a Secret
	// (spec.cloudInit.userDataSecret) instead of inline.
	userDataSecret bool
	// sshKeySecret adds a Secret with an SSH key to spec.sshKeySecrets
	// (propagated by cloud-init: accessCredentials noCloud).
	sshKeySecret bool
	// unreadableCloudInit makes the cloud-init disk one the guest cannot
	// read (its ISO's bytes zeroed): the suite must then fail, which this
	// scenario expects.
	unreadableCloudInit bool
	// claims are the sizes of claims the VM's volumes name that exist in
	// the cluster (not in virtc's output): an adopted VM's disks.
	claims map[string]string
	// domainHas are strings the converted domain has for the family;
	// kvmHas the ones it has only on a KVM host (TCG removes them).
	domainHas, kvmHas []string
}

// scenarios cover each firmware/preference family once.
var scenarios = []scenario{
	{
		name: "bios", family: "BIOS (ubuntu preference: no firmware preference, SeaBIOS)",
		dir: "examples/platform", args: []string{"."}, vm: "web/frontend-1", sshKeySecret: true,
		domainHas: []string{"<smbios mode=\"sysinfo\">"},
	},
	{
		name: "efi", family: "EFI without Secure Boot (a VM adopted from MTV: existing claim, MAC, machine type)",
		dir: "golden/import/mtv-vsphere", args: []string{"expected", "evidence.yaml", "catalog.yaml"}, vm: "migrated/web02", userDataSecret: true,
		claims:    map[string]string{"migrate-erp-vm-2044-p2r6w": "40Gi"},
		domainHas: []string{"OVMF_CODE.fd", `<mac address="00:50:56:8a:41:07">`},
	},
	{
		name: "efi-secureboot", family: "EFI + Secure Boot + SMM (fedora preference)",
		dir: "golden/basic-vm", args: []string{"intents.yaml"}, vm: "team-a/app01",
		domainHas: []string{`secure="yes"`, "OVMF_CODE.secboot.fd", "OVMF_VARS.secboot.fd", "<smm"},
	},
	{
		name: "efi-persistent-tpm", family: "persistent EFI + Secure Boot + persistent TPM 2.0 (hand-written devices: scsi root with a serial, sata data disk, e1000e NIC, base64 user data)",
		dir: "golden/vm-devices", args: []string{"tenant.yaml", "vm.yaml"}, vm: "shop/app01",
		domainHas: []string{`secure="yes"`, `<tpm model="tpm-crb">`, `persistent_state="yes"`, `<serial>app01-root</serial>`},
	},
	{
		name: "windows-devices", family: "the windows.2k22 preference's devices (sata, e1000e, Hyper-V enlightenments, EFI + Secure Boot, persistent TPM) with a Linux guest",
		dir: "examples/platform", args: []string{"."}, vm: "windows/ad-dc1",
		domainHas: []string{`bus="sata"`, `<model type="e1000e">`, `<tpm model="tpm-crb">`},
		kvmHas:    []string{"<hyperv", `<timer name="hypervclock"`},
	},
	{
		name: "unreadable-cloudinit", family: "a broken input: BIOS with a cloud-init disk the guest cannot read (expected to fail)",
		dir: "examples/platform", args: []string{"."}, vm: "web/frontend-2", unreadableCloudInit: true,
	},
}

func TestBoot(t *testing.T) {
	require := os.Getenv("VIRTC_REQUIRE_TOOLS") == "1"
	if missing := Missing(); len(missing) > 0 {
		if require {
			t.Fatalf("boot suite needs %s (%s)", strings.Join(missing, ", "), InstallHint)
		}
		t.Skipf("boot suite needs %s", strings.Join(missing, ", "))
	}
	start := time.Now()
	out, err := exec.Command(filepath.Join(repoRoot, "test/boot/tools/build-image.sh")).Output()
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

	// Guests boot side by side (TCG keeps one host thread a vCPU busy;
	// much of a boot is waiting), VIRTC_BOOT_PARALLEL at a time.
	parallel := 2
	if n, err := strconv.Atoi(os.Getenv("VIRTC_BOOT_PARALLEL")); err == nil && n > 0 {
		parallel = n
	}
	slots := make(chan struct{}, parallel)
	booted := make(chan bootResult, len(scenarios))
	t.Run("vms", func(t *testing.T) {
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				slots <- struct{}{}
				defer func() { <-slots }()
				r := bootScenario(t, sc, bin, image, kvm, lv, filepath.Join(work, sc.name))
				if r != nil {
					booted <- *r
				}
			})
		}
	})
	close(booted)
	// The checks can fail: each guest's facts against the promises of a
	// VM of another family must not hold.
	results := map[string]bootResult{}
	for r := range booted {
		results[r.sc.name] = r
	}
	for _, pair := range [][2]string{{"bios", "efi-secureboot"}, {"efi", "efi-persistent-tpm"}, {"efi-secureboot", "bios"}} {
		seen, promised := results[pair[0]], results[pair[1]]
		if seen.vmi == nil || promised.vmi == nil {
			continue
		}
		if bad := checkPromises(promised.vmi, promised.disks, promised.sshKeys, seen.facts); len(bad) == 0 {
			t.Errorf("the %s guest's facts pass the promise checks of the %s VM: the checks cannot fail", pair[0], pair[1])
		} else {
			t.Logf("the %s guest checked against the %s VM's promises fails, as it must: %s", pair[0], pair[1], strings.Join(bad, "; "))
		}
	}
}

// bootResult is a booted guest's facts and what its VM promised.
type bootResult struct {
	sc      scenario
	vmi     *virtv1.VirtualMachineInstance
	disks   []wantDisk
	sshKeys []string
	facts   guestFacts
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
			l, vmi, _ := prepare(t, sc, bin, dir, false)
			domXML, changes, err := l.domain(vmi)
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) == 0 {
				t.Error("no pod-provided change applied")
			}
			if vmi.Spec.Domain.Firmware == nil {
				t.Errorf("%s: no firmware in the VMI", sc.vm)
			}
			for _, want := range sc.domainHas {
				if !strings.Contains(domXML, want) {
					t.Errorf("domain of %s lacks %s:\n%s", sc.vm, want, domXML)
				}
			}
			if len(l.disks) == 0 {
				t.Errorf("%s: no disk with a claim", sc.vm)
			}
			for _, want := range sc.kvmHas {
				if strings.Contains(domXML, want) {
					t.Errorf("the TCG domain of %s has %s", sc.vm, want)
				}
			}
			l.hostKVM = true
			kvmXML, _, err := l.domain(vmi)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range append(sc.kvmHas, `<domain type="kvm"`) {
				if !strings.Contains(kvmXML, want) {
					t.Errorf("the KVM domain of %s lacks %s", sc.vm, want)
				}
			}
		})
	}
}

// bootKeys is the Secret of SSH keys the suite gives a VM (sshKeySecret).
const bootKeys = "virtc-boot-keys"

// bootUserData is the Secret of user data the suite gives a VM
// (userDataSecret).
const bootUserData = "virtc-boot-userdata"

// prepare builds the scenario's inputs with the marker's user data (and
// the scenario's Secrets) given through the VM's intent, runs KubeVirt's
// steps to the VMI and returns the launcher of its domain.
func prepare(t *testing.T, sc scenario, bin, dir string, kvm bool) (*launcher, *virtv1.VirtualMachineInstance, []string) {
	t.Helper()
	marker := "virtc-boot-" + randomHex(8)
	src := filepath.Join(dir, "src")
	if err := copyTree(filepath.Join(repoRoot, sc.dir), src); err != nil {
		t.Fatal(err)
	}
	userData := "#cloud-config\nruncmd:\n  - [sh, -c, \"echo " + marker + " > /dev/ttyS0\"]\n"
	found := false
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		edited, ok, err := editIntent(data, sc.vm, func(spec map[string]any) {
			ci, _ := spec["cloudInit"].(map[string]any)
			if ci == nil {
				ci = map[string]any{}
			}
			if sc.userDataSecret {
				delete(ci, "userData")
				delete(ci, "userDataEncoding")
				ci["userDataSecret"] = bootUserData
			} else {
				ci["userData"] = userData
			}
			spec["cloudInit"] = ci
			if sc.sshKeySecret {
				keys, _ := spec["sshKeySecrets"].([]any)
				spec["sshKeySecrets"] = append(keys, bootKeys)
			}
		})
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		if ok {
			found = true
			return os.WriteFile(path, edited, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("no VM intent %s in %s", sc.vm, sc.dir)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append([]string{"build"}, sc.args...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = src, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("virtc build: %v\n%s", err, stderr.String())
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
	vm, pvcs := readOutput(t, stdout.Bytes(), sc.vm)
	l := &launcher{dir: dir, hostKVM: kvm, marker: marker, blockDV: blockDataVolumes(vm)}
	l.disks = claimDisks(t, sc, vm, vmi, pvcs)

	// The Secrets, where virt-controller's pod mounts them
	// (pkg/virt-controller/services/rendervolumes.go: the user data
	// Secret at <SecretSourceDir>/<volume>/userdata, an access
	// credential's at <SecretSourceDir>/<secret>-access-cred/<key>).
	var keys []string
	secrets := filepath.Join(dir, "secrets")
	if sc.userDataSecret {
		vol := ""
		for _, v := range vmi.Spec.Volumes {
			if v.CloudInitNoCloud != nil && v.CloudInitNoCloud.UserDataSecretRef != nil && v.CloudInitNoCloud.UserDataSecretRef.Name == bootUserData {
				vol = v.Name
			}
		}
		if vol == "" {
			t.Fatalf("%s: no cloudInitNoCloud volume with userDataSecretRef %s", sc.vm, bootUserData)
		}
		writeFile(t, filepath.Join(secrets, vol, "userdata"), userData)
	}
	if sc.sshKeySecret {
		key := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + randomHex(43) + " virtc-boot"
		writeFile(t, filepath.Join(secrets, bootKeys+"-access-cred", "key1"), key)
		keys = append(keys, key)
	}
	return l, vmi, keys
}

func bootScenario(t *testing.T, sc scenario, bin, image string, kvm bool, lv *libvirt, dir string) *bootResult {
	l, vmi, keys := prepare(t, sc, bin, dir, kvm)
	if vmi.Spec.Domain.Devices.AutoattachSerialConsole != nil && !*vmi.Spec.Domain.Devices.AutoattachSerialConsole {
		t.Fatalf("%s has no serial console: the boot suite reads the marker from it", sc.vm)
	}
	var edit func(string) error
	if sc.unreadableCloudInit {
		edit = func(domXML string) error {
			iso := noCloudISO.FindStringSubmatch(domXML)
			if iso == nil {
				return fmt.Errorf("%s: no NoCloud disk in the domain", sc.vm)
			}
			st, err := os.Stat(iso[1])
			if err != nil {
				return err
			}
			return os.WriteFile(iso[1], make([]byte, st.Size()), 0o644)
		}
	}
	ctx := context.Background()
	name, domXML, changes, err := l.start(lv, vmi, image, edit)
	if name != "" {
		t.Cleanup(func() {
			_, _ = lv.virsh(ctx, "destroy", name)
			_, _ = lv.virsh(ctx, "undefine", "--nvram", "--tpm", name)
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	booted := time.Now()
	for _, c := range changes {
		t.Logf("pod-provided change: %s", c)
	}
	serial := serialLog(t, domXML)

	// The marker of virtc's user data on the serial console, before
	// cloud-init's final stage says it finished.
	err = waitFor(20*time.Minute, func() (bool, error) {
		data, _ := os.ReadFile(serial)
		if consoleHas(data, l.marker) {
			return true, nil
		}
		if m := cloudInitFinished.Find(data); m != nil {
			return false, fmt.Errorf("cloud-init finished without running the user data (%s)", bytes.TrimSpace(m))
		}
		if m := kernelPanic.Find(data); m != nil {
			return false, fmt.Errorf("the guest's kernel panicked (%s)", bytes.TrimSpace(m))
		}
		return false, domainAlive(ctx, lv, name)
	})
	if sc.unreadableCloudInit {
		if err == nil {
			t.Fatalf("%s: the user data ran from a cloud-init disk the guest cannot read: the check cannot fail", sc.vm)
		}
		t.Logf("%s: with an unreadable cloud-init disk the suite fails, as it must: %v (%s after start)", sc.vm, err, time.Since(booted).Round(time.Second))
		return nil
	}
	if err != nil {
		tail, _ := os.ReadFile(serial)
		t.Fatalf("cloud-init user data marker %s not on the serial console: %v\n--- serial console (last 4000 bytes) ---\n%s", l.marker, err, lastBytes(tail, 4000))
	}
	t.Logf("%s: cloud-init user data ran (marker on the serial console) %s after start", sc.vm, time.Since(booted).Round(time.Second))

	// The guest agent answers guest-ping.
	if err := waitFor(3*time.Minute, func() (bool, error) {
		return lv.agentAnswers(ctx, name), domainAlive(ctx, lv, name)
	}); err != nil {
		t.Fatalf("guest agent did not answer guest-ping: %v", err)
	}
	t.Logf("%s: guest agent answered guest-ping %s after start (%s)", sc.vm, time.Since(booted).Round(time.Second), sc.family)

	// What the VM promises is what the guest sees.
	facts, err := readFacts(ctx, lv, name)
	if err != nil {
		t.Fatal(err)
	}
	want := l.wantDisks(vmi)
	if bad := checkPromises(vmi, want, keys, facts); len(bad) > 0 {
		t.Errorf("%s: the guest does not see what the VM promises:\n  %s", sc.vm, strings.Join(bad, "\n  "))
	}
	t.Logf("%s: the guest sees %s", sc.vm, facts)
	return &bootResult{sc: sc, vmi: vmi, disks: want, sshKeys: keys, facts: facts}
}

// editIntent changes spec of the VM intent vm (namespace/name) in a
// stream of intent documents; ok is false when the stream does not have
// it (data is then returned as it is).
func editIntent(data []byte, vm string, edit func(spec map[string]any)) ([]byte, bool, error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs [][]byte
	found := false
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			return nil, false, err
		}
		if doc == nil {
			continue
		}
		meta, _ := doc["metadata"].(map[string]any)
		if doc["kind"] == "VM" && meta != nil && fmt.Sprint(meta["namespace"], "/", meta["name"]) == vm {
			spec, _ := doc["spec"].(map[string]any)
			edit(spec)
			found = true
		}
		out, err := yaml.Marshal(doc)
		if err != nil {
			return nil, false, err
		}
		docs = append(docs, out)
	}
	if !found {
		return data, false, nil
	}
	return bytes.Join(docs, []byte("---\n")), true, nil
}

// claimDisks are the VM's volumes backed by a claim (a DataVolume of its
// dataVolumeTemplates, a PVC of virtc's output or one the cluster has),
// each with the claim's size; the boot disk's gets the guest image.
func claimDisks(t *testing.T, sc scenario, vm *virtv1.VirtualMachine, vmi *virtv1.VirtualMachineInstance, pvcs map[string]string) map[string]*podDisk {
	t.Helper()
	sizes := map[string]string{}
	for _, dvt := range vm.Spec.DataVolumeTemplates {
		if dvt.Spec.Storage != nil {
			if q, ok := dvt.Spec.Storage.Resources.Requests["storage"]; ok {
				sizes[dvt.Name] = q.String()
			}
		}
	}
	for k, v := range pvcs {
		sizes[k] = v
	}
	for k, v := range sc.claims {
		sizes[k] = v
	}
	claims := map[string]Claim{}
	for name, size := range sizes {
		q, err := resource.ParseQuantity(size)
		if err != nil {
			t.Fatal(err)
		}
		claims[name] = Claim{Size: q.Value()}
	}
	disks, _, err := podDisks(vmi, claims)
	if err != nil {
		t.Fatalf("%s: %v (not in the VM's dataVolumeTemplates, virtc's output or the scenario's claims)", sc.vm, err)
	}
	return disks
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readOutput reads virtc's output once: the VirtualMachine key
// (namespace/name), and the storage requests of the
// PersistentVolumeClaims in its namespace, by name.
func readOutput(t *testing.T, stream []byte, key string) (*virtv1.VirtualMachine, map[string]string) {
	t.Helper()
	var vm *virtv1.VirtualMachine
	ns, _, _ := strings.Cut(key, "/")
	pvcs := map[string]string{}
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var head metav1.PartialObjectMetadata
		if err := json.Unmarshal(raw, &head); err != nil {
			t.Fatal(err)
		}
		switch head.Kind {
		case "VirtualMachine":
			if head.Namespace+"/"+head.Name == key {
				vm = &virtv1.VirtualMachine{}
				if err := json.Unmarshal(raw, vm); err != nil {
					t.Fatal(err)
				}
			}
		case "PersistentVolumeClaim":
			if head.Namespace != ns {
				continue
			}
			var pvc corev1.PersistentVolumeClaim
			if err := json.Unmarshal(raw, &pvc); err != nil {
				t.Fatal(err)
			}
			if q, ok := pvc.Spec.Resources.Requests["storage"]; ok {
				pvcs[pvc.Name] = q.String()
			}
		}
	}
	if vm == nil {
		t.Fatalf("no VirtualMachine %s in virtc's output", key)
	}
	return vm, pvcs
}

// blockDataVolumes says which of the VM's DataVolume volumes are block
// PVCs (volumeMode Block), as virt-launcher finds them in its pod.
func blockDataVolumes(vm *virtv1.VirtualMachine) map[string]bool {
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

var (
	noCloudISO = regexp.MustCompile(`<source file="([^"]*noCloud\.iso)"`)
	// cloud-init's final message, the last module of its final stage
	// (cloudinit/config/cc_final_message.py, after scripts_user: runcmd).
	cloudInitFinished = regexp.MustCompile(`Cloud-init v\. \S+ finished at [^\r\n]*`)
)

// serialLog is the file the domain's serial console is logged to
// (virt-launcher's SerialConsoleLog, on by default).
func serialLog(t *testing.T, domXML string) string {
	m := logFileRE.FindStringSubmatch(domXML)
	if m == nil {
		t.Fatalf("the domain logs no serial console:\n%s", domXML)
	}
	return m[1]
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

// virtcBinary is the virtc the suite runs (admission.VirtcBinary).
func virtcBinary(t *testing.T) string {
	return admission.VirtcBinary(t, repoRoot)
}
