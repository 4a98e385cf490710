package velero

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/test/conform"
	"github.com/virtc/virtc/test/conformance"
	"github.com/virtc/virtc/test/controllers"
)

// GateEnv must be 1 for the suite to run: it starts a control plane,
// Velero and an object store, which plain `go test ./...` should not.
const GateEnv = "VIRTC_E2E_VELERO"

const (
	// trackingApp is the Application the Schedules are applied as
	trackingApp     = "virtc-e2e"
	repoRoot        = "../../.."
	platformVersion = "4.22"
	waitFor         = 3 * time.Minute
)

type env struct {
	t      *testing.T
	ctx    context.Context
	cp     *conformance.ControlPlane
	store  *ObjectStore
	velero *Server
	dir    string
}

// TestVeleroRestoresVirtcBackups runs virtc's OADP objects through the
// real Velero v1.18 and its AWS plugin, with an S3 object store on
// loopback, on examples/platform (its storage location pointed at the
// store, as the platform team points it at theirs):
//
//  1. the DataProtectionApplication's location becomes a
//     BackupStorageLocation (OADP's part, a stand-in: BackupStorageLocations)
//     that Velero finds Available with the credential Secret it names;
//  2. a backup from virtc's Schedule of the payments tenant
//     (`velero backup create --from-schedule`, as the Schedule's cron
//     would start it: pkg/controller/schedule_controller.go getBackup)
//     completes, holds exactly the objects the Schedule selects (the
//     tenant's VMs and data claims of that backup policy, nothing of another
//     policy or tenant) and is stored in the bucket under the location's
//     prefix; the Schedule applied with Argo CD's tracking label and
//     annotation, the Backup has the template's labels, not the tracking
//     label, and the Schedule's ignore-healthcheck (issue 48); the
//     Schedules' crons are moved so that none fires during the test
//     (QuietCron);
//  3. virtc's restore plan for ledger-db in place: its Restore
//     (`virtc restore-plan --objects`), created while the VM still exists,
//     creates and updates nothing (existingResourcePolicy: none: Velero
//     skips the VM and reports the existing claim failed,
//     pkg/restore/restore.go), which is why the plan's script deletes the
//     VM and its claims first; after that deletion the same Restore
//     creates the VM and its data claim again with Git's spec: the same
//     firmware UUID and serial, interfaces, networks and volumes, the
//     claim's size and class, its binding cleared (its volume had no
//     snapshot: a new volume is provisioned, so data comes back only
//     through snapshots, which need CSI);
//  4. a Restore whose selector matches no backed-up object restores
//     nothing, so the checks of 3 can fail.
//
// What is not run here: Velero's CSI snapshots and data mover need a CSI
// driver and a node (the claims are backed up and restored as objects),
// KubeVirt's velero plugin (kubevirt-velero-plugin: the Go module proxy
// serves none of its versions) and Argo CD (the scripts' pause and
// hand-back run in make e2e-argocd's model of them).
func TestVeleroRestoresVirtcBackups(t *testing.T) {
	e := start(t)

	// 1. the platform's location, pointed at the store
	plat, objs, pvs := e.platformAtStore(t)

	bucket, prefix := e.startVelero(t, objs)

	// 2. a backup from virtc's Schedule
	const tenant, vmName, schedule = "payments", "ledger-db", "payments-daily"
	want := selected(objs, schedule)
	if len(want) == 0 {
		t.Fatalf("Schedule %s selects nothing of examples/platform", schedule)
	}
	// and the volume of each bound claim: Velero's PVC action adds it
	// (pkg/backup/actions/backup_pv_action.go, RelatedItemsForPVC)
	for _, w := range want {
		if claim, ok := strings.CutPrefix(w, "PersistentVolumeClaim "); ok {
			want = append(want, "PersistentVolume "+pvs[claim])
		}
	}
	// the Namespace of the Schedule's included namespace, whatever the
	// label selector (pkg/backup/item_collector.go collectNamespaces), and
	// the CRD of each custom resource kind backed up (pkg/backup/backup.go
	// backupCRD), so that a restore onto a cluster without it can create it
	want = append(want, "Namespace "+tenant, "CustomResourceDefinition virtualmachines.kubevirt.io")
	slices.Sort(want)
	backup := e.backupFromSchedule(schedule)
	got := e.backedUp(backup)
	if !slices.Equal(got, want) {
		t.Errorf("backup %s of Schedule %s holds\n  %s\nwant what the Schedule selects\n  %s", backup, schedule, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	stored, err := e.store.Objects(e.ctx, bucket, prefix+"/backups/"+backup+"/")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(stored, prefix+"/backups/"+backup+"/"+backup+".tar.gz") {
		t.Errorf("bucket %s holds %q under %s/backups/%s, want the backup's tarball", bucket, stored, prefix, backup)
	}
	t.Logf("backup %s: %d objects, %d files in the bucket", backup, len(got), len(stored))

	// 3. the restore plan's Restore, first over the live VM, then after
	// the plan's deletion
	plan := build(t, "restore-plan", "--objects", tenant+"/"+vmName, plat)
	var restore conformance.Object
	for _, o := range plan {
		if o.Kind == "Restore" {
			restore = o
		}
	}
	if restore.Name == "" {
		t.Fatalf("virtc restore-plan --objects %s/%s has no Restore", tenant, vmName)
	}
	vmPath := "/apis/kubevirt.io/v1/namespaces/" + tenant + "/virtualmachines/" + vmName
	claimPath := "/api/v1/namespaces/" + tenant + "/persistentvolumeclaims/" + vmName + "-pgdata"
	before := e.object(vmPath)
	claimBefore := e.object(claimPath)

	over := e.restore(restore, "restore-over-live")
	if over.restored != 0 || len(over.items) == 0 {
		t.Errorf("Restore over the live VM: items %q, want each of the VM's objects there and none created or updated (existingResourcePolicy: none)", over.items)
	}
	if uid := e.object(vmPath)["metadata"].(map[string]any)["uid"]; uid != before["metadata"].(map[string]any)["uid"] {
		t.Errorf("the live VM was replaced by the Restore over it (uid %v → %v)", before["metadata"].(map[string]any)["uid"], uid)
	}

	e.kubectl("-n", tenant, "delete", "virtualmachine", vmName, "--wait")
	e.kubectl("-n", tenant, "delete", "persistentvolumeclaim", vmName+"-pgdata", "--wait")
	res := e.restore(restore, restore.Name)
	if res.phase != "Completed" {
		t.Fatalf("Restore %s: %s, want Completed", restore.Name, res.phase)
	}
	after := e.object(vmPath)
	for _, f := range [][]string{
		{"spec", "template", "spec", "domain", "firmware"},
		{"spec", "template", "spec", "domain", "devices", "interfaces"},
		{"spec", "template", "spec", "networks"},
		{"spec", "template", "spec", "volumes"},
		{"spec", "dataVolumeTemplates"},
		{"spec", "runStrategy"},
	} {
		if b, a := Field(before, f...), Field(after, f...); a == "null" || a != b {
			t.Errorf("restored VM %s: %s = %s, want %s as before", vmName, strings.Join(f, "."), a, b)
		}
	}
	claimAfter := e.object(claimPath)
	for _, f := range [][]string{{"spec", "resources"}, {"spec", "storageClassName"}, {"spec", "accessModes"}, {"spec", "volumeMode"}} {
		if b, a := Field(claimBefore, f...), Field(claimAfter, f...); a != b {
			t.Errorf("restored claim %s-pgdata: %s = %s, want %s", vmName, strings.Join(f, "."), a, b)
		}
	}
	// The claim's volume was not restored: it was not snapshotted (no CSI
	// volume here), and the Restore selects by virtc's labels, which a
	// volume does not carry. Velero then clears the claim's binding, so a
	// provisioner gives it a new, empty volume (pkg/restore/restore.go
	// resetVolumeBindingInfo): data comes back only through snapshots.
	if v := Field(claimAfter, "spec", "volumeName"); v != `""` && v != "null" {
		t.Errorf("restored claim %s-pgdata is bound to %s, want its binding cleared (its volume was not restored)", vmName, v)
	}
	labels := after["metadata"].(map[string]any)["labels"].(map[string]any)
	if labels["velero.io/restore-name"] != restore.Name || labels["velero.io/backup-name"] != backup {
		t.Errorf("restored VM labels %v: want velero.io/restore-name %s and velero.io/backup-name %s", labels, restore.Name, backup)
	}
	t.Logf("Restore %s from backup %s: %d objects back, firmware %s", restore.Name, backup, res.restored, Field(after, "spec", "template", "spec", "domain", "firmware"))

	// 4. a selector that matches nothing restores nothing
	e.kubectl("-n", tenant, "delete", "virtualmachine", vmName, "--wait")
	none := restore
	none.Doc = deepCopy(restore.Doc)
	none.Doc["spec"].(map[string]any)["labelSelector"] = map[string]any{"matchLabels": map[string]any{"virtc.dev/vm": vmName + "-not-there"}}
	if r := e.restore(none, "restore-nothing"); r.restored != 0 {
		t.Errorf("a Restore selecting nothing restored %d objects", r.restored)
	}
	if _, err := e.cp.Get(e.ctx, vmPath); err == nil {
		t.Errorf("VM %s exists after a Restore that selects nothing", vmName)
	}
}

// platformAtStore builds examples/platform with its backup location
// pointed at the test's store and applies the output as Argo CD would:
// the build's directory, its objects, and each claim's provisioned volume.
func (e *env) platformAtStore(t *testing.T) (plat string, objs []conformance.Object, pvs map[string]string) {
	t.Helper()
	return e.platformAtStoreWith(t, nil)
}

// platformAtStoreWith is platformAtStore with change (if not nil) made to
// the copy of examples/platform before the build.
func (e *env) platformAtStoreWith(t *testing.T, change func(dir string)) (plat string, objs []conformance.Object, pvs map[string]string) {
	t.Helper()
	plat = filepath.Join(e.dir, "platform")
	copyDir(t, filepath.Join(repoRoot, "examples", "platform"), plat)
	if change != nil {
		change(plat)
	}
	platformYAML := filepath.Join(plat, "platform.yaml")
	src, err := os.ReadFile(platformYAML)
	if err != nil {
		t.Fatal(err)
	}
	pointed := bytes.Replace(src, []byte(`s3Url: "https://s3.example.com"`), []byte(`s3Url: "`+e.store.URL+`"`), 1)
	if bytes.Equal(pointed, src) {
		t.Fatalf("%s: no s3Url https://s3.example.com to point at the store", platformYAML)
	}
	if err := os.WriteFile(platformYAML, pointed, 0o644); err != nil {
		t.Fatal(err)
	}
	objs = build(t, "build", plat)
	if err := os.MkdirAll(filepath.Join(e.dir, "apply"), 0o755); err != nil {
		t.Fatal(err)
	}
	cl := conformance.NewCluster(e.cp, filepath.Join(e.dir, "apply"))
	if _, err := cl.EnsureNamespaces(e.ctx, objs); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.EnsureStorageClasses(e.ctx, objs); err != nil {
		t.Fatal(err)
	}
	// the Schedules as Argo CD applies them (its tracking label and
	// annotation), each with a cron that fires during no test
	for _, o := range objs {
		if o.Kind == "Schedule" {
			TrackedByArgoCD(o.Doc, trackingApp)
			o.Doc["spec"].(map[string]any)["schedule"] = QuietCron(time.Now())
		}
	}
	e.apply(objs)
	pvs = e.provision(objs)
	return plat, objs, pvs
}

// startVelero starts Velero as OADP would for the output's
// DataProtectionApplication (its one backup location, the credential
// Secret the platform team creates beside it, the Deployment object) and
// waits for the location to be Available. It returns the location's
// bucket and prefix.
func (e *env) startVelero(t *testing.T, objs []conformance.Object) (bucket, prefix string) {
	t.Helper()
	var err error
	var dpa DPA
	var dpaObj conformance.Object
	for _, o := range objs {
		if o.Kind == "DataProtectionApplication" {
			dpaObj = o
		}
	}
	if dpaObj.Name == "" {
		t.Fatal("examples/platform emits no DataProtectionApplication")
	}
	e.getJSON("/apis/oadp.openshift.io/v1alpha1/namespaces/"+dpaObj.Namespace+"/dataprotectionapplications/"+dpaObj.Name, &dpa)
	bsls := BackupStorageLocations(dpa)
	if len(bsls) != 1 {
		t.Fatalf("DataProtectionApplication %s: %d backup locations, want examples/platform's one", dpa.Metadata.Name, len(bsls))
	}
	loc := bsls[0]["spec"].(map[string]any)
	cred := loc["credential"].(map[string]any)
	storage := loc["objectStorage"].(map[string]any)
	bucket, prefix = storage["bucket"].(string), storage["prefix"].(string)
	bslName := bsls[0]["metadata"].(map[string]any)["name"].(string)
	// the credential Secret the platform team creates beside the DPA (not
	// in Git): the AWS shared credentials file format the plugin reads
	e.create(map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": cred["name"], "namespace": Namespace},
		"stringData": map[string]any{cred["key"].(string): "[default]\naws_access_key_id=virtc\naws_secret_access_key=virtc-e2e\n"}})
	for _, b := range bsls {
		e.create(b)
	}
	e.create(Deployment(dpa))
	if e.velero, err = StartServer(e.ctx, e.cp, e.tools(), filepath.Join(e.dir, "velero"), ServerArgs(dpa)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("velero log:\n%s", e.velero.Tail())
		}
		e.velero.Stop()
	})
	if err := WaitAvailable(e.ctx, e.cp, e.velero, bslName); err != nil {
		t.Fatal(err)
	}
	t.Logf("BackupStorageLocation %s Available: bucket %s prefix %s at %s", bslName, bucket, prefix, e.store.URL)
	return bucket, prefix
}

func start(t *testing.T) *env {
	t.Helper()
	conformance.Gate(t, GateEnv, "the Velero suite starts a control plane, Velero and an object store; run `make e2e-velero`")
	bins := conformance.Need(t, conformance.FindBinaries)
	tools := conformance.Need(t, FindTools)
	schemas, err := conform.Schemas(platformVersion)
	if err != nil {
		conform.Skip(t, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	t.Cleanup(cancel)
	dir := t.TempDir()
	cp := conformance.StartForTest(t, ctx, bins, filepath.Join(dir, "control-plane"))
	if err := controllers.InstallPlatformCRDs(ctx, cp, repoRoot, schemas, platformVersion); err != nil {
		t.Fatal(err)
	}
	// the platform's set has the Velero CRDs virtc writes; the server
	// needs the rest of its own
	added, err := controllers.InstallMissingCRDs(ctx, cp, filepath.Join(dir, "crds"), tools.CRDs)
	if err != nil {
		t.Fatalf("install Velero's CRDs: %v", err)
	}
	t.Logf("Velero CRDs added to the platform's set: %s", strings.Join(added, ", "))
	// the garbage collector and the claim and volume protection
	// controllers: the restore plan deletes claims and waits for them
	kcmBin := conformance.Need(t, conformance.FindControllerManager)
	conformance.StartControllerManagerForTest(t, ctx, cp, kcmBin, filepath.Join(dir, "kcm"), conformance.ControllersWithoutNode)
	storeDir := filepath.Join(dir, "s3")
	if err := os.MkdirAll(storeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	store, err := StartObjectStore(ctx, tools, storeDir, "vm-backups")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Stop)
	if err := os.MkdirAll(filepath.Join(dir, "velero"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: ctx, cp: cp, store: store, dir: dir}
}

func (e *env) tools() Tools {
	tl, err := FindTools()
	if err != nil {
		e.t.Fatal(err)
	}
	return tl
}

// build runs virtc with args and parses its output.
func build(t *testing.T, args ...string) []conformance.Object {
	t.Helper()
	return conformance.VirtcObjects(t, "virtc "+strings.Join(args, " "), args...)
}

func (e *env) apply(objs []conformance.Object) {
	e.t.Helper()
	data, err := conformance.Stream(objs)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.cp.MustKubectl(e.ctx, data, "apply", "--server-side", "--field-manager=virtc-e2e", "-f", "-"); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) create(obj map[string]any) {
	e.t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.cp.MustKubectl(e.ctx, data, "create", "-f", "-"); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) kubectl(args ...string) []byte {
	e.t.Helper()
	out, err := e.cp.MustKubectl(e.ctx, nil, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) getJSON(path string, v any) {
	e.t.Helper()
	data, err := e.cp.Get(e.ctx, path)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) object(path string) map[string]any {
	e.t.Helper()
	var o map[string]any
	e.getJSON(path, &o)
	return o
}

// provision gives every claim of objs a volume and binds it, as a
// provisioner and the PV controller would, and returns the volumes' names
// by "namespace/claim". The volumes are local (hostPath), not CSI: there is
// no CSI driver or snapshotter here, and Velero's CSI action skips a claim
// whose volume is not CSI (pkg/backup/actions/csi/pvc_action.go), so the
// backups carry claims and volumes as objects, without their data.
func (e *env) provision(objs []conformance.Object) map[string]string {
	e.t.Helper()
	names := map[string]string{}
	var claims []conformance.Object
	for _, o := range objs {
		if o.APIVersion != "v1" || o.Kind != "PersistentVolumeClaim" {
			continue
		}
		claims = append(claims, o)
		spec := o.Doc["spec"].(map[string]any)
		pv := "pvc-" + o.Namespace + "-" + o.Name
		names[o.Namespace+"/"+o.Name] = pv
		e.create(map[string]any{"apiVersion": "v1", "kind": "PersistentVolume",
			"metadata": map[string]any{"name": pv},
			"spec": map[string]any{
				"capacity":                      map[string]any{"storage": spec["resources"].(map[string]any)["requests"].(map[string]any)["storage"]},
				"accessModes":                   spec["accessModes"],
				"volumeMode":                    spec["volumeMode"],
				"storageClassName":              spec["storageClassName"],
				"persistentVolumeReclaimPolicy": "Delete",
				"hostPath":                      map[string]any{"path": "/var/lib/virtc-e2e/" + pv},
				"claimRef":                      map[string]any{"namespace": o.Namespace, "name": o.Name},
			}})
		e.kubectl("-n", o.Namespace, "patch", "persistentvolumeclaim", o.Name, "--type=merge", "-p", `{"spec":{"volumeName":"`+pv+`"}}`)
	}
	if err := conformance.NewCluster(e.cp, filepath.Join(e.dir, "apply")).BindClaims(e.ctx, claims); err != nil {
		e.t.Fatal(err)
	}
	return names
}

// selected are the objects of objs that Schedule name backs up, as
// "Kind namespace/name", sorted: those of its namespaces that carry its
// label selector's labels (Velero's backup item collector,
// pkg/backup/item_collector.go, lists each included namespace's resources
// with the selector).
func selected(objs []conformance.Object, name string) []string {
	var sched conformance.Object
	for _, o := range objs {
		if o.Kind == "Schedule" && o.Name == name {
			sched = o
		}
	}
	if sched.Name == "" {
		return nil
	}
	tmpl := sched.Doc["spec"].(map[string]any)["template"].(map[string]any)
	var namespaces []string
	for _, n := range tmpl["includedNamespaces"].([]any) {
		namespaces = append(namespaces, n.(string))
	}
	match := tmpl["labelSelector"].(map[string]any)["matchLabels"].(map[string]any)
	var out []string
	for _, o := range objs {
		if !slices.Contains(namespaces, o.Namespace) {
			continue
		}
		labels, _ := o.Doc["metadata"].(map[string]any)["labels"].(map[string]any)
		ok := true
		for k, v := range match {
			if labels[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, o.Kind+" "+o.Namespace+"/"+o.Name)
		}
	}
	slices.Sort(out)
	return out
}

// backupFromSchedule has Velero take a backup of schedule now and waits
// for it to complete.
func (e *env) backupFromSchedule(schedule string) string {
	e.t.Helper()
	name := schedule + "-e2e"
	if out, err := e.velero.CLI(e.ctx, "backup", "create", name, "--from-schedule", schedule, "--wait"); err != nil {
		e.t.Fatal(err)
	} else {
		e.t.Logf("velero backup create:\n%s", out)
	}
	var b struct {
		Metadata struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Status struct {
			Phase    string `json:"phase"`
			Warnings int    `json:"warnings"`
			Errors   int    `json:"errors"`
		} `json:"status"`
	}
	e.getJSON("/apis/velero.io/v1/namespaces/"+Namespace+"/backups/"+name, &b)
	if b.Status.Phase != "Completed" || b.Status.Errors != 0 {
		out, _ := e.velero.CLI(e.ctx, "backup", "describe", name, "--details")
		e.t.Fatalf("backup %s: phase %s, %d errors, want Completed without errors:\n%s", name, b.Status.Phase, b.Status.Errors, out)
	}
	if b.Metadata.Labels["velero.io/schedule-name"] != schedule {
		e.t.Errorf("backup %s labels %v: want velero.io/schedule-name %s (a Restore's scheduleName finds it by it)", name, b.Metadata.Labels, schedule)
	}
	// Velero gives the Backup the Schedule's annotations, Argo CD's
	// tracking id among them, and the template's labels instead of the
	// Schedule's (pkg/builder/backup_builder.go FromSchedule): the Backup
	// has no tracking label, and its health is kept out of the
	// Application's (issue 48; what Argo CD makes of it: make e2e-drills)
	if v, ok := b.Metadata.Labels[ArgoCDTrackingLabel]; ok {
		e.t.Errorf("backup %s has Argo CD's tracking label %s=%s of its Schedule: with label tracking it is the Application's", name, ArgoCDTrackingLabel, v)
	}
	if b.Metadata.Labels["virtc.dev/tenant"] == "" {
		e.t.Errorf("backup %s labels %v: want the Schedule template's virtc.dev/tenant", name, b.Metadata.Labels)
	}
	if got := b.Metadata.Annotations["argocd.argoproj.io/ignore-healthcheck"]; got != "true" {
		e.t.Errorf("backup %s annotations %v: want argocd.argoproj.io/ignore-healthcheck \"true\" from its Schedule, or a failed backup turns the Application Degraded", name, b.Metadata.Annotations)
	}
	if got := b.Metadata.Annotations[ArgoCDTrackingAnnotation]; !strings.HasPrefix(got, trackingApp+":velero.io/Schedule:") {
		e.t.Errorf("backup %s tracking id %q: want its Schedule's, as Velero copies annotations (the case ignore-healthcheck is for)", name, got)
	}
	return name
}

// backedUp lists the backup's items, as "Kind namespace/name", sorted,
// from what Velero stored (`velero backup describe --details -o json`
// prints the resource list it downloads from the bucket through a
// DownloadRequest: pkg/cmd/util/output/backup_structured_describer.go).
func (e *env) backedUp(backup string) []string {
	e.t.Helper()
	out, err := e.velero.CLI(e.ctx, "backup", "describe", backup, "--details", "-o", "json")
	if err != nil {
		e.t.Fatal(err)
	}
	var d struct {
		Status struct {
			Resources map[string][]string `json:"resourceList"`
			Error     string              `json:"errorGettingResourceList"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		e.t.Fatalf("velero backup describe -o json: %v\n%s", err, out)
	}
	if d.Status.Error != "" {
		e.t.Fatalf("velero backup describe %s: %s", backup, d.Status.Error)
	}
	kinds := map[string]string{"kubevirt.io/v1/VirtualMachine": "VirtualMachine", "v1/PersistentVolumeClaim": "PersistentVolumeClaim",
		"v1/PersistentVolume": "PersistentVolume", "v1/Namespace": "Namespace",
		"apiextensions.k8s.io/v1/CustomResourceDefinition": "CustomResourceDefinition"}
	var items []string
	for gvk, names := range d.Status.Resources {
		kind, ok := kinds[gvk]
		if !ok {
			kind = gvk
		}
		for _, n := range names {
			items = append(items, kind+" "+n)
		}
	}
	slices.Sort(items)
	return items
}

type restored struct {
	phase string
	// restored counts the items Velero created or updated; items lists
	// every item with its result, as "name(result)"
	restored int
	items    []string
}

// restoredItems reads the items of `velero restore describe --details`'s
// resource list with their results, "(created)", "(updated)",
// "(skipped)" or "(failed)" (pkg/cmd/util/output/restore_describer.go
// describeRestoreResourceList).
func restoredItems(describe string) (items []string, restored int) {
	in := false
	for _, line := range strings.Split(describe, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "Resource List:":
			in = true
		case in && strings.HasPrefix(t, "- "):
			item := strings.TrimPrefix(t, "- ")
			items = append(items, item)
			if strings.HasSuffix(item, "(created)") || strings.HasSuffix(item, "(updated)") {
				restored++
			}
		}
	}
	slices.Sort(items)
	return items, restored
}

// restore creates r (named name) and waits for Velero to finish it.
func (e *env) restore(r conformance.Object, name string) restored {
	e.t.Helper()
	doc := deepCopy(r.Doc)
	doc["metadata"].(map[string]any)["name"] = name
	e.create(doc)
	path := "/apis/velero.io/v1/namespaces/" + Namespace + "/restores/" + name
	for deadline := time.Now().Add(waitFor); ; time.Sleep(time.Second) {
		var s struct {
			Status struct {
				Phase    string `json:"phase"`
				Warnings int    `json:"warnings"`
				Errors   int    `json:"errors"`
			} `json:"status"`
		}
		e.getJSON(path, &s)
		switch s.Status.Phase {
		case "Completed", "PartiallyFailed", "Failed", "FailedValidation":
			out, err := e.velero.CLI(e.ctx, "restore", "describe", name, "--details")
			if err != nil {
				e.t.Fatal(err)
			}
			items, n := restoredItems(string(out))
			e.t.Logf("Restore %s: %s, %d warnings, %d errors; items %q", name, s.Status.Phase, s.Status.Warnings, s.Status.Errors, items)
			return restored{phase: s.Status.Phase, restored: n, items: items}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("Restore %s still %q after %s", name, s.Status.Phase, waitFor)
		}
	}
}

func deepCopy(m map[string]any) map[string]any {
	data, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(fmt.Errorf("copy %s: %w", from, err))
	}
}
