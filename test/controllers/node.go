package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	virtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/test/conformance"
)

// Node is a stand-in for what runs on a node and cannot run here (no
// kubelet, no container runtime, no KVM): the scheduler's binding, the
// kubelet's pod status and virt-handler's VMI status, for the pods and
// VMIs virt-controller creates. It does only what the suite asserts on:
//
//   - RegisterNodes creates Ready Nodes carrying the labels virt-handler's
//     node labeller sets (pkg/virt-handler/node-labeller/node_labeller.go:
//     kubevirt.io/schedulable, the host-model CPU), which virt-controller
//     reads for a migration target pod's node selector
//     (pkg/virt-controller/watch/migration/migration.go
//     prepareNodeSelectorForHostCpuModel);
//   - Sync binds each unbound virt-launcher pod of a namespace to a node
//     (kube-scheduler, pkg/scheduler/schedule_one.go bind: the pods/binding
//     subresource), a migration target pod to a node other than its
//     source's, and marks a launcher pod (a target pod only with
//     StartTargets) Running with its containers started and ready (kubelet,
//     pkg/kubelet/status/status_manager.go); it ends a deleted pod as the
//     kubelet does once its containers are gone;
//   - it marks a VMI that virt-controller has handed over (phase
//     Scheduled, pkg/virt-controller/watch/vmi/lifecycle.go) Running,
//     Ready and LiveMigratable with the SELinux context of a node without
//     SELinux, as virt-handler does once the domain runs
//     (pkg/virt-handler/vm.go updateVMIStatus and updateSELinuxContext),
//     writing as virt-handler's ServiceAccount.
type Node struct {
	cp *conformance.ControlPlane
	// kubeconfig authenticates as virt-handler (KubeVirt.HandlerKubeconfig).
	kubeconfig string
	Names      []string
	// next spreads VMs over all nodes but the last, which takes the
	// migration targets: KubeVirt's per-node limit of outbound migrations
	// then holds back none of the migrations the suite starts.
	next int
	// notReady holds the VMs (namespace/name) whose guest the test says is
	// not ready: their launcher pod's compute container runs but is not
	// ready, as the kubelet reports a container whose readiness probe
	// (virtc's guest-agent probe) fails.
	mu       sync.Mutex
	notReady map[string]bool
	// crashing holds the VMs whose launcher fails before the domain
	// runs, every time (SetCrashing); guestOS the OS name the guest
	// agent of a VM reports (SetGuestOS).
	crashing map[string]bool
	guestOS  map[string]string
	// StartTargets marks migration target pods Running and Ready as well,
	// as the kubelet does once their containers start: virt-controller
	// then renders the target's hot-plug attachment pod for a VMI with
	// hot-plugged volumes (pkg/virt-controller/watch/migration/
	// migration.go sync, MigrationPending: createAttachmentPod once the
	// target pod is ready). The hand-off to virt-handler still never
	// comes: the migration waits for that attachment pod to be ready
	// (handleTargetPodHandoff), and nothing here starts attachment pods.
	StartTargets bool
	// guests, when set (SetGuests), boots the guests of the VMs it names
	// instead of standing in for them: their status comes from the guest.
	guests *Guests
}

// SetGuests has g boot the guests of the VMs it names (nil: none).
func (nd *Node) SetGuests(g *Guests) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	nd.guests = g
}

// Guests are the guests the node boots (nil: none).
func (nd *Node) Guests() *Guests {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.guests
}

// SetGuestReady says whether the guest of VM namespace/name answers its
// readiness probe (default: it does).
func (nd *Node) SetGuestReady(namespace, name string, ready bool) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.notReady == nil {
		nd.notReady = map[string]bool{}
	}
	if ready {
		delete(nd.notReady, namespace+"/"+name)
	} else {
		nd.notReady[namespace+"/"+name] = true
	}
}

func (nd *Node) guestReady(namespace, name string) bool {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return !nd.notReady[namespace+"/"+name]
}

// LaunchFailsAfter is how long the launcher pod of a crashing VM runs
// before it fails: what a node takes to start a virt-launcher pod whose
// image it has (the pod sandbox, the containers, virt-launcher's
// initialisation) and virt-handler to try the domain. The VM is Starting
// meanwhile (its VMI Scheduled), so that kubevirt_vm_info's status
// changes between CrashLoopBackOff and Starting as on a cluster, where
// each lasts longer than a scrape interval.
const LaunchFailsAfter = 20 * time.Second

// SetCrashing has the launcher of VM namespace/name fail before its domain
// runs, each time virt-controller starts it: its pod runs, not ready,
// for LaunchFailsAfter, the VMI stays Scheduled (no virt-handler reports
// the domain running), then the kubelet reports the compute container
// exited with an error and the pod Failed
// (pkg/kubelet/kubelet_pods.go getPhase: every container terminated, one
// with a non-zero exit code), and virt-controller then fails the VMI,
// which never ran, and backs the VM off (KubeVirt v1.8.4
// pkg/virt-controller/watch/vm/vm.go syncStartFailureStatus: a VMI final
// without a Running phase is a start failure; calculateStartBackoffTime).
func (nd *Node) SetCrashing(namespace, name string, crashing bool) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.crashing == nil {
		nd.crashing = map[string]bool{}
	}
	nd.crashing[namespace+"/"+name] = crashing
}

func (nd *Node) isCrashing(namespace, name string) bool {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.crashing[namespace+"/"+name]
}

// SetGuestOS has the running VMI of VM namespace/name report osName as
// its guest OS, as virt-handler copies what the guest agent answers
// (pkg/virt-handler/vm.go updateGuestInfoFromDomain) and virt-controller
// exports it as kubevirt_vmi_info's guest_os_name
// (pkg/monitoring/metrics/virt-controller/vmistats_collector.go).
func (nd *Node) SetGuestOS(namespace, name, osName string) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.guestOS == nil {
		nd.guestOS = map[string]string{}
	}
	nd.guestOS[namespace+"/"+name] = osName
}

func (nd *Node) osOf(namespace, name string) string {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.guestOS[namespace+"/"+name]
}

// HostModel is the host-model CPU of the stand-in nodes.
const HostModel = "Skylake-Client-IBRS"

// RegisterNodes creates n Ready nodes, node-1 .. node-n.
func RegisterNodes(ctx context.Context, cp *conformance.ControlPlane, handlerKubeconfig string, n int) (*Node, error) {
	nd := &Node{cp: cp, kubeconfig: handlerKubeconfig}
	var items []any
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("node-%d", i)
		nd.Names = append(nd.Names, name)
		items = append(items, map[string]any{"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": name, "labels": map[string]any{
				"kubernetes.io/hostname":                            name,
				"kubevirt.io/schedulable":                           "true",
				"host-model-cpu.node.kubevirt.io/" + HostModel:      "true",
				"cpu-model.node.kubevirt.io/" + HostModel:           "true",
				"cpu-vendor.node.kubevirt.io/Intel":                 "true",
				"cpu-model-migration.node.kubevirt.io/" + HostModel: "true",
			}}})
	}
	if err := create(ctx, cp, items); err != nil {
		return nil, err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for _, name := range nd.Names {
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{
			"conditions":  []any{map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": now, "lastTransitionTime": now}},
			"allocatable": map[string]any{"cpu": "64", "memory": "512Gi", "pods": "110", "devices.kubevirt.io/kvm": "1k"},
			"capacity":    map[string]any{"cpu": "64", "memory": "512Gi", "pods": "110", "devices.kubevirt.io/kvm": "1k"},
		}})
		if _, err := cp.MustKubectl(ctx, nil, "patch", "node", name, "--subresource=status", "--type=merge", "-p", string(patch)); err != nil {
			return nil, err
		}
	}
	return nd, nil
}

type pod struct {
	Metadata struct {
		DeletionTimestamp string            `json:"deletionTimestamp"`
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels"`
		Annotations       map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		NodeName   string `json:"nodeName"`
		Containers []struct {
			Name string `json:"name"`
		} `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		StartTime  string `json:"startTime"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// ready is the status of the pod's Ready condition ("" without one).
func (p pod) ready() string {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status
		}
	}
	return ""
}

// Sync runs one round of the stand-in over namespace.
func (nd *Node) Sync(ctx context.Context, namespace string) error {
	pods, err := conformance.List[pod](ctx, nd.cp, "/api/v1/namespaces/"+namespace+"/pods?labelSelector=kubevirt.io%3Dvirt-launcher")
	if err != nil {
		return err
	}
	// Source nodes by VMI, to place a migration target elsewhere.
	source := map[string]string{}
	for _, p := range pods {
		if p.Metadata.Labels["kubevirt.io/migrationJobUID"] == "" && p.Spec.NodeName != "" {
			source[p.Metadata.Labels["vm.kubevirt.io/name"]] = p.Spec.NodeName
		}
	}
	for _, p := range pods {
		node := p.Spec.NodeName
		gu := nd.Guests().byUID(p.Metadata.Labels["kubevirt.io/created-by"])
		if p.Metadata.DeletionTimestamp != "" {
			// A booted guest shuts down first (the kubelet's SIGTERM to
			// the compute container, virt-handler's shutdown of the domain); its
			// VMI then ends Succeeded, as virt-handler reports a domain
			// shut off with reason shutdown.
			if gu != nil {
				if !gu.Exited() {
					gu.Stop()
					continue
				}
				if err := nd.guestEnded(ctx, gu); err != nil {
					return err
				}
			}
			// The kubelet confirms a deleted pod's end (the pod may be
			// gone already, its deletion finished since the list).
			if _, err := nd.cp.MustKubectl(ctx, nil, "delete", "pod", p.Metadata.Name, "-n", namespace, "--grace-period=0", "--force", "--wait=false", "--ignore-not-found"); err != nil {
				return err
			}
			continue
		}
		if node == "" {
			node = nd.Names[nd.next%(len(nd.Names)-1)]
			nd.next++
			if src, ok := source[p.Metadata.Labels["vm.kubevirt.io/name"]]; ok && p.Metadata.Labels["kubevirt.io/migrationJobUID"] != "" {
				node = nd.Names[len(nd.Names)-1]
				if node == src {
					return fmt.Errorf("node stand-in: migration target of %s/%s has no other node", namespace, p.Metadata.Name)
				}
			}
			binding, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Binding",
				"metadata": map[string]any{"name": p.Metadata.Name, "namespace": namespace},
				"target":   map[string]any{"apiVersion": "v1", "kind": "Node", "name": node}})
			if gone, err := nd.podRequest(ctx, "POST", namespace, p.Metadata.Name, "/binding", "application/json", binding); err != nil {
				return err
			} else if gone {
				continue
			}
		}
		// A migration target pod stays bound but not started (unless
		// StartTargets): no virt-handler takes the hand-off, and the suite
		// cancels the migration before it (migration.go
		// handlePreHandoffMigrationCancel).
		if p.Metadata.Labels["kubevirt.io/migrationJobUID"] != "" && !nd.StartTargets {
			continue
		}
		if p.Status.Phase == "Failed" || p.Status.Phase == "Succeeded" {
			continue
		}
		crashing := nd.isCrashing(namespace, p.Metadata.Labels["vm.kubevirt.io/name"])
		if crashing && p.Status.Phase == "Running" {
			if started, err := time.Parse(time.RFC3339, p.Status.StartTime); err == nil && time.Since(started) >= LaunchFailsAfter {
				if err := nd.failPod(ctx, namespace, p); err != nil {
					return err
				}
				// virt-handler: the launcher is gone and the VMI never
				// went from Scheduled to Running (pkg/virt-handler/vm.go
				// calculateVmPhaseForStatusReason), so it fails it;
				// virt-controller leaves a Scheduled VMI to virt-handler
				// (pkg/virt-controller/watch/vmi/lifecycle.go).
				patch, _ := json.Marshal([]any{
					map[string]any{"op": "test", "path": "/metadata/uid", "value": p.Metadata.Labels["kubevirt.io/created-by"]},
					map[string]any{"op": "test", "path": "/status/phase", "value": "Scheduled"},
					map[string]any{"op": "replace", "path": "/status/phase", "value": "Failed"},
				})
				// a VMI gone or past Scheduled since is left as it is
				_ = nd.patchVMI(ctx, namespace, p.Metadata.Labels["vm.kubevirt.io/name"], patch)
			}
			continue
		}
		guestReady := nd.guestReady(namespace, p.Metadata.Labels["vm.kubevirt.io/name"]) && !crashing
		if nd.Guests().boots(namespace, p.Metadata.Labels["vm.kubevirt.io/name"]) {
			// virtc's readiness probe: the guest agent answers guest-ping
			_, _, guestReady = gu.state()
		}
		want := "True"
		if !guestReady {
			want = "False"
		}
		if p.Status.Phase == "Running" && p.ready() == want {
			continue
		}
		now := time.Now().UTC().Format(time.RFC3339)
		var statuses []any
		for _, c := range p.Spec.Containers {
			ready := guestReady || c.Name != "compute"
			statuses = append(statuses, map[string]any{"name": c.Name, "ready": ready, "started": true, "restartCount": 0,
				"image": "stand-in", "imageID": "", "state": map[string]any{"running": map[string]any{"startedAt": now}}})
		}
		ready := map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": now}
		containersReady := map[string]any{"type": "ContainersReady", "status": "True", "lastTransitionTime": now}
		if !guestReady {
			// the kubelet's words (pkg/kubelet/status/generate.go
			// GeneratePodReadyCondition), which virt-controller copies to
			// the VMI's Ready (lifecycle.go syncReadyConditionFromPod)
			for _, c := range []map[string]any{ready, containersReady} {
				c["status"], c["reason"], c["message"] = "False", "ContainersNotReady", "containers with unready status: [compute]"
			}
		}
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{
			"phase": "Running", "qosClass": "Burstable", "podIP": "10.128.0.10", "hostIP": "192.168.0.1", "startTime": now,
			"conditions": []any{
				map[string]any{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
				map[string]any{"type": "Initialized", "status": "True", "lastTransitionTime": now},
				containersReady,
				ready,
			},
			"containerStatuses": statuses,
		}})
		if _, err := nd.podRequest(ctx, "PATCH", namespace, p.Metadata.Name, "/status", "application/merge-patch+json", patch); err != nil {
			return err
		}
	}
	return nd.syncVMIs(ctx, namespace)
}

// failPod reports a launcher pod whose compute container exited with an
// error before the domain ran: Failed, as the kubelet reports a pod whose
// containers all ended, one of them in error (restartPolicy Never).
func (nd *Node) failPod(ctx context.Context, namespace string, p pod) error {
	now := time.Now().UTC().Format(time.RFC3339)
	var statuses []any
	for _, c := range p.Spec.Containers {
		code, reason := 0, "Completed"
		if c.Name == "compute" {
			code, reason = 1, "Error"
		}
		statuses = append(statuses, map[string]any{"name": c.Name, "ready": false, "started": false, "restartCount": 0,
			"image": "stand-in", "imageID": "", "state": map[string]any{"terminated": map[string]any{
				"exitCode": code, "reason": reason, "startedAt": now, "finishedAt": now}}})
	}
	notReady := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "False", "reason": "PodFailed", "lastTransitionTime": now}
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{
		"phase": "Failed", "qosClass": "Burstable", "hostIP": "192.168.0.1", "startTime": now,
		"conditions": []any{
			map[string]any{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "Initialized", "status": "True", "lastTransitionTime": now},
			notReady("ContainersReady"), notReady("Ready"),
		},
		"containerStatuses": statuses,
	}})
	_, err := nd.podRequest(ctx, "PATCH", namespace, p.Metadata.Name, "/status", "application/merge-patch+json", patch)
	return err
}

// podRequest sends a bind or a status update for a pod of the list. Pods
// change under the node agent as under a kubelet: virt-controller deletes a
// migration's target pod when the migration ends or is cancelled, an
// unbound pod at once. gone reports a pod deleted since the list (404), or
// being deleted or bound since (409, for a binding): the next round sees
// it as it is, as kube-scheduler drops a binding whose pod is gone.
func (nd *Node) podRequest(ctx context.Context, method, namespace, name, sub, contentType string, body []byte) (gone bool, err error) {
	path := "/api/v1/namespaces/" + namespace + "/pods/" + name + sub
	code, data, err := nd.cp.Request(ctx, method, path, contentType, body, nil)
	switch {
	case err != nil:
		return false, err
	case code/100 == 2:
		return false, nil
	case code == http.StatusNotFound || code == http.StatusConflict && sub == "/binding":
		return true, nil
	}
	return false, fmt.Errorf("node stand-in: %s %s: %d %s: %s", method, path, code, http.StatusText(code), bytes.TrimSpace(data))
}

func (nd *Node) syncVMIs(ctx context.Context, namespace string) error {
	vmis, err := conformance.List[json.RawMessage](ctx, nd.cp, "/apis/kubevirt.io/v1/namespaces/"+namespace+"/virtualmachineinstances")
	if err != nil {
		return err
	}
	for _, raw := range vmis {
		var v struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Status struct {
				Phase      string           `json:"phase"`
				Conditions []map[string]any `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if nd.Guests().boots(namespace, v.Metadata.Name) {
			if err := nd.syncGuest(ctx, raw, v.Status.Conditions); err != nil {
				return err
			}
			continue
		}
		if v.Status.Phase != "Scheduled" || nd.isCrashing(namespace, v.Metadata.Name) {
			continue
		}
		if err := nd.markRunning(ctx, namespace, v.Metadata.Name, v.Status.Conditions, true); err != nil {
			return err
		}
	}
	return nil
}

// markRunning reports a VMI virt-controller handed over (Scheduled)
// Running and LiveMigratable, and Ready unless the guest's readiness
// comes from its pod, as virt-handler does once the domain runs.
func (nd *Node) markRunning(ctx context.Context, namespace, name string, conds []map[string]any, ready bool) error {
	now := time.Now().UTC().Format(time.RFC3339)
	if ready {
		conds = append(conds, map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": now, "lastProbeTime": nil})
	}
	conds = append(conds, map[string]any{"type": "LiveMigratable", "status": "True", "lastTransitionTime": now, "lastProbeTime": nil})
	ops := []any{
		map[string]any{"op": "test", "path": "/status/phase", "value": "Scheduled"},
		map[string]any{"op": "replace", "path": "/status/phase", "value": "Running"},
		map[string]any{"op": "add", "path": "/status/conditions", "value": conds},
		// A node without SELinux (pkg/virt-handler/vm.go
		// updateSELinuxContext); the migration controller waits for it.
		map[string]any{"op": "add", "path": "/status/selinuxContext", "value": "none"},
	}
	if os := nd.osOf(namespace, name); os != "" {
		ops = append(ops, map[string]any{"op": "add", "path": "/status/guestOSInfo", "value": map[string]any{"name": os, "id": strings.ToLower(strings.Fields(os)[0])}})
	}
	patch, _ := json.Marshal(ops)
	err := nd.patchVMI(ctx, namespace, name, patch)
	if err != nil {
		// the patch's test of the phase failed: the VMI is gone or past
		// Scheduled since the list, and the next round sees it as it is
		code, data, gerr := nd.cp.Request(ctx, "GET", "/apis/kubevirt.io/v1/namespaces/"+namespace+"/virtualmachineinstances/"+name, "", nil, nil)
		var v virtv1.VirtualMachineInstance
		if gerr == nil && (code == http.StatusNotFound || code == http.StatusOK && json.Unmarshal(data, &v) == nil && v.Status.Phase != virtv1.Scheduled) {
			return nil
		}
	}
	return err
}

// patchVMI patches a VMI as virt-handler's ServiceAccount.
func (nd *Node) patchVMI(ctx context.Context, namespace, name string, patch []byte) error {
	// The last --kubeconfig wins: virt-handler's ServiceAccount.
	_, err := nd.cp.MustKubectl(ctx, nil, "--kubeconfig="+nd.kubeconfig, "patch", "virtualmachineinstance.kubevirt.io", name, "-n", namespace, "--type=json", "-p", string(patch))
	return err
}

// syncGuest is virt-handler for a VMI whose guest boots (raw: as the
// list has it): it starts the guest once virt-controller hands the VMI
// over (Scheduled), reports it Running once the domain runs and
// AgentConnected as the guest agent channel says, and stops it when the
// VMI is deleted.
func (nd *Node) syncGuest(ctx context.Context, raw []byte, conds []map[string]any) error {
	var vmi virtv1.VirtualMachineInstance
	if err := json.Unmarshal(raw, &vmi); err != nil {
		return err
	}
	uid, phase := string(vmi.UID), vmi.Status.Phase
	gu := nd.Guests().byUID(uid)
	if vmi.DeletionTimestamp != nil || vmi.IsFinal() {
		if gu != nil {
			gu.Stop()
		}
		return nil
	}
	if phase != virtv1.Scheduled && phase != virtv1.Running {
		return nil
	}
	if gu == nil {
		if phase != virtv1.Scheduled || nd.Guests().hasFailed(uid) {
			return nil
		}
		if _, err := nd.Guests().start(ctx, nd.cp, &vmi, raw); err != nil {
			err = fmt.Errorf("node agent: booting VMI %s/%s: %v", vmi.Namespace, vmi.Name, err)
			nd.Guests().fail(uid, err)
			return err
		}
		return nil
	}
	if gu.Exited() {
		// the guest ended on its own: the VMI's end, as virt-handler
		// reports it
		return nd.guestEnded(ctx, gu)
	}
	started, agent, _ := gu.state()
	if phase == virtv1.Scheduled {
		if !started {
			return nil
		}
		// Ready is virt-controller's, from the pod's readiness
		return nd.markRunning(ctx, vmi.Namespace, vmi.Name, conds, false)
	}
	has := -1
	for i, c := range conds {
		if c["type"] == "AgentConnected" {
			has = i
		}
	}
	switch {
	case agent && has < 0:
		conds = append(conds, map[string]any{"type": "AgentConnected", "status": "True", "lastProbeTime": time.Now().UTC().Format(time.RFC3339), "lastTransitionTime": nil})
	case !agent && has >= 0:
		conds = append(conds[:has], conds[has+1:]...)
	default:
		return nil
	}
	patch, _ := json.Marshal([]any{
		map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": vmi.ResourceVersion},
		map[string]any{"op": "replace", "path": "/status/conditions", "value": conds},
	})
	// a conflict (virt-controller wrote since the list) waits for the
	// next round
	_ = nd.patchVMI(ctx, vmi.Namespace, vmi.Name, patch)
	return nil
}

// guestEnded reports a booted guest's end on its VMI, as virt-handler
// does once the domain is shut off (pkg/virt-handler/vm.go
// calculateVmPhaseForStatusReason: reason shutdown → Succeeded, a domain
// destroyed after the grace period → Failed).
func (nd *Node) guestEnded(ctx context.Context, gu *Guest) error {
	ns, name, _ := strings.Cut(gu.VMI, "/")
	phase := "Failed"
	for _, ev := range gu.Events() {
		if ev.Event == "stopped" && ev.OK {
			phase = "Succeeded"
		}
	}
	raw, err := nd.cp.Get(ctx, "/apis/kubevirt.io/v1/namespaces/"+ns+"/virtualmachineinstances/"+name)
	if err != nil {
		return nil // gone already
	}
	var v virtv1.VirtualMachineInstance
	if err := json.Unmarshal(raw, &v); err != nil || string(v.UID) != gu.UID || v.IsFinal() {
		return err
	}
	patch, _ := json.Marshal([]any{
		map[string]any{"op": "test", "path": "/metadata/uid", "value": gu.UID},
		map[string]any{"op": "replace", "path": "/status/phase", "value": phase},
	})
	_ = nd.patchVMI(ctx, ns, name, patch)
	return nil
}
