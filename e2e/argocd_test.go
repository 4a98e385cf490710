package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"go.yaml.in/yaml/v3"
)

func argocdFile(name string) string { return filepath.Join(root, "examples", "argocd", name) }

type configMapPatch struct {
	Data map[string]string `yaml:"data"`
}

// TestHyperConvergedHealth runs the Lua health check of argocd-cm-patch.yaml
// the way Argo CD does: `obj` is the live object, the script returns a
// table with status and message, only the libraries Argo CD opens are open.
func TestHyperConvergedHealth(t *testing.T) {
	var cm configMapPatch
	readYAML(t, argocdFile("argocd-cm-patch.yaml"), &cm)
	script, ok := cm.Data["resource.customizations.health.hco.kubevirt.io_HyperConverged"]
	if !ok {
		t.Fatal("argocd-cm-patch.yaml has no health check for hco.kubevirt.io/HyperConverged")
	}
	cond := func(typ, status, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": "Test", "message": msg}
	}
	// What HCO v1.18.1 shows while virt-operator rolls KubeVirt out:
	// KubeVirt's Available, Progressing and Degraded are all True with
	// reason UpdateInProgress (kubevirt v1.8.4
	// pkg/virt-operator/util/client.go UpdateConditionsUpdating); HCO
	// copies Progressing and Degraded as "KubeVirt is …: <message>"
	// (controllers/operands/operand.go handleOperandProgressingCond,
	// handleOperandDegradedCond) and, being Degraded, sets Available False
	// reason HCODegraded (controllers/hyperconverged/hyperconverged_controller.go
	// aggregateComponentConditions); while HCO upgrades itself it overrides
	// Progressing with reason HCOUpgrading (completeReconciliation).
	const transition = "Transitioning from previous version v1.8.3 with registry registry.redhat.io/container-native-virtualization to target version v1.8.4 using registry registry.redhat.io/container-native-virtualization"
	kvUpdating := []any{
		map[string]any{"type": "ReconcileComplete", "status": "True", "reason": "ReconcileCompleted", "message": "Reconcile completed successfully"},
		map[string]any{"type": "Available", "status": "False", "reason": "HCODegraded", "message": "HCO is not available due to degraded components"},
		map[string]any{"type": "Progressing", "status": "True", "reason": "KubeVirtProgressing", "message": "KubeVirt is progressing: " + transition},
		map[string]any{"type": "Degraded", "status": "True", "reason": "KubeVirtDegraded", "message": "KubeVirt is degraded: " + transition},
		map[string]any{"type": "Upgradeable", "status": "False", "reason": "KubeVirtProgressing", "message": "KubeVirt is progressing: " + transition},
	}
	hcoUpgrading := []any{
		map[string]any{"type": "Available", "status": "False", "reason": "HCODegraded", "message": "HCO is not available due to degraded components"},
		map[string]any{"type": "Progressing", "status": "True", "reason": "HCOUpgrading", "message": "HCO is now upgrading to version 1.18.1"},
		map[string]any{"type": "Degraded", "status": "True", "reason": "KubeVirtDegraded", "message": "KubeVirt is degraded: " + transition},
	}
	for _, tc := range []struct {
		name       string
		obj        map[string]any
		status     string
		msgPattern string
	}{
		{"no status yet", map[string]any{"spec": map[string]any{}}, "Progressing", "waiting"},
		{"available", map[string]any{"status": map[string]any{"conditions": []any{
			cond("ReconcileComplete", "True", "done"), cond("Available", "True", "Reconcile completed successfully"),
			cond("Progressing", "False", "ok"), cond("Degraded", "False", "ok"), cond("Upgradeable", "True", "ok"),
		}}}, "Healthy", "Reconcile completed successfully"},
		{"upgrading but available", map[string]any{"status": map[string]any{"conditions": []any{
			cond("Available", "True", "up"), cond("Progressing", "True", "upgrading"), cond("Degraded", "False", "ok"),
		}}}, "Healthy", "up"},
		{"degraded", map[string]any{"status": map[string]any{"conditions": []any{
			cond("Available", "True", "up"), cond("Degraded", "True", "KubeVirt is degraded"),
		}}}, "Degraded", "KubeVirt is degraded"},
		{"not available", map[string]any{"status": map[string]any{"conditions": []any{
			cond("Available", "False", "HCO is not available"), cond("Progressing", "True", "deploying"),
		}}}, "Progressing", "HCO is not available"},
		{"KubeVirt update rolling out", map[string]any{"status": map[string]any{"conditions": kvUpdating}}, "Progressing", "rolling out: KubeVirt is degraded: Transitioning from previous version v1.8.3"},
		{"HCO upgrading itself", map[string]any{"status": map[string]any{"conditions": hcoUpgrading}}, "Progressing", "HCO is now upgrading to version 1.18.1"},
		// Degraded with reason UpdateInProgress as virt-operator sets it on
		// its KubeVirt CR, Progressing not reported.
		{"update in progress, no Progressing", map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Degraded", "status": "True", "reason": "UpdateInProgress", "message": transition},
		}}}, "Progressing", "rolling out"},
		// A failed deployment: Degraded True, Progressing False
		// (client.go UpdateConditionsFailedError) → fails the sync.
		{"KubeVirt deployment failed", map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Available", "status": "False", "reason": "HCODegraded", "message": "HCO is not available due to degraded components"},
			map[string]any{"type": "Progressing", "status": "False", "reason": "ReconcileCompleted", "message": "Reconcile completed successfully"},
			map[string]any{"type": "Degraded", "status": "True", "reason": "KubeVirtDegraded", "message": "KubeVirt is degraded: An error occurred during deployment: virt-handler daemonset failed"},
		}}}, "Degraded", "An error occurred during deployment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, msg := runHealth(t, script, tc.obj)
			if status != tc.status || !strings.Contains(msg, tc.msgPattern) {
				t.Errorf("got %s %q, want %s with %q", status, msg, tc.status, tc.msgPattern)
			}
		})
	}
}

func runHealth(t *testing.T, script string, obj map[string]any) (string, string) {
	t.Helper()
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	// Argo CD v3.6.1 opens exactly these (util/lua/lua.go,
	// runLuaWithResourceActionParameters: package, base, table and its own
	// safe os, which no script here uses): no string or math library, so a
	// script calling string.find raises in Argo CD, which makes the object
	// Unknown and holds the sync.
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	// Argo CD hands the script the object as it came from the API: JSON.
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		t.Fatal(err)
	}
	L.SetGlobal("obj", toLua(L, generic))
	if err := L.DoString(script); err != nil {
		t.Fatalf("the health check does not run: %v", err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the health check returned %s, not a table", L.Get(-1).Type())
	}
	return lua.LVAsString(ret.RawGetString("status")), lua.LVAsString(ret.RawGetString("message"))
}

func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range v {
			t.Append(toLua(L, e))
		}
		return t
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case bool:
		return lua.LBool(v)
	}
	return lua.LNil
}

// TestIgnoredFieldsAreNotSet checks the reasoning of argocd-cm-patch.yaml
// against virtc's output: the fields it tells Argo CD to ignore are the
// ones virtc leaves to KubeVirt, and the fields KubeVirt would otherwise
// default are set by virtc.
func TestIgnoredFieldsAreNotSet(t *testing.T) {
	var cm configMapPatch
	readYAML(t, argocdFile("argocd-cm-patch.yaml"), &cm)
	var ignore struct {
		JQ []string `yaml:"jqPathExpressions"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["resource.customizations.ignoreDifferences.kubevirt.io_VirtualMachine"]), &ignore); err != nil {
		t.Fatal(err)
	}
	want := []string{
		".spec.template.spec.domain.devices.interfaces[]?.macAddress",
		".spec.template.spec.domain.machine",
		".spec.instancetype.revisionName",
		".spec.preference.revisionName",
	}
	if !slices.Equal(ignore.JQ, want) {
		t.Fatalf("ignoreDifferences for VirtualMachine: %q, this test checks %q", ignore.JQ, want)
	}
	out := decodeAll(t, runBuild(t, filepath.Join(root, "examples", "kustomize-transformer"), "."))
	vms := 0
	for _, o := range out {
		if o["kind"] != "VirtualMachine" {
			continue
		}
		vms++
		spec := dig(o, "spec", "template", "spec")
		domain := dig(spec, "domain")
		for _, ifc := range dig(domain, "devices")["interfaces"].([]any) {
			if _, ok := ifc.(map[string]any)["macAddress"]; ok {
				t.Errorf("%s sets a MAC address, which the ignore rule would hide", name(o))
			}
		}
		if _, ok := domain["machine"]; ok {
			t.Errorf("%s sets the machine type, which the ignore rule would hide", name(o))
		}
		for _, ref := range []string{"instancetype", "preference"} {
			r := dig(o, "spec", ref)
			if _, ok := r["revisionName"]; ok {
				t.Errorf("%s sets spec.%s.revisionName", name(o), ref)
			}
			if k, _ := r["kind"].(string); !strings.HasPrefix(k, "VirtualMachineCluster") {
				t.Errorf("%s: spec.%s.kind is %q; virtc must set it (older webhooks default it)", name(o), ref, k)
			}
		}
		fw := dig(domain, "firmware")
		if fw["uuid"] == nil || fw["serial"] == nil {
			t.Errorf("%s: firmware uuid and serial must be set (the webhook would generate random ones on create)", name(o))
		}
		if spec["architecture"] != "amd64" {
			t.Errorf("%s: architecture is %v; virtc must set it", name(o), spec["architecture"])
		}
	}
	if vms == 0 {
		t.Fatal("no VirtualMachine to check")
	}
}

func dig(o map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		o, _ = o[k].(map[string]any)
	}
	return o
}

// TestRepoServerPatches applies both repo-server patches with kustomize
// (strategic merge, as `kubectl patch` does) to a Deployment shaped like
// Argo CD's, and checks the result against the CMP sidecar contract.
func TestRepoServerPatches(t *testing.T) {
	kustomizeBin(t)
	for _, tc := range []struct {
		patch string
		check func(t *testing.T, pod map[string]any)
	}{
		{"repo-server-patch.yaml", checkSidecar},
		{"repo-server-kustomize-patch.yaml", checkInstall},
	} {
		t.Run(tc.patch, func(t *testing.T) {
			dir := t.TempDir()
			copyFile(t, filepath.Join(root, "e2e", "testdata", "argocd", "argocd-repo-server.yaml"), filepath.Join(dir, "deployment.yaml"))
			copyFile(t, argocdFile(tc.patch), filepath.Join(dir, "patch.yaml"))
			kz := "resources: [deployment.yaml]\npatches:\n  - path: patch.yaml\n"
			if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kz), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := kustomize(t, dir, []string{}...)
			if code != 0 {
				t.Fatalf("kustomize: exit %d\n%s", code, stderr)
			}
			objs := decodeAll(t, stdout)
			if len(objs) != 1 {
				t.Fatalf("got %d objects", len(objs))
			}
			tc.check(t, dig(objs[0], "spec", "template", "spec"))
		})
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func byName(list any, n string) map[string]any {
	items, _ := list.([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m["name"] == n {
			return m
		}
	}
	return nil
}

type mount struct{ path, volume, subPath string }

func mounts(c map[string]any) []mount {
	var out []mount
	items, _ := c["volumeMounts"].([]any)
	for _, it := range items {
		m := it.(map[string]any)
		sub, _ := m["subPath"].(string)
		out = append(out, mount{m["mountPath"].(string), m["name"].(string), sub})
	}
	return out
}

func checkSidecar(t *testing.T, pod map[string]any) {
	c := byName(pod["containers"], "virtc")
	if c == nil {
		t.Fatal("no virtc container")
	}
	if cmd, _ := c["command"].([]any); len(cmd) != 1 || cmd[0] != "/var/run/argocd/argocd-cmp-server" {
		t.Errorf("command %v, want [/var/run/argocd/argocd-cmp-server]", c["command"])
	}
	sc, _ := c["securityContext"].(map[string]any)
	if sc["runAsUser"] != 999 || sc["runAsNonRoot"] != true {
		t.Errorf("securityContext %v: the sidecar must run as user 999, non-root", sc)
	}
	ms := mounts(c)
	for _, want := range []mount{
		{"/var/run/argocd", "var-files", ""},
		{"/home/argocd/cmp-server/plugins", "plugins", ""},
		{"/home/argocd/cmp-server/config/plugin.yaml", "virtc-plugin", "plugin.yaml"},
	} {
		if !slices.Contains(ms, want) {
			t.Errorf("no mount %+v in %+v", want, ms)
		}
	}
	var tmp mount
	for _, m := range ms {
		if m.path == "/tmp" {
			tmp = m
		}
	}
	if tmp.volume == "" || tmp.volume == "tmp" {
		t.Errorf("/tmp must be the sidecar's own volume, not the repo-server's: %+v", tmp)
	}
	for _, v := range []string{"var-files", "plugins", tmp.volume} {
		if byName(pod["volumes"], v) == nil {
			t.Errorf("volume %s is missing", v)
		}
	}
	checkDigest(t, c)
	if cm := dig(byName(pod["volumes"], "virtc-plugin"), "configMap"); cm["name"] != "virtc-plugin" {
		t.Errorf("the plugin volume is %v, want ConfigMap virtc-plugin", cm)
	}
}

// checkInstall checks the kustomize wiring: the init container copies the
// binary from where the image has it onto the repo-server's PATH, with
// virtc itself (the image has no shell and no cp).
func checkInstall(t *testing.T, pod map[string]any) {
	ic := byName(pod["initContainers"], "virtc-install")
	if ic == nil {
		t.Fatal("no virtc-install init container")
	}
	cmd, _ := ic["command"].([]any)
	if len(cmd) != 3 || cmd[0] != imageBinary || cmd[1] != "install" || cmd[2] != "/virtc-bin/virtc" {
		t.Errorf("init command %v, want [%s install /virtc-bin/virtc]", cmd, imageBinary)
	}
	checkDigest(t, ic)
	rs := byName(pod["containers"], "argocd-repo-server")
	if !slices.Contains(mounts(rs), mount{"/usr/local/bin/virtc", "virtc-bin", "virtc"}) {
		t.Errorf("the repo-server does not get virtc at /usr/local/bin/virtc: %+v", mounts(rs))
	}
	if byName(pod["initContainers"], "copyutil") == nil || byName(pod["containers"], "argocd-repo-server")["image"] == nil {
		t.Error("the patch replaced Argo CD's own containers")
	}
}

// imageBinary is where the image has virtc (tools/image/main.go,
// BinaryPath; `make image-test` checks the image itself).
const imageBinary = "/usr/local/bin/virtc"

// checkDigest: the container runs virtc's image by digest.
func checkDigest(t *testing.T, c map[string]any) {
	t.Helper()
	if img, _ := c["image"].(string); !regexp.MustCompile(`/virtc@sha256:[0-9a-f]{64}$`).MatchString(img) {
		t.Errorf("image %q: want virtc's image by digest (make image-pin)", img)
	}
}

// TestContainerFunctionExample: the container form of the transformer
// names the image by digest and is otherwise compiler.yaml.
func TestContainerFunctionExample(t *testing.T) {
	dir := filepath.Join("..", "examples", "kustomize-transformer")
	var exec, container map[string]any
	readYAML(t, filepath.Join(dir, "compiler.yaml"), &exec)
	readYAML(t, filepath.Join(dir, "compiler-container.yaml"), &container)
	fn := dig(container, "metadata", "annotations")["config.kubernetes.io/function"].(string)
	var spec struct {
		Container struct{ Image string } `yaml:"container"`
	}
	if err := yaml.Unmarshal([]byte(fn), &spec); err != nil {
		t.Fatal(err)
	}
	checkDigest(t, map[string]any{"image": spec.Container.Image})
	if !reflectEqual(exec["spec"], container["spec"]) {
		t.Errorf("spec %v differs from compiler.yaml's %v", container["spec"], exec["spec"])
	}
}

func reflectEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
