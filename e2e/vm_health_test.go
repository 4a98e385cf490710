package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const vmHealthKey = "resource.customizations.health.kubevirt.io_VirtualMachine"

// vmObj is a live VirtualMachine as KubeVirt v1.8.4 leaves it: spec with
// the run strategy virtc writes (and the retired label), status with
// printableStatus, created/ready and the conditions the VM controller
// sets (pkg/virt-controller/watch/vm/vm.go: updateStatus, setPrintableStatus,
// syncReadyConditionFromVMI, syncConditions).
func vmObj(runStrategy string, retired bool, status map[string]any) map[string]any {
	labels := map[string]any{"app.kubernetes.io/managed-by": "virtc"}
	if retired {
		labels["virtc.dev/retired"] = "true"
	}
	o := map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "web-1", "namespace": "shop", "labels": labels},
		"spec":     map[string]any{"runStrategy": runStrategy},
	}
	if status != nil {
		o["status"] = status
	}
	return o
}

// vmStatus builds a status: printableStatus, created, ready, conditions.
func vmStatus(printable string, created, ready bool, conds ...any) map[string]any {
	return map[string]any{"printableStatus": printable, "created": created, "ready": ready, "conditions": conds}
}

// Conditions as vm.go writes them. Without a VMI: Ready False/VMINotExists
// (syncReadyConditionFromVMI). With one, the VMI's Ready copied; the VMI
// takes it from the virt-launcher pod's Ready condition once the guest runs
// (pkg/virt-controller/watch/vmi/lifecycle.go syncReadyConditionFromPod),
// so a failing guest-agent readiness probe (virt-probe in the compute
// container, pkg/virt-controller/services/template.go
// wrapGuestAgentPingWithVirtProbe) shows as the pod's
// ContainersNotReady.
var (
	noVMI         = cond("Ready", "False", "VMINotExists", "VMI does not exist")
	readyTrue     = cond("Ready", "True", "", "")
	podNotReady   = cond("Ready", "False", "ContainersNotReady", "containers with unready status: [compute]")
	agentUp       = cond("AgentConnected", "True", "", "")
	pausedTrue    = cond("Paused", "True", "PausedByUser", "VMI was paused by user")
	guestNotReady = cond("Ready", "False", "GuestNotRunning", "Guest VM is not reported as running")
)

type vmHealthCase struct {
	name       string
	obj        map[string]any
	status     string
	msgPattern string
	// bundled is what Argo CD v3.6.1's own check
	// (resource_customizations/kubevirt.io/VirtualMachine/health.lua)
	// says, when it differs in what matters: a status that holds the sync.
	bundled string
}

var vmHealthCases = []vmHealthCase{
	{"no status yet", vmObj("Always", false, nil), "Progressing", "waiting for KubeVirt", ""},
	// Running: the guest runs; Ready from the pod (no probe: the pod is
	// Ready once the guest runs).
	{"running, ready", vmObj("Always", false, vmStatus("Running", true, true, readyTrue, agentUp)), "Healthy", "Running", ""},
	// virtc adds a guest-agent readiness probe for images with the agent
	// (internal/render/placement.go): while the guest boots, or when its agent
	// does not answer, the pod is not Ready and neither is the VM.
	{"running, guest not ready yet", vmObj("Always", false, vmStatus("Running", true, false, podNotReady)), "Healthy", "Running, guest not ready (ContainersNotReady: containers with unready status: [compute]); guest agent not connected", "Progressing"},
	{"running, agent up, probe failing", vmObj("Always", false, vmStatus("Running", true, false, podNotReady, agentUp)), "Healthy", "guest not ready", "Progressing"},
	{"migrating", vmObj("Always", false, vmStatus("Migrating", true, true, readyTrue)), "Healthy", "Migrating", ""},
	// Manual: the owner starts and stops it (virtctl start/stop); stopped
	// is what Manual is for. vm.go isVirtualMachineStatusStopped: no VMI
	// and no start expected.
	{"manual, stopped by its owner", vmObj("Manual", false, vmStatus("Stopped", false, false, noVMI)), "Healthy", "Stopped (runStrategy Manual", "Suspended"},
	{"manual, running", vmObj("Manual", false, vmStatus("Running", true, true, readyTrue)), "Healthy", "Running", ""},
	// Halted (also spec.running: false): Argo CD v3.6.1 fixed this one
	// (argo-cd PR #29664); every release before says Suspended.
	{"halted", vmObj("Halted", false, vmStatus("Stopped", false, false, noVMI)), "Healthy", "Stopped as declared (runStrategy Halted)", ""},
	{"halted, no status yet", vmObj("Halted", false, nil), "Progressing", "waiting for KubeVirt", ""},
	// A retired VM: internal/resolve sets runStrategy Halted and
	// internal/render labels it virtc.dev/retired.
	{"retired", vmObj("Halted", true, vmStatus("Stopped", false, false, noVMI)), "Healthy", "Retired: stopped", ""},
	{"retired, still stopping", vmObj("Halted", true, vmStatus("Stopping", true, false, guestNotReady)), "Progressing", "Stopping (runStrategy Halted)", ""},
	// RerunOnFailure / Once after the guest shut itself down: the VMI
	// Succeeded, isVirtualMachineStatusStopped (vmi.IsFinal()).
	{"rerun on failure, guest shut down", vmObj("RerunOnFailure", false, vmStatus("Stopped", true, false, guestNotReady)), "Healthy", "does not start it again", "Progressing"},
	{"always, stopped for a moment", vmObj("Always", false, vmStatus("Stopped", false, false, noVMI)), "Progressing", "KubeVirt starts it again", "Suspended"},
	{"paused by a person", vmObj("Always", false, vmStatus("Paused", true, false, cond("Ready", "False", "", ""), pausedTrue)), "Healthy", "Paused", "Suspended"},
	{"starting", vmObj("Always", false, vmStatus("Starting", true, false, cond("Ready", "False", "PodNotExists", "virt-launcher pod has not yet been scheduled"))), "Progressing", "Starting (runStrategy Always)", ""},
	{"provisioning the root disk", vmObj("Always", false, vmStatus("Provisioning", false, false, noVMI)), "Progressing", "Provisioning", ""},
	{"waiting for a claim to bind", vmObj("Always", false, vmStatus("WaitingForVolumeBinding", false, false, noVMI)), "Progressing", "WaitingForVolumeBinding", ""},
	{"terminating", func() map[string]any {
		o := vmObj("Always", false, vmStatus("Terminating", true, true, readyTrue))
		o["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T10:00:00Z"
		return o
	}(), "Progressing", "Terminating", ""},
	// Failures (types.go VirtualMachinePrintableStatus; the VMI's
	// PodScheduled False/Unschedulable and Synchronized False with the
	// reasons of pkg/controller/controller.go, copied by syncConditions).
	{"unschedulable", vmObj("Always", false, vmStatus("ErrorUnschedulable", true, false,
		cond("Ready", "False", "PodNotExists", ""), cond("PodScheduled", "False", "Unschedulable", "0/6 nodes are available: 6 Insufficient memory."))),
		"Degraded", "ErrorUnschedulable (Unschedulable: 0/6 nodes are available: 6 Insufficient memory.)", ""},
	{"claim not found", vmObj("Always", false, vmStatus("ErrorPvcNotFound", true, false,
		cond("Synchronized", "False", "FailedPvcNotFound", "PVC shop/web-1-data not found"))), "Degraded", "FailedPvcNotFound: PVC shop/web-1-data not found", ""},
	{"disk import failed", vmObj("Halted", false, vmStatus("DataVolumeError", false, false, noVMI,
		cond("Failure", "True", "FailedDataVolumeImport", "DataVolume web-1-root failed to clone"))), "Degraded", "DataVolumeError (FailedDataVolumeImport", ""},
	{"crash loop", vmObj("Always", false, vmStatus("CrashLoopBackOff", false, false, noVMI)), "Degraded", "CrashLoopBackOff", ""},
	{"host unreachable", vmObj("Always", false, vmStatus("Unknown", true, false, readyTrue)), "Degraded", "KubeVirt cannot tell the VM's state", ""},
	// virt-controller could not create the pod (a ResourceQuota, an
	// admission webhook): pkg/virt-controller/watch/vmi/lifecycle.go
	// returns a sync error with reason FailedCreate, the VMI's
	// Synchronized False; the VM stays Starting.
	{"pod refused by quota", vmObj("Always", false, vmStatus("Starting", true, false,
		cond("Synchronized", "False", "FailedCreate", `pods "virt-launcher-web-1-x" is forbidden: exceeded quota: shop`))), "Degraded", "exceeded quota", "Progressing"},
}

// TestVirtualMachineHealth runs the VirtualMachine check of
// argocd-cm-patch.yaml on every state KubeVirt v1.8.4 reports, and checks
// that no state the intent allows holds a sync: Argo CD moves a running
// task on only when it is Healthy or Degraded (gitops-engine v3.6.1
// pkg/sync/sync_context.go, the loop over running tasks; with more than one
// wave every applied object is such a task).
func TestVirtualMachineHealth(t *testing.T) {
	cases := make([]healthCase, len(vmHealthCases))
	for i, c := range vmHealthCases {
		cases[i] = healthCase{c.name, c.obj, c.status, c.msgPattern}
	}
	runHealthCases(t, vmHealthKey, cases)
}

// TestBundledVirtualMachineHealthHolds runs Argo CD v3.6.1's own
// VirtualMachine check (resource_customizations/kubevirt.io/VirtualMachine/
// health.lua of the argo-cd module test/argocd builds; not copied into this
// repository) on the same objects: it says Suspended or Progressing, which
// hold a sync, where virtc's check lets it go on. Releases before v3.6.1
// (v2.10 to v3.5.1 carry one and the same script) say Suspended for the
// Halted and retired VMs too.
func TestBundledVirtualMachineHealthHolds(t *testing.T) {
	path := bundledVMHealth(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("argo-cd v3.6.1 is not in the module cache (make e2e-argocd downloads it): %v", err)
	}
	n := 0
	for _, tc := range vmHealthCases {
		if tc.bundled == "" {
			continue
		}
		n++
		t.Run(tc.name, func(t *testing.T) {
			status, msg := runHealth(t, string(data), tc.obj)
			if status != tc.bundled {
				t.Errorf("Argo CD v3.6.1's check says %s %q, want %s", status, msg, tc.bundled)
			}
		})
	}
	if n == 0 {
		t.Fatal("no case names the bundled check's status")
	}
}

func bundledVMHealth(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env GOMODCACHE: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "github.com", "argoproj", "argo-cd", "v3@v3.6.1",
		"resource_customizations", "kubevirt.io", "VirtualMachine", "health.lua")
}

// TestDataDiskClaimHealth: a virtc data disk's claim on a
// WaitForFirstConsumer class stays Pending, with no annotation, until the
// scheduler picks a node for its VM's pod and sets
// volume.kubernetes.io/selected-node (kubernetes v1.37
// pkg/controller/volume/persistentvolume/pv_controller.go
// emitEventForUnboundDelayBindingClaim; component-helpers
// storage/volume/pv_helpers.go AnnSelectedNode). Other claims keep Argo
// CD's own health (gitops-engine v3.6.1 pkg/health/health_pvc.go).
func TestDataDiskClaimHealth(t *testing.T) {
	claim := func(virtc bool, phase string, ann map[string]any) map[string]any {
		labels := map[string]any{"app": "db"}
		if virtc {
			labels = map[string]any{"app.kubernetes.io/managed-by": "virtc", "virtc.dev/vm": "web-1", "virtc.dev/backup-policy": "daily"}
		}
		o := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
			"metadata": map[string]any{"name": "web-1-data", "namespace": "shop", "labels": labels, "annotations": ann}}
		if phase != "" {
			o["status"] = map[string]any{"phase": phase}
		}
		return o
	}
	selected := map[string]any{"volume.kubernetes.io/selected-node": "worker-3"}
	runHealthCases(t, "resource.customizations.health.PersistentVolumeClaim", []healthCase{
		{"data disk of a VM never started", claim(true, "Pending", nil), "Healthy", "binds when VM web-1 first starts"},
		{"data disk, no status yet", claim(true, "", nil), "Healthy", "Pending"},
		{"data disk, node selected", claim(true, "Pending", selected), "Progressing", "provisioning for node worker-3"},
		{"data disk bound", claim(true, "Bound", selected), "Healthy", ""},
		{"data disk lost", claim(true, "Lost", nil), "Degraded", "Lost"},
		{"other claim pending", claim(false, "Pending", nil), "Progressing", ""},
		{"other claim bound", claim(false, "Bound", nil), "Healthy", ""},
		{"other claim lost", claim(false, "Lost", nil), "Degraded", ""},
		{"other claim without status", claim(false, "", nil), "Unknown", ""},
	})
}

// TestHealthChecksNeverFail runs every health check of argocd-cm-patch.yaml
// on objects with missing or odd fields: a script that raises an error
// gives Unknown, which holds a sync like Progressing does.
func TestHealthChecksNeverFail(t *testing.T) {
	var cm configMapPatch
	readYAML(t, argocdFile("argocd-cm-patch.yaml"), &cm)
	objs := []map[string]any{
		{},
		{"metadata": map[string]any{}, "spec": map[string]any{}, "status": map[string]any{}},
		{"status": map[string]any{"conditions": []any{map[string]any{"status": "True"}}, "printableStatus": "Stopped", "catalogHealth": []any{map[string]any{}}}},
		{"spec": map[string]any{"running": false}, "status": map[string]any{"printableStatus": "Running", "phase": "Pending", "state": "UpgradeFailed"}},
	}
	n := 0
	for key, script := range cm.Data {
		if !strings.HasPrefix(key, "resource.customizations.health.") {
			continue
		}
		n++
		for i, o := range objs {
			status, _ := runHealth(t, script, o)
			switch status {
			case "Healthy", "Progressing", "Degraded", "Suspended", "Unknown", "Missing":
			default:
				t.Errorf("%s on object %d: status %q", key, i, status)
			}
		}
	}
	if n < 7 {
		t.Errorf("ran %d health checks, want all 7", n)
	}
}

// TestOldestBundledVirtualMachineHealthHolds runs the VirtualMachine check
// Argo CD v2.14.0 bundles (the oldest Argo CD virtc supports; the same
// script through v3.5.1, so in every OpenShift GitOps release for
// OpenShift 4.20 to 4.22), kept in test/argocd/testdata for make
// e2e-argocd, on the states a sync meets: every stopped VM is Suspended,
// Halted and retired ones too, and a running VM whose guest is not ready
// is Progressing; both hold a sync, which is why argocd-cm-patch.yaml
// replaces the check (make e2e-argocd shows the hold with the real
// controllers).
func TestOldestBundledVirtualMachineHealthHolds(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "test", "argocd", "testdata", "argocd-v2.14.0-VirtualMachine-health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
	}{
		{"manual, stopped by its owner", "Suspended"},
		{"halted", "Suspended"},
		{"retired", "Suspended"},
		{"running, guest not ready yet", "Progressing"},
		{"running, ready", "Healthy"},
	} {
		i := slices.IndexFunc(vmHealthCases, func(c vmHealthCase) bool { return c.name == tc.name })
		if i < 0 {
			t.Fatalf("no VM health case %q", tc.name)
		}
		status, msg := runHealth(t, string(data), vmHealthCases[i].obj)
		if status != tc.want {
			t.Errorf("%s: Argo CD v2.14.0's check says %s %q, want %s", tc.name, status, msg, tc.want)
		}
	}
}
