package argocd

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// liveSnapshot is what the scenario reads of a VirtualMachineSnapshot:
// what KubeVirt's snapshot controller wrote (v1.8.4
// pkg/storage/snapshot/snapshot.go updateSnapshotStatus).
type liveSnapshot struct {
	Status *struct {
		Phase                             string   `json:"phase"`
		ReadyToUse                        *bool    `json:"readyToUse"`
		SourceUID                         string   `json:"sourceUID"`
		VirtualMachineSnapshotContentName string   `json:"virtualMachineSnapshotContentName"`
		Indications                       []string `json:"indications"`
		SnapshotVolumes                   *struct {
			IncludedVolumes []string `json:"includedVolumes"`
			ExcludedVolumes []string `json:"excludedVolumes"`
		} `json:"snapshotVolumes"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
		Conditions conditions `json:"conditions"`
	} `json:"status"`
}

// snapshotLabel is the label of web01's safety point in the scenario.
const snapshotLabel = "2026-12-01-upgrade"

var sizeLine = regexp.MustCompile(`(?m)^  size: (\S+)$`)

// (README scenario 11) snapshotBefore, the procedure docs/data-protection.md "VM snapshots" gives: commit 1
// sets web01's snapshotBefore alone and syncs; commit 2 changes web01's
// size. The API server's audit log must show Argo CD creating the
// VirtualMachineSnapshot (wave 3, commit 1's sync) before it writes the
// VM's change (commit 2's sync), and both syncs complete.
//
// In between, the real snapshot controller of virt-controller takes the
// snapshot (KubeVirt v1.8.4 pkg/storage/snapshot/snapshot.go): it locks
// the VM (status.snapshotInProgress, finalizer
// snapshot.kubevirt.io/snapshot-source-protection: source.go Lock, once
// every claim is Bound and populated), creates the
// VirtualMachineSnapshotContent with the VM's spec and one VolumeBackup
// per claim whose storage class has a VolumeSnapshotClass
// (createContent, getSnapshotPVC), creates those VolumeSnapshots, and
// marks the snapshot Succeeded and readyToUse once they are. This cluster
// has no CSI snapshotter and no VolumeSnapshotClass (as a cluster whose
// storage has none): getSnapshotPVC skips every claim with only a log
// line, so the content has no volume at all, counts as created and ready
// at once, and the snapshot reaches Succeeded and readyToUse: true with
// every disk listed in status.snapshotVolumes.excludedVolumes
// (updateSnapshotSnapshotableVolumes). A ready snapshot is therefore no
// proof that the disks were captured: the procedure's check looks at
// includedVolumes (docs/data-protection.md "VM snapshots"; restore-plan --snapshot refuses
// such a snapshot). Argo CD does not wait for any of this: it has no
// health check for a VirtualMachineSnapshot (argo-cd v3.6.1
// resource_customizations has none for snapshot.kubevirt.io), so commit
// 1's sync completes once the snapshot is applied; the procedure's
// person is the one who waits.
// unlockWait bounds how long virt-controller may take to unlock a VM
// after its snapshot's final phase.
const unlockWait = 5 * time.Minute

func (e *env) snapshotBeforeChange() {
	home := e.home
	if home.kv == nil {
		e.t.Fatal("KubeVirt does not run in in-cluster")
	}
	vmPath := appDir + "/web01.yaml"
	cur := e.read(vmPath)
	m := sizeLine.FindStringSubmatch(cur)
	if m == nil {
		e.t.Fatalf("%s: no size line", vmPath)
	}
	withPoint := strings.Replace(cur, "spec:\n", "spec:\n  snapshotBefore: "+snapshotLabel+"\n", 1)

	// commit 1: the safety point alone
	since := time.Now()
	rev := e.commit("web01: a snapshot before the upgrade", map[string]string{vmPath: withPoint})
	e.refresh()
	a := e.waitApp("snapshotBefore synced", synced(rev))
	e.t.Logf("snapshotBefore synced in %s: %s", time.Since(since).Round(time.Millisecond), a)
	name := "web01-" + snapshotLabel
	snap := e.waitSnapshot(name)
	st := snap.Status
	e.t.Logf("VirtualMachineSnapshot shop/%s as virt-controller left it: phase %s, readyToUse %v, content %q, indications %v, included %v, excluded %v, conditions %+v",
		name, st.Phase, st.ReadyToUse != nil && *st.ReadyToUse, st.VirtualMachineSnapshotContentName, st.Indications,
		st.SnapshotVolumes.IncludedVolumes, st.SnapshotVolumes.ExcludedVolumes, st.Conditions)
	if st.Phase != "Succeeded" || st.ReadyToUse == nil || !*st.ReadyToUse || st.VirtualMachineSnapshotContentName == "" {
		e.t.Errorf("snapshot %s: phase %s, readyToUse %v, content %q; want Succeeded, ready, with a content", name, st.Phase, st.ReadyToUse, st.VirtualMachineSnapshotContentName)
	}
	if len(st.SnapshotVolumes.IncludedVolumes) != 0 || !strings.Contains(strings.Join(st.SnapshotVolumes.ExcludedVolumes, ","), "rootdisk") {
		e.t.Errorf("snapshot %s without a VolumeSnapshotClass: included %v, excluded %v; want no volume included and rootdisk excluded",
			name, st.SnapshotVolumes.IncludedVolumes, st.SnapshotVolumes.ExcludedVolumes)
	}
	// the VM is unlocked again: its spec may change. Unlocking takes
	// virt-controller a finalizer patch and a status update of the VM
	// (kubevirt v1.8.4 pkg/storage/snapshot/source.go Unlock); when the
	// status update conflicts with the VM controller's own writes, the
	// snapshot is requeued with the work queue's growing backoff, which on
	// a loaded machine took longer than a sync's wait: allow unlockWait.
	type lockState struct {
		Metadata struct {
			Finalizers []string `json:"finalizers"`
		} `json:"metadata"`
		Status struct {
			SnapshotInProgress *string `json:"snapshotInProgress"`
		} `json:"status"`
	}
	unlockStart := time.Now()
	deadline := unlockStart.Add(unlockWait)
	for {
		// A fresh value each read: json.Unmarshal leaves a field the
		// document lacks as it was, so a snapshotInProgress read once
		// would never be cleared by the unlocked VM's status, which omits
		// it (the cause of this scenario's timeouts in CI: the audit log
		// showed virt-controller's unlock, a finalizer patch and a status
		// update, milliseconds after the snapshot succeeded).
		var vm lockState
		e.liveJSON("/apis/kubevirt.io/v1/namespaces/shop/virtualmachines/web01", &vm)
		locked := vm.Status.SnapshotInProgress != nil
		for _, f := range vm.Metadata.Finalizers {
			locked = locked || f == "snapshot.kubevirt.io/snapshot-source-protection"
		}
		if !locked {
			e.t.Logf("web01 unlocked %s after the snapshot's final phase", time.Since(unlockStart).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			e.lockDiagnosis(since)
			e.t.Fatalf("web01 still locked by the snapshot after %s: snapshotInProgress %v, finalizers %v", unlockWait, vm.Status.SnapshotInProgress, vm.Metadata.Finalizers)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// commit 2: the change the safety point guards
	size := "u1.medium"
	if m[1] == size {
		size = "u1.large"
	}
	change := time.Now()
	rev = e.commit("web01: "+size, map[string]string{vmPath: strings.Replace(withPoint, m[0], "  size: "+size, 1)})
	e.refresh()
	a = e.waitApp("the change after the snapshot", synced(rev))
	e.t.Logf("the change synced in %s: %s", time.Since(change).Round(time.Millisecond), a)
	e.wantInstancetype("shop", "web01", size)
	writes, err := argoWrites(home.auditLog, since)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := safetyPointFirst(writes, "snapshot.kubevirt.io/virtualmachinesnapshots shop/"+name, "kubevirt.io/virtualmachines shop/web01", change); err != nil {
		e.t.Error(err)
	} else {
		e.t.Logf("audit log: Argo CD created VirtualMachineSnapshot shop/%s before it wrote web01's change", name)
	}
	e.checkOrder(home, e.built("argocd/clusters/east", "all", ""), change, false)
	// the snapshot is still the one taken before the change
	if again := e.waitSnapshot(name); again.Status.SourceUID != st.SourceUID || again.Status.VirtualMachineSnapshotContentName != st.VirtualMachineSnapshotContentName {
		e.t.Errorf("snapshot %s changed with the VM: content %q, was %q", name, again.Status.VirtualMachineSnapshotContentName, st.VirtualMachineSnapshotContentName)
	}
}

// waitSnapshot waits until virt-controller has brought VirtualMachineSnapshot
// shop/name to a final phase (Succeeded or Failed: KubeVirt fails one that
// misses its spec.failureDeadline, 5 minutes by default) with its volume
// lists, and returns it.
func (e *env) waitSnapshot(name string) liveSnapshot {
	e.t.Helper()
	s, err := waitLive(e, "/apis/snapshot.kubevirt.io/v1beta1/namespaces/shop/virtualmachinesnapshots/"+name, syncWaitDuration, 500*time.Millisecond, func(s liveSnapshot) bool {
		return s.Status != nil && (s.Status.Phase == "Succeeded" && s.Status.SnapshotVolumes != nil || s.Status.Phase == "Failed")
	})
	if err != nil {
		e.t.Fatalf("VirtualMachineSnapshot shop/%s: no final phase: %v: %+v", name, err, s.Status)
	}
	if s.Status.SnapshotVolumes == nil {
		s.Status.SnapshotVolumes = &struct {
			IncludedVolumes []string `json:"includedVolumes"`
			ExcludedVolumes []string `json:"excludedVolumes"`
		}{}
	}
	return s
}

// lockDiagnosis logs who wrote VM shop/web01 since the scenario began (the
// API server's audit log: user agent, verb, subresource, answer) and what
// virt-controller logged of the snapshot, so that a VM left locked can be
// told apart: a status update of the unlock refused or never retried
// (pkg/storage/snapshot/source.go Unlock), or another writer.
func (e *env) lockDiagnosis(since time.Time) {
	var lines []string
	err := auditEvents(e.home.auditLog, func(ev auditEvent) {
		ref := ev.ObjectRef
		if ev.Stage != "ResponseComplete" || ref == nil || ref.Resource != "virtualmachines" || ref.Namespace != "shop" ||
			ref.Name != "web01" || ev.Verb == "get" || ev.Verb == "list" || ev.Verb == "watch" || ev.RequestReceived.Before(since) {
			return
		}
		code := 0
		if ev.ResponseStatus != nil {
			code = ev.ResponseStatus.Code
		}
		lines = append(lines, fmt.Sprintf("%s %s %s/%s %d %s", ev.RequestReceived.Format("15:04:05.000"), ev.Verb, ref.Resource, ref.Subresource, code, ev.UserAgent))
	})
	if err != nil {
		e.t.Logf("audit log: %v", err)
	}
	e.t.Logf("writes of VM shop/web01 since the snapshot's commit (%d):\n%s", len(lines), strings.Join(lastN(lines, 60), "\n"))
	var logged []string
	if f, err := os.Open(e.home.kv.Controller.Log()); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if l := sc.Text(); strings.Contains(l, "napshot") || strings.Contains(l, "web01") {
				logged = append(logged, l)
			}
		}
		f.Close()
	}
	e.t.Logf("virt-controller (exited: %v) on snapshots and web01 (%d lines, the last 60):\n%s", e.home.kv.Controller.Exited(), len(logged), strings.Join(lastN(logged, 60), "\n"))
	if e.home.kv.Controller.Exited() {
		e.t.Logf("virt-controller's log tail:\n%s", e.home.kv.Controller.Tail())
	}
}

func lastN(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
