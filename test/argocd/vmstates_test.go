package argocd

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// owner is the person who owns tenant shop's VMs: in its admin group
// (examples/argocd/clusters/east/tenant-shop.yaml access.admin), which
// virtc binds to admin and kubevirt.io:admin in namespace shop.
var owner = struct {
	user   string
	groups []string
}{"shop-owner", []string{"shop-admins", "system:authenticated"}}

// vmAction is what virtctl start/stop do at KubeVirt v1.8.4
// (pkg/virtctl/vm/start.go, stop.go: VirtualMachine(ns).Start/Stop, a PUT
// of StartOptions/StopOptions to the VM's start or stop subresource of
// subresources.kubevirt.io, served by virt-api), as the owner. The API
// server's aggregator would proxy it to virt-api, authenticated by its
// proxy client certificate and the caller's name and groups in
// X-Remote-User and X-Remote-Group (kube-aggregator
// pkg/apiserver/handler_proxy.go); an APIService needs a Service whose
// endpoint the API server can reach, and Endpoints refuse loopback
// addresses, so the test sends the request to virt-api as the aggregator
// would: a client certificate of the request-header CA and the owner's
// headers. virt-api then asks the API server whether the owner may update
// virtualmachines/<action> (pkg/virt-api/rest/authorizer.go) and, for a
// Manual VM, asks virt-controller to start or stop it through the VM's
// status.stateChangeRequests (pkg/virt-api/rest/lifecycle.go
// StopVMRequestHandler, patchVMStatusStopped), keeping runStrategy Manual.
func (c *cluster) vmAction(ctx context.Context, namespace, name, action string) error {
	cert, err := tls.LoadX509KeyPair(c.pki.Cert, c.pki.Key)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.pki.CAPEM)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}}
	url := fmt.Sprintf("%s/apis/subresources.kubevirt.io/v1/namespaces/%s/virtualmachines/%s/%s", c.kv.APIURL, namespace, name, action)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader([]byte("{}")))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Remote-User", owner.user)
	for _, g := range owner.groups {
		req.Header.Add("X-Remote-Group", g)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("PUT %s as %s: %s: %s", url, owner.user, resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// liveVM is what the scenario reads of a live VM: what virt-controller
// wrote.
type liveVM struct {
	Metadata struct {
		UID    string            `json:"uid"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		RunStrategy string `json:"runStrategy"`
	} `json:"spec"`
	Status struct {
		PrintableStatus string     `json:"printableStatus"`
		Ready           bool       `json:"ready"`
		Conditions      conditions `json:"conditions"`
	} `json:"status"`
}

// waitVM polls a VM of shop in the cluster Argo CD runs in until ok.
func (e *env) waitVM(name, what string, ok func(vm liveVM) bool) liveVM {
	e.t.Helper()
	vm, err := waitLive(e, "/apis/kubevirt.io/v1/namespaces/shop/virtualmachines/"+name, syncWaitDuration, 500*time.Millisecond, ok)
	if err != nil {
		e.t.Fatalf("VM shop/%s: %s: %v: %+v", name, what, err, vm)
	}
	return vm
}

// waitLive polls the object at path in the cluster Argo CD runs in, every
// poll, until ok holds for it; after d it returns the last one read with
// an error saying why it was not reached.
func waitLive[T any](e *env, path string, d, poll time.Duration, ok func(T) bool) (T, error) {
	deadline := time.Now().Add(d)
	for {
		var obj T
		data, err := e.cp.Get(e.ctx, path)
		if err == nil {
			err = json.Unmarshal(data, &obj)
		}
		if err == nil && ok(obj) {
			return obj, nil
		}
		if time.Now().After(deadline) {
			return obj, fmt.Errorf("not reached after %s (%v)", d, err)
		}
		time.Sleep(poll)
	}
}

func printable(want string) func(vm liveVM) bool {
	return func(vm liveVM) bool { return vm.Status.PrintableStatus == want }
}

// vmIntent is a VM of tenant shop on the Ubuntu image.
func vmIntent(name, size string, extra ...string) string {
	return fmt.Sprintf(`apiVersion: virtc.dev/v1alpha1
kind: VM
metadata:
  name: %s
  namespace: shop
  labels: {app: shop}
spec:
  size: %s
  image: ubuntu-24.04
%s  cloudInit:
    userDataSecret: web01-cloudinit
`, name, size, strings.Join(extra, ""))
}

// bundledVMHealth214 is the VirtualMachine health check Argo CD v2.14.0
// bundles (argo-cd v2.14.0, commit 4745e08d4fbd9b115e208880eac9a63119a8821c,
// resource_customizations/kubevirt.io/VirtualMachine/health.lua; the same
// script through v3.5.1): v2.14 is the oldest Argo CD virtc supports
// (docs/argocd.md, "VM health in Argo CD": Prune=confirm and Delete=confirm),
// and OpenShift GitOps for OpenShift 4.20 to 4.22 ships this script.
const bundledVMHealth214 = "testdata/argocd-v2.14.0-VirtualMachine-health.lua"

// setVMHealth sets argocd-cm's VirtualMachine health check to script; the
// application controller reloads its settings when argocd-cm changes
// (argo-cd util/settings/settings.go, the ConfigMap informer).
func (e *env) setVMHealth(script string) {
	e.t.Helper()
	patch, _ := json.Marshal(map[string]any{"data": map[string]any{"resource.customizations.health.kubevirt.io_VirtualMachine": script}})
	e.kubectl(nil, "-n", argocdNamespace, "patch", "configmap", "argocd-cm", "--type=merge", "-p", string(patch))
}

// (13) No VM state holds a sync (issue 31): in the multi-wave Application
// virtc-in-cluster (waves -30 to 3), with the real virt-controller and
// virt-api writing the VMs' status, four VMs are added: man01 (runStrategy
// Manual), hlt01 (Halted), ret01 (Always) and gst01 (Always) whose guest
// never becomes ready (the node agent keeps its launcher pod's compute
// container unready, as the kubelet does when virtc's guest-agent
// readiness probe fails). man01's owner starts it and stops it through
// virt-api as virtctl does. Then one commit retires ret01 and gives hlt01
// the monthly backup, whose Schedule shop-monthly is in wave 3, after the
// VMs' wave 2. With argocd-cm-patch.yaml's VirtualMachine check the sync
// completes (Succeeded, Synced and Healthy) with man01 stopped by its
// owner, hlt01 halted, ret01 retired (stopped by virt-controller) and gst01
// not ready, and the Schedule is written after the VMs (audit log). With
// the check Argo CD v2.14.0 bundles in its place (the oldest Argo CD virtc
// supports; OpenShift GitOps ships the same script), the next sync of a
// wave-3 change (the monthly backups an hour later: Schedule shop-monthly
// patched) is held at wave 2 by the stopped VMs (Suspended) and the
// Schedule keeps its old time; put back, virtc's check lets the same
// operation finish and the Schedule follows.
func (e *env) vmStatesDoNotHoldSyncs() {
	home := e.home
	if home.kv == nil {
		e.t.Fatal("KubeVirt does not run in in-cluster")
	}
	home.nodes.SetGuestReady("shop", "gst01", false)
	east := appDir + "/"
	start := time.Now()
	rev := e.commit("four VMs: Manual, Halted, Always, Always with a guest that never gets ready", map[string]string{
		east + "man01.yaml": vmIntent("man01", "u1.small", "  runStrategy: Manual\n"),
		east + "hlt01.yaml": vmIntent("hlt01", "u1.small", "  runStrategy: Halted\n"),
		east + "ret01.yaml": vmIntent("ret01", "u1.small", "  runStrategy: Always\n"),
		east + "gst01.yaml": vmIntent("gst01", "u1.small", "  runStrategy: Always\n"),
	})
	e.refresh()
	a := e.waitApp("four VMs added", synced(rev))
	e.t.Logf("four VMs synced in %s: %s", time.Since(start).Round(time.Millisecond), a)
	e.waitVM("ret01", "running", printable("Running"))
	gst := e.waitVM("gst01", "running, guest not ready", func(vm liveVM) bool {
		if vm.Status.PrintableStatus != "Running" {
			return false
		}
		for _, c := range vm.Status.Conditions {
			if c.Type == "Ready" && c.Status == "False" && c.Reason == "ContainersNotReady" {
				return true
			}
		}
		return false
	})
	e.t.Logf("gst01: %s, conditions %+v", gst.Status.PrintableStatus, gst.Status.Conditions)
	e.waitVM("hlt01", "stopped", printable("Stopped"))
	e.waitVM("man01", "not started", printable("Stopped"))

	// man01's owner starts it, then stops it (virtctl start/stop)
	if err := home.vmAction(e.ctx, "shop", "man01", "start"); err != nil {
		e.t.Fatal(err)
	}
	e.waitVM("man01", "started by its owner", printable("Running"))
	if err := home.vmAction(e.ctx, "shop", "man01", "stop"); err != nil {
		e.t.Fatal(err)
	}
	man := e.waitVM("man01", "stopped by its owner", printable("Stopped"))
	if man.Spec.RunStrategy != "Manual" {
		e.t.Fatalf("man01's runStrategy is %q after its owner stopped it, want Manual", man.Spec.RunStrategy)
	}

	// a sync that goes past the VMs' wave: ret01 retired, hlt01's monthly
	// backup (Schedule shop-monthly, wave 3)
	since := time.Now()
	rev = e.commit("ret01 retired; hlt01 backed up monthly", map[string]string{
		east + "ret01.yaml": vmIntent("ret01", "u1.small", "  retired: true\n"),
		east + "hlt01.yaml": vmIntent("hlt01", "u1.small", "  runStrategy: Halted\n  backup: monthly\n"),
	})
	e.refresh()
	a = e.waitApp("retirement and a wave-3 Schedule", synced(rev))
	e.t.Logf("synced past wave 2 in %s: %s", time.Since(since).Round(time.Millisecond), a)
	objs := e.built("argocd/clusters/east", "all", "")
	e.checkOrder(e.home, objs, since, false)
	e.wantScheduleWritten("shop-monthly", since)
	ret := e.waitVM("ret01", "retired and stopped", printable("Stopped"))
	if ret.Spec.RunStrategy != "Halted" || ret.Metadata.Labels["virtc.dev/retired"] != "true" {
		e.t.Errorf("ret01 live: runStrategy %q, label virtc.dev/retired %q; want Halted, true", ret.Spec.RunStrategy, ret.Metadata.Labels["virtc.dev/retired"])
	}
	for _, name := range []string{"man01", "hlt01"} {
		if vm := e.waitVM(name, "still stopped", printable("Stopped")); vm.Status.Ready {
			e.t.Errorf("%s is ready after the sync", name)
		}
	}
	for _, r := range a.Status.Resources {
		if r.Kind == "VirtualMachine" && r.Health != nil {
			e.t.Logf("health of VM %s: %s: %s", r.Name, r.Health.Status, r.Health.Message)
		}
	}

	// The same with Argo CD v2.14.0's bundled check: held at wave 2.
	old, err := os.ReadFile(bundledVMHealth214)
	if err != nil {
		e.t.Fatal(err)
	}
	override := e.liveVMHealth()
	e.setVMHealth(string(old))
	// the platform team moves the monthly backup an hour later: a patch of
	// Schedule shop-monthly, wave 3
	const catalog = "examples/argocd/platform/catalog.yaml"
	const cron, later = `schedule: "0 4 1 * *"`, `schedule: "0 5 1 * *"`
	cur := e.read(catalog)
	if !strings.Contains(cur, cron) {
		e.t.Fatalf("%s: no monthly %s to change", catalog, cron)
	}
	if got := e.scheduleCron("shop-monthly"); got != "0 4 1 * *" {
		e.t.Fatalf("Schedule shop-monthly runs %q, want 0 4 1 * *", got)
	}
	since = time.Now()
	rev = e.commit("monthly backups an hour later", map[string]string{catalog: strings.Replace(cur, cron, later, 1)})
	e.refresh()
	held := e.waitApp("held at wave 2 by Argo CD v2.14.0's check", func(a app) bool {
		op := a.Status.OperationState
		return op != nil && op.Phase == "Running" && op.SyncResult.Revision == rev &&
			strings.Contains(op.Message, "waiting for healthy state of kubevirt.io/VirtualMachine/")
	})
	time.Sleep(15 * time.Second)
	held = e.app()
	if op := held.Status.OperationState; op == nil || op.Phase != "Running" {
		e.t.Errorf("with Argo CD v2.14.0's check the sync was not held: %s", held)
	}
	e.t.Logf("with Argo CD v2.14.0's VirtualMachine check: %s", held)
	for _, r := range held.Status.Resources {
		if r.Kind == "VirtualMachine" && r.Health != nil && r.Health.Status != "Healthy" {
			e.t.Logf("  VM %s: %s %s", r.Name, r.Health.Status, r.Health.Message)
		}
	}
	writes, err := argoWrites(e.home.auditLog, since)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, w := range writes {
		if strings.HasSuffix(w.Resource, "/schedules") {
			e.t.Errorf("a Schedule (wave 3) was written while wave 2 was held: %s %s", w.Verb, w.Name)
		}
	}
	if got := e.scheduleCron("shop-monthly"); got != "0 4 1 * *" {
		e.t.Errorf("Schedule shop-monthly runs %q while wave 2 is held, want the old 0 4 1 * *", got)
	}
	// virtc's check back: the same operation goes on and finishes
	e.setVMHealth(override)
	a = e.waitApp("the held sync finishes with virtc's check", synced(rev))
	e.t.Logf("with virtc's check back: %s", a)
	if got := e.scheduleCron("shop-monthly"); got != "0 5 1 * *" {
		e.t.Errorf("Schedule shop-monthly runs %q after the sync, want 0 5 1 * *", got)
	}
	if a.Status.OperationState.StartedAt != held.Status.OperationState.StartedAt {
		e.t.Errorf("a new operation ran (started %s, the held one %s), not the held one", a.Status.OperationState.StartedAt, held.Status.OperationState.StartedAt)
	}
}

// scheduleCron is the live Schedule openshift-adp/name's spec.schedule.
func (e *env) scheduleCron(name string) string {
	e.t.Helper()
	var sch struct {
		Spec struct {
			Schedule string `json:"schedule"`
		} `json:"spec"`
	}
	e.liveJSON("/apis/velero.io/v1/namespaces/openshift-adp/schedules/"+name, &sch)
	return sch.Spec.Schedule
}

// liveVMHealth is argocd-cm's VirtualMachine health check.
func (e *env) liveVMHealth() string {
	e.t.Helper()
	var cm struct {
		Data map[string]string `json:"data"`
	}
	e.liveJSON("/api/v1/namespaces/argocd/configmaps/argocd-cm", &cm)
	s := cm.Data["resource.customizations.health.kubevirt.io_VirtualMachine"]
	if s == "" {
		e.t.Fatal("argocd-cm has no VirtualMachine health check")
	}
	return s
}

// wantScheduleWritten checks that Argo CD wrote Schedule
// openshift-adp/name since a time.
func (e *env) wantScheduleWritten(name string, since time.Time) {
	e.t.Helper()
	writes, err := argoWrites(e.home.auditLog, since)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, w := range writes {
		if strings.HasSuffix(w.Resource, "/schedules") && strings.HasSuffix(w.Name, "/"+name) {
			return
		}
	}
	// a create names the object in its body only: look for the object
	if _, err := e.cp.Get(e.ctx, "/apis/velero.io/v1/namespaces/openshift-adp/schedules/"+name); err != nil {
		e.t.Errorf("Schedule %s (wave 3) was not applied: %v", name, err)
	}
}
