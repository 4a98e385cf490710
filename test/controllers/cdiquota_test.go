package controllers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/test/conformance"
)

// TestQuotaAdmitsCDIClonePods lets CDI's real cdi-controller render, under
// virtc's ResourceQuota, the one kind of CDI worker pod that lands in a
// tenant's namespace, and the API server decide on it. virtc's tenant
// DataVolumes are the VMs' root disks, each a clone of a golden image's
// DataSource in the image namespace (internal/render/virtualmachine.go). CDI
// v1.65.0 clones with volume populators where the class's CSI driver has a
// CSIDriver object, and then makes its temporary claim and runs every pod
// in the source namespace (pkg/controller/clone/planner.go
// createDesiredClaim, HostClonePhase, PrepClaimPhase: the image
// namespace); without one it clones host-assisted
// (pkg/controller/datavolume/clone-controller-base.go
// fallbackToHostAssisted): the cloner pod runs in the source namespace
// (pkg/controller/clone-controller.go CreateCloneSourcePod), the upload
// server pod that receives the data in the target claim's namespace, the
// tenant's (pkg/controller/upload-controller.go createUploadPod), with
// CDIConfig's default pod resources (pkg/controller/config-controller.go:
// requests 100m CPU and 60M memory, limits 750m and 600M; virtc's quota
// bounds requests only). This suite's class has no CSIDriver object
// (CreateStorageClasses), so CDI takes that path here.
//
// virt-controller starts a VM only once its DataVolumes are ready
// (kubevirt v1.8.4 pkg/virt-controller/watch/vm/vm.go), so while a VM's
// disk is cloned its launcher pod, which virtc's quota holds room for,
// does not exist: the upload pod runs in that room, which for the smallest
// VM (one vCPU: 100m at KubeVirt's CPU allocation ratio of 10, plus the
// console log container; its guest memory alone above 60M) is at least
// what CDI's pod requests. So virtc's quota needs no headroom of its own
// for CDI, and the test shows it:
//
//  1. with virtc's quota, the clone token stand-in (CloneToken) in place
//     of cdi-apiserver, CDI creates each DataVolume's claim and its upload
//     server pod in the tenant's namespace, and the API server admits
//     every one, no launcher pod there yet;
//  2. the same tenant with requests.cpu one milli-CPU below what those
//     upload pods request: the API server refuses one (cdi-controller logs
//     "exceeded quota"), so the check can fail.
func TestQuotaAdmitsCDIClonePods(t *testing.T) {
	e := start(t)
	cpu, mem := e.cdiPodRequests(t)
	t.Logf("CDIConfig config (by cdi-controller): default pod requests cpu %s, memory %s", cpu.String(), mem.String())

	fits := build(t, "cdi-clone-fits")
	if err := PrepareGoldenImages(e.ctx, e.cp, fits); err != nil {
		t.Fatal(err)
	}
	var dvs []string
	for _, vm := range find(fits, "VirtualMachine") {
		dvs = append(dvs, templateNames(vm)...)
	}
	slices.Sort(dvs)
	h := hard(t, find(fits, "ResourceQuota")[0])
	t.Logf("virtc's quota: requests.cpu %v, requests.memory %v, for %d VMs cloning %s", h["requests.cpu"], h["requests.memory"], len(dvs), strings.Join(dvs, ", "))

	// 1. virtc's quota
	e.applyTenant(fits, "cdi-clone-fits", nil)
	pods, refused := e.uploadPods(t, "cdi-clone-fits", dvs)
	var used resource.Quantity
	for _, dv := range dvs {
		if pods[dv] == nil {
			t.Errorf("cdi-clone-fits/%s: the API server refused CDI's upload pod under virtc's quota: %s", dv, refused[dv])
			continue
		}
		pm, pc := podRequests(pods[dv])
		used.Add(pc)
		if pc.Cmp(cpu) != 0 || pm.Cmp(mem) != 0 {
			t.Errorf("cdi-clone-fits/%s: upload pod requests cpu %s memory %s, want CDIConfig's %s and %s", dv, pc.String(), pm.String(), cpu.String(), mem.String())
		}
		t.Logf("cdi-clone-fits/%s: upload pod %s (by cdi-controller) admitted, requests cpu %s, memory %s", dv, name(pods[dv]), pc.String(), pm.String())
	}
	if l := e.launchers("cdi-clone-fits"); len(l) != 0 {
		t.Errorf("cdi-clone-fits: launcher pods exist while the disks are cloned (%d); the room virtc's quota holds for them is what the upload pods use", len(l))
	}
	if t.Failed() {
		return
	}
	// CDI ends the clones (HostClones plays the pods), marks the
	// DataVolumes Succeeded, and virt-controller starts the VMs: their
	// launcher pods, admitted under the same quota once the upload pods
	// have ended
	hc := NewHostClones(e.cp, e.cdi)
	deadline := time.Now().Add(waitFor)
	for {
		if err := hc.Sync(e.ctx); err != nil {
			t.Fatal(err)
		}
		if err := e.volumes.Sync(e.ctx, "cdi-clone-fits"); err != nil {
			t.Fatal(err)
		}
		// the DataVolume's phase follows the upload pod's; the clone
		// controller marks the claim cloned on its own reconcile
		var waiting []string
		for _, dv := range dvs {
			p := phase(e.get("/apis/cdi.kubevirt.io/v1beta1/namespaces/cdi-clone-fits/datavolumes/" + dv))
			md, _ := e.get("/api/v1/namespaces/cdi-clone-fits/persistentvolumeclaims/" + dv)["metadata"].(map[string]any)
			anns, _ := md["annotations"].(map[string]any)
			if p != "Succeeded" || anns["k8s.io/CloneOf"] != "true" {
				waiting = append(waiting, fmt.Sprintf("%s (%s, CloneOf %v)", dv, p, anns["k8s.io/CloneOf"]))
			}
		}
		if len(waiting) == 0 {
			break
		}
		if time.Now().After(deadline) {
			out, _ := e.cp.Kubectl(e.ctx, nil, "get", "dv,pvc,pods,events", "-A", "-o", "wide")
			t.Fatalf("cdi-clone-fits: clones not done after %v: %s\n%s", waitFor, strings.Join(waiting, ", "), out)
		}
		time.Sleep(time.Second)
	}
	for _, dv := range dvs {
		claim := e.get("/api/v1/namespaces/cdi-clone-fits/persistentvolumeclaims/" + dv)
		md, _ := claim["metadata"].(map[string]any)
		anns, _ := md["annotations"].(map[string]any)
		spec, _ := claim["spec"].(map[string]any)
		if owner := controllerOf(claim); owner != "DataVolume/"+dv || anns["k8s.io/CloneOf"] != "true" {
			t.Errorf("cdi-clone-fits/%s: claim controller %q, CloneOf %v; want the DataVolume's claim, cloned by CDI", dv, owner, anns["k8s.io/CloneOf"])
		}
		r := requestOf(spec)
		t.Logf("cdi-clone-fits/%s: Succeeded, claim by CDI's host-assisted clone: %s, %v", dv, r.String(), spec["volumeMode"])
	}
	_, launchers := e.settle("cdi-clone-fits", vmNames(fits))
	for vm, p := range launchers {
		t.Logf("cdi-clone-fits/%s: launcher pod %s admitted after the clone", vm, name(p))
	}
	if r := e.refusals("cdi-clone-fits"); len(r) != 0 {
		t.Errorf("cdi-clone-fits: launcher pods refused after the clones: %v", r)
	}
	// Root disks grown as virtc diff tells their owners to
	// (internal/diff/vm.go root-disk-grow): spec.rootDisk raised in Git,
	// the new output applied (its quota holds room for the larger disks;
	// KubeVirt never resizes a disk from dataVolumeTemplates), then each
	// claim expanded by hand. A claim CDI cloned carries CDI's own marks
	// (k8s.io/CloneRequest, k8s.io/CloneOf, its DataVolume as controller),
	// and the tenant's policies judge what an update changes, not what CDI
	// left (claim-source, cdi-annotations and storage-class in
	// internal/rules/table.go), so a member of the tenant's edit group and
	// a cluster-admin each expand one.
	if err := conformance.NewCluster(e.cp, t.TempDir()).InstallEditRoles(e.ctx, filepath.Join(repoRoot, "test", "conformance", conformance.EditRoles)); err != nil {
		t.Fatal(err)
	}
	e.waitGuarded("cdi-clone-fits")
	files := tenantIntents("cdi-clone-fits")
	grown := map[string]string{"batch-root": "vm-batch.yaml", "db-root": "vm-db.yaml"}
	for _, file := range grown {
		files[file] += "  rootDisk: 31Gi\n"
	}
	e.applyObjects(buildFiles(t, "cdi-clone-fits", files))
	if err := SyncQuotaHard(e.ctx, e.cp, "cdi-clone-fits", quotaName); err != nil {
		t.Fatal(err)
	}
	e.growClaim(t, "cdi-clone-fits", "batch-root", "31Gi", "a member of the tenant's edit group", http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"cdi-clone-fits-devs"}})
	e.growClaim(t, "cdi-clone-fits", "db-root", "31Gi", "a cluster-admin", nil)

	// 2. a quota without room for the last upload pod
	short := build(t, "cdi-clone-short")
	smaller := used.DeepCopy()
	smaller.Sub(resource.MustParse("1m"))
	e.applyTenant(short, "cdi-clone-short", map[string]string{"requests.cpu": smaller.String()})
	pods, refused = e.uploadPods(t, "cdi-clone-short", dvs)
	n := 0
	for _, dv := range dvs {
		if pods[dv] == nil {
			n++
			t.Logf("cdi-clone-short/%s: upload pod refused by the API server: %s", dv, refused[dv])
		}
	}
	if n == 0 {
		t.Errorf("cdi-clone-short: requests.cpu %s (1m below the upload pods' %s) admitted every upload pod; want one refused", smaller.String(), used.String())
	}
}

// growClaim expands a claim to size, as who (as: the impersonation
// headers; nil is the suite's cluster-admin) with the merge patch `kubectl
// patch pvc` sends, and fails unless the API server admits it and the claim
// then requests that size.
func (e *env) growClaim(t *testing.T, namespace, claim, size, who string, as http.Header) {
	t.Helper()
	path := "/api/v1/namespaces/" + namespace + "/persistentvolumeclaims/" + claim
	before := e.get(path)
	want := resource.MustParse(size)
	if old := requestOf(before["spec"]); old.Cmp(want) >= 0 {
		t.Fatalf("%s/%s requests %s already, not less than %s", namespace, claim, old.String(), size)
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": size}}}})
	if err != nil {
		t.Fatal(err)
	}
	// The quota admission reads quotas from its informer, which sees the
	// status SyncQuotaHard wrote a moment later.
	var code int
	var answer []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if code, answer, err = e.cp.Request(e.ctx, http.MethodPatch, path, "application/merge-patch+json", patch, as); err != nil {
			t.Fatal(err)
		}
		if code/100 == 2 || !strings.Contains(string(answer), "exceeded quota") || time.Now().After(deadline) {
			break
		}
	}
	if code/100 != 2 {
		t.Errorf("%s/%s expanded to %s by %s: refused (%d): %s", namespace, claim, size, who, code, answer)
		return
	}
	if got := requestOf(e.get(path)["spec"]); got.Cmp(want) != 0 {
		t.Errorf("%s/%s expanded by %s: requests %s after the patch, want %s", namespace, claim, who, got.String(), size)
		return
	}
	md, _ := before["metadata"].(map[string]any)
	anns, _ := md["annotations"].(map[string]any)
	t.Logf("%s/%s (cloned by cdi-controller: k8s.io/CloneRequest %v) expanded to %s by %s: admitted", namespace, claim, anns["k8s.io/CloneRequest"], size, who)
}

// cdiPodRequests are the default pod requests cdi-controller's config
// controller writes into CDIConfig "config"
// (status.defaultPodResourceRequirements).
func (e *env) cdiPodRequests(t *testing.T) (cpu, mem resource.Quantity) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		if data, err := e.cp.Get(e.ctx, "/apis/cdi.kubevirt.io/v1beta1/cdiconfigs/config"); err == nil {
			var c struct {
				Status struct {
					Default struct {
						Requests map[string]string `json:"requests"`
					} `json:"defaultPodResourceRequirements"`
				} `json:"status"`
			}
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatal(err)
			}
			r := c.Status.Default.Requests
			if r["cpu"] != "" && r["memory"] != "" {
				return resource.MustParse(r["cpu"]), resource.MustParse(r["memory"])
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("CDIConfig config has no status.defaultPodResourceRequirements.requests after %v", waitFor)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// uploadPods writes the clone token on each DataVolume of namespace
// virt-controller creates (as cdi-apiserver's webhook would at creation),
// binds the claims CDI creates (Volumes), and waits until each of dvs has
// its upload server pod (label cdi.kubevirt.io=cdi-upload-server, named
// cdi-upload-<claim>: upload-controller.go createUploadResourceName) or
// cdi-controller's log says the API server refused it for the quota.
func (e *env) uploadPods(t *testing.T, namespace string, dvs []string) (map[string]map[string]any, map[string]string) {
	t.Helper()
	tokened := map[string]bool{}
	deadline := time.Now().Add(waitFor)
	for {
		for _, dv := range e.list("/apis/cdi.kubevirt.io/v1beta1/namespaces/" + namespace + "/datavolumes") {
			n := name(dv)
			if tokened[n] {
				continue
			}
			if err := CloneToken(e.ctx, e.cp, e.cdi, namespace, n); err != nil {
				t.Fatal(err)
			}
			tokened[n] = true
		}
		if err := e.volumes.Sync(e.ctx, namespace); err != nil {
			t.Fatal(err)
		}
		pods := map[string]map[string]any{}
		for _, p := range e.list("/api/v1/namespaces/" + namespace + "/pods?labelSelector=cdi.kubevirt.io%3Dcdi-upload-server") {
			if dv, ok := strings.CutPrefix(name(p), "cdi-upload-"); ok {
				pods[dv] = p
			}
		}
		refused := map[string]string{}
		log, err := os.ReadFile(e.cdi.Log)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(log), "\n") {
			if !strings.Contains(line, "exceeded quota") || !strings.Contains(line, namespace) {
				continue
			}
			for _, dv := range dvs {
				if strings.Contains(line, `cdi-upload-`+dv+`\"`) {
					// the reconcile error, not the stack
					msg := line
					if i := strings.Index(msg, `"error":"`); i >= 0 {
						msg = msg[i+len(`"error":"`):]
						msg, _, _ = strings.Cut(msg, `","`)
					}
					refused[dv] = msg
				}
			}
		}
		var waiting []string
		for _, dv := range dvs {
			if pods[dv] == nil && refused[dv] == "" {
				waiting = append(waiting, dv)
			}
		}
		if len(waiting) == 0 {
			return pods, refused
		}
		if time.Now().After(deadline) {
			out, _ := e.cp.Kubectl(e.ctx, nil, "get", "dv,pvc,pods,events", "-n", namespace, "-o", "wide")
			t.Fatalf("%s: after %v no upload pod and no quota refusal for %s\n%s\ncdi-controller:\n%s", namespace, waitFor, strings.Join(waiting, ", "), out, tailLines(e.cdi.Process.Tail(), 40))
		}
		time.Sleep(time.Second)
	}
}

// vmNames are the names of the VirtualMachines of objs, sorted.
func vmNames(objs []conformance.Object) []string {
	var out []string
	for _, vm := range find(objs, "VirtualMachine") {
		out = append(out, vm.Name)
	}
	slices.Sort(out)
	return out
}
