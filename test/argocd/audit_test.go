package argocd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/virtc/virtc/test/conformance"
	"github.com/virtc/virtc/test/controllers"
)

// The order Argo CD applies objects in is read from the API server's audit
// log, not assumed: every write (create, patch, update) at Metadata level,
// with the time the server received the request and the time it answered.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [create, patch, update]
  - level: None
`

// auditArgs are the kube-apiserver flags for an audit log in dir.
func auditArgs(dir string) ([]string, string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, "", err
	}
	log := filepath.Join(dir, "audit.log")
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + log,
		"--audit-log-format=json", "--audit-log-mode=blocking", "--audit-log-maxsize=0"}, log, nil
}

// write is one object write by Argo CD's application controller.
type write struct {
	Verb     string
	Resource string // group/resource
	Name     string // namespace/name
	Start    time.Time
	End      time.Time
	Code     int // the API server's answer
}

type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	UserAgent  string `json:"userAgent"`
	RequestURI string `json:"requestURI"`
	ObjectRef  *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp  time.Time `json:"stageTimestamp"`
}

// argoWrites are the successful writes of Argo CD's application controller
// (its user agent, argo-cd v3.6.1
// cmd/argocd-application-controller/commands/argocd_application_controller.go)
// received at or after since: no dry runs (gitops-engine dry-runs every task
// before it applies it), no status, no Argo CD objects of its own.
func argoWrites(log string, since time.Time) ([]write, error) {
	all, err := argoAttempts(log, since)
	return slices.DeleteFunc(all, func(w write) bool { return w.Code/100 != 2 }), err
}

// argoAttempts are argoWrites and the writes the API server refused.
func argoAttempts(log string, since time.Time) ([]write, error) {
	var out []write
	err := auditEvents(log, func(ev auditEvent) {
		// a create names the object in its body only: the URI's
		// collection is all the audit event keeps
		if !argoWrite(ev, since) || (ev.Verb == "create" && ev.ObjectRef.Name == "") {
			return
		}
		ref := ev.ObjectRef
		out = append(out, write{Verb: ev.Verb, Resource: ref.APIGroup + "/" + ref.Resource,
			Name: ref.Namespace + "/" + ref.Name, Start: ev.RequestReceived, End: ev.StageTimestamp, Code: ev.ResponseStatus.Code})
	})
	return out, err
}

// argoWrite tells whether ev is a write of Argo CD's application
// controller received at or after since, answered, to an object of the
// cluster: no dry run, no status, none of Argo CD's own objects.
func argoWrite(ev auditEvent, since time.Time) bool {
	ref := ev.ObjectRef
	return ev.Stage == "ResponseComplete" && ref != nil && ref.Subresource == "" && ref.APIGroup != "argoproj.io" &&
		strings.HasPrefix(ev.UserAgent, "argocd-application-controller") &&
		!strings.Contains(ev.RequestURI, "dryRun=") && ev.ResponseStatus != nil && !ev.RequestReceived.Before(since)
}

// auditEvents calls f with each event of the audit log.
func auditEvents(log string, f func(auditEvent)) error {
	file, err := os.Open(log)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("%s: %w", log, err)
		}
		f(ev)
	}
	return sc.Err()
}

// planned is one object of a build with the wave it declares.
type planned struct {
	Kind, Resource, Name string
	Wave                 int
}

// plan is the objects of a build with their waves, the resource of each
// kind found in the cluster's discovery.
func plan(c *cluster, objs []conformance.Object) ([]planned, error) {
	var out []planned
	for _, o := range objs {
		res, err := c.resourceOf(o)
		if err != nil {
			return nil, err
		}
		md, _ := o.Doc["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		wave := 0
		if w, ok := ann["argocd.argoproj.io/sync-wave"].(string); ok {
			if wave, err = strconv.Atoi(w); err != nil {
				return nil, fmt.Errorf("%s %s: sync-wave %q", o.Kind, o.Name, w)
			}
		}
		out = append(out, planned{Kind: o.Kind, Resource: res, Name: o.Namespace + "/" + o.Name, Wave: wave})
	}
	return out, nil
}

// resourceOf is the group/resource of an object's kind, from discovery.
func (c *cluster) resourceOf(o conformance.Object) (string, error) {
	gv := o.APIVersion
	group, _, found := strings.Cut(gv, "/")
	path := "/apis/" + gv
	if !found {
		group, path = "", "/api/"+gv
	}
	key := gv + "/" + o.Kind
	if r, ok := c.resources[key]; ok {
		return r, nil
	}
	data, err := c.cp.Get(c.ctx, path)
	if err != nil {
		return "", err
	}
	var l struct {
		Resources []struct{ Name, Kind string }
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return "", err
	}
	for _, r := range l.Resources {
		if r.Kind == o.Kind && !strings.Contains(r.Name, "/") {
			c.resources[key] = group + "/" + r.Name
			return c.resources[key], nil
		}
	}
	return "", fmt.Errorf("%s: kind %s not served by %s", c.name, o.Kind, path)
}

// checkOrder holds Argo CD's writes since a time to the order virtc's
// waves promise (docs/output.md, sync waves): the first write of each object of a
// lower wave answered before the first write of any object of a higher
// wave was received, and inside a wave every PersistentVolumeClaim's
// before any VirtualMachine's (gitops-engine v3.6.1
// pkg/sync/sync_context.go runTasks applies a wave kind group by kind
// group; sync_tasks.go ranks PersistentVolumeClaim, a built-in kind,
// before every custom kind). Each object is judged by its first write: a
// retried or later sync that writes it again does not move it. An object
// that must come first is judged by its first attempt, refused or not:
// runTasks goes on to the next kind group when one fails (the sync fails
// and is retried), so a claim refused while its namespace's new
// ResourceQuota has no status yet (kube-apiserver's quota admission) is
// still sent before its wave's VMs, which are then written, and written
// itself only by the retry. With all,
// every planned object must have been written (a first sync); it returns
// how many were.
func checkOrder(c *cluster, objs []conformance.Object, since time.Time, all bool) (int, error) {
	p, err := plan(c, objs)
	if err != nil {
		return 0, err
	}
	writes, err := argoAttempts(c.auditLog, since)
	if err != nil {
		return 0, err
	}
	type span struct {
		tried, triedEnd time.Time // the first attempt's start and end, refused or not
		written         time.Time // the first successful write's start
		p               planned
	}
	var problems []string
	var seen []*span
	for _, o := range p {
		key := o.Resource + " " + o.Name
		var s span
		for _, w := range writes {
			if w.Resource+" "+w.Name != key {
				continue
			}
			if s.tried.IsZero() || w.Start.Before(s.tried) {
				s.tried, s.triedEnd = w.Start, w.End
			}
			if w.Code/100 == 2 && (s.written.IsZero() || w.Start.Before(s.written)) {
				s.written = w.Start
			}
		}
		if s.written.IsZero() {
			// The harness creates KubeVirt's namespace before any sync
			// (virt-api's CA ConfigMap and virt-controller's lease live
			// there, controllers.Start), so Argo CD may find nothing of it
			// to write.
			if c.kv != nil && o.Kind == "Namespace" && o.Name == "/"+controllers.Namespace {
				continue
			}
			if all {
				problems = append(problems, fmt.Sprintf("%s %s (wave %d) was never written", o.Kind, o.Name, o.Wave))
			}
			continue
		}
		s.p = o
		seen = append(seen, &s)
	}
	for _, a := range seen {
		for _, b := range seen {
			before := a.p.Wave < b.p.Wave ||
				(a.p.Wave == b.p.Wave && a.p.Kind == "PersistentVolumeClaim" && b.p.Kind == "VirtualMachine")
			if before && !a.triedEnd.Before(b.written) {
				problems = append(problems, fmt.Sprintf("%s %s (wave %d) first tried until %s, after %s %s (wave %d) written from %s",
					a.p.Kind, a.p.Name, a.p.Wave, a.triedEnd.Format(time.StampMicro), b.p.Kind, b.p.Name, b.p.Wave, b.written.Format(time.StampMicro)))
			}
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return len(seen), fmt.Errorf("%s: Argo CD's writes break the waves' order:\n  %s", c.name, strings.Join(problems, "\n  "))
	}
	return len(seen), nil
}

// safetyPointFirst holds Argo CD's writes to the order spec.snapshotBefore
// promises (docs/data-protection.md "VM snapshots"; internal/diff rule safety-point-same-change):
// the safety point created by Argo CD, its create answered before the
// first write of the VM it guards that the API server received at or after
// change (the commit that changes the VM). point and vm are
// "group/resource namespace/name".
func safetyPointFirst(writes []write, point, vm string, change time.Time) error {
	var created, changed *write
	for i, w := range writes {
		switch key := w.Resource + " " + w.Name; {
		case key == point && w.Verb == "create":
			if created == nil || w.Start.Before(created.Start) {
				created = &writes[i]
			}
		case key == vm && !w.Start.Before(change):
			if changed == nil || w.Start.Before(changed.Start) {
				changed = &writes[i]
			}
		}
	}
	switch {
	case created == nil:
		return fmt.Errorf("%s was never created by Argo CD", point)
	case changed == nil:
		return fmt.Errorf("%s was not written by Argo CD since %s", vm, change.Format(time.StampMicro))
	case !created.End.Before(changed.Start):
		return fmt.Errorf("%s created until %s, after %s was %sd from %s: the safety point comes after the change it guards",
			point, created.End.Format(time.StampMicro), vm, changed.Verb, changed.Start.Format(time.StampMicro))
	}
	return nil
}
