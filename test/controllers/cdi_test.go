package controllers

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/test/conformance"
)

// TestCDI lets CDI's real cdi-controller v1.65.0 handle what virtc emits
// for CDI, with stand-ins only for what needs a node, a CSI driver or
// cdi-apiserver (standin.go: Volumes, Clones):
//
//  1. examples/platform's golden images (internal/render/goldenimage.go: per
//     image a registry DataVolume by digest, size only, and a DataSource
//     naming its claim): CDI creates each DataVolume's claim with the
//     access mode and volume mode of the default class's StorageProfile
//     (which its StorageProfile controller writes from the provisioner:
//     pkg/storagecapabilities/storagecapabilities.go), runs the import as
//     an importer pod (ended by the Volumes stand-in), marks the
//     DataVolume Succeeded, and its DataSource controller marks each
//     DataSource Ready only then (pkg/controller/datasource-controller.go
//     handlePvcSource);
//  2. a DataSource naming a claim that does not exist stays not Ready, and
//     a DataVolume cloning it is never cloned: the checks of 1 and 3 can
//     fail; a cross-namespace clone of a Ready DataSource that the clone
//     stand-in does not see stays Pending without a claim, CDI's clone
//     controller failing with "token missing" (why the stand-in exists);
//  3. a tenant's VMs (builtin catalog): virt-controller creates their
//     DataVolumes, the clone stand-in leaves each a populated claim, and
//     CDI adopts it (populatedFor) and marks the DataVolume Succeeded;
//  4. a restored tenant: each VM's root claim exists before the VM, as
//     KubeVirt's restore leaves it (kubevirt v1.8.4 pkg/storage/snapshot/
//     restore.go: annotated cdi.kubevirt.io/storage.populatedFor with its
//     DataVolume's name; virtc's restore plan relies on it,
//     internal/render/restore.go vmRestore): CDI adopts that very claim (same
//     UID) without importing or cloning anything;
//  5. a DataImportCron for a registry URL pinned by digest: CDI creates
//     its poller CronJob and, once the poller (a stand-in) reports the
//     digest, imports "<url>@<digest>", a reference with two digests
//     (pkg/controller/dataimportcron-controller.go newSourceDataVolume),
//     as internal/render/goldenimage.go says.
func TestCDI(t *testing.T) {
	e := start(t)
	dvs := e.cdiGoldenImages(t)
	// 5. what CDI's DataImportCron controller does with an image pinned by
	// digest, which is why virtc imports such images with a DataVolume
	// and emits no DataImportCron (internal/render/goldenimage.go)
	e.pinnedCron(t, dvs)

	vms := e.cdiTenant(t)
	e.cdiRestored(t, vms)
}

// cdiGoldenImages (1): examples/platform's golden images imported by
// cdi-controller, with the StorageProfile CDI writes and DataSources Ready
// once their imports end. It returns the DataVolumes by namespace/name.
func (e *env) cdiGoldenImages(t *testing.T) map[string]conformance.Object {
	t.Helper()
	platform := buildDir(t, filepath.Join(repoRoot, "examples", "platform"))
	var golden []conformance.Object
	dvs := map[string]conformance.Object{} // by namespace/name
	for _, o := range platform {
		if o.Kind == "DataVolume" || o.Kind == "DataSource" {
			golden = append(golden, o)
		}
		if o.Kind == "DataVolume" {
			dvs[o.Namespace+"/"+o.Name] = o
		}
	}
	if len(dvs) == 0 {
		t.Fatal("examples/platform emits no golden-image DataVolume")
	}
	if _, err := conformance.NewCluster(e.cp, t.TempDir()).EnsureNamespaces(e.ctx, golden); err != nil {
		t.Fatal(err)
	}
	e.applyObjects(golden)
	imageNS := golden[0].Namespace
	// CDI's StorageProfile controller creates a StorageProfile per
	// StorageClass (pkg/controller/storageprofile-controller.go)
	var props map[string]any
	for deadline := time.Now().Add(waitFor); props == nil; time.Sleep(500 * time.Millisecond) {
		var profile map[string]any
		if data, err := e.cp.Get(e.ctx, "/apis/cdi.kubevirt.io/v1beta1/storageprofiles/"+DefaultStorageClass); err == nil {
			if err := json.Unmarshal(data, &profile); err != nil {
				t.Fatal(err)
			}
		}
		if props = claimProperties(profile); props == nil && time.Now().After(deadline) {
			t.Fatalf("CDI wrote no StorageProfile %s with status.claimPropertySets in %v: %v", DefaultStorageClass, waitFor, profile)
		}
	}
	t.Logf("StorageProfile %s (by cdi-controller): claimPropertySets[0] = %v", DefaultStorageClass, props)

	// Before any import ends (the Volumes stand-in has not run), each
	// DataSource is not Ready, as CDI says.
	for _, o := range golden {
		if o.Kind != "DataSource" {
			continue
		}
		c := e.waitCondition("/apis/cdi.kubevirt.io/v1beta1/namespaces/"+o.Namespace+"/datasources/"+o.Name, "Ready", func(c map[string]any) bool { return c != nil })
		if c["status"] == "True" {
			t.Errorf("DataSource %s/%s Ready before its import ran: %v", o.Namespace, o.Name, c)
		} else {
			t.Logf("DataSource %s/%s while importing (by cdi-controller): Ready=%v reason %v: %v", o.Namespace, o.Name, c["status"], c["reason"], c["message"])
		}
	}

	importers := map[string]bool{}
	deadline := time.Now().Add(waitFor)
	for {
		for _, p := range e.list("/api/v1/namespaces/" + imageNS + "/pods?labelSelector=cdi.kubevirt.io%3Dimporter") {
			importers[name(p)] = true
		}
		if err := e.volumes.Sync(e.ctx, imageNS); err != nil {
			t.Fatal(err)
		}
		var waiting []string
		for key, o := range dvs {
			dv := e.get("/apis/cdi.kubevirt.io/v1beta1/namespaces/" + o.Namespace + "/datavolumes/" + o.Name)
			if phase(dv) != "Succeeded" {
				waiting = append(waiting, fmt.Sprintf("%s (%s)", key, phase(dv)))
			}
		}
		if len(waiting) == 0 {
			break
		}
		if time.Now().After(deadline) {
			out, _ := e.cp.Kubectl(e.ctx, nil, "get", "dv,pvc,pods,events", "-n", imageNS, "-o", "wide")
			t.Fatalf("golden images: after %v still importing %s\n%s", waitFor, strings.Join(waiting, ", "), out)
		}
		time.Sleep(time.Second)
	}
	t.Logf("importer pods cdi-controller created (ended by the Volumes stand-in): %s", strings.Join(slices.Sorted(maps.Keys(importers)), ", "))
	if len(importers) < len(dvs) {
		t.Errorf("want an importer pod per golden-image DataVolume (%d), saw %d", len(dvs), len(importers))
	}
	for _, o := range dvs {
		dv := e.get("/apis/cdi.kubevirt.io/v1beta1/namespaces/" + o.Namespace + "/datavolumes/" + o.Name)
		if c := condition(dv, "Ready"); c["status"] != "True" {
			t.Errorf("DataVolume %s/%s Succeeded but Ready %v", o.Namespace, o.Name, c)
		}
		claim := e.get("/api/v1/namespaces/" + o.Namespace + "/persistentvolumeclaims/" + o.Name)
		if owner := controllerOf(claim); owner != "DataVolume/"+o.Name {
			t.Errorf("claim %s/%s: controller %q, want its DataVolume (CDI created it)", o.Namespace, o.Name, owner)
		}
		spec, _ := claim["spec"].(map[string]any)
		if spec["storageClassName"] != DefaultStorageClass {
			t.Errorf("claim %s/%s: storageClassName %v, want the default class %s", o.Namespace, o.Name, spec["storageClassName"], DefaultStorageClass)
		}
		if fmt.Sprint(spec["volumeMode"]) != fmt.Sprint(props["volumeMode"]) || fmt.Sprint(spec["accessModes"]) != fmt.Sprint(props["accessModes"]) {
			t.Errorf("claim %s/%s: volumeMode %v accessModes %v, want the StorageProfile's %v", o.Namespace, o.Name, spec["volumeMode"], spec["accessModes"], props)
		}
		want := requestOf(o.Doc["spec"].(map[string]any)["storage"])
		got := requestOf(spec)
		if got.Cmp(want) < 0 {
			t.Errorf("claim %s/%s: requests %s, less than the DataVolume's %s", o.Namespace, o.Name, got.String(), want.String())
		}
		t.Logf("golden image %s/%s: Succeeded, claim by CDI: class %v, %v %v, %s (DataVolume asked %s)",
			o.Namespace, o.Name, spec["storageClassName"], spec["volumeMode"], spec["accessModes"], got.String(), want.String())
	}
	for _, o := range golden {
		if o.Kind != "DataSource" {
			continue
		}
		path := "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + o.Namespace + "/datasources/" + o.Name
		c := e.waitCondition(path, "Ready", func(c map[string]any) bool { return c != nil && c["status"] == "True" })
		ds := e.get(path)
		st, _ := ds["status"].(map[string]any)
		src, _ := st["source"].(map[string]any)
		pvc, _ := src["pvc"].(map[string]any)
		wantPVC := o.Doc["spec"].(map[string]any)["source"].(map[string]any)["pvc"].(map[string]any)["name"]
		if pvc["name"] != wantPVC || dvs[o.Namespace+"/"+fmt.Sprint(wantPVC)].Name == "" {
			t.Errorf("DataSource %s/%s: status.source.pvc %v, want its DataVolume's claim %v", o.Namespace, o.Name, pvc, wantPVC)
		}
		t.Logf("DataSource %s/%s (by cdi-controller): Ready=%v %q, source claim %v", o.Namespace, o.Name, c["status"], c["message"], pvc["name"])
	}

	return dvs
}

// cdiTenant (3, and 2): a tenant's VMs, beside a DataVolume whose
// source does not exist and a clone without cdi-apiserver's token. It
// returns the VMs' names.
func (e *env) cdiTenant(t *testing.T) []string {
	t.Helper()
	const tenant = "cdi-vms"
	objs := build(t, tenant)
	if err := PrepareGoldenImages(e.ctx, e.cp, objs); err != nil {
		t.Fatal(err)
	}
	var vms []string
	for _, vm := range find(objs, "VirtualMachine") {
		vms = append(vms, vm.Name)
	}
	slices.Sort(vms)
	e.applyTenant(objs, tenant, nil)
	// in a namespace of its own: virtc's guardrails refuse, in a tenant's
	// namespace, a DataVolume cloning a DataSource outside the catalog
	const missing, other = "retired-image", "cdi-missing"
	if err := create(e.ctx, e.cp, []any{
		map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": other}},
		map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataSource",
			"metadata": map[string]any{"name": missing, "namespace": ImageNamespace},
			"spec":     map[string]any{"source": map[string]any{"pvc": map[string]any{"name": missing + "-0000000000", "namespace": ImageNamespace}}}},
		map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
			"metadata": map[string]any{"name": "from-" + missing, "namespace": other},
			"spec": map[string]any{
				"sourceRef": map[string]any{"kind": "DataSource", "name": missing, "namespace": ImageNamespace},
				"storage": map[string]any{"accessModes": []string{"ReadWriteMany"}, "volumeMode": "Block", "storageClassName": DefaultStorageClass,
					"resources": map[string]any{"requests": map[string]any{"storage": "30Gi"}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	// a clone of a Ready DataSource that the clone stand-in never sees:
	// what CDI does without cdi-apiserver's clone token
	const untokened = "cdi-untokened"
	if err := create(e.ctx, e.cp, []any{
		map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": untokened}},
		map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
			"metadata": map[string]any{"name": "fedora-clone", "namespace": untokened},
			"spec": map[string]any{
				"sourceRef": map[string]any{"kind": "DataSource", "name": "fedora", "namespace": ImageNamespace},
				"storage": map[string]any{"accessModes": []string{"ReadWriteMany"}, "volumeMode": "Block", "storageClassName": DefaultStorageClass,
					"resources": map[string]any{"requests": map[string]any{"storage": "30Gi"}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	e.settle(tenant, vms)
	if err := e.clones.Sync(e.ctx, other); err != nil {
		t.Fatal(err)
	}
	for _, vm := range find(objs, "VirtualMachine") {
		for _, dvName := range templateNames(vm) {
			e.checkAdopted(t, tenant, dvName, "")
		}
	}
	ds := e.waitCondition("/apis/cdi.kubevirt.io/v1beta1/namespaces/"+ImageNamespace+"/datasources/"+missing, "Ready", func(c map[string]any) bool { return c != nil })
	if ds["status"] == "True" {
		t.Errorf("DataSource %s/%s names a claim that does not exist, yet CDI says Ready: %v", ImageNamespace, missing, ds)
	} else {
		t.Logf("DataSource %s/%s without its claim (by cdi-controller): Ready=%v reason %v: %v", ImageNamespace, missing, ds["status"], ds["reason"], ds["message"])
	}
	if err := e.clones.Sync(e.ctx, other); err != nil {
		t.Fatal(err)
	}
	dv := e.get("/apis/cdi.kubevirt.io/v1beta1/namespaces/" + other + "/datavolumes/from-" + missing)
	if phase(dv) == "Succeeded" || condition(dv, "Ready")["status"] == "True" {
		t.Errorf("DataVolume %s/from-%s clones a DataSource that is not Ready, yet is %s, Ready %v", other, missing, phase(dv), condition(dv, "Ready"))
	} else {
		t.Logf("DataVolume %s/from-%s (by cdi-controller): phase %q, Ready %v", other, missing, phase(dv), condition(dv, "Ready")["status"])
	}

	udv := e.get("/apis/cdi.kubevirt.io/v1beta1/namespaces/" + untokened + "/datavolumes/fedora-clone")
	var uevents []string
	for _, ev := range e.list("/api/v1/namespaces/" + untokened + "/events") {
		uevents = append(uevents, fmt.Sprintf("%v: %v", ev["reason"], ev["message"]))
	}
	_, uerr := e.cp.Get(e.ctx, "/api/v1/namespaces/"+untokened+"/persistentvolumeclaims/fedora-clone")
	log, err := os.ReadFile(e.cdi.Log)
	if err != nil {
		t.Fatal(err)
	}
	var tokenErrors int
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, `"name":"fedora-clone"`) && strings.Contains(line, `"error":"token missing"`) {
			tokenErrors++
		}
	}
	if uerr == nil || phase(udv) == "Succeeded" || tokenErrors == 0 {
		t.Errorf("DataVolume %s/fedora-clone, a cross-namespace clone without cdi-apiserver's token: phase %q, claim lookup error %v, %d \"token missing\" reconcile errors in cdi-controller's log; want no claim, not Succeeded, and that error (why the Clones stand-in exists)", untokened, phase(udv), uerr, tokenErrors)
	} else {
		t.Logf("DataVolume %s/fedora-clone without a clone token (by cdi-controller): phase %q, no claim, %d reconcile errors \"token missing\", events: %s", untokened, phase(udv), tokenErrors, strings.Join(uevents, "; "))
	}

	return vms
}

// cdiRestored (4): a restored tenant: the root claims are there before
// the VMs, and CDI adopts them.
func (e *env) cdiRestored(t *testing.T, vms []string) {
	t.Helper()
	const restored = "cdi-restored"
	robjs := build(t, restored)
	uids := map[string]string{}
	e.applyTenantWith(robjs, restored, nil, func() {
		var claims []conformance.Object
		for _, vm := range find(robjs, "VirtualMachine") {
			spec, _ := vm.Doc["spec"].(map[string]any)
			templates, _ := spec["dataVolumeTemplates"].([]any)
			for _, tpl := range templates {
				tm, _ := tpl.(map[string]any)
				md, _ := tm["metadata"].(map[string]any)
				ts, _ := tm["spec"].(map[string]any)
				st, _ := ts["storage"].(map[string]any)
				dvName, _ := md["name"].(string)
				claim := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
					"metadata": map[string]any{"name": dvName, "namespace": restored,
						"annotations": map[string]any{AnnPopulatedFor: dvName}},
					"spec": map[string]any{"accessModes": st["accessModes"], "volumeMode": st["volumeMode"],
						"storageClassName": st["storageClassName"], "resources": st["resources"]}}
				if err := create(e.ctx, e.cp, []any{claim}); err != nil {
					t.Fatal(err)
				}
				claims = append(claims, conformance.Object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: restored, Name: dvName, Doc: claim})
			}
		}
		if err := bind(e.ctx, e.cp, claims); err != nil {
			t.Fatal(err)
		}
		for _, c := range claims {
			md, _ := e.get("/api/v1/namespaces/" + restored + "/persistentvolumeclaims/" + c.Name)["metadata"].(map[string]any)
			uids[c.Name], _ = md["uid"].(string)
		}
	})
	e.settle(restored, vms)
	for _, vm := range find(robjs, "VirtualMachine") {
		for _, dvName := range templateNames(vm) {
			e.checkAdopted(t, restored, dvName, uids[dvName])
		}
	}
}

// checkAdopted checks that CDI adopted DataVolume namespace/name's claim:
// the DataVolume Succeeded and Ready, marked prePopulated
// (controller-base.go handlePrePopulation), its claim controlled by it and
// (with uid set) still the claim of that UID.
func (e *env) checkAdopted(t *testing.T, namespace, name, uid string) {
	t.Helper()
	path := "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + namespace + "/datavolumes/" + name
	deadline := time.Now().Add(waitFor)
	var dv map[string]any
	for {
		dv = e.get(path)
		if phase(dv) == "Succeeded" && condition(dv, "Ready")["status"] == "True" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("DataVolume %s/%s: phase %q, Ready %v after %v; want Succeeded and Ready", namespace, name, phase(dv), condition(dv, "Ready"), waitFor)
			return
		}
		time.Sleep(time.Second)
	}
	md, _ := dv["metadata"].(map[string]any)
	anns, _ := md["annotations"].(map[string]any)
	if _, ok := anns["cdi.kubevirt.io/storage.prePopulated"]; !ok {
		t.Errorf("DataVolume %s/%s Succeeded without cdi.kubevirt.io/storage.prePopulated: %v", namespace, name, anns)
	}
	claim := e.get("/api/v1/namespaces/" + namespace + "/persistentvolumeclaims/" + name)
	cmd, _ := claim["metadata"].(map[string]any)
	if owner := controllerOf(claim); owner != "DataVolume/"+name {
		t.Errorf("claim %s/%s: controller %q, want its DataVolume (CDI adopts it)", namespace, name, owner)
	}
	if uid != "" && cmd["uid"] != uid {
		t.Errorf("claim %s/%s: UID %v, want the restored claim's %s (CDI must adopt it, not replace it)", namespace, name, cmd["uid"], uid)
	}
	t.Logf("DataVolume %s/%s (by cdi-controller): Succeeded, Ready, prePopulated %v; claim %v controlled by it", namespace, name, anns["cdi.kubevirt.io/storage.prePopulated"], cmd["uid"])
}

// buildDir runs `virtc build dir`.
func buildDir(t *testing.T, dir string) []conformance.Object {
	t.Helper()
	return conformance.VirtcObjects(t, "virtc build "+dir, "build", dir)
}

// get returns the object at path.
func (e *env) get(path string) map[string]any {
	e.t.Helper()
	data, err := e.cp.Get(e.ctx, path)
	if err != nil {
		e.t.Fatal(err)
	}
	var o map[string]any
	if err := json.Unmarshal(data, &o); err != nil {
		e.t.Fatal(err)
	}
	return o
}

// waitCondition waits until ok accepts the condition typ of the object at
// path (nil while it has none) and returns it.
func (e *env) waitCondition(path, typ string, ok func(map[string]any) bool) map[string]any {
	e.t.Helper()
	o := e.waitFor(path, "condition "+typ+" as wanted", func(o map[string]any) bool { return ok(condition(o, typ)) })
	return condition(o, typ)
}

// condition is the status condition typ of o (nil without one).
func condition(o map[string]any, typ string) map[string]any {
	st, _ := o["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] == typ {
			return cm
		}
	}
	return nil
}

func phase(o map[string]any) string {
	st, _ := o["status"].(map[string]any)
	p, _ := st["phase"].(string)
	return p
}

// controllerOf is "Kind/name" of o's controller owner ("" without one).
func controllerOf(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	refs, _ := md["ownerReferences"].([]any)
	for _, r := range refs {
		rm, _ := r.(map[string]any)
		if rm["controller"] == true {
			return fmt.Sprintf("%v/%v", rm["kind"], rm["name"])
		}
	}
	return ""
}

// claimProperties is a StorageProfile's first claim property set.
func claimProperties(profile map[string]any) map[string]any {
	st, _ := profile["status"].(map[string]any)
	sets, _ := st["claimPropertySets"].([]any)
	if len(sets) == 0 {
		return nil
	}
	s, _ := sets[0].(map[string]any)
	return s
}

// requestOf is the storage request of a claim spec or storage spec.
func requestOf(spec any) resource.Quantity {
	s, _ := spec.(map[string]any)
	res, _ := s["resources"].(map[string]any)
	req, _ := res["requests"].(map[string]any)
	q, _ := req["storage"].(string)
	if q == "" {
		return resource.Quantity{}
	}
	return resource.MustParse(q)
}

// templateNames are the names of a VM's DataVolume templates.
func templateNames(vm conformance.Object) []string {
	spec, _ := vm.Doc["spec"].(map[string]any)
	templates, _ := spec["dataVolumeTemplates"].([]any)
	var out []string
	for _, tpl := range templates {
		tm, _ := tpl.(map[string]any)
		md, _ := tm["metadata"].(map[string]any)
		if n, _ := md["name"].(string); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// pinnedCron creates a DataImportCron for the registry URL of
// examples/platform's ubuntu image (pinned by digest), as an HCO
// dataImportCronTemplate would make it, and checks what CDI's
// DataImportCron controller does with it.
func (e *env) pinnedCron(t *testing.T, dvs map[string]conformance.Object) {
	t.Helper()
	var url string
	for _, o := range dvs {
		spec, _ := o.Doc["spec"].(map[string]any)
		src, _ := spec["source"].(map[string]any)
		reg, _ := src["registry"].(map[string]any)
		if u, _ := reg["url"].(string); strings.HasPrefix(o.Name, "ubuntu-") && u != "" {
			url = u
		}
	}
	at := strings.LastIndex(url, "@sha256:")
	if at < 0 {
		t.Fatalf("examples/platform's ubuntu image has no registry URL pinned by digest: %q", url)
	}
	digest := url[at+1:]
	const cron = "ubuntu-pinned"
	if err := create(e.ctx, e.cp, []any{map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataImportCron",
		"metadata": map[string]any{"name": cron, "namespace": ImageNamespace},
		"spec": map[string]any{
			"schedule":          "0 */12 * * *",
			"managedDataSource": cron,
			"template": map[string]any{"spec": map[string]any{
				"source":  map[string]any{"registry": map[string]any{"url": url}},
				"storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "20Gi"}}},
			}},
		}}}); err != nil {
		t.Fatal(err)
	}
	path := "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + ImageNamespace + "/dataimportcrons/" + cron
	c := e.waitCondition(path, "UpToDate", func(c map[string]any) bool { return c != nil })
	if c["status"] == "True" {
		t.Errorf("DataImportCron %s UpToDate before any poll: %v", cron, c)
	}
	t.Logf("DataImportCron %s/%s before its poll (by cdi-controller): UpToDate=%v reason %v: %v", ImageNamespace, cron, c["status"], c["reason"], c["message"])
	var poller string
	for _, cj := range e.list("/apis/batch/v1/namespaces/" + Namespace + "/cronjobs") {
		data, _ := json.Marshal(cj)
		if strings.Contains(string(data), `"-cron","`+cron+`"`) {
			poller = name(cj)
		}
	}
	if poller == "" {
		t.Errorf("CDI created no poller CronJob in %s for DataImportCron %s", Namespace, cron)
	} else {
		t.Logf("poller CronJob %s/%s (by cdi-controller), run here by the PollDigest stand-in", Namespace, poller)
	}
	if err := PollDigest(e.ctx, e.cp, ImageNamespace, cron, digest); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitFor)
	for {
		var imported, dvName string
		for _, dv := range e.list("/apis/cdi.kubevirt.io/v1beta1/namespaces/" + ImageNamespace + "/datavolumes") {
			if !strings.HasPrefix(name(dv), cron+"-") {
				continue
			}
			dvName = name(dv)
			spec, _ := dv["spec"].(map[string]any)
			src, _ := spec["source"].(map[string]any)
			reg, _ := src["registry"].(map[string]any)
			imported, _ = reg["url"].(string)
			t.Logf("DataVolume %s/%s (by cdi-controller) imports %s", ImageNamespace, name(dv), imported)
		}
		if imported != "" {
			if want := url + "@" + digest; imported != want {
				t.Errorf("CDI imports %q for a DataImportCron of %q; internal/render/goldenimage.go says it imports %q (and so emits no DataImportCron for a pinned image)", imported, url, want)
			}
			// the DataSource the controller manages names a claim only
			// once an import has succeeded (dataimportcron-controller.go
			// updateDataSource: status.lastImportedPVC), so until then
			// it has no source and is not Ready
			dsPath := "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + ImageNamespace + "/datasources/" + cron
			c := e.waitCondition(dsPath, "Ready", func(c map[string]any) bool { return c != nil })
			spec, _ := e.get(dsPath)["spec"].(map[string]any)
			src, _ := spec["source"].(map[string]any)
			if len(src) != 0 || c["status"] == "True" {
				t.Errorf("DataSource %s/%s managed by DataImportCron %s while %s imports: source %v, Ready %v; want no source, not Ready", ImageNamespace, cron, cron, dvName, src, c["status"])
			} else {
				t.Logf("DataSource %s/%s (by cdi-controller's DataImportCron controller) while %s imports: no source, Ready=%v reason %v", ImageNamespace, cron, dvName, c["status"], c["reason"])
			}
			return
		}
		if time.Now().After(deadline) {
			out, _ := e.cp.Kubectl(e.ctx, nil, "get", "dataimportcron,dv,datasource", "-n", ImageNamespace, "-o", "yaml")
			t.Fatalf("DataImportCron %s: no DataVolume %v after the poll\n%s", cron, waitFor, out)
		}
		time.Sleep(time.Second)
	}
}
