package argocd

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/internal/versions"
	"github.com/virtc/virtc/test/internal/olm"
)

// Upgrades of the east Platform through Argo CD and the real OLM
// (test/internal/olm): the platform Application virtc-east-platform
// (applicationset.yaml) syncs a commit that moves spec.version, its
// approver Job approves OLM's own InstallPlans on the way to the pin, OLM
// installs them. East serves the redhat-operators index of OpenShift 4.22
// (head 4.22.6, with the 4.21 and 4.20 bundles before it: internal/versions
// HCOChannel), and its Platform starts one minor behind, on 4.21.3
// (applicationSet): OpenShift Virtualization is upgraded after the
// cluster, one minor at a time: a z-stream upgrade within 4.21, then the
// minor upgrade to 4.22.0.
//
// OLM replaces the HyperConverged CRD at each upgrade with the bundle's,
// after validating every HyperConverged at each version the CRDs serve
// (operator-lifecycle-manager v0.42.0 pkg/controller/operators/catalog/
// step.go NewCRDV1Step, operator.go validateV1CRDCompatibility). From a
// 4.21 CRD (HCO v1.17.3, v1beta1 alone) that is v1beta1 only. From a 4.22
// CRD (HCO v1.18.1) it is v1 too, read through HCO's conversion webhook,
// which its webhook Deployment registers on the CRD at run time
// (controllers/webhooks/conversion-webhook-controller); without it the
// v1 view of the stored v1beta1 object fails ("updated validation is too
// restrictive") and the InstallPlan fails. HCO's webhook does not run
// here: the Go module proxy serves no version of HCO's module (403 "not
// available"), so it cannot be built in CI. So the z-stream upgrade runs
// within 4.21 (4.21.3 → 4.21.8), and a z-stream within 4.22 (4.22.0 →
// 4.22.6) runs in test/internal/olm, where no HyperConverged exists.

const (
	eastPlatformApp  = "virtc-east-platform"
	eastPlatformFile = appDir + "/platform.yaml"
	// upgradeWait bounds an upgrade's sync: the approver Job waits for each
	// of OLM's InstallPlans and CSVs on the way to the pin.
	upgradeWait = 5 * time.Minute
)

var pinLine = regexp.MustCompile(`(?m)^  version: \S+$`)

// pinEast commits east's Platform at version and returns the revision.
func (e *env) pinEast(version, msg string) string {
	e.t.Helper()
	cur := e.read(eastPlatformFile)
	next := pinLine.ReplaceAllString(cur, "  version: "+version)
	if !pinLine.MatchString(cur) || next == cur {
		e.t.Fatalf("%s: no spec.version to change to %s", eastPlatformFile, version)
	}
	return e.commit(msg, map[string]string{eastPlatformFile: next})
}

func hcoCSV(v string) string { return versions.HCOCSV(mustVersion(v)) }

func mustVersion(s string) versions.Version {
	v, err := versions.Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// (9) A z-stream upgrade: east's Platform moves from 4.21.3 to the 4.21
// head 4.21.8 in one InstallPlan (its olm.skipRange covers 4.21.3).
func (e *env) zStreamUpgrade() {
	e.upgradeEast("4.21.3", "4.21.8", []string{"4.21.8"})
}

// (10) A minor upgrade: east's Platform moves from 4.21.8 to 4.22.0 in one
// InstallPlan (4.22.0 replaces 4.21.8); the sync completes on 4.22.0. The
// catalog is the one ahead of the table (scenario 9b, head 4.22.7): the
// approver's route on the live graph lands exactly on the pin. 4.22.3
// could not be the pin: from 4.21.8 OLM offers 4.22.0 and from there the
// head 4.22.7, past it (the approver refuses such a pin before any
// approval: scenarios 9b and 11, and test/internal/olm).
func (e *env) minorUpgrade() {
	e.upgradeEast("4.21.8", "4.22.0", []string{"4.22.0"})
}

// upgradeEast commits east's pin to, from the installed from, and checks
// that the sync lands on it through exactly OLM's InstallPlans of path.
func (e *env) upgradeEast(from, to string, path []string) {
	cl := e.clusters["east"]
	defer e.dumpEast()
	e.wantInstalled(cl, from)
	before := e.approvedPlansOn(cl)
	start := time.Now()
	rev := e.pinEast(to, fmt.Sprintf("east: OpenShift Virtualization %s", to))
	e.refreshApp(eastPlatformApp)
	a := e.waitAppFor(eastPlatformApp, "upgrade to "+to, upgradeWait, synced(rev))
	e.t.Logf("%s → %s synced in %s: %s", from, to, time.Since(start).Round(time.Millisecond), a)
	want := slices.Clone(before)
	for _, v := range path {
		want = append(want, hcoCSV(v))
	}
	slices.Sort(want)
	if got := e.approvedPlansOn(cl); !slices.Equal(got, want) {
		e.t.Errorf("east: approved InstallPlans %q after %s → %s, want %q (before %q, OLM's route %q)", got, from, to, want, before, path)
	}
	e.wantInstalled(cl, to)
	e.wantHyperConverged(cl, to)
}

// wantInstalled checks that OLM installed the version pin on cl.
func (e *env) wantInstalled(cl *cluster, pin string) {
	e.t.Helper()
	sub := e.installed(cl, hcoCSV(pin))
	if sub.InstalledCSV != hcoCSV(pin) {
		e.t.FailNow() // the upgrades start from it: nothing after would mean anything
	}
	e.t.Logf("%s: %s installed and Succeeded; Subscription %s, OLM's current CSV %s", cl.name, hcoCSV(pin), sub.State, sub.CurrentCSV)
}

// subscriptionStatus is what the checks read of hco-operatorhub's status.
type subscriptionStatus struct {
	InstalledCSV string `json:"installedCSV"`
	CurrentCSV   string `json:"currentCSV"`
	State        string `json:"state"`
}

// installed checks that OLM installed the CSV csv on cl: the
// Subscription's installedCSV is csv and the CSV is Succeeded. It returns
// the Subscription's status for the caller's log.
func (e *env) installed(cl *cluster, csv string) subscriptionStatus {
	e.t.Helper()
	var sub struct {
		Status subscriptionStatus `json:"status"`
	}
	e.liveJSONOn(cl, "/apis/operators.coreos.com/v1alpha1/namespaces/openshift-cnv/subscriptions/hco-operatorhub", &sub)
	if sub.Status.InstalledCSV != csv {
		e.t.Errorf("%s: OLM has %q installed, want the pin %s", cl.name, sub.Status.InstalledCSV, csv)
	}
	var c struct {
		Status struct {
			Phase string `json:"phase"`
		} `json:"status"`
	}
	e.liveJSONOn(cl, "/apis/operators.coreos.com/v1alpha1/namespaces/openshift-cnv/clusterserviceversions/"+csv, &c)
	if c.Status.Phase != "Succeeded" {
		e.t.Errorf("%s: CSV %s is %q, want Succeeded", cl.name, csv, c.Status.Phase)
	}
	return sub.Status
}

// wantHyperConverged checks that the HyperConverged is still there after
// an upgrade, readable at v1beta1, the version virtc writes and OLM's
// replaced CRD keeps stored.
func (e *env) wantHyperConverged(cl *cluster, pin string) {
	e.t.Helper()
	var hc struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec map[string]any `json:"spec"`
	}
	e.liveJSONOn(cl, "/apis/hco.kubevirt.io/v1beta1/namespaces/openshift-cnv/hyperconvergeds/kubevirt-hyperconverged", &hc)
	if len(hc.Spec) == 0 {
		e.t.Errorf("%s: the HyperConverged after the upgrade to %s has no spec", cl.name, pin)
	}
}

// dumpEast logs east's OLM objects and logs when the test failed.
func (e *env) dumpEast() {
	if !e.t.Failed() {
		return
	}
	cl := e.clusters["east"]
	out, _ := cl.cp.MustKubectl(e.ctx, nil, "get", "csv,sub,installplans,deploy,pods,jobs", "-n", "openshift-cnv", "-o", "wide")
	e.t.Logf("east openshift-cnv:\n%s", out)
	e.t.Logf("east OLM:\n%s", cl.olm.Logs(40))
}

// waitAppFor is waitAppNamed with its own deadline.
func (e *env) waitAppFor(name, what string, d time.Duration, ok func(a app) bool) app {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for {
		a, err := e.getApp(name)
		if err == nil && ok(a) {
			return a
		}
		if time.Now().After(deadline) {
			if err != nil {
				e.t.Fatalf("%s: %s: no Application after %s: %v", name, what, d, err)
			}
			e.t.Fatalf("%s: %s: not reached after %s: %s", name, what, d, a)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// (9b) Red Hat publishes a z-stream after the build: east's
// redhat-operators index moves ahead of virtc's version table
// (olm.WriteAheadCatalog: stable's head is 4.22.7, which the table, head
// 4.22.6, does not know; a candidate channel has 4.23.0). A commit pins
// 4.22.6, the table's head, for the minor upgrade from 4.21.8, from a
// repository that does not keep the catalog's graph, so `virtc diff` saw
// the table's head and allowed it (issue 42). The approver Job reads the
// live catalog, finds OLM's route 4.22.0 then 4.22.7, past the pin, and
// refuses before the first step: the sync fails and retries, east's audit
// log holds no write to an InstallPlan since the commit but
// catalog-operator's own, and nothing is approved; the cluster stays on
// 4.21.8 (its HyperConverged with it). The fix (the pin back at 4.21.8)
// is synced by the retry. The minor upgrade to 4.22.0 then lands exactly
// on this catalog (scenario 10).
func (e *env) catalogMovedAfterTheBuild() {
	cl := e.clusters["east"]
	defer e.dumpEast()
	e.wantInstalled(cl, "4.21.8")
	dir := filepath.Join(e.dir, "east-catalog-ahead")
	if err := olm.WriteAheadCatalog(filepath.Join(dir, "catalog"), schemasDir()); err != nil {
		e.t.Fatal(err)
	}
	if err := cl.olm.ServeCatalog(e.ctx, cl.cp, olmTools(e.t), filepath.Join(dir, "catalog"), filepath.Join(dir, "olm")); err != nil {
		e.t.Fatal(err)
	}
	before := e.approvedPlansOn(cl)
	since := time.Now()
	rev := e.pinEast("4.22.6", "east: OpenShift Virtualization 4.22.6, the head of virtc's table")
	e.refreshApp(eastPlatformApp)
	a := e.waitAppNamed(eastPlatformApp, "the approver refuses 4.22.6 on the live catalog", func(a app) bool {
		op := a.Status.OperationState
		return op != nil && op.RetryCount >= 1 && a.Status.Sync.Revision == rev
	})
	e.t.Logf("%s at 4.22.6 on a catalog whose head is 4.22.7: %s", eastPlatformApp, a)
	msg := e.approverMessage(cl)
	for _, want := range []string{"head " + hcoCSV("4.22.7"), "installs " + hcoCSV("4.22.0"), "offers " + hcoCSV("4.22.7"), "newer than " + hcoCSV("4.22.6"), "approves none of its InstallPlans"} {
		if !strings.Contains(msg, want) {
			e.t.Errorf("east: the approver's refusal does not say %q: %s", want, msg)
		}
	}
	var approvals []string
	err := auditEvents(cl.auditLog, func(ev auditEvent) {
		ref := ev.ObjectRef
		if ev.Stage == "ResponseComplete" && ref != nil && ref.Resource == "installplans" && (ev.Verb == "patch" || ev.Verb == "update") &&
			!ev.RequestReceived.Before(since) && ev.ResponseStatus != nil && ev.ResponseStatus.Code < 300 {
			approvals = append(approvals, fmt.Sprintf("%s %s/%s by %s", ev.Verb, ref.Namespace, ref.Name, ev.UserAgent))
		}
	})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, w := range approvals {
		// catalog-operator writes its own plans' status; nobody else may
		// write a plan.
		if !strings.HasPrefix(strings.SplitN(w, " by ", 2)[1], "catalog") {
			e.t.Errorf("east: an InstallPlan was written after the commit of 4.22.6: %s", w)
		}
	}
	rev = e.pinEast("4.21.8", "east: back to OpenShift Virtualization 4.21.8")
	e.refreshApp(eastPlatformApp)
	a = e.waitAppNamed(eastPlatformApp, "the fix synced by the retry", synced(rev))
	e.t.Logf("%s after the fix: %s", eastPlatformApp, a)
	if after := e.approvedPlansOn(cl); !slices.Equal(after, before) {
		e.t.Errorf("east: approved InstallPlans %q after the refusal and the fix, want %q as before", after, before)
	}
	e.wantInstalled(cl, "4.21.8")
	e.wantHyperConverged(cl, "4.21.8")
	e.t.Logf("east: OLM proposes %q (unapproved)", e.pendingPlans(cl))
}

// pendingPlans are the CSVs of the unapproved InstallPlans in
// openshift-cnv on cl: what OLM proposes.
func (e *env) pendingPlans(cl *cluster) []string {
	e.t.Helper()
	plans, err := olm.InstallPlans(e.ctx, cl.cp, "openshift-cnv")
	if err != nil {
		e.t.Fatal(err)
	}
	var pending []string
	for _, p := range plans {
		if !p.Spec.Approved {
			pending = append(pending, strings.Join(p.Spec.CSVs, ","))
		}
	}
	return pending
}

// approverMessage is the termination message of the approver Job's last
// failed pod in openshift-cnv on cl: the end of what virtc
// approve-installplan printed (jobPods).
func (e *env) approverMessage(cl *cluster) string {
	e.t.Helper()
	var pods struct {
		Items []struct {
			Status struct {
				ContainerStatuses []struct {
					State struct {
						Terminated *struct {
							Message string `json:"message"`
						} `json:"terminated"`
					} `json:"state"`
				} `json:"containerStatuses"`
			} `json:"status"`
		} `json:"items"`
	}
	e.liveJSONOn(cl, "/api/v1/namespaces/openshift-cnv/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dvirtc-installplan-approver", &pods)
	var msg string
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if t := c.State.Terminated; t != nil && t.Message != "" {
				msg = t.Message
			}
		}
	}
	return msg
}

// olmTools are OLM's tools of the suite (found by findTools already).
func olmTools(t *testing.T) olm.Tools {
	t.Helper()
	tl, err := olm.FindTools()
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// schemasDir is the schemas-upstream directory of the suite (TestArgoCD).
func schemasDir() string {
	if s := os.Getenv("VIRTC_SCHEMAS"); s != "" {
		return s
	}
	return filepath.Join(repoRoot, "..", "shared", "schemas-upstream")
}
