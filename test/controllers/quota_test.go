package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/test/conform"
	"github.com/virtc/virtc/test/conformance"
)

// GateEnv must be 1 for the suite to run: it starts a control plane and
// KubeVirt, which plain `go test ./...` should not.
const GateEnv = "VIRTC_E2E_CONTROLLERS"

const (
	repoRoot        = "../.."
	platformVersion = "4.22"
	quotaName       = "virtc-vms"
	waitFor         = 3 * time.Minute
)

// env is a control plane with KubeVirt's virt-api and virt-controller.
type env struct {
	t   *testing.T
	ctx context.Context
	cp  *conformance.ControlPlane
	kv  *KubeVirt
	// CDI's real cdi-controller, and the stand-ins for what it needs that
	// cannot run here (standin.go)
	cdi     *CDIController
	volumes *Volumes
	clones  *Clones
}

func start(t *testing.T) *env {
	t.Helper()
	return startWith(t, false)
}

// startWith is start; with serviceAccounts it also runs
// kube-controller-manager of the API server's build (the controllers of
// conformance.ControllersWithoutNode: service accounts and their tokens,
// resource quota status, garbage collection) and the API server's
// ServiceAccount admission plugin (which conformance.Start turns off), so
// that every pod gets its namespace's default ServiceAccount and the
// projected token volume (kube-api-access-*) mounted, as on a cluster
// (kubernetes plugin/pkg/admission/serviceaccount/admission.go
// mountServiceAccountToken). KubeVirt counts on that volume: it takes a
// hot-plug attachment pod for the one of the ready volumes only if its
// volumes are those plus two, "empty dir and token"
// (pkg/virt-controller/watch/vmi/volume-hotplug.go
// podVolumesMatchesReadyVolumes); without it, it deletes and recreates the
// pod without end.
func startWith(t *testing.T, serviceAccounts bool) *env {
	t.Helper()
	conformance.Gate(t, GateEnv, "the controllers suite starts a control plane with KubeVirt's virt-api and virt-controller; run `make e2e-controllers`")
	bins := conformance.Need(t, conformance.FindBinaries)
	tools := conformance.Need(t, FindTools)
	cdiTools := conformance.Need(t, FindCDITools)
	schemas, err := conform.Schemas(platformVersion)
	if err != nil {
		conform.Skip(t, err)
	}
	ctx := t.Context()
	dir := t.TempDir()
	pki, err := conformance.WriteServingPKI(dir, "virtc-kubevirt-ca")
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	args := APIServerArgs(pki)
	kcmBin := ""
	if serviceAccounts {
		kcmBin = conformance.Need(t, conformance.FindControllerManager)
		// the last --disable-admission-plugins wins: none
		args = append(args, "--disable-admission-plugins=")
	}
	cp := conformance.StartForTest(t, ctx, bins, filepath.Join(dir, "control-plane"), args...)
	if serviceAccounts {
		kcm := conformance.StartControllerManagerForTest(t, ctx, cp, kcmBin, filepath.Join(dir, "kcm"), conformance.ControllersWithoutNode)
		if err := cp.WaitServiceAccount(ctx, "default"); err != nil {
			t.Fatalf("%v\n%s", err, kcm.Tail())
		}
		// the admission plugin mounts the token: a pod as the API server
		// would store it
		probe := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: token-probe, namespace: default}\nspec: {containers: [{name: c, image: none}]}\n")
		out, err := cp.MustKubectl(ctx, probe, "create", "--dry-run=server", "-o", "jsonpath={.spec.volumes[*].name}", "-f", "-")
		if err != nil || !strings.Contains(string(out), "kube-api-access-") {
			t.Fatalf("the ServiceAccount admission plugin mounts no token into a pod (volumes %q): %v", out, err)
		}
	}
	if err := InstallPlatformCRDs(ctx, cp, repoRoot, schemas, platformVersion); err != nil {
		t.Fatal(err)
	}
	added, err := InstallMissingCRDs(ctx, cp, filepath.Join(dir, "crds"), tools.KubeVirtCRDs, cdiTools.CRDs)
	if err != nil {
		t.Fatalf("install KubeVirt's and CDI's CRDs: %v", err)
	}
	t.Logf("CRDs added to the platform's set: %s", strings.Join(added, ", "))
	kv, err := Start(ctx, cp, tools, pki, filepath.Join(dir, "kubevirt"))
	if err != nil {
		t.Fatalf("start KubeVirt: %v", err)
	}
	t.Cleanup(func() {
		keepLogs(t, kv.Controller, kv.API)
		kv.Stop()
	})
	if err := CreateStorageClasses(ctx, cp); err != nil {
		t.Fatal(err)
	}
	cdi, err := StartCDI(ctx, cp, cdiTools, filepath.Join(dir, "cdi"))
	if err != nil {
		t.Fatalf("start CDI: %v", err)
	}
	t.Cleanup(func() {
		keepLogs(t, cdi.Process)
		cdi.Stop()
	})
	t.Logf("control plane, virt-api and virt-controller %s, cdi-controller %s ready in %v", DefaultKubeVirtVersion, DefaultCDIVersion, time.Since(began).Round(time.Millisecond))
	return &env{t: t, ctx: ctx, cp: cp, kv: kv, cdi: cdi, volumes: NewVolumes(cp), clones: NewClones(cp)}
}

// tenantIntents is a tenant without a quota of its own (virtc derives the
// ResourceQuota from its VMs, with the headroom of concurrent migrations),
// with VMs of three sizes that all run.
func tenantIntents(tenant string) map[string]string {
	files := map[string]string{"tenant.yaml": fmt.Sprintf(`apiVersion: virtc.dev/v1alpha1
kind: Tenant
metadata:
  name: %s
spec:
  access:
    admin: [%s-admins]
    edit: [%s-devs]
`, tenant, tenant, tenant)}
	for _, vm := range []struct{ name, size, image string }{
		{"web", "u1.small", "fedora"},
		{"db", "u1.medium", "rhel9"},
		{"batch", "u1.large", "centos-stream9"},
	} {
		files["vm-"+vm.name+".yaml"] = fmt.Sprintf("apiVersion: virtc.dev/v1alpha1\nkind: VM\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  size: %s\n  image: %s\n  runStrategy: Always\n",
			vm.name, tenant, vm.size, vm.image)
	}
	return files
}

// build compiles the intents of a tenant with virtc.
func build(t *testing.T, tenant string) []conformance.Object {
	t.Helper()
	return buildFiles(t, tenant, tenantIntents(tenant))
}

// buildFiles compiles intent files (name: content) with virtc.
func buildFiles(t *testing.T, tenant string, files map[string]string) []conformance.Object {
	t.Helper()
	dir := filepath.Join(t.TempDir(), tenant)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return conformance.VirtcObjects(t, "virtc build "+tenant, "build", dir)
}

// hard is a quota's spec.hard.
func hard(t *testing.T, o conformance.Object) map[string]any {
	spec, _ := o.Doc["spec"].(map[string]any)
	h, _ := spec["hard"].(map[string]any)
	if h == nil {
		t.Fatalf("%s has no spec.hard", o)
	}
	return h
}

func find(objs []conformance.Object, kind string) []conformance.Object {
	var out []conformance.Object
	for _, o := range objs {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// list returns the items of a collection path.
func (e *env) list(path string) []map[string]any {
	e.t.Helper()
	items, err := conformance.List[map[string]any](e.ctx, e.cp, path)
	if err != nil {
		e.t.Fatal(err)
	}
	return items
}

func name(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	s, _ := md["name"].(string)
	return s
}

// launchers are the virt-launcher pods of namespace, by the VMI they run
// (label kubevirt.io/created-by is the VMI's UID; vm.kubevirt.io/name its
// name, set by virt-controller's pkg/virt-controller/services/template.go).
func (e *env) launchers(namespace string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, p := range e.list("/api/v1/namespaces/" + namespace + "/pods?labelSelector=kubevirt.io%3Dvirt-launcher") {
		md, _ := p["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		vmi, _ := labels["vm.kubevirt.io/name"].(string)
		out[vmi] = p
	}
	return out
}

// podRequests is what ResourceQuota counts for a pod's requests.memory and
// requests.cpu (kubernetes pkg/api/v1/resource PodRequests): its containers
// plus its sidecars (init containers with restartPolicy Always, as
// virt-controller renders the guest-console-log container), or a regular
// init container with the sidecars started before it, whichever is more.
func podRequests(p map[string]any) (mem, cpu resource.Quantity) {
	spec, _ := p["spec"].(map[string]any)
	return podRequest(spec, "memory"), podRequest(spec, "cpu")
}

// podRequest is what ResourceQuota counts for a pod's request of one
// resource (podRequests), spec being the pod's spec.
func podRequest(spec map[string]any, resourceName string) resource.Quantity {
	req := func(c any) (q resource.Quantity) {
		cm, _ := c.(map[string]any)
		res, _ := cm["resources"].(map[string]any)
		r, _ := res["requests"].(map[string]any)
		if s, ok := r[resourceName].(string); ok {
			q = resource.MustParse(s)
		}
		return q
	}
	var total resource.Quantity
	containers, _ := spec["containers"].([]any)
	for _, c := range containers {
		total.Add(req(c))
	}
	inits, _ := spec["initContainers"].([]any)
	var sidecars, maxInit resource.Quantity
	for _, c := range inits {
		cm, _ := c.(map[string]any)
		q := req(c)
		if cm["restartPolicy"] == "Always" {
			sidecars.Add(q)
			continue
		}
		q.Add(sidecars)
		if q.Cmp(maxInit) > 0 {
			maxInit = q
		}
	}
	total.Add(sidecars)
	if maxInit.Cmp(total) > 0 {
		total = maxInit
	}
	return total
}

// refusals are, by VMI name, the pods the API server refused for the
// quota, as virt-controller reports them: a Warning event FailedCreate on
// the VMI, "Error creating pod: ... exceeded quota ..." (for a launcher pod
// pkg/virt-controller/watch/vmi/lifecycle.go sync, for a migration target
// pod pkg/virt-controller/watch/migration/migration.go createTargetPod).
func (e *env) refusals(namespace string) map[string]string {
	out := map[string]string{}
	for _, ev := range e.list("/api/v1/namespaces/" + namespace + "/events") {
		obj, _ := ev["involvedObject"].(map[string]any)
		msg, _ := ev["message"].(string)
		if ev["reason"] == "FailedCreate" && obj["kind"] == "VirtualMachineInstance" && strings.Contains(msg, "exceeded quota") {
			vm, _ := obj["name"].(string)
			out[vm] = msg
		}
	}
	return out
}

// settle runs the clone and volume stand-ins for namespace (CDI's real
// controller adopts the clones) until every VM's VMI exists
// and has either a launcher pod or virt-controller's report that the quota
// refused it (other sync errors, such as a claim not in its cache yet,
// pass), and returns the VMIs by
// name and the launcher pods by VMI name.
func (e *env) settle(namespace string, vms []string) (map[string]map[string]any, map[string]map[string]any) {
	e.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		e.syncStorage(namespace)
		vmis := map[string]map[string]any{}
		for _, v := range e.list("/apis/kubevirt.io/v1/namespaces/" + namespace + "/virtualmachineinstances") {
			vmis[name(v)] = v
		}
		pods := e.launchers(namespace)
		refused := e.refusals(namespace)
		var waiting []string
		for _, vm := range vms {
			if vmis[vm] == nil {
				waiting = append(waiting, vm+" (no VMI)")
			} else if pods[vm] == nil && refused[vm] == "" {
				waiting = append(waiting, vm+" (no pod, no quota refusal)")
			}
		}
		if len(waiting) == 0 {
			return vmis, pods
		}
		if time.Now().After(deadline) {
			out, _ := e.cp.Kubectl(e.ctx, nil, "get", "vm,vmi,dv,pvc,pods,events", "-n", namespace, "-o", "wide")
			e.t.Fatalf("%s: after %v still waiting for %s\n%s", namespace, waitFor, strings.Join(waiting, ", "), out)
		}
		time.Sleep(time.Second)
	}
}

// TestQuotaAdmitsLauncherPods applies a tenant virtc compiled and lets the
// real virt-controller turn its VMs into VMIs and render their
// virt-launcher pods: the API server must admit every launcher pod under
// virtc's ResourceQuota. The same tenant with the quota's memory one MiB
// below what the rendered launcher pods request must be refused by the API
// server, as virt-controller reports it on the VMI. The quota is read from
// virtc's output and the requests from the pods virt-controller rendered:
// nothing here restates sizing's numbers.
func TestQuotaAdmitsLauncherPods(t *testing.T) {
	e := start(t)

	fits := build(t, "quota-fits")
	if err := PrepareGoldenImages(e.ctx, e.cp, fits); err != nil {
		t.Fatal(err)
	}
	quotas := find(fits, "ResourceQuota")
	if len(quotas) != 1 || quotas[0].Name != quotaName {
		t.Fatalf("want one ResourceQuota %s in the output, got %v", quotaName, quotas)
	}
	h := hard(t, quotas[0])
	var vms []string
	for _, vm := range find(fits, "VirtualMachine") {
		vms = append(vms, vm.Name)
	}
	slices.Sort(vms)

	// 1. virtc's quota: every VM's VMI and launcher pod.
	e.applyTenant(fits, "quota-fits", nil)
	_, fitsPods := e.settle("quota-fits", vms)
	pods := fitsPods
	var used, usedCPU resource.Quantity
	for _, vm := range vms {
		if pods[vm] == nil {
			t.Errorf("quota-fits/%s: virt-controller could not create the launcher pod under virtc's quota: %s", vm, e.refusals("quota-fits")[vm])
			continue
		}
		mem, cpu := podRequests(pods[vm])
		used.Add(mem)
		usedCPU.Add(cpu)
		t.Logf("quota-fits/%s: launcher pod %s admitted (requests memory %s, cpu %s)", vm, name(pods[vm]), mem.String(), cpu.String())
	}
	quotaMem := resource.MustParse(fmt.Sprint(h["requests.memory"]))
	quotaCPU := resource.MustParse(fmt.Sprint(h["requests.cpu"]))
	t.Logf("virtc's quota: requests.memory %s, requests.cpu %s; the launcher pods request %s and %s",
		quotaMem.String(), quotaCPU.String(), used.String(), usedCPU.String())
	if t.Failed() {
		return
	}

	// 2. The same tenant, its quota's memory one MiB below what the pods
	// virt-controller rendered request: the API server refuses one.
	short := build(t, "quota-short")
	smaller := used.DeepCopy()
	smaller.Sub(resource.MustParse("1Mi"))
	e.applyTenant(short, "quota-short", map[string]string{"requests.memory": smaller.String()})
	_, pods = e.settle("quota-short", vms)
	var refused []string
	shortRefusals := e.refusals("quota-short")
	for _, vm := range vms {
		if r := shortRefusals[vm]; pods[vm] == nil {
			refused = append(refused, vm)
			t.Logf("quota-short/%s: %s", vm, r)
		}
	}
	if len(refused) == 0 {
		t.Errorf("quota-short: requests.memory %s (1Mi below the launcher pods' %s) admitted every launcher pod; want one refused", smaller.String(), used.String())
	}
	if t.Failed() {
		return
	}

	// 3. The headroom: with every VM running, the concurrent migrations
	// virtc's quota is sized for (KubeVirt's cluster-wide limit,
	// resolve.Model.ParallelMigrations) get their target pods, rendered by
	// virt-controller's migration controller, for the largest VMs. The same with the quota's memory one launcher pod
	// smaller (the smallest) must be refused.
	nodes, err := RegisterNodes(e.ctx, e.cp, e.kv.HandlerKubeconfig, 7)
	if err != nil {
		t.Fatal(err)
	}
	parallel := int((&resolve.Model{}).ParallelMigrations())
	e.migrateLargest(t, nodes, "quota-fits", vms, parallel, true)
	// KubeVirt's cluster-wide limit counts every running migration:
	// cancel these before the next namespace's.
	e.cancelMigrations(t, nodes, "quota-fits")
	tight := build(t, "quota-tight")
	smallest, _ := podRequests(fitsPods[vms[0]])
	for _, vm := range vms[1:] {
		if m, _ := podRequests(fitsPods[vm]); m.Cmp(smallest) < 0 {
			smallest = m
		}
	}
	tightMem := quotaMem.DeepCopy()
	tightMem.Sub(smallest)
	t.Logf("quota-tight: requests.memory %s (virtc's %s less the smallest launcher pod's %s)", tightMem.String(), quotaMem.String(), smallest.String())
	e.applyTenant(tight, "quota-tight", map[string]string{"requests.memory": tightMem.String()})
	e.migrateLargest(t, nodes, "quota-tight", vms, parallel, false)
}

// cancelMigrations deletes the migrations of namespace and waits until
// virt-controller has removed their target pods.
func (e *env) cancelMigrations(t *testing.T, nodes *Node, namespace string) {
	t.Helper()
	if _, err := e.cp.MustKubectl(e.ctx, nil, "delete", "virtualmachineinstancemigrations.kubevirt.io", "--all", "-n", namespace, "--wait=false"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitFor)
	for {
		if err := nodes.Sync(e.ctx, namespace); err != nil {
			t.Fatal(err)
		}
		left := len(e.list("/apis/kubevirt.io/v1/namespaces/"+namespace+"/virtualmachineinstancemigrations")) +
			len(e.list("/api/v1/namespaces/"+namespace+"/pods?labelSelector=kubevirt.io%2FmigrationJobUID"))
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			out, _ := e.cp.Kubectl(e.ctx, nil, "get", "vmim,pods", "-n", namespace, "-o", "wide")
			t.Fatalf("%s: migrations or target pods left after %v\n%s", namespace, waitFor, out)
		}
		time.Sleep(time.Second)
	}
}

// migrateLargest waits until every VM of namespace runs (the node
// stand-in), then creates a VirtualMachineInstanceMigration for each of the
// `parallel` VMs whose launcher pods request the most memory, and waits
// until virt-controller has created each target pod or reported its
// refusal. want says whether all target pods must be admitted (true) or
// one refused by the quota (false).
func (e *env) migrateLargest(t *testing.T, nodes *Node, namespace string, vms []string, parallel int, want bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		if err := e.clones.Sync(e.ctx, namespace); err != nil {
			t.Fatal(err)
		}
		if err := e.volumes.Sync(e.ctx, namespace); err != nil {
			t.Fatal(err)
		}
		if err := nodes.Sync(e.ctx, namespace); err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, v := range e.list("/apis/kubevirt.io/v1/namespaces/" + namespace + "/virtualmachineinstances") {
			status, _ := v["status"].(map[string]any)
			if status["phase"] == "Running" {
				running++
			}
		}
		if running == len(vms) {
			break
		}
		if time.Now().After(deadline) {
			out, _ := e.cp.Kubectl(e.ctx, nil, "get", "vmi,pods,events", "-n", namespace, "-o", "wide")
			t.Fatalf("%s: %d of %d VMIs running after %v\n%s", namespace, running, len(vms), waitFor, out)
		}
		time.Sleep(time.Second)
	}
	pods := e.launchers(namespace)
	order := slices.Clone(vms)
	slices.SortFunc(order, func(a, b string) int {
		ma, _ := podRequests(pods[a])
		mb, _ := podRequests(pods[b])
		return mb.Cmp(ma)
	})
	order = order[:min(parallel, len(order))]
	var items []any
	for _, vm := range order {
		items = append(items, map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
			"metadata": map[string]any{"name": "drain-" + vm, "namespace": namespace},
			"spec":     map[string]any{"vmiName": vm}})
	}
	if err := create(e.ctx, e.cp, items); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(waitFor)
	for {
		if err := nodes.Sync(e.ctx, namespace); err != nil {
			t.Fatal(err)
		}
		targets := map[string]string{}
		for _, p := range e.list("/api/v1/namespaces/" + namespace + "/pods?labelSelector=kubevirt.io%2FmigrationJobUID") {
			md, _ := p["metadata"].(map[string]any)
			labels, _ := md["labels"].(map[string]any)
			vm, _ := labels["vm.kubevirt.io/name"].(string)
			targets[vm] = name(p)
		}
		refusals := e.refusals(namespace)
		var waiting []string
		for _, vm := range order {
			if targets[vm] == "" && refusals[vm] == "" {
				waiting = append(waiting, vm)
			}
		}
		if len(waiting) == 0 {
			for _, vm := range order {
				if targets[vm] != "" {
					mem, cpu := podRequests(pods[vm])
					t.Logf("%s/%s: migration target pod %s admitted (the VM's launcher requests memory %s, cpu %s)", namespace, vm, targets[vm], mem.String(), cpu.String())
				} else {
					t.Logf("%s/%s: migration target pod refused: %s", namespace, vm, refusals[vm])
				}
			}
			if want {
				var total resource.Quantity
				for _, p := range e.list("/api/v1/namespaces/" + namespace + "/pods?labelSelector=kubevirt.io%3Dvirt-launcher") {
					m, _ := podRequests(p)
					total.Add(m)
				}
				t.Logf("%s: launcher and target pods request %s of memory in all", namespace, total.String())
			}
			if want && len(refusals) > 0 {
				t.Errorf("%s: virtc's quota refused a target pod of the %d concurrent migrations its headroom is for", namespace, len(order))
			}
			if !want && len(refusals) == 0 {
				t.Errorf("%s: a quota one launcher pod smaller than virtc's admitted the target pods of all %d concurrent migrations; want one refused", namespace, len(order))
			}
			return
		}
		if time.Now().After(deadline) {
			out, _ := e.cp.Kubectl(e.ctx, nil, "get", "vmi,vmim,pods,events", "-n", namespace, "-o", "wide")
			t.Fatalf("%s: after %v no target pod and no refusal for %s\n%s", namespace, waitFor, strings.Join(waiting, ", "), out)
		}
		time.Sleep(time.Second)
	}
}

// syncStorage lets the clone and volume stand-ins do once, in namespace,
// what CDI's clone pods and a CSI driver would.
func (e *env) syncStorage(namespace string) {
	e.t.Helper()
	if err := e.clones.Sync(e.ctx, namespace); err != nil {
		e.t.Fatal(err)
	}
	if err := e.volumes.Sync(e.ctx, namespace); err != nil {
		e.t.Fatal(err)
	}
}

// applyTenant applies a tenant's output, with spec.hard entries of its
// ResourceQuota replaced by override.
func (e *env) applyTenant(objs []conformance.Object, namespace string, override map[string]string) {
	e.t.Helper()
	e.applyTenantWith(objs, namespace, override, nil)
}

// applyTenantWith is applyTenant running before (if not nil) once the
// tenant's Namespace and quota exist, before the rest of its objects.
func (e *env) applyTenantWith(objs []conformance.Object, namespace string, override map[string]string, before func()) {
	e.t.Helper()
	var first, rest []conformance.Object
	for _, o := range objs {
		switch o.Kind {
		case "Namespace", "ResourceQuota":
			if o.Kind == "ResourceQuota" {
				h := hard(e.t, o)
				for k, v := range override {
					h[k] = v
				}
			}
			first = append(first, o)
		default:
			rest = append(rest, o)
		}
	}
	// Namespaces the output uses but does not create (openshift-adp for
	// the Velero Schedule, which OADP's install creates).
	if _, err := conformance.NewCluster(e.cp, e.t.TempDir()).EnsureNamespaces(e.ctx, objs); err != nil {
		e.t.Fatal(err)
	}
	e.applyObjects(first)
	if err := InitQuotaStatus(e.ctx, e.cp, namespace, quotaName); err != nil {
		e.t.Fatal(err)
	}
	if before != nil {
		before()
	}
	e.applyObjects(rest)
}

func (e *env) applyObjects(objs []conformance.Object) {
	e.t.Helper()
	data, err := conformance.Stream(objs)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.cp.MustKubectl(e.ctx, data, "apply", "--server-side", "--field-manager=virtc-e2e", "-f", "-"); err != nil {
		e.t.Fatal(err)
	}
}

// keepLogs copies the logs of procs out of the test's directory when the
// test has failed, and names each copy with its last error line: a few
// lines (klog's E lines, KubeVirt's level error), so that the failure's own message stays in view at the end of a
// CI log, and the whole logs stay on the machine.
func keepLogs(t *testing.T, procs ...*conformance.Process) {
	if !t.Failed() {
		return
	}
	dir, err := os.MkdirTemp("", "virtc-"+strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Logf("keep logs: %v", err)
		return
	}
	for _, p := range procs {
		data, err := os.ReadFile(p.Log())
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, filepath.Base(p.Log())), data, 0o644)
		}
		if err != nil {
			t.Logf("keep %s: %v", p.Log(), err)
			continue
		}
		last := "none"
		for line := range strings.Lines(string(data)) {
			if strings.Contains(line, `"level":"error"`) || len(line) > 1 && line[0] == 'E' && line[1] >= '0' && line[1] <= '9' {
				last = strings.TrimSpace(line)
			}
		}
		t.Logf("log kept: %s (last error line: %.300s)", filepath.Join(dir, filepath.Base(p.Log())), last)
	}
}
