package cli

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/test/conform"
)

// The restore plans must work with the example Applications' automated sync
// and selfHeal on. This test runs a plan's script against a model of the
// cluster and of Argo CD's application controller, and checks that Argo CD
// recreates nothing before the restore step, that Velero then skips
// nothing, and that the Application ends as it began.
//
// The model of Argo CD v3.6.1 (controller/appcontroller.go, autoSync):
// after every step, an Application whose spec.syncPolicy.automated is set
// and not enabled: false (SyncPolicy.IsAutomatedSyncEnabled,
// pkg/apis/application/v1alpha1/types.go) and that is OutOfSync (an object
// of Git missing, or, with selfHeal, a field changed) is synced: missing
// objects are created from Git (a blank data disk, a fresh root clone) and
// changed fields set back. After `argocd app get --refresh` the
// Application's status.sync.status is Synced when Argo CD would change
// nothing (the hand-back's check; the sync status leaves out extraneous
// resources with IgnoreExtraneous, such as the Backups Velero took from a
// Schedule, which `argocd app diff`, cmd/argocd/commands/app.go
// findAndPrintDiff, lists). Velero with existingResourcePolicy:
// none skips an object that exists. kubectl's merge patch is RFC 7386 and
// its JSON patch RFC 6902 (only remove is used).

// reporter is what the model reports failures to: the test, or a recorder.
type reporter interface {
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

type recorder struct{ failures []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

// cluster is the model: the VM objects of Git, present or not, and whether
// their content is the backup's.
type cluster struct {
	t reporter
	// policy is each VM's backup policy (namespace/name).
	policy map[string]string
	// app is the Argo CD Application, as a JSON document.
	app map[string]any
	// objects maps namespace/kind/name to its state: "live" (as before),
	// "blank" (created by Argo CD from Git: no data), "restored".
	objects map[string]string
	// runStrategy of each VM (namespace/name).
	runStrategy map[string]string
	// git is each VM's runStrategy in Git.
	git map[string]string
	// recreated lists what Argo CD created or reverted while the plan ran.
	recreated []string
	// skipped lists what a restore skipped because it existed.
	skipped []string
	// diffClean says whether the refreshed Application is Synced.
	diffClean bool
	// restoredAt is the step of the first restore.
	restoredAt int
	// fromGit lists what the plan synced from Git (VMs without backups).
	fromGit []string
	// restoredTracking is the Application whose annotation tracking id
	// restored objects carry (the one that synced them when they were
	// backed up); empty: the plan's own Application (the same cluster).
	restoredTracking string
	// tracking is the Application named by each object's
	// argocd.argoproj.io/tracking-id.
	tracking map[string]string
}

func automatedSyncEnabled(app map[string]any) bool {
	sp, _ := app["spec"].(map[string]any)
	auto, ok := sp["syncPolicy"].(map[string]any)["automated"].(map[string]any)
	if !ok {
		return false
	}
	enabled, set := auto["enabled"].(bool)
	return !set || enabled
}

func selfHeal(app map[string]any) bool {
	auto, _ := app["spec"].(map[string]any)["syncPolicy"].(map[string]any)["automated"].(map[string]any)
	b, _ := auto["selfHeal"].(bool)
	return b
}

// reconcile is one pass of Argo CD's automated sync.
func (c *cluster) reconcile(step string) {
	if !automatedSyncEnabled(c.app) {
		return
	}
	for _, k := range sortedKeys(c.objects) {
		if c.objects[k] == "" {
			c.objects[k] = "blank"
			c.recreated = append(c.recreated, k+" (after: "+step+")")
		}
	}
	for _, k := range sortedKeys(c.runStrategy) {
		if selfHeal(c.app) && c.runStrategy[k] != c.git[k] {
			c.recreated = append(c.recreated, "runStrategy of "+k+" set back to "+c.git[k]+" (after: "+step+")")
			c.runStrategy[k] = c.git[k]
		}
	}
}

// owner is the VM an object of the model belongs to.
func (c *cluster) owner(ns, name string) string {
	best := ""
	for k := range c.policy {
		vns, vm, _ := strings.Cut(k, "/")
		if vns == ns && (name == vm || strings.HasPrefix(name, vm+"-")) && len(vm) > len(best) {
			best = vm
		}
	}
	return best
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func mergePatch(dst, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(dst, k)
			continue
		}
		if pm, ok := v.(map[string]any); ok {
			dm, ok := dst[k].(map[string]any)
			if !ok {
				dm = map[string]any{}
				dst[k] = dm
			}
			mergePatch(dm, pm)
			continue
		}
		dst[k] = v
	}
}

var (
	reAppPatch  = regexp.MustCompile(`^kubectl -n "\$ARGOCD_NS" patch application "\$APP" --type (merge|json) -p '(.*)'$`)
	reDeleteVM  = regexp.MustCompile(`^kubectl -n (\S+) delete virtualmachine (\S+) --ignore-not-found --cascade=foreground --wait`)
	reDelPVC    = regexp.MustCompile(`^kubectl -n (\S+) delete persistentvolumeclaim ([a-z0-9][a-z0-9 .-]*?) --ignore-not-found --wait$`)
	reCheckGone = regexp.MustCompile(`^\[ -z "\$\(kubectl -n (\S+) get (.+) --ignore-not-found -o name\)" \]$`)
	reStop      = regexp.MustCompile(`^virtctl -n (\S+) stop (\S+)$`)
	// kubectl annotate of an object's Argo CD tracking id to this
	// cluster's Application ($APP_INSTANCE: $APP in the model).
	reTracking = regexp.MustCompile(`^kubectl -n (\S+) annotate --overwrite (virtualmachine|persistentvolumeclaim) (\S+) argocd\.argoproj\.io/tracking-id="\$APP_INSTANCE:([^/]*)/(\w+):(\S+)/(\S+)"$`)
	rePatchRun = regexp.MustCompile(`^kubectl -n (\S+) patch virtualmachine (\S+) --type merge -p '\{"spec":\{"runStrategy":"(\w+)"\}\}'`)
)

// run interprets the script's commands in order.
func (c *cluster) run(script string) {
	lines := strings.Split(script, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + strings.TrimSpace(lines[i])
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if cmd, _, ok := strings.Cut(line, "  #"); ok {
			line = cmd
		}
		var body []string
		if strings.HasSuffix(line, "<<'EOF'") {
			for i++; lines[i] != "EOF"; i++ {
				body = append(body, lines[i])
			}
		}
		c.step(i, line, strings.Join(body, "\n"))
		c.reconcile(line)
	}
}

func (c *cluster) step(n int, line, body string) {
	t := c.t
	switch {
	case reAppPatch.MatchString(line):
		c.patchApp(line)
	case reDeleteVM.MatchString(line):
		m := reDeleteVM.FindStringSubmatch(line)
		// Foreground: the VM's dependents (its root DataVolume and that
		// DataVolume's claim) are gone when the command returns.
		for _, k := range []string{"VirtualMachine/" + m[2], "DataVolume/" + m[2] + "-root", "PersistentVolumeClaim/" + m[2] + "-root"} {
			c.objects[m[1]+"/"+k] = ""
		}
	case reDelPVC.MatchString(line):
		m := reDelPVC.FindStringSubmatch(line)
		for _, name := range strings.Fields(m[2]) {
			c.objects[m[1]+"/PersistentVolumeClaim/"+name] = ""
		}
	case reCheckGone.MatchString(line):
		m := reCheckGone.FindStringSubmatch(line)
		kinds := map[string]string{"virtualmachine": "VirtualMachine", "datavolume": "DataVolume", "persistentvolumeclaim": "PersistentVolumeClaim"}
		for _, ref := range strings.Fields(m[2]) {
			kind, name, _ := strings.Cut(ref, "/")
			if c.objects[m[1]+"/"+kinds[kind]+"/"+name] != "" {
				t.Errorf("step %d %q: %s/%s exists, the script stops here", n, line, m[1], ref)
			}
		}
	case strings.HasPrefix(line, "kubectl apply -f - <<'EOF'"):
		t.Errorf("step %d: kubectl apply of an object an earlier run left would change nothing, and its old status would pass for this run's", n)
	case strings.HasPrefix(line, "kubectl create -f - <<'EOF'"):
		c.create(n, body)
	case reTracking.MatchString(line):
		m := reTracking.FindStringSubmatch(line)
		groups := map[string]string{"virtualmachine": "kubevirt.io/VirtualMachine", "persistentvolumeclaim": "/PersistentVolumeClaim"}
		if m[4]+"/"+m[5] != groups[m[2]] || m[6] != m[1] || m[7] != m[3] {
			t.Errorf("step %d: %q: the tracking id %s:%s/%s names another object than %s/%s %s (Argo CD v3.6.1 util/argo/resource_tracking.go: <app>:<group>/<kind>:<namespace>/<name>)", n, line, m[4], m[5], m[6]+"/"+m[7], m[1], m[2], m[3])
		}
		k := m[1] + "/" + strings.TrimPrefix(groups[m[2]][strings.Index(groups[m[2]], "/"):], "/") + "/" + m[3]
		if _, ok := c.objects[k]; !ok {
			t.Errorf("step %d: annotates %s, which is not an object of the VMs", n, k)
		}
		c.tracking[k] = c.appName()
	case reStop.MatchString(line):
		m := reStop.FindStringSubmatch(line)
		c.runStrategy[m[1]+"/"+m[2]] = "Halted" // virtctl stop sets runStrategy Halted on a VM that runs Always
	case rePatchRun.MatchString(line):
		m := rePatchRun.FindStringSubmatch(line)
		c.runStrategy[m[1]+"/"+m[2]] = m[3]
	case strings.HasPrefix(line, `argocd app get "$APP" --refresh`):
		c.refresh(n)
	case strings.HasPrefix(line, "argocd app sync"):
		c.sync(n, line)
	}
}

// patchApp models kubectl's patch of the Application (merge, or JSON
// patch remove).
func (c *cluster) patchApp(line string) {
	t := c.t
	m := reAppPatch.FindStringSubmatch(line)
	if m[1] == "merge" {
		var p map[string]any
		if err := json.Unmarshal([]byte(m[2]), &p); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		mergePatch(c.app, p)
		return
	}
	var ops []struct{ Op, Path string }
	if err := json.Unmarshal([]byte(m[2]), &ops); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	for _, op := range ops {
		parts := strings.Split(strings.TrimPrefix(op.Path, "/"), "/")
		cur := c.app
		for _, p := range parts[:len(parts)-1] {
			cur = cur[p].(map[string]any)
		}
		if op.Op != "remove" {
			t.Fatalf("%s: only remove is modelled", line)
		}
		if _, ok := cur[parts[len(parts)-1]]; !ok {
			t.Fatalf("%s: JSON patch remove of a missing path fails (RFC 6902)", line)
		}
		delete(cur, parts[len(parts)-1])
	}
}

// create models kubectl create of a Velero Restore or a
// VirtualMachineRestore (step n): what it restores, and what it refuses.
func (c *cluster) create(n int, body string) {
	t := c.t
	var obj struct {
		Kind string
		Spec struct {
			IncludedNamespaces     []string `yaml:"includedNamespaces"`
			ExistingResourcePolicy string   `yaml:"existingResourcePolicy"`
			LabelSelector          struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"labelSelector"`
			Target struct{ Name string }
		}
		Metadata struct {
			Namespace string
			Labels    map[string]string
		}
	}
	if err := yaml.Unmarshal([]byte(body), &obj); err != nil {
		t.Fatalf("%v", err)
	}
	if c.restoredAt == 0 {
		c.restoredAt = n
	}
	switch obj.Kind {
	case "Restore":
		if obj.Spec.ExistingResourcePolicy != "none" {
			t.Errorf("the Restore must never overwrite: existingResourcePolicy %q", obj.Spec.ExistingResourcePolicy)
		}
		vm := obj.Spec.LabelSelector.MatchLabels["virtc.dev/vm"]
		policy := obj.Spec.LabelSelector.MatchLabels["virtc.dev/backup-policy"]
		for _, k := range sortedKeys(c.objects) {
			ns, rest, _ := strings.Cut(k, "/")
			_, name, _ := strings.Cut(rest, "/")
			owner := c.owner(ns, name)
			if !slices.Contains(obj.Spec.IncludedNamespaces, ns) || vm != "" && owner != vm || policy != "" && c.policy[ns+"/"+owner] != policy {
				continue
			}
			if c.objects[k] != "" {
				c.skipped = append(c.skipped, k+" ("+c.objects[k]+")")
				continue
			}
			c.objects[k] = "restored"
			c.tracking[k] = cmp.Or(c.restoredTracking, c.appName())
			if kind := strings.Split(k, "/")[1]; kind == "VirtualMachine" {
				// The KubeVirt plugin's restore-run-strategy label
				// (vm_restore_item_action.go); else the backed-up one,
				// which is Git's.
				c.runStrategy[ns+"/"+name] = cmp.Or(obj.Metadata.Labels["velero.kubevirt.io/restore-run-strategy"], c.git[ns+"/"+name])
			}
		}
	case "VirtualMachineRestore":
		k := obj.Metadata.Namespace + "/" + obj.Spec.Target.Name
		if c.runStrategy[k] != "Halted" {
			t.Errorf("the VirtualMachineRestore of %s runs while the VM's runStrategy is %s: KubeVirt refuses it (FailImmediate)", k, c.runStrategy[k])
		}
		for _, o := range sortedKeys(c.objects) {
			if strings.HasPrefix(o, obj.Metadata.Namespace+"/") && strings.Contains(o, "/"+obj.Spec.Target.Name) {
				c.objects[o] = "restored"
			}
		}
	}
}

// refresh models argocd app get --refresh (step n): the Application is
// Synced when every object is back, as Git has it, and tracked by it.
func (c *cluster) refresh(n int) {
	t := c.t
	c.diffClean = true
	for _, k := range sortedKeys(c.objects) {
		if c.objects[k] == "" {
			c.diffClean = false
		}
	}
	for _, k := range sortedKeys(c.runStrategy) {
		if c.runStrategy[k] != c.git[k] {
			c.diffClean = false
		}
	}
	// Argo CD v3 compares only the objects whose tracking id names the
	// Application (getAppInstanceValue): one of Git's objects tracked
	// by another Application is a difference, whatever its content.
	// Git's objects of a VM are the VirtualMachine and its data disk
	// claims (the root DataVolume and claim are KubeVirt's).
	for _, k := range sortedKeys(c.objects) {
		parts := strings.Split(k, "/")
		inGit := parts[1] == "VirtualMachine" || parts[1] == "PersistentVolumeClaim" && !strings.HasSuffix(parts[2], "-root")
		if inGit && c.objects[k] != "" && c.tracking[k] != c.appName() {
			c.diffClean = false
			t.Errorf("step %d: %s is tracked by Application %q, not %q", n, k, c.tracking[k], c.appName())
		}
	}
	if !c.diffClean {
		t.Errorf("step %d: the Application is not Synced after the refresh, the script stops before handing back", n)
	}
}

// sync models argocd app sync --resource (step n): it creates the named
// objects from Git.
func (c *cluster) sync(n int, line string) {
	t := c.t
	// A sync of named resources creates them from Git: allowed only
	// for VMs the plan does not restore (no backups).
	args := strings.Fields(line)
	if !slices.Contains(args, "--resource") {
		t.Errorf("step %d: %q: a sync of the whole Application before the hand-back", n, line)
	}
	for i, a := range args {
		if a != "--resource" || i+1 == len(args) {
			continue
		}
		f := strings.SplitN(args[i+1], ":", 3)
		ns, name, _ := strings.Cut(f[2], "/")
		k := ns + "/" + f[1] + "/" + name
		if state, ok := c.objects[k]; ok && state != "" {
			t.Errorf("step %d: syncs %s, which is %s", n, k, state)
		}
		c.objects[k] = "git"
		c.tracking[k] = c.appName()
		c.fromGit = append(c.fromGit, k)
		if f[1] == "VirtualMachine" {
			c.runStrategy[ns+"/"+name] = c.git[ns+"/"+name]
		}
	}
}

func exampleApplication(t *testing.T) map[string]any {
	data, err := os.ReadFile("../../examples/argocd/application.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var app map[string]any
	if err := yaml.Unmarshal(data, &app); err != nil {
		t.Fatal(err)
	}
	if !automatedSyncEnabled(app) || !selfHeal(app) {
		t.Fatal("the example Application no longer has automated sync with selfHeal: the test would prove nothing")
	}
	return app
}

func planScript(t *testing.T, args ...string) string {
	var stdout, stderr bytes.Buffer
	code := Main(append(append([]string{"restore-plan", "--app", "virtc-in-cluster"}, args...), "../../golden/restore-in-place/inputs.yaml"), nil, &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("restore-plan %v: exit %d: %s", args, code, stderr.String())
	}
	return stdout.String()
}

func newCluster(t *testing.T, r reporter, objects ...string) *cluster {
	c := &cluster{t: r, app: exampleApplication(t), objects: map[string]string{}, runStrategy: map[string]string{}, git: map[string]string{}, tracking: map[string]string{},
		// The backup policies of golden/restore-in-place/inputs.yaml.
		policy: map[string]string{"shop/web-1": "daily", "shop/web-2": "daily", "shop/archive": "weekly", "shop/db-1": "daily", "shop/scratch": "none"}}
	for _, o := range objects {
		c.objects[o] = "live"
		c.tracking[o] = c.appName()
	}
	return c
}

// otherCluster is the cluster a tenant is restored onto: Argo CD may have
// created the VMs from Git (blank disks) before the plan paused it, and
// the backups were taken on the old cluster, where the objects were
// another Application's.
func otherCluster(t *testing.T, r reporter) *cluster {
	var objs []string
	for _, vm := range [][]string{{"web-1"}, {"web-2"}, {"archive", "data"}, {"db-1", "data"}} {
		objs = append(objs, vmObjects("shop", vm[0], vm[1:]...)...)
	}
	c := newCluster(t, r, objs...)
	for _, k := range sortedKeys(c.objects) {
		c.objects[k] = "blank"
	}
	for _, vm := range []string{"web-1", "web-2", "archive", "db-1"} {
		c.runStrategy["shop/"+vm], c.git["shop/"+vm] = "Always", "Always"
	}
	c.restoredTracking = "virtc-east"
	return c
}

// appName is the plan's Application (planScript's --app): the model's
// $APP and $APP_INSTANCE.
func (c *cluster) appName() string { return "virtc-in-cluster" }

func vmObjects(ns, vm string, disks ...string) []string {
	out := []string{ns + "/VirtualMachine/" + vm, ns + "/DataVolume/" + vm + "-root", ns + "/PersistentVolumeClaim/" + vm + "-root"}
	for _, d := range disks {
		out = append(out, ns+"/PersistentVolumeClaim/"+vm+"-"+d)
	}
	return out
}

func checkRestored(t *testing.T, c *cluster, before map[string]any) {
	t.Helper()
	if len(c.recreated) > 0 {
		t.Errorf("Argo CD changed objects while the plan ran:\n%s", strings.Join(c.recreated, "\n"))
	}
	if len(c.skipped) > 0 {
		t.Errorf("the restore skipped objects that existed:\n%s", strings.Join(c.skipped, "\n"))
	}
	for _, k := range sortedKeys(c.objects) {
		if c.objects[k] != "restored" && !(c.objects[k] == "git" && slices.Contains(c.fromGit, k)) {
			t.Errorf("%s is %q at the end, not restored", k, c.objects[k])
		}
	}
	if c.restoredAt == 0 {
		t.Error("the plan restores nothing")
	}
	if !c.diffClean {
		t.Error("the plan never checks that Argo CD has nothing to change")
	}
	after, _ := json.Marshal(c.app)
	want, _ := json.Marshal(before)
	if string(after) != string(want) {
		t.Errorf("the Application does not end as it began:\n got %s\nwant %s", after, want)
	}
	if !automatedSyncEnabled(c.app) {
		t.Error("automated sync is still off at the end")
	}
}

func TestRestoreOrderUnderAutomatedSync(t *testing.T) {
	t.Run("in place", func(t *testing.T) {
		c := newCluster(t, t, vmObjects("shop", "archive", "data")...)
		before := exampleApplication(t)
		c.run(planScript(t, "shop/archive"))
		checkRestored(t, c, before)
	})
	t.Run("tenant", func(t *testing.T) {
		var objs []string
		objs = append(objs, vmObjects("shop", "web-1")...)
		objs = append(objs, vmObjects("shop", "web-2")...)
		objs = append(objs, vmObjects("shop", "archive", "data")...)
		objs = append(objs, vmObjects("shop", "db-1", "data")...)
		c := newCluster(t, t, objs...)
		before := exampleApplication(t)
		c.run(planScript(t, "--tenant", "shop"))
		checkRestored(t, c, before)
	})
	t.Run("other cluster", func(t *testing.T) {
		c := otherCluster(t, t)
		// scratch takes no backups and was not created yet: only Git has it.
		c.git["shop/scratch"] = "Always"
		before := exampleApplication(t)
		c.run(planScript(t, "--tenant", "shop", "--other-cluster"))
		checkRestored(t, c, before)
		if !slices.Contains(c.fromGit, "shop/VirtualMachine/scratch") {
			t.Error("the VM without backups was not brought from Git")
		}
	})
	t.Run("snapshot", func(t *testing.T) {
		c := newCluster(t, t, vmObjects("shop", "db-1", "data")...)
		c.runStrategy["shop/db-1"], c.git["shop/db-1"] = "Always", "Always"
		before := exampleApplication(t)
		c.run(planScript(t, "--snapshot", "db-1-2026-12-01-upgrade", "shop/db-1"))
		checkRestored(t, c, before)
	})
}

// Without the step that turns automated sync off, the model shows the
// defect the plans fix: Argo CD recreates the deleted VM before the restore
// step, and the restore skips it.
func TestRestoreModelCatchesSelfHeal(t *testing.T) {
	script := planScript(t, "shop/archive")
	var kept []string
	for _, l := range strings.Split(script, "\n") {
		if !strings.Contains(l, `"enabled":false`) {
			kept = append(kept, l)
		}
	}
	rec := &recorder{}
	c := newCluster(t, rec, vmObjects("shop", "archive", "data")...)
	c.run(strings.Join(kept, "\n"))
	if len(c.recreated) == 0 || len(c.skipped) == 0 {
		t.Errorf("the model did not see Argo CD recreate the VM with automated sync on, and the restore skip it: recreated %v, skipped %v", c.recreated, c.skipped)
	}
	if len(rec.failures) == 0 {
		t.Error("the script's own check did not stop it before the restore")
	}
}

// Without the step that hands the restored objects to this cluster's
// Application, the model shows the defect: the old cluster's tracking id
// keeps Argo CD's diff from coming back clean (issue #26).
func TestRestoreModelCatchesForeignTracking(t *testing.T) {
	var kept []string
	for _, l := range strings.Split(planScript(t, "--tenant", "shop", "--other-cluster"), "\n") {
		if !strings.Contains(l, "argocd.argoproj.io/tracking-id=") {
			kept = append(kept, l)
		}
	}
	rec := &recorder{}
	c := otherCluster(t, rec)
	c.run(strings.Join(kept, "\n"))
	if c.diffClean || !slices.ContainsFunc(rec.failures, func(f string) bool { return strings.Contains(f, `tracked by Application "virtc-east"`) }) {
		t.Errorf("the model did not see the old cluster's tracking id hold the diff: %v", rec.failures)
	}
}

// The plans turn automated sync off on the Application; an ApplicationSet
// would switch it back on unless it ignores that field (Argo CD v3.6.1
// applicationset/utils/createOrUpdate.go applyIgnoreDifferences keeps the
// Application's value of an ignored field).
func TestExampleApplicationSetLetsRestoresPauseSync(t *testing.T) {
	data, err := os.ReadFile("../../examples/argocd/applicationset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Spec struct {
			IgnoreApplicationDifferences []struct {
				JSONPointers []string `yaml:"jsonPointers"`
			} `yaml:"ignoreApplicationDifferences"`
		}
	}
	if err := yaml.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	for _, d := range set.Spec.IgnoreApplicationDifferences {
		for _, p := range d.JSONPointers {
			if p == "/spec/syncPolicy/automated/enabled" || p == "/spec/syncPolicy/automated" || p == "/spec/syncPolicy" {
				return
			}
		}
	}
	t.Error("examples/argocd/applicationset.yaml does not ignore /spec/syncPolicy/automated/enabled: a restore plan's pause of automated sync would be undone")
}

// The scripts run in bash to their end when every command succeeds: each
// tool is a stub that logs its arguments and answers the queries the
// scripts make (the Application's automated sync is off once paused, a
// Restore completes, nothing is left after the deletions, the copy's
// target holds no VM of that name).
func TestRestoreScriptsRun(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		conform.Skipped(t, "no bash")
	}
	dir := t.TempDir()
	stub := `#!/usr/bin/env bash
echo "$(basename "$0") $*" >> "$STUB_LOG"
# a VM the copy's target namespace does not hold
if [[ "$*" =~ get\ virtualmachine\ [a-z0-9-]+$ ]]; then exit 1; fi
case "$*" in
  *"jsonpath={.spec.syncPolicy.automated.enabled}"*) echo "${STUB_ENABLED:-false}" ;;
  *"jsonpath={.status.sync.status}"*) echo "${STUB_SYNC:-Synced}" ;;
  *"jsonpath={.status.phase}"*) echo Completed ;;
  # when this cluster's Schedule last took a backup itself (none by default)
  *"jsonpath={.status.lastBackup}"*) echo "${STUB_LAST_BACKUP:-}" ;;
  # the volumes a VirtualMachineSnapshot holds (STUB_INCLUDED, default
  # db-1's two disks)
  *"includedVolumes"*) printf '%s\n' ${STUB_INCLUDED-rootdisk data} ;;
esac
exit 0
`
	for _, tool := range []string{"kubectl", "argocd", "velero", "virtctl", "sleep"} {
		if err := os.WriteFile(filepath.Join(dir, tool), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"shop/archive"},
		{"shop/web-1", "--to", "shop-drill"},
		{"--tenant", "shop"},
		{"--tenant", "shop", "--other-cluster"},
		{"--snapshot", "db-1-2026-12-01-upgrade", "shop/db-1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			script := planScript(t, args...)
			log := filepath.Join(t.TempDir(), "log")
			cmd := exec.Command(bash, "-c", script)
			cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "STUB_LOG="+log)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the script stops: %v\n%s", err, out)
			}
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			calls := strings.Split(strings.TrimSpace(string(data)), "\n")
			if args[0] != "shop/web-1" {
				// An ApplicationSet that switches automated sync back on
				// stops the script before anything is deleted.
				cmd := exec.Command(bash, "-c", script)
				cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "STUB_LOG="+log+".2", "STUB_ENABLED=true")
				if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "switched back on") {
					t.Errorf("the script goes on with automated sync on: %v\n%s", err, out)
				}
				if data, _ := os.ReadFile(log + ".2"); strings.Contains(string(data), " delete ") || strings.Contains(string(data), " create ") {
					t.Errorf("the script changed the cluster with automated sync on:\n%s", data)
				}
			}
			if args[0] != "shop/web-1" {
				// An Application still OutOfSync after the restore stops
				// the script before automated sync is switched back on.
				cmd := exec.Command(bash, "-c", script)
				cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "STUB_LOG="+log+".4", "STUB_SYNC=OutOfSync")
				if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "is not Synced") {
					t.Errorf("the script hands back an OutOfSync Application: %v\n%s", err, out)
				}
				if data, _ := os.ReadFile(log + ".4"); strings.Contains(string(data), `"op":"remove","path":"/spec/syncPolicy/automated/enabled"`) ||
					!strings.Contains(string(data), "argocd app diff") {
					t.Errorf("the script switched automated sync back on for an OutOfSync Application, or showed no diff:\n%s", data)
				}
			}
			if len(args) > 2 && args[2] == "--other-cluster" {
				// This cluster's Schedule has taken a backup of its own
				// (Velero v1.18 pkg/controller/schedule_controller.go
				// submitBackup sets status.lastBackup): a Restore by
				// scheduleName could take it (restore_controller.go
				// mostRecentCompletedBackup), so the script stops before
				// any Restore.
				cmd := exec.Command(bash, "-c", script)
				cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "STUB_LOG="+log+".5", "STUB_LAST_BACKUP=2026-12-02T02:00:00Z")
				if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "has taken a backup on this cluster") {
					t.Errorf("the script restores by scheduleName after this cluster's Schedule took a backup: %v\n%s", err, out)
				}
				if data, _ := os.ReadFile(log + ".5"); strings.Contains(string(data), " create ") {
					t.Errorf("the script created a Restore after this cluster's Schedule took a backup:\n%s", data)
				}
			}
			if args[0] == "--snapshot" {
				// A ready snapshot without a copy of the data disk (KubeVirt
				// v1.8.4 pkg/storage/snapshot/snapshot.go getSnapshotPVC: no
				// VolumeSnapshotClass for its storage class) stops the
				// script before the VM is stopped or restored.
				cmd := exec.Command(bash, "-c", script)
				cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "STUB_LOG="+log+".3", "STUB_INCLUDED=rootdisk")
				if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "holds no copy of disk data") {
					t.Errorf("the script goes on with a snapshot that holds no copy of disk data: %v\n%s", err, out)
				}
				if data, _ := os.ReadFile(log + ".3"); strings.Contains(string(data), "virtctl -n shop stop") || strings.Contains(string(data), " create ") {
					t.Errorf("the script stopped or restored the VM from a snapshot without its data disk:\n%s", data)
				}
			}
			if (len(args) < 2 || args[1] != "--to") && !strings.HasPrefix(calls[len(calls)-1], "argocd app wait") {
				t.Errorf("the script does not end by waiting for the hand-back to sync: last call %q", calls[len(calls)-1])
			}
		})
	}
}

// A drill's script writes the Evidence it proves: run in bash with stub
// tools (kubectl answers the OpenShift Virtualization CSV a cluster on
// 4.22.2 has), the Evidence file it writes, committed beside the tenant,
// accepts the VM's restore drill in virtc report; without DRILL_LINK it
// writes none.
func TestRestoreDrillWritesEvidence(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		conform.Skipped(t, "no bash")
	}
	tools := t.TempDir()
	stub := `#!/usr/bin/env bash
case "$*" in
  *"get clusterserviceversions"*) printf 'kubevirt-hyperconverged-operator.v4.22.2\n' ;;
  *"jsonpath={.spec.syncPolicy.automated.enabled}"*) echo false ;;
  *"jsonpath={.status.sync.status}"*) echo Synced ;;
  *"jsonpath={.status.phase}"*) echo Completed ;;
esac
if [[ "$*" =~ get\ virtualmachine\ [a-z0-9-]+$ ]]; then exit 1; fi
exit 0
`
	for _, tool := range []string{"kubectl", "argocd", "velero", "virtctl", "sleep"} {
		if err := os.WriteFile(filepath.Join(tools, tool), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"shop/archive"}, {"shop/web-1", "--to", "shop-drill"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			script := planScript(t, args...)
			repo := t.TempDir()
			inputs, err := os.ReadFile("../../golden/restore-in-place/inputs.yaml")
			if err != nil {
				t.Fatal(err)
			}
			facts := "---\napiVersion: virtc.dev/v1alpha1\nkind: PlatformFacts\nmetadata: {name: east}\nspec: {version: 4.22.2}\n"
			if err := os.WriteFile(filepath.Join(repo, "inputs.yaml"), append(inputs, facts...), 0o644); err != nil {
				t.Fatal(err)
			}
			runIn := func(env ...string) []byte {
				cmd := exec.Command(bash, "-c", script)
				cmd.Dir = repo
				cmd.Env = append(append(os.Environ(), "PATH="+tools+":"+os.Getenv("PATH"), "DRILL_BY=drill-bot"), env...)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("the script stops: %v\n%s", err, out)
				}
				return out
			}
			runIn("DRILL_LINK=")
			if files, _ := filepath.Glob(filepath.Join(repo, "restore-drill-*.yaml")); len(files) != 0 {
				t.Fatalf("without DRILL_LINK the script wrote %v", files)
			}
			runIn("DRILL_LINK=https://ci.example.com/drills/42")
			files, _ := filepath.Glob(filepath.Join(repo, "restore-drill-*.yaml"))
			if len(files) != 1 {
				t.Fatalf("the script wrote %v, want one Evidence file", files)
			}
			vm := strings.TrimPrefix(args[0], "shop/")
			code, out, errOut := run("report", "--format", "json", repo)
			if code != ExitOK {
				t.Fatalf("report: exit %d: %s", code, errOut)
			}
			type row struct {
				VM       string   `json:"vm"`
				Accepted []string `json:"evidenceAccepted"`
			}
			var rows []row
			if err := json.Unmarshal([]byte(out), &rows); err != nil {
				t.Fatal(err)
			}
			name := strings.TrimSuffix(filepath.Base(files[0]), ".yaml")
			i := slices.IndexFunc(rows, func(r row) bool { return r.VM == vm })
			if i < 0 {
				t.Fatalf("report has no VM %s", vm)
			}
			if !slices.Contains(rows[i].Accepted, "restore-drill: "+name) {
				t.Errorf("%s: the drill's Evidence %s does not accept its restore drill: accepted %v", vm, name, rows[i].Accepted)
			}
		})
	}
}
