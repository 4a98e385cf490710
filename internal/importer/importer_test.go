package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/live"
	"github.com/virtc/virtc/internal/source"
)

func goldenExport(t *testing.T, name string) []live.Object {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	objs, err := live.Read([]string{filepath.Join(filepath.Dir(file), "..", "..", "golden", "import", name, "live.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// goldenCatalog parses an import golden's catalog.yaml, the platform
// team's catalog entries the golden imports and builds with (nil when the
// golden has none).
func goldenCatalog(t *testing.T, name string) []*source.Doc {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "golden", "import", name, "catalog.yaml"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	diags := &diag.List{}
	docs := source.Parse("catalog.yaml", "catalog.yaml", data, diags)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return docs
}

// A field the pinned KubeVirt API does not know is not dropped silently:
// the VM is refused.
func TestUnknownFieldRefused(t *testing.T) {
	objs := goldenExport(t, "virtctl")
	for _, o := range objs {
		if o.Kind == "VirtualMachine" {
			tmpl := o.Body["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			tmpl["futureField"] = true
		}
	}
	res := Import(objs, nil, catalog.Options{}, Options{})
	if len(res.Refused) != 1 || !strings.Contains(strings.Join(res.Refused[0].Reasons, "\n"), "futureField") {
		t.Fatalf("refused %+v, want the VM refused for futureField", res.Refused)
	}
}

// The import is the same bytes every time (no map order in the output).
func TestDeterministic(t *testing.T) {
	var first []File
	for i := range 5 {
		res := Import(goldenExport(t, "bridge-mac"), nil, catalog.Options{}, Options{})
		if i == 0 {
			first = res.Files
			continue
		}
		if len(res.Files) != len(first) {
			t.Fatalf("run %d: %d files, first run %d", i, len(res.Files), len(first))
		}
		for j := range first {
			if res.Files[j].Path != first[j].Path || !bytes.Equal(res.Files[j].Data, first[j].Data) {
				t.Fatalf("run %d: %s differs", i, res.Files[j].Path)
			}
		}
	}
}

func tenantFile(res Result, ns string) string {
	for _, f := range res.Files {
		if f.Path == ns+"/tenant.yaml" {
			return string(f.Data)
		}
	}
	return ""
}

// When VMs of a namespace are refused, the Tenant's quota counts them too
// (from their live spec): the compiled ResourceQuota is never below what
// the namespace's live VMs use.
func TestQuotaCoversRefusedVMs(t *testing.T) {
	res := Import(goldenExport(t, "not-expressible"), nil, catalog.Options{}, Options{})
	if len(res.Imported) != 0 || len(res.Refused) != 3 {
		t.Fatalf("imported %v refused %d, want none and 3 (edge01 for its own node placement)", res.Imported, len(res.Refused))
	}
	// legacy01: 1 socket × 1 core, 2Gi, 30Gi disk; drv01: u1.large (2
	// vCPUs, 8Gi; windows.2k22 has a TPM: +53Mi swtpm), 80Gi; edge01:
	// u1.medium (1 vCPU, 4Gi), 40Gi.
	tenant := tenantFile(res, "ops")
	for _, want := range []string{"cpu: 4\n", "memory: 14389Mi\n", "storage: 150Gi\n", "vms: 3\n"} {
		if !strings.Contains(tenant, want) {
			t.Errorf("ops/tenant.yaml lacks %q:\n%s", want, tenant)
		}
	}
	// Without refusals the quota is left to virtc (derived from the VMs).
	if tenant := tenantFile(Import(goldenExport(t, "virtctl"), nil, catalog.Options{}, Options{}), "shop"); tenant == "" || strings.Contains(tenant, "quota") {
		t.Errorf("a namespace without refused VMs got a quota:\n%s", tenant)
	}
}

// A refused VM whose size cannot be read from its live spec makes the
// namespace's quota unknowable: its VMs are refused rather than given a
// quota that would block the namespace.
func TestQuotaUnknownRefusesNamespace(t *testing.T) {
	objs := goldenExport(t, "not-expressible")
	for _, o := range objs {
		if o.Kind == "VirtualMachine" && o.Name == "legacy01" {
			domain := o.Body["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["domain"].(map[string]any)
			delete(domain, "memory")
			delete(domain, "resources")
		}
		if o.Kind == "VirtualMachine" && o.Name == "edge01" {
			// Without its own placement edge01 would be imported: the
			// namespace's unknowable quota refuses it.
			spec := o.Body["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			delete(spec, "nodeSelector")
			delete(spec, "tolerations")
		}
	}
	res := Import(objs, nil, catalog.Options{}, Options{})
	if len(res.Imported) != 0 || len(res.Refused) != 3 {
		t.Fatalf("imported %v refused %d, want 0 and 3", res.Imported, len(res.Refused))
	}
	for _, f := range res.Files {
		if strings.HasPrefix(f.Path, "ops/") {
			t.Errorf("%s written for a refused namespace", f.Path)
		}
	}
	for _, rf := range res.Refused {
		if rf.VM == "ops/edge01" && !strings.Contains(strings.Join(rf.Reasons, "\n"), "quota of its Tenant could not cover them (legacy01") {
			t.Errorf("edge01's refusal does not name the quota: %v", rf.Reasons)
		}
	}
}

// A refused VM counts in VM terms as what its pod requests: an explicit
// memory request above the guest memory, and an explicit CPU request or
// dedicated CPUs as the vCPUs that request as much (1/10 CPU each with
// virtc's CPU allocation ratio).
func TestLiveShapeCountsRequests(t *testing.T) {
	im := &importer{cat: catalog.Build(decode.Decode(nil, false, &diag.List{}), catalog.Options{}, &diag.List{})}
	for _, c := range []struct {
		domain   string
		cpu      int64
		mem, why string
	}{
		{`{"cpu":{"sockets":2},"memory":{"guest":"2Gi"}}`, 2, "2Gi", ""},
		{`{"cpu":{"sockets":1},"memory":{"guest":"2Gi"},"resources":{"requests":{"cpu":"2","memory":"3Gi"}}}`, 20, "3Gi", ""},
		{`{"cpu":{"sockets":2,"dedicatedCpuPlacement":true},"memory":{"guest":"2Gi"}}`, 20, "2Gi", ""},
		{`{"memory":{"guest":"2Gi","hugepages":{"pageSize":"2Mi"}}}`, 1, "2Gi", "huge pages"},
		{`{"cpu":{"sockets":1}}`, 0, "0", "neither"},
	} {
		var kv kubevirtv1.VirtualMachine
		if err := json.Unmarshal([]byte(`{"spec":{"template":{"spec":{"domain":`+c.domain+`}}}}`), &kv); err != nil {
			t.Fatal(err)
		}
		cpu, mem, why := im.liveShape(kv)
		if cpu != c.cpu || mem.String() != c.mem || (c.why == "") != (why == "") || !strings.Contains(why, c.why) {
			t.Errorf("%s: %d vCPUs, %s, %q; want %d, %s, %q", c.domain, cpu, mem.String(), why, c.cpu, c.mem, c.why)
		}
	}
}

// The quota of a namespace with a refused VM holds that VM's hot-plug
// attachment pods (in use, migration target) and the spare a change of
// volumes needs (golden/import/hotplug-refused: 3 pods, memory 2Gi + 2Gi +
// 6Mi, one more vCPU); when an imported VM of the namespace has hot-plugged
// volumes too, virtc's sizing holds the spare, and the quota in VM terms
// only the refused VM's two pods: 4Mi (4000000 bytes rounded up).
func TestQuotaHoldsRefusedVMsAttachmentPods(t *testing.T) {
	for _, tc := range []struct {
		name         string
		importedHot  bool
		memory       string
		cpu, hotplug int64
	}{
		{"only the refused VM hot-plugs", false, "4102Mi", 3, 3},
		{"the imported VM hot-plugs too", true, "4100Mi", 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := goldenExport(t, "hotplug-refused")
			if tc.importedHot {
				for _, o := range objs {
					if o.Kind != "VirtualMachine" || o.Name != "app01" {
						continue
					}
					tmpl := o.Body["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
					dev := tmpl["domain"].(map[string]any)["devices"].(map[string]any)
					dev["disks"] = append(dev["disks"].([]any), map[string]any{"name": "scratch", "serial": "scratch", "disk": map[string]any{"bus": "scsi"}})
					tmpl["volumes"] = append(tmpl["volumes"].([]any), map[string]any{"name": "scratch", "dataVolume": map[string]any{"name": "scratch", "hotpluggable": true}})
				}
			}
			res := Import(objs, nil, catalog.Options{}, Options{})
			if len(res.Imported) != 1 || len(res.Refused) != 1 {
				t.Fatalf("imported %v, refused %+v; want app01 imported, legacy02 refused", res.Imported, res.Refused)
			}
			var tenant string
			for _, f := range res.Files {
				if f.Path == "tools/tenant.yaml" {
					tenant = string(f.Data)
				}
			}
			for _, want := range []string{fmt.Sprintf("cpu: %d\n", tc.cpu), "memory: " + tc.memory + "\n"} {
				if !strings.Contains(tenant, want) {
					t.Errorf("tenant.yaml lacks %q:\n%s", want, tenant)
				}
			}
			if want := fmt.Sprintf("hold %d hot-plug attachment pods", tc.hotplug); len(res.Quotas) != 1 || !strings.Contains(res.Quotas[0], want) {
				t.Errorf("quota report %q, want %q", res.Quotas, want)
			}
		})
	}
}

// The MTV corpus's Windows guest (golden/import/mtv-vsphere win03: EFI
// with Secure Boot, SMM, a persistent vTPM, a sata disk, an e1000e NIC, a
// usb tablet, the namespace/name NAD reference) has a root claim MTV
// imported from vSphere, which names no OS: without a catalog image of its
// preference windows.2k22 it is refused, with what to do; with the
// platform team's image (the golden's catalog.yaml) it is adopted as it
// runs: Import compiles the intent and holds the rebuilt VM equal to the
// live one beyond virtc's own metadata.
func TestMTVWindowsNeedsCatalogImage(t *testing.T) {
	objs := goldenExport(t, "mtv-vsphere")
	res := Import(objs, nil, catalog.Options{}, Options{})
	if len(res.Refused) != 1 || res.Refused[0].VM != "migrated/win03" || !strings.Contains(strings.Join(res.Refused[0].Reasons, "\n"), `the catalog has no image of preference "windows.2k22" (the image of an existing root disk only names the VM's OS: add the platform's approved Image`) {
		t.Errorf("without a catalog image: refused %+v, want win03 refused for the missing image of windows.2k22, with what to do", res.Refused)
	}
	res = Import(objs, goldenCatalog(t, "mtv-vsphere"), catalog.Options{}, Options{})
	for _, rf := range res.Refused {
		t.Errorf("refused %s: %s", rf.VM, strings.Join(rf.Reasons, "; "))
	}
	var win string
	for _, f := range res.Files {
		if f.Path == "migrated/win03.yaml" {
			win = string(f.Data)
		}
	}
	for _, want := range []string{"image: windows2k22", "bootloader: efi", "secureBoot: true", "smm:\n      enabled: true", "tpm:\n      persistent: true", "bus: sata", "model: e1000e", "tablet: usb", "qualifiedNetworkName: true", "preference: lowercase"} {
		if !strings.Contains(win, want) {
			t.Errorf("win03's intent lacks %q:\n%s", want, win)
		}
	}
}

// A live field the intent cannot carry and the guest boots with is never
// only "not carried" (issue 25): MTV's BIOS guest db01 with a serial
// console on its BIOS (bootloader.bios.useSerial, which KubeVirt v1.8.4
// passes to libvirt: pkg/virt-launcher/virtwrap/converter/compute/os.go
// configureBIOS) is refused, with the field, since a VM rebuilt from Git
// would boot without it.
func TestGuestVisibleFieldRefused(t *testing.T) {
	objs := goldenExport(t, "mtv-vsphere")
	for _, o := range objs {
		if o.Kind == "VirtualMachine" && o.Name == "db01" {
			fw := o.Body["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["domain"].(map[string]any)["firmware"].(map[string]any)
			fw["bootloader"].(map[string]any)["bios"] = map[string]any{"useSerial": true}
		}
	}
	res := Import(objs, goldenCatalog(t, "mtv-vsphere"), catalog.Options{}, Options{})
	want := "spec.template.spec.domain.firmware.bootloader.bios.useSerial: the intent cannot carry it, and the guest boots or sees it"
	if len(res.Refused) != 1 || res.Refused[0].VM != "migrated/db01" || !strings.Contains(strings.Join(res.Refused[0].Reasons, "\n"), want) {
		t.Errorf("refused %+v, want db01 refused with %q", res.Refused, want)
	}
}

// A device switch set to KubeVirt's default is not a difference: forklift's
// OpenStack adapter writes autoattachGraphicsDevice: true on every VM it
// migrates (forklift v2.12.5 pkg/controller/plan/adapter/openstack/
// builder.go mapVideo), which KubeVirt v1.8.4 treats as unset
// (converter/compute/graphics.go: only false leaves the device out). The
// VM is adopted, the field reported as not carried with that reason; false
// still changes what the guest sees, and is refused.
func TestKubeVirtDefaultsAdopted(t *testing.T) {
	for _, tc := range []struct {
		field   string
		value   bool
		adopted bool
	}{
		{"autoattachGraphicsDevice", true, true},
		{"autoattachSerialConsole", true, true},
		{"autoattachMemBalloon", true, true},
		{"autoattachGraphicsDevice", false, false},
		{"autoattachMemBalloon", false, false},
	} {
		t.Run(fmt.Sprintf("%s: %v", tc.field, tc.value), func(t *testing.T) {
			objs := goldenExport(t, "mtv-ovirt")
			for _, o := range objs {
				if o.Kind == "VirtualMachine" && o.Name == "app01" {
					devices := o.Body["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["domain"].(map[string]any)["devices"].(map[string]any)
					devices[tc.field] = tc.value
				}
			}
			res := Import(objs, goldenCatalog(t, "mtv-ovirt"), catalog.Options{}, Options{})
			path := "spec.template.spec.domain.devices." + tc.field
			adopted := slices.Contains(res.Imported, "from-ovirt/app01")
			if adopted != tc.adopted {
				t.Fatalf("adopted %v (imported %q, refused %+v), want %v", adopted, res.Imported, res.Refused, tc.adopted)
			}
			if !tc.adopted {
				return
			}
			found := false
			for _, it := range res.NotCarried {
				if it.VM == "from-ovirt/app01" && it.Path == path && strings.Contains(it.Why, "KubeVirt's default") {
					found = true
				}
			}
			if !found {
				t.Errorf("%s is not reported as not carried, KubeVirt's default: %+v", path, res.NotCarried)
			}
		})
	}
}

// Issue 41's bugs: a VM is adopted as it runs, whatever empty forms its
// creator wrote.
func TestEmptyFormsAdopted(t *testing.T) {
	vmSpec := func(objs []live.Object) map[string]any {
		for _, o := range objs {
			if o.Kind == "VirtualMachine" {
				return o.Body["spec"].(map[string]any)
			}
		}
		t.Fatal("no VirtualMachine in the export")
		return nil
	}
	t.Run("disks: []", func(t *testing.T) {
		objs := goldenExport(t, "virtctl")
		devices := vmSpec(objs)["template"].(map[string]any)["spec"].(map[string]any)["domain"].(map[string]any)["devices"].(map[string]any)
		devices["disks"] = []any{}
		res := Import(objs, nil, catalog.Options{}, Options{})
		for _, r := range res.Refused {
			if strings.Contains(strings.Join(r.Reasons, "\n"), "does not have") {
				t.Errorf("refused as an unknown field: %q", r.Reasons)
			}
		}
	})
	// The console's InstanceTypes flow clones a DataSource with
	// storage.resources: {}; CDI gives the claim the source's size.
	t.Run("storage.resources: {}", func(t *testing.T) {
		objs := goldenExport(t, "virtctl")
		dvt := vmSpec(objs)["dataVolumeTemplates"].([]any)[0].(map[string]any)
		dvt["spec"].(map[string]any)["storage"] = map[string]any{"resources": map[string]any{}}
		for _, o := range objs {
			if o.Kind == "DataVolume" {
				o.Body["spec"].(map[string]any)["storage"] = map[string]any{"resources": map[string]any{}}
			}
		}
		res := Import(objs, nil, catalog.Options{}, Options{})
		if len(res.Imported) != 1 {
			t.Fatalf("adopted %q, refused %+v", res.Imported, res.Refused)
		}
		var intent string
		for _, f := range res.Files {
			if strings.Contains(string(f.Data), "kind: VM\n") {
				intent = string(f.Data)
			}
		}
		if !strings.Contains(intent, "rootDisk: 30Gi") {
			t.Errorf("the intent does not have the claim's 30Gi root disk:\n%s", intent)
		}
	})
}

// All refusals at once: a VM refused while it is mapped is judged by the
// guardrails too, on what could be mapped, so that its owner sees every
// reason in one report (legacy01 of not-expressible, whose only refusal is
// a password in its inline cloud-init, gets a field KubeVirt's API lacks).
func TestAllRefusalsAtOnce(t *testing.T) {
	objs := goldenExport(t, "not-expressible")
	for _, o := range objs {
		if o.Kind == "VirtualMachine" && o.Name == "legacy01" {
			o.Body["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["futureField"] = true
		}
	}
	res := Import(objs, nil, catalog.Options{}, Options{})
	var reasons []string
	for _, r := range res.Refused {
		if r.VM == "ops/legacy01" {
			reasons = r.Reasons
		}
	}
	all := strings.Join(reasons, "\n")
	if !strings.Contains(all, "futureField") || !strings.Contains(all, "inline cloud-init holds a password") {
		t.Fatalf("legacy01 refused for %q, want the unknown field and the password in Git both", reasons)
	}
}
