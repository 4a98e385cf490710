package golden

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/virtc/virtc/internal/cli"
	"github.com/virtc/virtc/internal/diff"
	"github.com/virtc/virtc/internal/live"
	"github.com/virtc/virtc/test/conform"
)

// importDir holds the import scenarios: each folder has live.yaml, an
// export as `oc get vm,dv,pvc,nad -n NS -o yaml` prints it (status,
// managedFields, uid and resourceVersion included); expected/ is what
// `virtc import --out DIR live.yaml` writes (IMPORT-REPORT.txt included),
// exit its exit code (0 when absent), args extra import flags (one a
// line), build.yaml what `virtc build` prints
// for expected/ and diff.txt what `virtc diff --live live.yaml expected`
// prints. The test holds that the diff of every imported VM has virtc's
// own labels and annotations as its only changes, and validates build.yaml
// with kubeconform.
const importDir = "import"

func TestImport(t *testing.T) {
	entries, err := os.ReadDir(importDir)
	if err != nil {
		t.Fatal(err)
	}
	var builds []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(importDir, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			out := t.TempDir()
			exportFile := filepath.Join(dir, "live.yaml")
			var stdout, stderr bytes.Buffer
			args := []string{"import", "--out", out}
			if data, err := os.ReadFile(filepath.Join(dir, "args")); err == nil {
				args = append(args, strings.Fields(string(data))...)
			}
			// A scenario's catalog.yaml holds the platform team's own
			// catalog entries (an approved container disk): the import
			// and every build of its result use them.
			var catalogArgs []string
			if _, err := os.Stat(filepath.Join(dir, catalogFile)); err == nil {
				catalogArgs = []string{"--catalog", filepath.Join(dir, catalogFile)}
				args = append(args, catalogArgs...)
			}
			code := cli.Main(append(args, exportFile), nil, &stdout, &stderr)
			if stderr.Len() > 0 {
				t.Fatalf("import wrote to stderr:\n%s", stderr.String())
			}
			want := 0
			if data, err := os.ReadFile(filepath.Join(dir, "exit")); err == nil {
				want, _ = strconv.Atoi(strings.TrimSpace(string(data)))
			}
			if code != want {
				t.Errorf("exit %d, want %d\n%s", code, want, stdout.String())
			}
			got := readTree(t, out)
			expected := filepath.Join(dir, "expected")
			if *update {
				os.RemoveAll(expected)
				for name, data := range got {
					p := filepath.Join(expected, name)
					os.MkdirAll(filepath.Dir(p), 0o755)
					if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			} else if d := cmp.Diff(readTree(t, expected), got); d != "" {
				t.Errorf("import output (-want +got):\n%s", d)
			}
			if !slices.ContainsFunc(keys(got), func(k string) bool { return strings.HasSuffix(k, ".yaml") }) {
				return
			}
			// The imported intents compile; the result passes kubeconform.
			// A scenario's evidence.yaml holds the platform's facts and the
			// acceptance evidence its adopted VMs' eligibility classes need
			// (the eligibility gate holds for adopted VMs too).
			inputs := []string{out}
			if _, err := os.Stat(filepath.Join(dir, evidenceFile)); err == nil {
				inputs = append(inputs, filepath.Join(dir, evidenceFile))
			}
			if len(catalogArgs) > 0 {
				inputs = append(inputs, filepath.Join(dir, catalogFile))
			}
			var build, buildErr bytes.Buffer
			if code := cli.Main(append([]string{"build"}, inputs...), nil, &build, &buildErr); code != 0 {
				t.Fatalf("build of the import exits %d:\n%s", code, buildErr.String())
			}
			golden(t, filepath.Join(dir, "build.yaml"), build.String())
			builds = append(builds, filepath.Join(dir, "build.yaml"))

			// Adoption: the live diff of each imported VM changes virtc's
			// own labels and annotations only, once the actions the report
			// asks for are done (removing kubectl's last-applied
			// configuration, as `oc annotate ... KEY-` does).
			adopted := exportFile
			if strings.Contains(got[reportFileName], live.LastAppliedAnnotation+"-") {
				adopted = withoutLastApplied(t, adopted)
			}
			if strings.Contains(got[reportFileName], `{"op":"remove","path":"/spec/running"}`) {
				adopted = withRunStrategy(t, adopted)
			}
			var js, jsErr bytes.Buffer
			if code := cli.Main(append([]string{"diff", "--live", adopted, "--format", "json"}, inputs...), nil, &js, &jsErr); code != 0 {
				t.Fatalf("diff --live exits %d:\n%s%s", code, js.String(), jsErr.String())
			}
			var rep diff.Report
			if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.VMs) == 0 && len(vmFiles(got)) > 0 {
				t.Fatal("diff --live compared no VM")
			}
			deferred := deferredChanges(got[reportFileName])
			for _, s := range rep.VMs {
				for _, ch := range s.Changes {
					if ch.Field != live.FieldOwnMetadata && !deferred[s.Namespace+"/"+s.Name+" "+ch.Field] {
						t.Errorf("VM %s/%s: a change besides virtc's labels and annotations: %s (%s)", s.Namespace, s.Name, ch.Detail, ch.Effect)
					}
				}
			}
			checkAdoption(t, e.Name(), rep)
			if _, err := os.Stat(filepath.Join(dir, platformFile)); err == nil {
				checkPlatformAdoption(t, e.Name(), filepath.Join(dir, platformFile), adopted, inputs)
			}
			// Nothing changes silently: each change diff --live finds on
			// an object outside the VMs (a NAD virtc writes from the
			// imported NetworkProfile) is in the import report.
			for _, w := range rep.Warnings {
				if w.Rule == "live-change" && !strings.Contains(got[reportFileName], "\n  "+w.Object+": "+w.Message+"\n") {
					t.Errorf("%s: diff --live finds %s, which the import report does not list", w.Object, w.Message)
				}
			}
			var text, textErr bytes.Buffer
			cli.Main(append([]string{"diff", "--live", exportFile, "--color", "never"}, inputs...), nil, &text, &textErr)
			golden(t, filepath.Join(dir, "diff.txt"), strings.ReplaceAll(text.String(), out, "OUT"))
		})
	}
	if len(builds) > 0 {
		t.Run("kubeconform", func(t *testing.T) { conform.RunKubeconform(t, "4.22", builds...) })
	}
}

const reportFileName = "IMPORT-REPORT.txt"

// evidenceFile, in an import scenario, is added to the build of the
// imported intents: the PlatformFacts and Evidence their classes need.
const evidenceFile = "evidence.yaml"

// catalogFile, in an import scenario, holds catalog entries of the
// platform team's: passed to the import (--catalog) and added to the
// builds of the imported intents.
const catalogFile = "catalog.yaml"

// platformFile, in an import scenario, holds the Platform the export's
// cluster runs, for a second diff --live of the platform's build.
const platformFile = "platform.yaml"

// vmFiles are the imported VMs' intent files of an import's output (those
// other than tenants and catalog entries).
func vmFiles(got map[string]string) []string {
	var out []string
	for name := range got {
		if strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, "/tenant.yaml") && !strings.HasPrefix(name, "catalog/") {
			out = append(out, name)
		}
	}
	return out
}

// adoptionException is a difference of an object of no VM that an
// adoption is allowed to show, with the reason.
type adoptionException struct {
	object, field, reason string
}

// adoptionExceptions are, per import golden, the only differences besides
// virtc's own labels and annotations that diff --live may show.
var adoptionExceptions = map[string][]adoptionException{
	"bridge-mac": {{
		object: "NetworkAttachmentDefinition erp/vlan10", field: "spec.config",
		reason: "virtc writes the bridge NAD as its NetworkProfile says: no empty ipam (no IPAM either way), and disableContainerInterface: true (the bridge CNI sets the pod-side veth down). Multus reads a NAD only when a VM's pod starts (next start), running VMs keep theirs; the VM itself is unchanged",
	}},
	"mixed-key-order": {
		{object: "NetworkAttachmentDefinition erp/net1b", field: "spec.config", reason: "as bridge-mac: the NADs net1b, net6 and net16 are bridge-mac's vlan10 under other names and VLANs"},
		{object: "NetworkAttachmentDefinition erp/net6", field: "spec.config", reason: "as bridge-mac: the NADs net1b, net6 and net16 are bridge-mac's vlan10 under other names and VLANs"},
		{object: "NetworkAttachmentDefinition erp/net16", field: "spec.config", reason: "as bridge-mac: the NADs net1b, net6 and net16 are bridge-mac's vlan10 under other names and VLANs"},
	},
	"console-instancetypes-deferred": {{
		object: "NetworkAttachmentDefinition web/vlan20", field: "spec.config",
		reason: "as bridge-mac: the NAD of the console VM's added NIC, rewritten as its imported NetworkProfile says (no empty ipam, disableContainerInterface: true); Multus reads it when a VM's pod starts, running VMs keep theirs",
	}},
	"console-templates-deferred": {{
		object: "NetworkAttachmentDefinition legacy/vlan40", field: "spec.config",
		reason: "as bridge-mac: the NAD of the template VM's added NIC, rewritten as its imported NetworkProfile says (no empty ipam, disableContainerInterface: true, preserveDefaultVlan: false); Multus reads it when a VM's pod starts, running VMs keep theirs",
	}, {
		object: "NetworkAttachmentDefinition legacy/vlan40", field: `metadata.annotations["k8s.v1.cni.cncf.io/resourceName"]`,
		reason: "virtc's bridge NAD asks for the bridge marker's resource (bridge.network.kubevirt.io/br-vm), so that a VM's pod is scheduled only on nodes that have the bridge; the network resources injector reads it when a pod is created, so running VMs keep their placement",
	}},
	"mtv-ovirt": {{
		object: "NetworkAttachmentDefinition from-ovirt/vlan50", field: "spec.config",
		reason: "as bridge-mac: the NAD the oVirt plan's network map names, rewritten as its imported NetworkProfile says (no empty ipam, disableContainerInterface: true, preserveDefaultVlan: false); Multus reads it when a VM's pod starts, running VMs keep theirs",
	}},
	"mtv-openstack": {{
		object: "NetworkAttachmentDefinition from-openstack/vlan60", field: "spec.config",
		reason: "as bridge-mac: the NAD the OpenStack plan's network map names, rewritten as its imported NetworkProfile says (no empty ipam, disableContainerInterface: true, preserveDefaultVlan: false); Multus reads it when a VM's pod starts, running VMs keep theirs",
	}},
	"mtv-vsphere": {{
		object: "NetworkAttachmentDefinition migrated/vlan30", field: "spec.config",
		reason: "as bridge-mac: the NAD the MTV plan's network map names, rewritten as its imported NetworkProfile says (no empty ipam, disableContainerInterface: true, preserveDefaultVlan: false); Multus reads it when a VM's pod starts, running VMs keep theirs",
	}},
}

// checkPlatformAdoption is checkAdoption for the build of an import with
// its Platform (a scenario's platform.yaml, with its platform-wide
// evidence): the cluster-scoped objects virtc renders from the imported
// catalog entries (a localnet's ClusterUserDefinedNetwork) are in the
// platform's build only, whose diff --live compares them with the export
// too.
func checkPlatformAdoption(t *testing.T, name, platform, adopted string, inputs []string) {
	t.Helper()
	var js, jsErr bytes.Buffer
	if code := cli.Main(append([]string{"diff", "--live", adopted, "--format", "json", platform}, inputs...), nil, &js, &jsErr); code != 0 {
		t.Fatalf("diff --live with the Platform exits %d:\n%s%s", code, js.String(), jsErr.String())
	}
	var rep diff.Report
	if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	checkAdoption(t, name, rep)
	compared := 0
	for _, o := range rep.Objects {
		if o.Kind == "ClusterUserDefinedNetwork" {
			compared++
		}
	}
	for _, w := range rep.Warnings {
		if w.Rule == "live-unmanaged" && strings.HasPrefix(w.Object, "ClusterUserDefinedNetwork ") {
			t.Errorf("%s: the platform's build does not write it", w.Object)
		}
	}
	if compared == 0 {
		t.Errorf("diff --live with the Platform compared no ClusterUserDefinedNetwork")
	}
}

// checkAdoption holds that diff --live of an import shows, for every
// object class, nothing but virtc's own labels and annotations: no
// refusal, no object created or pruned, and no change of an object outside
// a VM (a live-change warning) unless adoptionExceptions lists it. The
// VMs' own changes are checked by the caller. Warnings that are no
// difference (a live object virtc does not write and Argo CD does not
// track, kinds an export does not hold) are allowed.
func checkAdoption(t *testing.T, name string, rep diff.Report) {
	t.Helper()
	for _, f := range rep.Refusals {
		t.Errorf("refused: %s [%s]: %s", f.Object, f.Rule, f.Message)
	}
	for _, o := range rep.Objects {
		if o.Status != diff.Changed {
			t.Errorf("%s %s/%s is %s: an adoption changes objects in place only", o.Kind, o.Namespace, o.Name, o.Status)
		}
	}
	used := map[int]bool{}
	for _, w := range rep.Warnings {
		switch w.Rule {
		case "live-unmanaged", "live-not-compared":
			continue
		case "live-change":
			i := slices.IndexFunc(adoptionExceptions[name], func(x adoptionException) bool {
				return x.object == w.Object && strings.HasPrefix(w.Message, x.field+":")
			})
			if i >= 0 {
				used[i] = true
				continue
			}
		}
		t.Errorf("%s [%s]: %s: a difference besides virtc's labels and annotations that adoptionExceptions does not list", w.Object, w.Rule, w.Message)
	}
	for i, x := range adoptionExceptions[name] {
		if !used[i] {
			t.Errorf("adoptionExceptions[%q] lists %s %s, which diff --live no longer shows: remove it", name, x.object, x.field)
		}
	}
}

// deferredChanges are the changes the report lists as deferred ("VM
// field", the field without list selectors): the only differences besides
// virtc's own metadata that the deferred-change mode may make.
func deferredChanges(report string) map[string]bool {
	out := map[string]bool{}
	vm := ""
	for _, line := range strings.Split(report, "\n") {
		if v, ok := strings.CutPrefix(line, "imported "); ok {
			vm = v
		}
		if rest, ok := strings.CutPrefix(line, "  deferred change: "); ok {
			field, _, _ := strings.Cut(rest, ":")
			field, _, _ = strings.Cut(field, "[")
			out[vm+" "+field] = true
		}
	}
	return out
}

// withoutLastApplied writes the export without kubectl's last-applied
// configuration annotation on VMs.
func withoutLastApplied(t *testing.T, file string) string {
	t.Helper()
	return editedVMs(t, file, func(vm live.Object) {
		meta := vm.Body["metadata"].(map[string]any)
		if ann, ok := meta["annotations"].(map[string]any); ok {
			delete(ann, live.LastAppliedAnnotation)
		}
	})
}

// withRunStrategy is the export once the report's JSON patch has replaced
// each VM's spec.running by the run strategy KubeVirt reads from it.
func withRunStrategy(t *testing.T, file string) string {
	t.Helper()
	return editedVMs(t, file, func(vm live.Object) {
		spec := vm.Body["spec"].(map[string]any)
		if running, ok := spec["running"].(bool); ok {
			delete(spec, "running")
			spec["runStrategy"] = map[bool]string{true: "Always", false: "Halted"}[running]
		}
	})
}

// editedVMs writes the export with edit applied to each VirtualMachine.
func editedVMs(t *testing.T, file string, edit func(vm live.Object)) string {
	t.Helper()
	objs, err := live.Read([]string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var items []any
	for _, o := range objs {
		if o.Kind == "VirtualMachine" {
			edit(o)
		}
		items = append(items, o.Body)
	}
	return writeList(t, items)
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", path, d)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	return out
}

// withSize writes the export with VM name's instance type replaced.
func withSize(t *testing.T, file, name, size string) string {
	t.Helper()
	return editedVMs(t, file, func(vm live.Object) {
		if vm.Name == name {
			it := vm.Body["spec"].(map[string]any)["instancetype"].(map[string]any)
			it["name"] = size
			delete(it, "revisionName")
		}
	})
}

// diff --live classifies a size difference as virtc diff does
// (internal/diff/kubevirt.go sizeChange, after KubeVirt v1.8.4
// pkg/virt-controller/watch/vm/vm.go handleCPUChangeRequest and
// handleMemoryHotplugRequest): web01 runs as u1.large (2 vCPUs, 8Gi) and
// Git says u1.medium (1 vCPU, 4Gi): KubeVirt hot-unplugs neither CPU
// sockets nor memory, so it is a restart, not a live update. From u1.small
// (1 vCPU, 2Gi) to u1.medium the memory grows within maxGuest.
func TestLiveDiffSizeChange(t *testing.T) {
	dir := filepath.Join(importDir, "virtctl")
	for _, c := range []struct {
		live, effect, detail string
	}{
		{"u1.large", diff.EffectRestart, "KubeVirt does not hot-unplug CPU sockets; KubeVirt does not hot-unplug memory"},
		{"u1.small", diff.EffectLive, "live update possible"},
	} {
		var js, jsErr bytes.Buffer
		cli.Main([]string{"diff", "--live", withSize(t, filepath.Join(dir, "live.yaml"), "web01", c.live), "--format", "json", filepath.Join(dir, "expected")}, nil, &js, &jsErr)
		var rep diff.Report
		if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
			t.Fatalf("%v\n%s%s", err, js.String(), jsErr.String())
		}
		found := false
		for _, s := range rep.VMs {
			for _, ch := range s.Changes {
				if ch.Field != "spec.instancetype.name" {
					continue
				}
				found = true
				if ch.Effect != c.effect || !strings.Contains(ch.Detail, c.detail) {
					t.Errorf("live %s → git u1.medium: %s (%s), want %s with %q", c.live, ch.Detail, ch.Effect, c.effect, c.detail)
				}
			}
		}
		if !found {
			t.Errorf("live %s → git u1.medium: no instance type change in %s", c.live, js.String())
		}
	}
}

// writeList writes objects as a live export (a List) and returns its path.
func writeList(t *testing.T, items []any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "live.yaml")
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportIsDeterministic imports import/mixed-key-order, whose intent
// has a map (spec.macAddresses) keyed net1b, net6 and net16, keys on which
// yaml.v2's order is not transitive, many times: every run writes
// expected/ byte for byte (internal/yamlorder). With sigs.k8s.io/yaml's
// JSONToYAML the keys came out in an order that changed from run to run.
func TestImportIsDeterministic(t *testing.T) {
	dir := filepath.Join(importDir, "mixed-key-order")
	want := readTree(t, filepath.Join(dir, "expected"))
	if !strings.Contains(want["erp/db01.yaml"], "macAddresses:\n    net16:") {
		t.Fatalf("expected/erp/db01.yaml has no macAddresses keyed net16, net1b, net6: the scenario no longer exercises the order")
	}
	for i := range 40 {
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		args := []string{"import", "--out", out, filepath.Join(dir, "live.yaml")}
		if code := cli.Main(args, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("run %d: exit %d\n%s%s", i, code, stdout.String(), stderr.String())
		}
		if d := cmp.Diff(want, readTree(t, out)); d != "" {
			t.Fatalf("run %d: import output (-want +got):\n%s", i, d)
		}
	}
}
