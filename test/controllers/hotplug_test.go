package controllers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// hotplugIntents is a tenant with one VM, app, whose disk scratch is an
// existing claim hot-plugged into it (spec.disks[].hotpluggable): KubeVirt
// leaves it out of the virt-launcher pod and mounts it through a hot-plug
// attachment pod (pkg/storage/types/volume.go GetHotplugVolumes).
func hotplugIntents(tenant string) map[string]string {
	return map[string]string{
		"tenant.yaml": fmt.Sprintf("apiVersion: virtc.dev/v1alpha1\nkind: Tenant\nmetadata:\n  name: %s\nspec:\n  access:\n    admin: [%s-admins]\n", tenant, tenant),
		"vm-app.yaml": fmt.Sprintf(`apiVersion: virtc.dev/v1alpha1
kind: VM
metadata:
  name: app
  namespace: %s
spec:
  size: u1.small
  image: fedora
  runStrategy: Always
  disks:
    - name: scratch
      size: 10Gi
      existingClaim: scratch
      hotpluggable: true
      bus: scsi
`, tenant),
	}
}

// scratchClaim is the existing claim app hot-plugs, on the catalog's
// default storage (Ceph RBD, raw block, ReadWriteMany), as its owner made
// it before naming it in Git.
func scratchClaim(namespace string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": "scratch", "namespace": namespace},
		"spec": map[string]any{"storageClassName": DefaultStorageClass, "volumeMode": "Block",
			"accessModes": []any{"ReadWriteMany"}, "resources": map[string]any{"requests": map[string]any{"storage": "10Gi"}}}}
}

// attachmentPods are the hot-plug attachment pods of namespace by role:
// "source" for the running VMI's (owned by its virt-launcher pod,
// pkg/virt-controller/watch/vmi/volume-hotplug.go createAttachmentPod),
// "target" for a migration target's (labelled with the migration,
// watch/migration/migration.go createAttachmentPod). Both carry label
// kubevirt.io=hotplug-disk (pkg/virt-controller/services/template.go
// RenderHotplugAttachmentPodTemplate).
func (e *env) attachmentPods(namespace string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, p := range e.list("/api/v1/namespaces/" + namespace + "/pods?labelSelector=kubevirt.io%3Dhotplug-disk") {
		md, _ := p["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		role := "source"
		if labels["kubevirt.io/migrationJobUID"] != nil {
			role = "target"
		}
		out[role] = p
	}
	return out
}

// attachmentRefusal is virt-controller's report that the API server
// refused an attachment pod for the quota: a Warning FailedCreate on the
// VMI, "Error creating attachment pod: ... exceeded quota" (both
// createAttachmentPod functions above).
func (e *env) attachmentRefusal(namespace string) string {
	for _, ev := range e.list("/api/v1/namespaces/" + namespace + "/events") {
		obj, _ := ev["involvedObject"].(map[string]any)
		msg, _ := ev["message"].(string)
		if ev["reason"] == "FailedCreate" && obj["kind"] == "VirtualMachineInstance" &&
			strings.Contains(msg, "attachment pod") && strings.Contains(msg, "exceeded quota") {
			return msg
		}
	}
	return ""
}

// runHotplug applies the hot-plug tenant's output to namespace (spec.hard
// entries replaced by override) with its claim, runs app (the node
// stand-in), waits for virt-controller's attachment pod, then migrates app
// with target pods started, so that virt-controller renders the target's
// attachment pod too. It returns the pods by role ("launcher", "target",
// "source" and "target" attachment pods as "attachment" and
// "target-attachment") and virt-controller's refusal of an attachment pod
// ("" if none): with a refusal it stops at the refused pod.
func (e *env) runHotplug(t *testing.T, nodes *Node, namespace string, override map[string]string) (map[string]map[string]any, string) {
	t.Helper()
	objs := buildFiles(t, namespace, hotplugIntents(namespace))
	e.applyTenantWith(objs, namespace, override, func() {
		if err := create(e.ctx, e.cp, []any{scratchClaim(namespace)}); err != nil {
			t.Fatal(err)
		}
	})
	pods := map[string]map[string]any{}
	wait := func(what string, done func() bool) {
		t.Helper()
		deadline := time.Now().Add(waitFor)
		for {
			for _, sync := range []func() error{
				func() error { return e.clones.Sync(e.ctx, namespace) },
				func() error { return e.volumes.Sync(e.ctx, namespace) },
				func() error { return nodes.Sync(e.ctx, namespace) },
			} {
				if err := sync(); err != nil {
					t.Fatal(err)
				}
			}
			if done() {
				return
			}
			if time.Now().After(deadline) {
				out, _ := e.cp.Kubectl(e.ctx, nil, "get", "vmi,vmim,pvc,pods,events", "-n", namespace, "-o", "wide")
				t.Fatalf("%s: %s: not reached after %v\n%s", namespace, what, waitFor, out)
			}
			time.Sleep(time.Second)
		}
	}
	refusal := ""
	wait("app running with its attachment pod, or the pod refused", func() bool {
		running := false
		for _, v := range e.list("/apis/kubevirt.io/v1/namespaces/" + namespace + "/virtualmachineinstances") {
			status, _ := v["status"].(map[string]any)
			running = running || (name(v) == "app" && status["phase"] == "Running")
		}
		pods["launcher"] = e.launchers(namespace)["app"]
		pods["attachment"] = e.attachmentPods(namespace)["source"]
		refusal = e.attachmentRefusal(namespace)
		return refusal != "" || running && pods["attachment"] != nil
	})
	if refusal != "" {
		return pods, refusal
	}
	nodes.StartTargets = true
	defer func() { nodes.StartTargets = false }()
	if err := create(e.ctx, e.cp, []any{map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
		"metadata": map[string]any{"name": "drain-app", "namespace": namespace}, "spec": map[string]any{"vmiName": "app"}}}); err != nil {
		t.Fatal(err)
	}
	wait("the migration target's attachment pod, or its refusal", func() bool {
		for _, p := range e.list("/api/v1/namespaces/" + namespace + "/pods?labelSelector=kubevirt.io%2FmigrationJobUID") {
			md, _ := p["metadata"].(map[string]any)
			labels, _ := md["labels"].(map[string]any)
			if labels["kubevirt.io"] == "virt-launcher" {
				pods["target"] = p
			}
		}
		pods["target-attachment"] = e.attachmentPods(namespace)["target"]
		refusal = e.attachmentRefusal(namespace)
		return refusal != "" || pods["target-attachment"] != nil
	})
	return pods, refusal
}

// TestQuotaAdmitsAttachmentPods: a VM with a hot-plugged volume, run by the node stand-in,
// makes the real virt-controller render its hot-plug attachment pod, and
// the migration of that VM a second one beside the target virt-launcher
// (migration.go createAttachmentPod, once the target pod is ready): under
// virtc's ResourceQuota the API server admits all four pods, and virtc's
// requests.cpu is exactly what they request plus one attachment pod more,
// the spare a change of the hot-plugged volumes needs (volume-hotplug.go
// cleanupAttachmentPods: the new pod starts before the old one goes;
// internal/sizing Usage.AttachmentPods). With requests.cpu one millicore below
// what the four rendered pods request, the API server refuses the last
// one, the target's attachment pod, as virt-controller reports on the
// VMI. CPU is the step: attachment pods request 10m of it and 2M of
// memory (services/renderresources.go hotplugContainerRequests), and
// virtc rounds memory up to whole MiB.
func TestQuotaAdmitsAttachmentPods(t *testing.T) {
	e := startWith(t, true)
	const ns = "quota-hotplug"
	objs := buildFiles(t, ns, hotplugIntents(ns))
	if err := PrepareGoldenImages(e.ctx, e.cp, objs); err != nil {
		t.Fatal(err)
	}
	nodes, err := RegisterNodes(e.ctx, e.cp, e.kv.HandlerKubeconfig, 3)
	if err != nil {
		t.Fatal(err)
	}
	quotas := find(objs, "ResourceQuota")
	if len(quotas) != 1 {
		t.Fatalf("%s: want one ResourceQuota, got %v", ns, quotas)
	}
	h := hard(t, quotas[0])
	quotaCPU := resource.MustParse(fmt.Sprint(h["requests.cpu"]))
	quotaMem := resource.MustParse(fmt.Sprint(h["requests.memory"]))
	pods, refusal := e.runHotplug(t, nodes, ns, nil)
	if refusal != "" {
		t.Fatalf("%s: virtc's quota (requests.cpu %s, requests.memory %s) refused an attachment pod: %s\n%s", ns, quotaCPU.String(), quotaMem.String(), refusal, e.podsAndEvents(ns))
	}
	var usedCPU, usedMem resource.Quantity
	for _, role := range []string{"launcher", "attachment", "target", "target-attachment"} {
		p := pods[role]
		if p == nil {
			t.Fatalf("%s: no %s pod", ns, role)
		}
		mem, cpu := podRequests(p)
		usedCPU.Add(cpu)
		usedMem.Add(mem)
		t.Logf("%s: %s pod %s admitted (requests memory %s, cpu %s)", ns, role, name(p), mem.String(), cpu.String())
	}
	spareMem, spareCPU := podRequests(pods["attachment"])
	withSpare := usedCPU.DeepCopy()
	withSpare.Add(spareCPU)
	t.Logf("virtc's quota: requests.cpu %s, requests.memory %s; the four pods request %s and %s, one attachment pod %s and %s",
		quotaCPU.String(), quotaMem.String(), usedCPU.String(), usedMem.String(), spareCPU.String(), spareMem.String())
	if quotaCPU.Cmp(withSpare) != 0 {
		t.Errorf("%s: virtc's requests.cpu %s is not what the pods virt-controller rendered request plus one spare attachment pod (%s)", ns, quotaCPU.String(), withSpare.String())
	}
	memWithSpare := usedMem.DeepCopy()
	memWithSpare.Add(spareMem)
	if quotaMem.Cmp(memWithSpare) < 0 {
		t.Errorf("%s: virtc's requests.memory %s is below what the pods virt-controller rendered request plus one spare attachment pod (%s)", ns, quotaMem.String(), memWithSpare.String())
	}
	if t.Failed() {
		return
	}

	const short = "quota-hotplug-short"
	shortCPU := usedCPU.DeepCopy()
	shortCPU.Sub(resource.MustParse("1m"))
	t.Logf("%s: requests.cpu %s (1m below the four pods' %s)", short, shortCPU.String(), usedCPU.String())
	pods, refusal = e.runHotplug(t, nodes, short, map[string]string{"requests.cpu": shortCPU.String()})
	switch {
	case refusal == "":
		t.Errorf("%s: requests.cpu %s admitted the target's attachment pod; want it refused\n%s", short, shortCPU.String(), e.podsAndEvents(short))
	case pods["launcher"] == nil || pods["attachment"] == nil || pods["target"] == nil:
		t.Errorf("%s: refused before the target's attachment pod (launcher %v, attachment %v, target %v): %s\n%s",
			short, pods["launcher"] != nil, pods["attachment"] != nil, pods["target"] != nil, refusal, e.podsAndEvents(short))
	default:
		t.Logf("%s: the target's attachment pod refused: %s", short, refusal)
	}
}

// podsAndEvents is namespace's pods with their CPU requests, its quota and
// its events, for a failure message.
func (e *env) podsAndEvents(namespace string) string {
	out, _ := e.cp.Kubectl(e.ctx, nil, "get", "pods", "-n", namespace, "-o",
		"custom-columns=NAME:.metadata.name,ROLE:.metadata.labels.kubevirt\\.io,CPU:.spec.containers[*].resources.requests.cpu,VOLUMES:.spec.volumes[*].name,PHASE:.status.phase,CREATED:.metadata.creationTimestamp,DELETED:.metadata.deletionTimestamp")
	quota, _ := e.cp.Kubectl(e.ctx, nil, "get", "resourcequota", "-n", namespace, "-o", "jsonpath={.items[*].status}")
	events, _ := e.cp.Kubectl(e.ctx, nil, "get", "events", "-n", namespace, "--sort-by=.lastTimestamp")
	return string(out.Stdout) + string(out.Stderr) + "\nquota status: " + string(quota.Stdout) + "\n" + string(events.Stdout)
}
