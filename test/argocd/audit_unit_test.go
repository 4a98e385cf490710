package argocd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// TestCheckOrder holds checkOrder to what it promises on audit logs made
// up here: it passes the order of waves (claims before VMs in a wave),
// also when a later sync writes an object again, and fails a first write
// of a later wave that starts before an earlier one ended, a VM before its
// wave's claim and, for a first sync, an object never written; dry runs,
// status writes, other clients and refused writes are not Argo CD's
// writes, but a refused write of an object that must come first shows
// when Argo CD sent it (a claim refused, then its wave's VM written, then
// the claim written by the retry is in order).
func TestCheckOrder(t *testing.T) {
	objs, err := conformance.ParseObjects([]byte(`apiVersion: v1
kind: Namespace
metadata: {name: shop, annotations: {argocd.argoproj.io/sync-wave: "0"}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: web01-data, namespace: shop, annotations: {argocd.argoproj.io/sync-wave: "2"}}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: web01, namespace: shop, annotations: {argocd.argoproj.io/sync-wave: "2"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{name: "test", resources: map[string]string{
		"v1/Namespace": "/namespaces", "v1/PersistentVolumeClaim": "/persistentvolumeclaims",
		"kubevirt.io/v1/VirtualMachine": "kubevirt.io/virtualmachines",
	}}
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	type ev struct {
		verb, group, resource, ns, name, agent, uri string
		start, end                                  int
		code                                        int
		sub                                         string
	}
	const argo = "argocd-application-controller/v3.6.1 (linux/amd64)"
	write := func(events ...ev) string {
		var b strings.Builder
		for _, e := range events {
			if e.code == 0 {
				e.code = 201
			}
			line, _ := json.Marshal(map[string]any{
				"stage": "ResponseComplete", "verb": e.verb, "userAgent": e.agent, "requestURI": e.uri,
				"objectRef":                map[string]any{"resource": e.resource, "namespace": e.ns, "name": e.name, "apiGroup": e.group, "subresource": e.sub},
				"responseStatus":           map[string]any{"code": e.code},
				"requestReceivedTimestamp": at(e.start), "stageTimestamp": at(e.end),
			})
			b.Write(line)
			b.WriteByte('\n')
		}
		f := filepath.Join(t.TempDir(), "audit.log")
		if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	ns := ev{verb: "create", resource: "namespaces", name: "shop", agent: argo, start: 10, end: 20}
	pvc := ev{verb: "create", resource: "persistentvolumeclaims", ns: "shop", name: "web01-data", agent: argo, start: 100, end: 110}
	vm := ev{verb: "create", group: "kubevirt.io", resource: "virtualmachines", ns: "shop", name: "web01", agent: argo, start: 120, end: 130}
	shift := func(e ev, start int) ev { e.end, e.start = start+(e.end-e.start), start; return e }
	for _, tc := range []struct {
		name   string
		events []ev
		all    bool
		want   string // in the error; "" for none
	}{
		{"in order", []ev{ns, pvc, vm}, true, ""},
		{"in order, listed out of order", []ev{vm, ns, pvc}, true, ""},
		{"a later wave starts before an earlier one ends", []ev{shift(ns, 105), pvc, vm}, true, "Namespace /shop (wave 0) first tried until"},
		{"the VM before its wave's claim", []ev{ns, shift(vm, 50), pvc}, true, "PersistentVolumeClaim shop/web01-data (wave 2) first tried until"},
		{"a claim refused, the VM, the claim written by the retry", []ev{ns, func() ev { e := pvc; e.code = 403; return e }(), vm, shift(pvc, 300)}, true, ""},
		{"the VM before its wave's claim was tried, though refused", []ev{ns, shift(vm, 50), func() ev { e := pvc; e.code = 403; return e }(), shift(pvc, 300)}, true, "PersistentVolumeClaim shop/web01-data (wave 2) first tried until"},
		{"a claim only refused, first sync", []ev{ns, func() ev { e := pvc; e.code = 403; return e }(), vm}, true, "PersistentVolumeClaim shop/web01-data (wave 2) was never written"},
		{"an object never written, first sync", []ev{ns, pvc}, true, "VirtualMachine shop/web01 (wave 2) was never written"},
		{"an object never written, later sync", []ev{pvc, vm}, false, ""},
		{"a later sync writing an object again does not move it", []ev{ns, pvc, vm, shift(ns, 200)}, true, ""},
		{"a dry run is not a write", []ev{ns, pvc, func() ev {
			e := shift(vm, 50)
			e.uri = "/apis/kubevirt.io/v1/namespaces/shop/virtualmachines?dryRun=All"
			return e
		}(), vm}, true, ""},
		{"another client's write is not Argo CD's", []ev{ns, pvc, func() ev { e := shift(vm, 50); e.agent = "kubectl/v1.37.2"; return e }(), vm}, true, ""},
		{"a status write is not the object's", []ev{ns, pvc, func() ev { e := shift(vm, 50); e.sub = "status"; e.verb = "patch"; return e }(), vm}, true, ""},
		{"a refused write is not a write", []ev{ns, pvc, func() ev { e := shift(vm, 50); e.code = 403; return e }(), vm}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.auditLog = write(tc.events...)
			_, err := checkOrder(c, objs, base, tc.all)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestSafetyPointFirst holds safetyPointFirst to what it promises: the
// snapshot created by Argo CD (a sync of an earlier commit) before Argo CD's
// first write of the VM since the change passes, also when the change's
// sync patches the snapshot again after the VM (wave 3 after wave 2); it
// fails a VM update before the snapshot's create (the order of a
// snapshotBefore added in the same commit as the change: the snapshot at
// wave 3 comes after the VM), a snapshot never created, one created by
// another client than Argo CD, a create the server refused, and a change
// Argo CD never wrote.
func TestSafetyPointFirst(t *testing.T) {
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	const snap, vm = "snapshot.kubevirt.io/virtualmachinesnapshots shop/web01-2026-12-01-upgrade", "kubevirt.io/virtualmachines shop/web01"
	w := func(verb, key string, start int) write {
		res, name, _ := strings.Cut(key, " ")
		return write{Verb: verb, Resource: res, Name: name, Start: at(start), End: at(start + 5)}
	}
	change := at(1000)
	for _, tc := range []struct {
		name   string
		writes []write
		want   string // in the error; "" for none
	}{
		{"the snapshot synced first, the VM changed later", []write{w("patch", vm, 100), w("create", snap, 200), w("patch", vm, 1100), w("patch", snap, 1200)}, ""},
		{"the VM changed before the snapshot was created", []write{w("patch", vm, 1100), w("create", snap, 1200)}, "the safety point comes after the change it guards"},
		{"the create still running when the VM write starts", []write{w("create", snap, 1098), w("patch", vm, 1100)}, "the safety point comes after the change it guards"},
		{"no snapshot", []write{w("patch", vm, 1100)}, "was never created by Argo CD"},
		{"only a patch of the snapshot", []write{w("patch", snap, 200), w("patch", vm, 1100)}, "was never created by Argo CD"},
		{"the change never written", []write{w("create", snap, 200), w("patch", vm, 100)}, "was not written by Argo CD since"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := safetyPointFirst(tc.writes, snap, vm, change)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}

	// from an audit log: another client's create and a refused create are
	// not Argo CD's
	const argo = "argocd-application-controller/v3.6.1 (linux/amd64)"
	line := func(verb, agent string, code, start int, resource, group, name string) string {
		b, _ := json.Marshal(map[string]any{
			"stage": "ResponseComplete", "verb": verb, "userAgent": agent, "requestURI": "/apis/" + group,
			"objectRef":                map[string]any{"resource": resource, "namespace": "shop", "name": name, "apiGroup": group},
			"responseStatus":           map[string]any{"code": code},
			"requestReceivedTimestamp": at(start), "stageTimestamp": at(start + 5),
		})
		return string(b) + "\n"
	}
	for _, tc := range []struct {
		name, log, want string
	}{
		{"Argo CD's create", line("create", argo, 201, 200, "virtualmachinesnapshots", "snapshot.kubevirt.io", "web01-2026-12-01-upgrade") +
			line("patch", argo, 200, 1100, "virtualmachines", "kubevirt.io", "web01"), ""},
		{"kubectl's create", line("create", "kubectl/v1.37.2", 201, 200, "virtualmachinesnapshots", "snapshot.kubevirt.io", "web01-2026-12-01-upgrade") +
			line("patch", argo, 200, 1100, "virtualmachines", "kubevirt.io", "web01"), "was never created by Argo CD"},
		{"a refused create", line("create", argo, 422, 200, "virtualmachinesnapshots", "snapshot.kubevirt.io", "web01-2026-12-01-upgrade") +
			line("patch", argo, 200, 1100, "virtualmachines", "kubevirt.io", "web01"), "was never created by Argo CD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "audit.log")
			if err := os.WriteFile(f, []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			writes, err := argoWrites(f, base)
			if err != nil {
				t.Fatal(err)
			}
			err = safetyPointFirst(writes, snap, vm, change)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}
