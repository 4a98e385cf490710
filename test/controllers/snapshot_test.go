package controllers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// snapshotTenant is the tenant of TestTenantSnapshotRestore: one stopped
// VM, and a group whose member the test writes as.
const snapshotTenant = "snap"

// tenantUser is a member of the tenant's edit group, holding exactly what
// virtc's RoleBinding grants it (the Role virtc-tenant-edit); the API server
// adds system:authenticated to an impersonated user.
var tenantUser = http.Header{"Impersonate-User": {"alice"}, "Impersonate-Group": {snapshotTenant + "-devs"}}

// broadUser is a member of the same group and of one that a cluster-admin
// bound, beside virtc, to KubeVirt's own kubevirt.io:edit (the upstream
// role, which may write snapshot contents): the guardrails hold whatever
// RBAC grants.
var broadUser = http.Header{"Impersonate-User": {"carol"}, "Impersonate-Group": {snapshotTenant + "-devs", snapshotTenant + "-broad"}}

const broadBinding = `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: test-broad-kubevirt-edit, namespace: ` + snapshotTenant + `}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kubevirt.io:edit}
subjects:
- {kind: Group, apiGroup: rbac.authorization.k8s.io, name: ` + snapshotTenant + `-broad}
`

// TestTenantSnapshotRestore is the snapshot path of virtc's guardrails
// (docs/guardrails.md snapshot-contents and copies) with KubeVirt's real
// snapshot and restore controllers (v1.8.4 pkg/storage/snapshot) and the
// tenant's policies in force, written as a tenant user:
//
//  1. the tenant snapshots its VM: admitted, and virt-controller writes
//     the VirtualMachineSnapshotContent with the VM's spec (snapshot.go
//     createContent; with no VolumeSnapshotClass here, no disk is
//     captured and every disk is listed as excluded);
//  2. the tenant edits that content, the VM a restore would create
//     (a node selector), or writes a content of its own: refused by RBAC
//     (virtc's Roles grant no content writes) and, for a user whom a
//     cluster-admin also bound to KubeVirt's kubevirt.io:edit, by
//     snapshot-contents; the content stays as virt-controller wrote it;
//  3. a restore with patches, which virt-controller would apply to the VM
//     it writes: refused by copies;
//  4. a restore of the unedited snapshot onto the VM: admitted, and
//     virt-controller completes it (restore.go updateVMRestore), writing
//     the VM from the content (generateRestoredVMSpec) with the
//     restore's annotation.
//
// KubeVirt's validating webhooks are not registered here (Start), so the
// Snapshot feature gate that HCO turns on is not checked.
func TestTenantSnapshotRestore(t *testing.T) {
	e := start(t)
	c := conformance.NewCluster(e.cp, t.TempDir())
	if err := c.InstallEditRoles(e.ctx, filepath.Join(repoRoot, "test", "conformance", conformance.EditRoles)); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	files["tenant.yaml"] = "apiVersion: virtc.dev/v1alpha1\nkind: Tenant\nmetadata:\n  name: " + snapshotTenant + "\nspec:\n  access:\n    edit: [" + snapshotTenant + "-devs]\n"
	files["vm-web.yaml"] = "apiVersion: virtc.dev/v1alpha1\nkind: VM\nmetadata:\n  name: web\n  namespace: " + snapshotTenant + "\nspec:\n  size: u1.small\n  image: fedora\n  runStrategy: Halted\n"
	objs := buildFiles(t, snapshotTenant, files)
	if err := PrepareGoldenImages(e.ctx, e.cp, objs); err != nil {
		t.Fatal(err)
	}
	vms := find(objs, "VirtualMachine")
	if len(vms) != 1 {
		t.Fatalf("want one VirtualMachine in the output, got %d", len(vms))
	}
	e.applyTenant(objs, snapshotTenant, nil)
	if _, err := e.cp.MustKubectl(e.ctx, []byte(broadBinding), "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	e.populated(snapshotTenant, templateNames(vms[0]))
	e.waitGuarded(snapshotTenant)

	ns := "/apis/snapshot.kubevirt.io/v1beta1/namespaces/" + snapshotTenant
	vmPath := "/apis/kubevirt.io/v1/namespaces/" + snapshotTenant + "/virtualmachines/web"
	before := e.get(vmPath)

	// 1. the tenant's snapshot, taken by virt-controller
	e.tenantWrite(t, http.MethodPost, ns+"/virtualmachinesnapshots", map[string]any{
		"apiVersion": "snapshot.kubevirt.io/v1beta1", "kind": "VirtualMachineSnapshot",
		"metadata": map[string]any{"name": "web-before", "namespace": snapshotTenant},
		"spec":     map[string]any{"source": map[string]any{"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": "web"}},
	}, "")
	snap := e.waitFor(ns+"/virtualmachinesnapshots/web-before", "the snapshot ready to use", func(o map[string]any) bool {
		ready, _ := status(o)["readyToUse"].(bool)
		return ready
	})
	contentName, _ := status(snap)["virtualMachineSnapshotContentName"].(string)
	t.Logf("VirtualMachineSnapshot web-before (by virt-controller): readyToUse, content %s, volumes %v, indications %v", contentName, status(snap)["snapshotVolumes"], status(snap)["indications"])
	contentPath := ns + "/virtualmachinesnapshotcontents/" + contentName
	content := e.get(contentPath)
	if got := templateSpec(content, "spec", "source", "virtualMachine"); got == nil {
		t.Fatalf("content %s holds no VM template: %v", contentName, content["spec"])
	}

	// 2. the content edited, or one of the tenant's own
	edited := deepCopy(t, content)
	templateSpec(edited, "spec", "source", "virtualMachine")["nodeSelector"] = map[string]any{"kubernetes.io/hostname": "node-7"}
	e.tenantWrite(t, http.MethodPut, contentPath, edited, refusedByRBAC)
	e.tenantWriteAs(t, broadUser, http.MethodPut, contentPath, edited, "snapshot-contents")
	own := deepCopy(t, content)
	md := own["metadata"].(map[string]any)
	own["metadata"] = map[string]any{"name": "web-own", "namespace": snapshotTenant}
	own["status"] = nil
	e.tenantWrite(t, http.MethodPost, ns+"/virtualmachinesnapshotcontents", own, refusedByRBAC)
	e.tenantWriteAs(t, broadUser, http.MethodPost, ns+"/virtualmachinesnapshotcontents", own, "snapshot-contents")
	if after := e.get(contentPath); after["metadata"].(map[string]any)["resourceVersion"] != md["resourceVersion"] || templateSpec(after, "spec", "source", "virtualMachine")["nodeSelector"] != nil {
		t.Errorf("content %s changed after the refused edit: %v", contentName, templateSpec(after, "spec", "source", "virtualMachine"))
	}

	// 3. a restore that changes the VM
	restore := func(name string, patches []any) map[string]any {
		spec := map[string]any{
			"target":                     map[string]any{"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": "web"},
			"virtualMachineSnapshotName": "web-before",
		}
		if patches != nil {
			spec["patches"] = patches
		}
		return map[string]any{"apiVersion": "snapshot.kubevirt.io/v1beta1", "kind": "VirtualMachineRestore",
			"metadata": map[string]any{"name": name, "namespace": snapshotTenant}, "spec": spec}
	}
	e.tenantWrite(t, http.MethodPost, ns+"/virtualmachinerestores",
		restore("web-patched", []any{`{"op": "add", "path": "/spec/template/spec/nodeSelector", "value": {"kubernetes.io/hostname": "node-7"}}`}), "copies")

	// 4. the unedited snapshot restored onto the VM
	e.tenantWrite(t, http.MethodPost, ns+"/virtualmachinerestores", restore("web-back", nil), "")
	done := e.waitFor(ns+"/virtualmachinerestores/web-back", "the restore complete", func(o map[string]any) bool {
		complete, _ := status(o)["complete"].(bool)
		return complete
	})
	uid, _ := done["metadata"].(map[string]any)["uid"].(string)
	vm := e.get(vmPath)
	annotations, _ := vm["metadata"].(map[string]any)["annotations"].(map[string]any)
	if want := "web-back-" + uid; annotations["restore.kubevirt.io/lastRestoreUID"] != want {
		t.Errorf("the restored VM's restore.kubevirt.io/lastRestoreUID is %v, want %s (restore.go setLastRestoreAnnotation)", annotations["restore.kubevirt.io/lastRestoreUID"], want)
	}
	for _, field := range []string{"instancetype", "preference", "dataVolumeTemplates", "runStrategy"} {
		if b, a := jsonOf(t, spec(before)[field]), jsonOf(t, spec(vm)[field]); a != b {
			t.Errorf("restored VM: spec.%s is %s, was %s", field, a, b)
		}
	}
	if b, a := jsonOf(t, templateSpec(before, "spec")), jsonOf(t, templateSpec(vm, "spec")); a != b {
		t.Errorf("restored VM: spec.template.spec is\n%s\nwas\n%s", a, b)
	}
	t.Logf("VirtualMachineRestore web-back (by virt-controller): complete, restores %v; the VM written from the content, annotated %v", status(done)["restores"], annotations["restore.kubevirt.io/lastRestoreUID"])
}

// populated waits until the DataVolumes of a tenant's VM have Succeeded,
// with the clone and volume stand-ins doing what CDI's clone pods and a
// CSI driver would.
func (e *env) populated(namespace string, dvs []string) {
	e.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		e.syncStorage(namespace)
		var waiting []string
		for _, dv := range dvs {
			data, err := e.cp.Get(e.ctx, "/apis/cdi.kubevirt.io/v1beta1/namespaces/"+namespace+"/datavolumes/"+dv)
			var o map[string]any
			if err == nil {
				err = json.Unmarshal(data, &o)
			}
			if err != nil || phase(o) != "Succeeded" {
				waiting = append(waiting, fmt.Sprintf("%s (%s)", dv, phase(o)))
			}
		}
		if len(waiting) == 0 {
			return
		}
		if time.Now().After(deadline) {
			out, _ := e.cp.Kubectl(e.ctx, nil, "get", "vm,dv,pvc,pods,events", "-n", namespace, "-o", "wide")
			e.t.Fatalf("%s: after %v DataVolumes not Succeeded: %s\n%s", namespace, waitFor, strings.Join(waiting, ", "), out)
		}
		time.Sleep(time.Second)
	}
}

// waitGuarded waits until the API server enforces the tenant's policies
// (it does once its informers see them): a dry run of a VM of a size no
// catalog has must be refused by the instancetype rule.
func (e *env) waitGuarded(namespace string) {
	e.t.Helper()
	probe, err := json.Marshal(map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "virtc-guardrail-probe", "namespace": namespace},
		"spec": map[string]any{"runStrategy": "Halted", "instancetype": map[string]any{"name": "virtc-guardrail-probe"},
			"template": map[string]any{"spec": map[string]any{"domain": map[string]any{"devices": map[string]any{}}}}}})
	if err != nil {
		e.t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		code, body, err := e.cp.Request(e.ctx, http.MethodPost, "/apis/kubevirt.io/v1/namespaces/"+namespace+"/virtualmachines?dryRun=All", "application/json", probe, nil)
		if err != nil {
			e.t.Fatal(err)
		}
		if code/100 != 2 && strings.Contains(string(body), "virtc guardrail instancetype") {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the guardrails of tenant %s are not enforced after a minute: %d %s", namespace, code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tenantWrite sends obj as the tenant's user; rule "" wants it admitted,
// else refused by that guardrail (the policy, not RBAC).
func (e *env) tenantWrite(t *testing.T, method, path string, obj map[string]any, rule string) {
	t.Helper()
	e.tenantWriteAs(t, tenantUser, method, path, obj, rule)
}

// refusedByRBAC is tenantWrite's rule for a write the tenant's Roles do not
// allow at all.
const refusedByRBAC = "RBAC"

func (e *env) tenantWriteAs(t *testing.T, user http.Header, method, path string, obj map[string]any, rule string) {
	t.Helper()
	body, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := obj["metadata"].(map[string]any)
	what := fmt.Sprintf("%s %v/%v as %s", method, obj["kind"], md["name"], user.Get("Impersonate-User"))
	code, answer, err := e.cp.Request(e.ctx, method, path, "application/json", body, user)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case rule == refusedByRBAC && code == http.StatusForbidden && strings.Contains(string(answer), "is forbidden: User"):
		t.Logf("%s: refused by RBAC (%d)", what, code)
	case rule == refusedByRBAC:
		t.Errorf("%s: %d, want refused by RBAC: %s", what, code, answer)
	case rule == "" && code/100 != 2:
		t.Fatalf("%s: refused (%d), want admitted: %s", what, code, answer)
	case rule == "":
		t.Logf("%s: admitted", what)
	case code/100 == 2:
		t.Errorf("%s: admitted, want refused by %s", what, rule)
	case strings.Contains(string(answer), "is forbidden: User"):
		t.Errorf("%s: refused by RBAC, not by the policy: %s", what, answer)
	case !strings.Contains(string(answer), "denied request: virtc guardrail "+rule+": "):
		t.Errorf("%s: refused, but not by %s: %s", what, rule, answer)
	default:
		t.Logf("%s: refused by %s (%d)", what, rule, code)
	}
}

// waitFor waits until ok accepts the object at path and returns it.
func (e *env) waitFor(path, what string, ok func(map[string]any) bool) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		var o map[string]any
		if data, err := e.cp.Get(e.ctx, path); err == nil {
			if err := json.Unmarshal(data, &o); err != nil {
				e.t.Fatal(err)
			}
			if ok(o) {
				return o
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not %s after %v: status %v", path, what, waitFor, status(o))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func status(o map[string]any) map[string]any {
	st, _ := o["status"].(map[string]any)
	return st
}

func spec(o map[string]any) map[string]any {
	s, _ := o["spec"].(map[string]any)
	return s
}

// templateSpec is spec.template.spec of the VM at path in o (the path's
// last element holds the VM's spec).
func templateSpec(o map[string]any, path ...string) map[string]any {
	cur := o
	for _, p := range path {
		cur, _ = cur[p].(map[string]any)
	}
	if p := path[len(path)-1]; p != "spec" {
		cur, _ = cur["spec"].(map[string]any)
	}
	tpl, _ := cur["template"].(map[string]any)
	ts, _ := tpl["spec"].(map[string]any)
	return ts
}

func deepCopy(t *testing.T, o map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
