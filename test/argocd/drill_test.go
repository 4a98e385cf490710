package argocd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtc/virtc/test/conform"
	"github.com/virtc/virtc/test/controllers"
	"github.com/virtc/virtc/test/internal/velero"
)

// The drill restores VM shop/web01 of the in-cluster Application
// (application.yaml: examples/argocd/clusters/east, automated sync with
// selfHeal) from a backup of its tenant's Schedule shop-daily.
const (
	drillTenant   = "shop"
	drillVM       = "web01"
	drillSchedule = "shop-daily"
	drillBackup   = "shop-daily-drill"
	drillRestore  = "restore-shop-web01" // the in-place plan's fixed name
	// the other cluster's drill: east, where Application virtc-east
	// deploys the same directory, is lost; its backup restores onto
	// in-cluster
	drillEast       = "east"
	drillEastApp    = "virtc-east"
	drillEastBackup = "shop-daily-east"
)

// TestRestoreDrill runs virtc's in-place restore plan as a person would,
// unchanged, with bash: the real argocd CLI logged in to the real Argo CD
// API server of this suite, kubectl, and the velero CLI against the real
// Velero v1.18 server with its AWS plugin and an S3 store on loopback
// (test/internal/velero StartExternal: examples/argocd's platforms install OADP
// outside Git, dataProtection.external). `make e2e-drills` runs it alone,
// on one cluster (in-cluster, with KubeVirt's virt-api and
// virt-controller):
//
//  1. application.yaml syncs examples/argocd/clusters/east, with VM
//     shop/web01 (Halted here: a running VM's backup runs KubeVirt's
//     freeze hooks in its launcher pod, which needs a kubelet) and its
//     tenant's Schedule shop-daily;
//  2. a backup is taken from that Schedule (`velero backup create
//     --from-schedule`, as the plan says);
//  3. the incident: the VM and its root disk's claim are deleted; with
//     selfHeal on, Argo CD recreates the VM from Git at once, blank (a
//     fresh clone of the golden image: why the plan deletes before it
//     restores), and the test waits for that;
//  4. `virtc restore-plan --app virtc-in-cluster shop/web01` is run with
//     bash, DRILL_LINK set so that it writes the Evidence it proves;
//  5. the checks (drillCheck): the script exits 0; the VM and its claim
//     are Velero's (its restore and backup labels) with the firmware UUID,
//     serial, interfaces (MACs) and networks they had before; automated
//     sync was off whenever the VM was missing (the Application, polled
//     while the script ran) and the pause and hand-back are in the API
//     server's audit log around the Restore's creation; Argo CD wrote
//     nothing from the pause on (audit log: nothing recreated, pruned or
//     patched); the Application is Synced and Healthy with the same
//     resources, each of them but the restored ones with the uid it had;
//     the Evidence names the drill's platform version;
//  6. a nightly backup that fails, asked for (nightly_test.go): tenant
//     analytics' policy nightly moves to the next minute but one,
//     Velero's schedule controller takes its backup, PartiallyFailed;
//     Argo CD counts the Backup (it carries the Schedule's tracking id)
//     and the Application stays Synced and Healthy; virtc's
//     VirtcBackupNeverSucceeded fires on Velero's own /metrics (promtool);
//     then the tenant's plan (`--tenant shop`) passes the same checks as
//     5, its hand-back waiting for Synced and Healthy with the failed
//     Backup there (its Restore restore-shop-daily);
//  7. the other cluster's plan (`--tenant shop --other-cluster`): cluster
//     east, where Application virtc-east deploys the same directory, is
//     lost; its backup (east's Velero, the same object store) restores
//     onto in-cluster (otherCluster), with the same checks against east's
//     VM: the restored VM's tracking id is virtc-in-cluster's and `argocd
//     app diff` lists nothing but Velero's Backups;
//  8. the in-place script with its pause step cut out fails those checks:
//     Argo CD recreates the VM during the restore; the other cluster's
//     script without its tracking step fails them too: the VM stays
//     virtc-east's, the Application OutOfSync.
//
// Every check also counts the tenant namespace's VMs, DataVolumes and
// claims: as many after as before. No Schedule fires but the one step 6
// asks for: the first commit moves backup policy daily to a minute that
// has just passed, and tenant analytics to policy nightly at that minute
// too (drillCatalog), so the drill passes whatever the time of day it
// starts at (issue 48).
//
// What is not run for real: KubeVirt's velero plugin (not served by the Go
// module proxy) and volume data (no CSI driver or snapshotter here): the
// objects are backed up and restored, the claims' data is not.
func TestRestoreDrill(t *testing.T) {
	tl := findTools(t)
	vt, err := velero.FindTools()
	if err != nil {
		conform.Skip(t, err)
	}
	for _, f := range []string{"argocd-server", "argocd"} {
		if _, err := os.Stat(filepath.Join(tl.argocd, f)); err != nil {
			conform.Skip(t, fmt.Errorf("Argo CD's %s missing in %s (rebuild with `make argocd-tools`): %v", f, tl.argocd, err))
		}
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	e, standErrs := startSuite(t, ctx, tl, "virtc-e2e-drill-", []clusterSpec{
		{name: "in-cluster", version: platformVersion, crdDirs: []string{filepath.Join(tl.argocd, "crds")}, kubevirt: true},
		// the other cluster's drill's lost cluster: its backups restore
		// onto in-cluster
		{name: drillEast, version: "4.22", kubevirt: true},
	}, true)
	vx, err := velero.StartExternal(ctx, e.cp, vt, filepath.Join(e.dir, "velero"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() && vx.Server != nil {
			t.Logf("velero log:\n%s", vx.Server.Tail())
			select {
			case err := <-standErrs:
				t.Logf("stand-in error: %v", err)
			default:
			}
		}
		vx.Stop()
	})
	d := e.newDrill(tl, vt)
	t.Logf("setup done in %s: Argo CD API server %s, Velero location %s Available", time.Since(began).Round(time.Second), e.server, vx.Location)

	// 1. sync, web01 Halted: a running VM's launcher pod carries KubeVirt's
	// freeze and unfreeze hooks (KubeVirt v1.8.4 pkg/storage/velero/
	// annotations.go), which Velero runs by exec in the pod, through a
	// kubelet, which is not here: the backup would be PartiallyFailed, and
	// a Restore from a Schedule takes its latest Completed backup only.
	vmFile := appDir + "/" + drillVM + ".yaml"
	intent := e.read(vmFile)
	halted := strings.Replace(intent, "runStrategy: Always", "runStrategy: Halted", 1)
	if halted == intent {
		t.Fatalf("%s has no runStrategy: Always", vmFile)
	}
	files, quiet := e.drillCatalog()
	files[vmFile] = halted
	rev := e.commit("drill: "+drillVM+" Halted; backups at a minute past, "+nightlyTenant+" on policy "+nightlyPolicy, files)
	e.applyExample("application.yaml")
	e.applySourceApp()
	e.waitApp("first sync", synced(rev))
	e.waitVM(drillVM, "stopped", printable("Stopped"))
	d.provision(e.home, drillVM+"-root")

	// 2. the backup
	d.backupFromSchedule(ctx, vx)
	before := d.state()

	// 3. the incident, 4. the plan, 5. the checks
	e.kubectl(nil, "-n", drillTenant, "delete", "virtualmachine", drillVM, "--cascade=foreground", "--wait")
	e.kubectl(nil, "-n", drillTenant, "delete", "persistentvolumeclaim", drillVM+"-root", "--ignore-not-found", "--wait")
	e.waitApp("selfHeal after the incident", synced(rev))
	healed := e.waitVM(drillVM, "recreated by Argo CD", printable("Stopped"))
	t.Logf("the incident: VM %s deleted with its claim; Argo CD's selfHeal recreated it from Git, blank (uid %s, was %s)",
		drillVM, healed.Metadata.UID, before.vm["metadata"].(map[string]any)["uid"])
	script := d.plan(drillTenant + "/" + drillVM)
	run := d.run("plan", script)
	d.passes("the drill", run, d.check(before, run, drillRestore, drillBackup))
	d.wantEvidence(run)

	// a nightly backup that fails, asked for: the Application stays
	// Healthy, the alert fires, and the tenant's plan below hands back
	rev = d.nightly(vx, quiet)

	// the tenant's plan (--tenant): every VM of shop that takes backups,
	// from the latest backup of each of its Schedules (one Restore per
	// Schedule, restore-<tenant>-<policy>)
	e.waitApp("synced before the tenant's plan", synced(rev))
	before = d.state()
	tenantRun := d.run("tenant-plan", d.plan("--tenant", drillTenant))
	d.passes("the tenant's plan", tenantRun, d.check(before, tenantRun, "restore-"+drillTenant+"-daily", drillBackup))

	// the other cluster's plan (--tenant shop --other-cluster): east is
	// lost, its tenant restored onto in-cluster from east's backup
	ocStart := time.Now()
	ocScript, eastBackup := d.otherCluster(vx, vt, rev)
	t.Logf("the other cluster's drill: %s in %s", eastBackup, time.Since(ocStart).Round(time.Second))

	// 8. the same script without its pause
	broken, cut := withoutPause(script)
	if !cut {
		t.Fatal("the plan has no pause step to cut (## Keep Argo CD ... ## Delete)")
	}
	e.waitApp("synced again before the broken drill", synced(rev))
	before = d.state()
	brokenRun := d.run("plan-without-pause", broken)
	problems := d.check(before, brokenRun, drillRestore, drillBackup)
	t.Logf("the plan without its pause step: %d problems found:\n  %s", len(problems), strings.Join(problems, "\n  "))
	if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, argoWroteProblem) }) {
		t.Errorf("the plan without its pause step passed the check that Argo CD wrote nothing during the restore: the check cannot fail")
	}

	// 8. the other cluster's script without its tracking step: the
	// restored VM stays the lost cluster's Application's, so the
	// Application is not Synced and the script stops before the hand-back
	noTracking, cut := withoutStep(ocScript, "## 3b. Argo CD tracking")
	if !cut {
		t.Fatal("the other cluster's plan has no tracking step to cut (## 3b. Argo CD tracking ... ##)")
	}
	e.waitApp("synced again before the broken other cluster's drill", synced(rev))
	before = d.state()
	before.vm, before.claim = d.vmAndClaim(e.clusters[drillEast])
	brokenRun = d.run("other-cluster-without-tracking", noTracking)
	problems = d.check(before, brokenRun, "restore-"+drillTenant+"-daily", eastBackup)
	t.Logf("the other cluster's plan without its tracking step: %d problems found:\n  %s", len(problems), strings.Join(problems, "\n  "))
	if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "tracking id") }) {
		t.Errorf("the other cluster's plan without its tracking step passed the tracking check: the check cannot fail")
	}
	t.Logf("e2e-drills total %s", time.Since(began).Round(time.Second))
}

// backupFromSchedule is the drill's step 2: a backup from the drill's
// Schedule, which must complete (a Restore from a Schedule takes its
// latest Completed backup only).
func (d *drill) backupFromSchedule(ctx context.Context, vx *velero.External) {
	t := d.e.t
	t.Helper()
	out, err := vx.Server.CLI(ctx, "backup", "create", drillBackup, "--from-schedule", drillSchedule, "--wait")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("velero backup create:\n%s", out)
	var backup struct {
		Status struct {
			Phase string `json:"phase"`
		} `json:"status"`
	}
	d.e.liveJSON("/apis/velero.io/v1/namespaces/"+velero.Namespace+"/backups/"+drillBackup, &backup)
	out, err = vx.Server.CLI(ctx, "backup", "describe", drillBackup, "--details", "--colorized=false")
	if err != nil {
		t.Fatal(err)
	}
	if backup.Status.Phase != "Completed" {
		t.Fatalf("backup %s is %s, want Completed (a Restore from a Schedule takes its latest Completed backup):\n%s", drillBackup, backup.Status.Phase, out)
	}
	t.Logf("velero backup describe:\n%s", out)
}

// passes reports each problem the checks found in run as an error, or
// that the run passed.
func (d *drill) passes(what string, run drillRun, problems []string) {
	d.e.t.Helper()
	for _, p := range problems {
		d.e.t.Error(p)
	}
	if len(problems) == 0 {
		d.e.t.Logf("%s passed in %s", what, run.took.Round(time.Second))
	}
}

// applySourceApp applies virtc-east: application.yaml's Application,
// deploying the same directory to cluster east instead (the Argo CD
// cluster Secret's name).
func (e *env) applySourceApp() {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples/argocd/application.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	app := string(data)
	for old, repl := range map[string]string{
		"name: " + appName:                       "name: " + drillEastApp,
		"server: https://kubernetes.default.svc": "name: " + drillEast,
		"https://github.com/virtc/virtc.git":     "file://" + e.repo,
	} {
		if !strings.Contains(app, old) {
			e.t.Fatalf("application.yaml has no %q", old)
		}
		app = strings.Replace(app, old, repl, 1)
	}
	e.kubectl([]byte(app), "apply", "-f", "-")
}

// otherCluster is the other cluster's drill, in the order of doc 001's
// recovery sequence that the plan follows (platform, tenant from Git, VM
// definitions and disks, guest consistency, network identity, hand back):
// virtc-east has synced the directory to east (web01 Halted, as on
// in-cluster); east's Velero, writing to the same object store, takes a
// backup from the Schedule; east is lost (its Velero stopped: one server
// runs at a time here); in-cluster's Velero syncs the backup from the
// store (pkg/controller/backup_sync_controller.go) and the plan `virtc
// restore-plan --app virtc-in-cluster --tenant shop --other-cluster` runs
// unchanged, with kubectl and argocd on in-cluster and its Argo CD. The
// checks are the in-place drill's, against east's VM, with the VM's
// tracking id that of virtc-in-cluster and `argocd app diff` clean. It
// returns the script and the backup.
func (d *drill) otherCluster(vx *velero.External, vt velero.Tools, rev string) (string, string) {
	e := d.e
	e.t.Helper()
	east := e.clusters[drillEast]
	e.waitAppNamed(drillEastApp, "first sync on "+drillEast, synced(rev))
	d.provision(east, drillVM+"-root")
	vx.StopServer()
	vxEast, err := velero.StartExternalOn(e.ctx, east.cp, vt, filepath.Join(e.dir, "velero-"+drillEast), vx.Store)
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := vxEast.Server.CLI(e.ctx, "backup", "create", drillEastBackup, "--from-schedule", drillSchedule, "--wait")
	if err != nil {
		vxEast.Stop()
		e.t.Fatal(err)
	}
	e.t.Logf("velero backup create on %s:\n%s", drillEast, out)
	source, _ := d.vmAndClaim(east)
	vxEast.Stop() // east is lost
	if err := vx.StartServer(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	// the backup, Completed, once Velero on in-cluster synced it from the
	// store (the plan's step 1 lists it)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var b struct {
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		}
		data, err := e.cp.Get(e.ctx, "/apis/velero.io/v1/namespaces/"+velero.Namespace+"/backups/"+drillEastBackup)
		if err == nil && json.Unmarshal(data, &b) == nil && b.Status.Phase == "Completed" {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("backup %s of %s not synced Completed to in-cluster after 3m: %v %s", drillEastBackup, drillEast, err, b.Status.Phase)
		}
		time.Sleep(time.Second)
	}

	e.waitApp("synced before the other cluster's plan", synced(rev))
	before := d.state()
	before.vm, _ = d.vmAndClaim(east)
	if source == nil {
		e.t.Fatalf("no VM %s on %s", drillVM, drillEast)
	}
	if got := velero.Field(source, "metadata", "annotations", "argocd.argoproj.io/tracking-id"); !strings.HasPrefix(got, `"`+drillEastApp+":") {
		e.t.Fatalf("VM %s on %s has tracking id %s, want %s's", drillVM, drillEast, got, drillEastApp)
	}
	script := d.plan("--tenant", drillTenant, "--other-cluster")
	r := d.run("other-cluster-plan", script)
	problems := d.check(before, r, "restore-"+drillTenant+"-daily", drillEastBackup)
	for _, p := range problems {
		e.t.Error(p)
	}
	if len(problems) == 0 {
		e.t.Logf("the other cluster's plan passed in %s", r.took.Round(time.Second))
	}
	return script, drillEastBackup
}

// drill runs scripts as a person would: bash with kubectl, argocd (logged
// in) and velero on the PATH, in a directory of its own.
type drill struct {
	e    *env
	bin  string // kubectl, argocd, velero
	home string // the argocd CLI's config
}

func (e *env) newDrill(tl tools, vt velero.Tools) *drill {
	e.t.Helper()
	d := &drill{e: e, bin: filepath.Join(e.dir, "drill-bin"), home: filepath.Join(e.dir, "drill-home")}
	for _, p := range []string{d.bin, d.home} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"kubectl": tl.cp.Kubectl, "argocd": filepath.Join(tl.argocd, "argocd"), "velero": vt.Velero} {
		abs, err := filepath.Abs(target)
		if err != nil {
			e.t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(d.bin, name)); err != nil {
			e.t.Fatal(err)
		}
	}
	// `argocd admin initial-password`: the password the API server put in
	// argocd-initial-admin-secret
	var secret struct {
		Data map[string]string `json:"data"`
	}
	deadline := time.Now().Add(time.Minute)
	for {
		data, err := e.cp.Get(e.ctx, "/api/v1/namespaces/"+argocdNamespace+"/secrets/argocd-initial-admin-secret")
		if err == nil && json.Unmarshal(data, &secret) == nil && secret.Data["password"] != "" {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no argocd-initial-admin-secret from the API server: %v", err)
		}
		time.Sleep(time.Second)
	}
	password, err := base64.StdEncoding.DecodeString(secret.Data["password"])
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := d.command("argocd", "login", e.server, "--plaintext", "--username", "admin", "--password", string(password))
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("argocd login: %v\n%s", err, out)
	}
	return d
}

// command is a program of the drill's PATH with the drill's environment.
func (d *drill) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(d.bin, name)
	if name == "bash" {
		path = "/bin/bash"
	}
	cmd := exec.CommandContext(d.e.ctx, path, args...)
	cmd.Env = []string{"PATH=" + d.bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + d.home,
		"KUBECONFIG=" + d.e.cp.Kubeconfig, "LANG=C.UTF-8"}
	cmd.Dir = d.home
	return cmd
}

// provision gives the claim of the tenant a volume once it exists and is
// Bound (the CDI stand-in binds it by its status only), as the class's
// provisioner and the PV controller would: Velero backs up a claim's
// volume with it and fails the backup of a claim without one
// (pkg/backup/actions/backup_pv_action.go). The volume is local
// (hostPath), not CSI: nothing snapshots its data.
func (d *drill) provision(c *cluster, claim string) {
	d.e.t.Helper()
	path := "/api/v1/namespaces/" + drillTenant + "/persistentvolumeclaims/" + claim
	deadline := time.Now().Add(syncWaitDuration)
	var pvc struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
		Spec struct {
			AccessModes      []string       `json:"accessModes"`
			VolumeMode       string         `json:"volumeMode"`
			StorageClassName string         `json:"storageClassName"`
			Resources        map[string]any `json:"resources"`
		} `json:"spec"`
		Status struct {
			Phase string `json:"phase"`
		} `json:"status"`
	}
	for {
		data, err := c.cp.Get(d.e.ctx, path)
		if err == nil && json.Unmarshal(data, &pvc) == nil && pvc.Status.Phase == "Bound" {
			break
		}
		if time.Now().After(deadline) {
			d.e.t.Fatalf("claim %s/%s not Bound after %s: %v", drillTenant, claim, syncWaitDuration, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	pv := "pvc-" + pvc.Metadata.UID
	body, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "PersistentVolume",
		"metadata": map[string]any{"name": pv},
		"spec": map[string]any{
			"capacity":                      map[string]any{"storage": pvc.Spec.Resources["requests"].(map[string]any)["storage"]},
			"accessModes":                   pvc.Spec.AccessModes,
			"volumeMode":                    pvc.Spec.VolumeMode,
			"storageClassName":              pvc.Spec.StorageClassName,
			"persistentVolumeReclaimPolicy": "Retain",
			"hostPath":                      map[string]any{"path": "/var/lib/virtc-e2e/" + pv},
			"claimRef":                      map[string]any{"namespace": drillTenant, "name": claim, "uid": pvc.Metadata.UID},
		}})
	if err != nil {
		d.e.t.Fatal(err)
	}
	if _, err := c.cp.MustKubectl(d.e.ctx, body, "create", "-f", "-"); err != nil {
		d.e.t.Fatal(err)
	}
	// the binding is the PV controller's write, made as a ServiceAccount in
	// kube-system as its own (kube-controller-manager's
	// persistent-volume-binder), which the tenant guardrails exempt: the
	// claim carries CDI's clone annotation, which they refuse from anyone
	// else
	dir := filepath.Join(d.home, c.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		d.e.t.Fatal(err)
	}
	kubeconfig, err := controllers.AdminServiceAccountKubeconfig(d.e.ctx, c.cp, dir, "kube-system", "virtc-e2e-volume-binder")
	if err != nil {
		d.e.t.Fatal(err)
	}
	cmd := d.command("kubectl", "--kubeconfig", kubeconfig, "-n", drillTenant, "patch", "persistentvolumeclaim", claim,
		"--type=merge", "-p", `{"spec":{"volumeName":"`+pv+`"}}`)
	if out, err := cmd.CombinedOutput(); err != nil {
		d.e.t.Fatalf("bind claim %s to %s: %v\n%s", claim, pv, err, out)
	}
}

// plan is `virtc restore-plan --app virtc-in-cluster args...` of the
// Application's directory (the catalog beside it, as it builds).
func (d *drill) plan(args ...string) string {
	d.e.t.Helper()
	cmd := exec.Command(d.e.virtc, append(append([]string{"restore-plan", "--app", appName}, args...), "../../platform", ".")...)
	cmd.Dir = filepath.Join(d.e.repo, appDir)
	out, err := cmd.Output()
	if err != nil {
		d.e.t.Fatalf("virtc restore-plan: %v", err)
	}
	return string(out)
}

// withoutPause is the script with its pause step cut out (from "## Keep
// Argo CD" to the next step), the deliberately broken drill.
func withoutPause(script string) (string, bool) {
	return withoutStep(script, "## Keep Argo CD")
}

// withoutStep is the script with the step that starts with heading cut
// out: its heading's lines ("## ...") and what follows up to the next
// step's heading.
func withoutStep(script, heading string) (string, bool) {
	i := strings.Index(script, heading)
	if i < 0 {
		return script, false
	}
	body := i
	for strings.HasPrefix(script[body:], "## ") {
		nl := strings.IndexByte(script[body:], '\n')
		if nl < 0 {
			return script, false
		}
		body += nl + 1
	}
	j := strings.Index(script[body:], "\n## ")
	if j < 0 {
		return script, false
	}
	return script[:i] + script[body+j+1:], true
}

// drillRun is one run of a script.
type drillRun struct {
	name         string
	began, ended time.Time
	took         time.Duration
	err          error
	output       string
	// polls of the Application and the VM while the script ran
	polls []drillPoll
	dir   string
}

type drillPoll struct {
	at        time.Time
	automated string // spec.syncPolicy.automated.enabled: "", "false", "true"
	vmUID     string // "" when there is no VM
}

// run writes the script to a file and runs it with bash, DRILL_LINK set,
// polling the Application and the VM every quarter second meanwhile.
func (d *drill) run(name, script string) drillRun {
	d.e.t.Helper()
	r := drillRun{name: name, dir: filepath.Join(d.e.dir, "drill-"+name)}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		d.e.t.Fatal(err)
	}
	path := filepath.Join(r.dir, "restore.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		d.e.t.Fatal(err)
	}
	cmd := d.command("bash", path)
	cmd.Dir = r.dir
	cmd.Env = append(cmd.Env, "DRILL_LINK=file://"+filepath.Join(r.dir, "output.log"), "DRILL_BY=virtc-e2e")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			p := drillPoll{at: time.Now()}
			if data, err := d.e.cp.Get(d.e.ctx, "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/"+appName); err == nil {
				var a struct {
					Spec struct {
						SyncPolicy struct {
							Automated map[string]any `json:"automated"`
						} `json:"syncPolicy"`
					} `json:"spec"`
				}
				if json.Unmarshal(data, &a) == nil {
					if v, ok := a.Spec.SyncPolicy.Automated["enabled"]; ok {
						p.automated = fmt.Sprint(v)
					}
				}
			}
			if data, err := d.e.cp.Get(d.e.ctx, "/apis/kubevirt.io/v1/namespaces/"+drillTenant+"/virtualmachines/"+drillVM); err == nil {
				var vm struct {
					Metadata struct {
						UID string `json:"uid"`
					} `json:"metadata"`
				}
				if json.Unmarshal(data, &vm) == nil {
					p.vmUID = vm.Metadata.UID
				}
			}
			r.polls = append(r.polls, p)
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	})
	r.began = time.Now()
	out, err := cmd.CombinedOutput()
	r.ended = time.Now()
	close(stop)
	wg.Wait()
	r.took, r.err, r.output = r.ended.Sub(r.began), err, string(out)
	if err := os.WriteFile(filepath.Join(r.dir, "output.log"), out, 0o644); err != nil {
		d.e.t.Fatal(err)
	}
	d.e.t.Logf("%s: bash restore.sh: %v in %s\n%s", name, err, r.took.Round(time.Second), out)
	return r
}

// drillState is what the checks compare: the VM, its claim, and the
// Application's resources with their uids.
type drillState struct {
	vm, claim map[string]any
	uids      map[string]string // "group/Kind namespace/name": uid
	// counts are the tenant namespace's VMs, DataVolumes and claims, by
	// resource
	counts map[string]int
}

// drillCounted are the resources of the tenant's namespace a restore
// brings back: as many of each after as before.
var drillCounted = []string{"virtualmachines.kubevirt.io", "datavolumes.cdi.kubevirt.io", "persistentvolumeclaims"}

func (d *drill) state() drillState {
	d.e.t.Helper()
	s := drillState{uids: map[string]string{}, counts: map[string]int{}}
	s.vm, s.claim = d.vmAndClaim(d.e.home)
	for _, r := range drillCounted {
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(d.e.kubectl(nil, "-n", drillTenant, "get", r, "-o", "json"), &l); err != nil {
			d.e.t.Fatal(err)
		}
		s.counts[r] = len(l.Items)
	}
	a := d.e.app()
	var kinds []string
	for _, r := range a.Status.Resources {
		k := strings.ToLower(r.Kind)
		if r.Group != "" {
			k += "." + r.Group
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	out := d.e.kubectl(nil, "get", strings.Join(kinds, ","), "--all-namespaces", "-o", "json")
	var l struct {
		Items []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
				UID       string `json:"uid"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &l); err != nil {
		d.e.t.Fatal(err)
	}
	live := map[string]string{}
	for _, it := range l.Items {
		group, _, _ := strings.Cut(it.APIVersion, "/")
		if !strings.Contains(it.APIVersion, "/") {
			group = ""
		}
		live[group+"/"+it.Kind+" "+it.Metadata.Namespace+"/"+it.Metadata.Name] = it.Metadata.UID
	}
	for _, r := range a.Status.Resources {
		key := r.Group + "/" + r.Kind + " " + r.Namespace + "/" + r.Name
		s.uids[key] = live[key]
	}
	return s
}

// vmAndClaim are the drill's VM and its root disk's claim on c, nil when
// missing.
func (d *drill) vmAndClaim(c *cluster) (vm, claim map[string]any) {
	return d.object(c, "/apis/kubevirt.io/v1/namespaces/"+drillTenant+"/virtualmachines/"+drillVM),
		d.object(c, "/api/v1/namespaces/"+drillTenant+"/persistentvolumeclaims/"+drillVM+"-root")
}

// object is one object on c, nil when there is none.
func (d *drill) object(c *cluster, path string) map[string]any {
	data, err := c.cp.Get(d.e.ctx, path)
	if err != nil {
		return nil
	}
	var o map[string]any
	if err := json.Unmarshal(data, &o); err != nil {
		d.e.t.Fatal(err)
	}
	return o
}

// argoWroteProblem starts the problem that Argo CD wrote during the drill.
const argoWroteProblem = "Argo CD wrote"

// check returns what is wrong after a run, compared with the state
// before the incident; restore is the plan's Restore, backup the backup
// it restores.
func (d *drill) check(before drillState, r drillRun, restore, backup string) []string {
	d.e.t.Helper()
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if r.err != nil {
		add("%s: the script failed: %v", r.name, r.err)
	}
	after := d.state()

	// the VM and its claim: Velero's, with the identity they had
	for what, o := range map[string]map[string]any{"VM " + drillVM: after.vm, "claim " + drillVM + "-root": after.claim} {
		if o == nil {
			add("%s is missing after the restore", what)
			continue
		}
		labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
		if labels["velero.io/restore-name"] != restore || labels["velero.io/backup-name"] != backup {
			add("%s was not restored by Velero from %s (labels %v): recreated by someone else", what, backup, labels)
		}
	}
	// the VM is this Application's (annotation tracking, argo-cd v3.6.1
	// util/argo/resource_tracking.go GetAppName: "<app>:<group>/<kind>:
	// <namespace>/<name>"), whichever cluster's Application it was
	// backed up from
	if after.vm != nil {
		annotations, _ := after.vm["metadata"].(map[string]any)["annotations"].(map[string]any)
		if got, want := annotations["argocd.argoproj.io/tracking-id"], appName+":kubevirt.io/VirtualMachine:"+drillTenant+"/"+drillVM; got != want {
			add("restored VM %s: tracking id %v, want %s (Argo CD does not count it as %s's)", drillVM, got, want, appName)
		}
	}
	for _, k := range drillCounted {
		if after.counts[k] != before.counts[k] {
			add("%s in namespace %s after the drill: %d, want %d as before", k, drillTenant, after.counts[k], before.counts[k])
		}
	}
	if after.vm != nil && before.vm != nil {
		for _, f := range [][]string{
			{"spec", "template", "spec", "domain", "firmware"},
			{"spec", "template", "spec", "domain", "devices", "interfaces"},
			{"spec", "template", "spec", "networks"},
			{"spec", "template", "spec", "volumes"},
			{"spec", "dataVolumeTemplates"},
			{"spec", "runStrategy"},
		} {
			if b, a := velero.Field(before.vm, f...), velero.Field(after.vm, f...); a != b || a == "null" {
				add("restored VM %s: %s = %s, want %s as before", drillVM, strings.Join(f, "."), a, b)
			}
		}
	}

	// the pause: automated sync off whenever the VM was missing or not yet
	// restored, from the first poll without a VM to the restored VM
	restoredUID := ""
	if after.vm != nil {
		restoredUID, _ = after.vm["metadata"].(map[string]any)["uid"].(string)
	}
	missing := 0
	for _, p := range r.polls {
		if p.vmUID == restoredUID && restoredUID != "" {
			continue
		}
		if p.vmUID == "" {
			missing++
		}
		if p.vmUID == "" && p.automated != "false" {
			add("the VM was missing at %s while automated sync was on (spec.syncPolicy.automated.enabled %q)", p.at.Format("15:04:05.000"), p.automated)
			break
		}
	}
	if missing == 0 {
		add("the VM was never seen missing during the script: it was not deleted before the restore")
	}
	pause, handBack, restoreAt, err := scriptWrites(d.e.home.auditLog, r.began, r.ended)
	if err != nil {
		d.e.t.Fatal(err)
	}
	switch {
	case pause.IsZero():
		add("no pause of Application %s in the audit log", appName)
	case restoreAt.IsZero():
		add("no Restore created in the audit log")
	case handBack.IsZero() && r.err == nil:
		add("no hand-back of Application %s in the audit log", appName)
	case !pause.Before(restoreAt) || (!handBack.IsZero() && !restoreAt.Before(handBack)):
		add("the Restore (%s) was not created between the pause (%s) and the hand-back (%s)", restoreAt, pause, handBack)
	}
	since := pause
	if since.IsZero() {
		since = r.began
	}
	writes, err := argoChanges(d.e.home.auditLog, since)
	if err != nil {
		d.e.t.Fatal(err)
	}
	for _, w := range writes {
		add("%s %s %s at %s (during the restore or after the hand-back: recreated or changed)", argoWroteProblem, w.Verb, w.Name, w.Start.Format("15:04:05.000"))
	}

	// the Application: Synced, Healthy, the same resources, the same uids
	// but the restored ones'
	a := d.e.app()
	if a.Status.Sync.Status != "Synced" || a.Status.Health.Status != "Healthy" {
		add("Application %s after the drill: %s", appName, a)
	}
	if got, want := slices.Sorted(maps.Keys(after.uids)), slices.Sorted(maps.Keys(before.uids)); !slices.Equal(got, want) {
		add("Application %s's resources after the drill:\n  %s\nwant as before:\n  %s", appName, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for k, uid := range before.uids {
		if k == "kubevirt.io/VirtualMachine "+drillTenant+"/"+drillVM {
			continue
		}
		if after.uids[k] != uid {
			add("%s was recreated or removed (uid %s, now %q)", k, uid, after.uids[k])
		}
	}
	// `argocd app diff`: nothing differs but the Backups Velero took, which
	// carry their Schedule's tracking id and so are listed as this
	// Application's extraneous objects (README "Restoring")
	if differ := d.diff(); len(differ) > 0 {
		add("argocd app diff %s after the drill lists %s", appName, strings.Join(differ, ", "))
	}
	return problems
}

// diff is what `argocd app diff` lists as differing, but Velero's Backups
// (the lines "===== group/Kind namespace/name ======" of argo-cd v3.6.1
// cmd/argocd/commands printResourceDiff).
func (d *drill) diff() []string {
	d.e.t.Helper()
	out, err := d.command("argocd", "app", "diff", appName, "--refresh").CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			d.e.t.Fatalf("argocd app diff: %v\n%s", err, out)
		}
	}
	var differ []string
	for line := range strings.Lines(string(out)) {
		h, ok := strings.CutPrefix(line, "===== ")
		if !ok {
			continue
		}
		h = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "="))
		if !strings.HasPrefix(h, "velero.io/Backup ") {
			differ = append(differ, h)
		}
	}
	return differ
}

// scriptWrites finds the script's own writes in the audit log between
// began and ended: its pause (the first kubectl patch of the Application),
// its hand-back (the last one, when there are two) and the creation of the
// Restore.
func scriptWrites(log string, began, ended time.Time) (pause, handBack, restore time.Time, err error) {
	err = auditEvents(log, func(ev auditEvent) {
		ref := ev.ObjectRef
		if ev.Stage != "ResponseComplete" || ref == nil || !strings.HasPrefix(ev.UserAgent, "kubectl") ||
			ev.ResponseStatus == nil || ev.ResponseStatus.Code/100 != 2 ||
			ev.RequestReceived.Before(began) || ev.RequestReceived.After(ended) {
			return
		}
		switch {
		case ev.Verb == "patch" && ref.Resource == "applications" && ref.Name == appName && ref.Subresource == "":
			if pause.IsZero() {
				pause = ev.RequestReceived
			} else {
				handBack = ev.RequestReceived
			}
		case ev.Verb == "create" && ref.Resource == "restores" && ref.APIGroup == "velero.io":
			restore = ev.RequestReceived
		}
	})
	return
}

// argoChanges are the successful creates, patches and updates of Argo CD's
// application controller since a time, but of Argo CD's own objects, the
// Events it records about them, and dry runs (argoWrites, with the creates that name their object only in
// the body: "resource namespace/").
func argoChanges(log string, since time.Time) ([]write, error) {
	var out []write
	err := auditEvents(log, func(ev auditEvent) {
		if !argoWrite(ev, since) || ev.ObjectRef.Resource == "events" || ev.ResponseStatus.Code/100 != 2 {
			return
		}
		ref := ev.ObjectRef
		out = append(out, write{Verb: ev.Verb, Resource: ref.APIGroup + "/" + ref.Resource,
			Name: ref.APIGroup + "/" + ref.Resource + " " + ref.Namespace + "/" + ref.Name, Start: ev.RequestReceived, End: ev.StageTimestamp})
	})
	return out, err
}

// wantEvidence checks the Evidence file the run wrote (DRILL_LINK set): the
// drill's check, tenant, backup policy and platform version (the CSV the
// Subscription installed), the link to the run's output.
func (d *drill) wantEvidence(r drillRun) {
	d.e.t.Helper()
	files, _ := filepath.Glob(filepath.Join(r.dir, "restore-drill-"+drillTenant+"-"+drillVM+"-*.yaml"))
	if len(files) != 1 {
		d.e.t.Errorf("the drill wrote Evidence files %q, want one", files)
		return
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		d.e.t.Fatal(err)
	}
	for _, want := range []string{"check: restore-drill", `platformVersion: "4.22.3"`, "backupPolicy: daily", "tenant: shop",
		`link: "file://` + filepath.Join(r.dir, "output.log") + `"`} {
		if !strings.Contains(string(data), want) {
			d.e.t.Errorf("%s has no %q:\n%s", filepath.Base(files[0]), want, data)
		}
	}
	d.e.t.Logf("%s:\n%s", filepath.Base(files[0]), data)
}
