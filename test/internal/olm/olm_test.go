package olm

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/internal/approve"
	"github.com/virtc/virtc/internal/cli"
	"github.com/virtc/virtc/internal/olmindex"
	"github.com/virtc/virtc/internal/versions"
	"github.com/virtc/virtc/test/conform"
	"github.com/virtc/virtc/test/conformance"
)

// GateEnv must be 1 for the suite to run (make e2e-controllers): it starts
// a control plane and OLM, which plain `go test ./...` should not.
const GateEnv = "VIRTC_E2E_CONTROLLERS"

const node = "infra-1"

// env is a control plane with kube-controller-manager and OLM serving a
// catalog generated from virtc's version table.
type env struct {
	t       *testing.T
	ctx     context.Context
	cp      *conformance.ControlPlane
	olm     *OLM
	tools   Tools
	schemas string
	dir     string
	// ca is the API server's CA, for the approver's client.
	ca []byte
	// headSeen is the --catalog-head of the last HCO approver run.
	headSeen string
	// platformSpec is more of the Platform's spec, indented as its fields.
	platformSpec string
}

func start(t *testing.T) *env {
	t.Helper()
	conformance.Gate(t, GateEnv, "the OLM suite starts a control plane with OLM; run `make e2e-controllers`")
	bins := conformance.Need(t, conformance.FindBinaries)
	kcm := conformance.Need(t, conformance.FindControllerManager)
	tools := conformance.Need(t, FindTools)
	v422, err := conform.Schemas("4.22")
	if err != nil {
		conform.Skip(t, err)
	}
	ctx := t.Context()
	dir := t.TempDir()
	began := time.Now()
	cp := conformance.StartForTest(t, ctx, bins, filepath.Join(dir, "control-plane"))
	conformance.StartControllerManagerForTest(t, ctx, cp, kcm, filepath.Join(dir, "kcm"), conformance.ControllersWithoutNode)
	if _, err := cp.InstallCRDs(ctx, tools.CRDs); err != nil {
		t.Fatalf("install OLM's CRDs: %v", err)
	}
	if err := RegisterNode(ctx, cp, node); err != nil {
		t.Fatal(err)
	}
	ca, _, _, err := cp.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, cp: cp, tools: tools, schemas: filepath.Dir(v422), dir: dir, ca: ca}
	t.Logf("control plane and kube-controller-manager ready in %v", time.Since(began).Round(time.Millisecond))
	return e
}

// startOLM starts OLM serving the redhat-operators index of OpenShift
// minor, and the node stand-in for the pods of its Deployments.
func (e *env) startOLM(minor string) {
	t := e.t
	var err error
	e.olm, err = Start(e.ctx, e.cp, e.tools, e.catalog(minor), filepath.Join(e.dir, "olm"))
	if err != nil {
		t.Fatalf("start OLM: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("OLM logs:\n%s", e.olm.Logs(40))
		}
		e.olm.Stop()
	})
	e.runPods()
}

// catalog writes the catalog of the redhat-operators index of OpenShift
// minor (WriteMinorCatalog).
func (e *env) catalog(minor string) string {
	e.t.Helper()
	dir := filepath.Join(e.dir, "catalog-"+minor)
	if err := WriteMinorCatalog(dir, minor, e.schemas); err != nil {
		e.t.Fatal(err)
	}
	return dir
}

// build compiles a Platform on version with virtc, from a repository
// that holds the catalog's upgrade graph when graph is set (the output of
// virtc olm-graph: graphOf).
func (e *env) build(version string, graph ...string) []conformance.Object {
	e.t.Helper()
	dir := filepath.Join(e.t.TempDir(), "platform")
	if err := os.Mkdir(dir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	for _, g := range graph {
		if err := os.MkdirAll(filepath.Join(dir, "catalog", "olm"), 0o700); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "catalog", "olm", "redhat-operators.yaml"), []byte(g), 0o600); err != nil {
			e.t.Fatal(err)
		}
	}
	platform := fmt.Sprintf(`apiVersion: virtc.dev/v1alpha1
kind: Platform
metadata:
  name: olm-e2e
spec:
  version: %s
  approver:
    image: quay.io/virtc/virtc@sha256:5f0c3a4e8d9b1c2a7e6f4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19087
  dataProtection:
    storageLocations:
      - name: onsite
        provider: aws
        bucket: vm-backups
        prefix: olm-e2e
        credential: {name: onsite-s3, key: cloud}
        config: {region: us-east-1, s3Url: "https://s3.example.com"}
%s`, version, e.platformSpec)
	if err := os.WriteFile(filepath.Join(dir, "platform.yaml"), []byte(platform), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return conformance.VirtcObjects(e.t, "virtc build of a Platform on "+version, "build", dir)
}

// graphOf is what a platform team keeps in its repository of the catalog
// in dir: the real `opm render` of it (operator-registry's own reading of
// the index), cut down by `virtc olm-graph`.
func (e *env) graphOf(dir string) string {
	e.t.Helper()
	rendered, err := exec.CommandContext(e.ctx, e.tools.OPM, "render", dir, "-o", "json").Output()
	if err != nil {
		e.t.Fatalf("opm render %s: %v", dir, err)
	}
	var out, errs bytes.Buffer
	if code := cli.Main([]string{"olm-graph", "-"}, bytes.NewReader(rendered), &out, &errs); code != cli.ExitOK {
		e.t.Fatalf("virtc olm-graph of opm render: exit %d\n%s", code, errs.String())
	}
	return out.String()
}

// installKinds are the objects of virtc's Platform output that take part in
// the operators' install: the rest (HyperConverged, the
// DataProtectionApplication, alerts) need the operators themselves.
var installKinds = []string{"Namespace", "OperatorGroup", "Subscription", "ServiceAccount", "Role", "RoleBinding"}

// apply applies what Argo CD's sync of the Platform would of objs, as the
// admin, and returns the approver Jobs' arguments by namespace.
func (e *env) apply(objs []conformance.Object) map[string][]string {
	e.t.Helper()
	var keep []conformance.Object
	jobs := map[string][]string{}
	for _, o := range objs {
		if o.Kind == "Job" {
			jobs[o.Namespace] = jobArgs(e.t, o)
		}
		if slices.Contains(installKinds, o.Kind) {
			keep = append(keep, o)
		}
	}
	// Namespaces first, as Argo CD's sync orders them.
	slices.SortStableFunc(keep, func(a, b conformance.Object) int {
		return boolInt(b.Kind == "Namespace") - boolInt(a.Kind == "Namespace")
	})
	stream, err := conformance.Stream(keep)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.cp.MustKubectl(e.ctx, stream, "apply", "--server-side", "--force-conflicts", "--field-manager=argocd-controller", "-f", "-"); err != nil {
		e.t.Fatalf("apply the Platform's install objects: %v", err)
	}
	return jobs
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func jobArgs(t *testing.T, o conformance.Object) []string {
	spec, _ := o.Doc["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	cs, _ := pod["containers"].([]any)
	if len(cs) != 1 {
		t.Fatalf("approver Job %s: %d containers", o.Namespace, len(cs))
	}
	c, _ := cs[0].(map[string]any)
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	return args
}

// approver runs virtc's approver with the arguments of its Job, as the
// Job's pod would, authenticated as the Job's ServiceAccount
// (virtc-installplan-approver) with the Role virtc renders: a token for it
// from the TokenRequest API, as the kubelet projects one into the pod.
func (e *env) approver(args []string, timeout time.Duration) (string, error) {
	e.t.Helper()
	o := approve.Options{Timeout: timeout, Interval: time.Second}
	if len(args) == 0 || args[0] != "approve-installplan" {
		e.t.Fatalf("approver Job args %q: not approve-installplan", args)
	}
	for _, a := range args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "--namespace":
			o.Namespace = v
		case "--subscription":
			o.Subscription = v
		case "--csv":
			o.CSV = v
		case "--catalog-head":
			o.CatalogHead = v
			if strings.HasPrefix(v, "oadp-operator.") {
				break
			}
			e.headSeen = v
		case "--timeout":
		default:
			e.t.Fatalf("approver Job arg %q unknown to the test", a)
		}
	}
	token, err := e.cp.MustKubectl(e.ctx, nil, "create", "token", "virtc-installplan-approver", "-n", o.Namespace, "--duration=1h")
	if err != nil {
		e.t.Fatal(err)
	}
	tokenFile := filepath.Join(e.t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, bytes.TrimSpace(token), 0o600); err != nil {
		e.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.ca)
	api := &approve.API{Server: e.cp.URL, TokenFile: tokenFile, Client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}
	var log bytes.Buffer
	o.Log = &log
	err = approve.Run(e.ctx, api, o)
	return log.String(), err
}

// runPods plays the node for the operators' pods until the test ends.
func (e *env) runPods() {
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	e.t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			for _, ns := range []string{"openshift-cnv", "openshift-adp"} {
				if err := RunPods(ctx, e.cp, ns, node); err != nil && ctx.Err() == nil && !strings.Contains(err.Error(), "NotFound") {
					e.t.Logf("node stand-in: %v", err)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
}

func (e *env) plans(namespace string) []InstallPlan {
	e.t.Helper()
	plans, err := InstallPlans(e.ctx, e.cp, namespace)
	if err != nil {
		e.t.Fatal(err)
	}
	return plans
}

// subscription is the Subscription's installed CSV and the CSVs of the
// InstallPlan OLM proposes now.
func (e *env) subscription(namespace, name string) (installed string, proposed []string, approved bool) {
	e.t.Helper()
	data, err := e.cp.Get(e.ctx, "/apis/operators.coreos.com/v1alpha1/namespaces/"+namespace+"/subscriptions/"+name)
	if err != nil {
		e.t.Fatal(err)
	}
	var s struct {
		Status struct {
			InstalledCSV   string `json:"installedCSV"`
			InstallPlanRef struct {
				Name string `json:"name"`
			} `json:"installPlanRef"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		e.t.Fatal(err)
	}
	for _, p := range e.plans(namespace) {
		if p.Metadata.Name == s.Status.InstallPlanRef.Name {
			return s.Status.InstalledCSV, p.Spec.CSVs, p.Spec.Approved
		}
	}
	return s.Status.InstalledCSV, nil, false
}

// csvPhase is status.phase of CSV name in namespace ("" when absent).
func (e *env) csvPhase(namespace, name string) string {
	data, err := e.cp.Get(e.ctx, "/apis/operators.coreos.com/v1alpha1/namespaces/"+namespace+"/clusterserviceversions/"+name)
	if err != nil {
		return ""
	}
	var c struct {
		Status struct {
			Phase string `json:"phase"`
		} `json:"status"`
	}
	_ = json.Unmarshal(data, &c)
	return c.Status.Phase
}

// waitProposal waits until OLM proposes, for Subscription namespace/name
// installed at installed, a plan of the CSVs want.
func (e *env) waitProposal(namespace, name, installed string, want []string) {
	e.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		got, proposed, _ := e.subscription(namespace, name)
		if got == installed && slices.Equal(proposed, want) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s/%s: OLM proposes %q with %q installed; want %q with %q installed\n%s", namespace, name, proposed, got, want, installed, e.olm.Logs(20))
		}
		time.Sleep(time.Second)
	}
}

// approvedPlans are the names of the approved InstallPlans of namespace.
func (e *env) approvedPlans(namespace string) []string {
	var names []string
	for _, p := range e.plans(namespace) {
		if p.Spec.Approved {
			names = append(names, p.Metadata.Name+" "+strings.Join(p.Spec.CSVs, ","))
		}
	}
	slices.Sort(names)
	return names
}

// TestOLMInstallsAndUpgradesOnThePin installs OpenShift Virtualization and
// OADP from virtc's Platform output through OLM's own resolver and
// InstallPlans, approved by virtc's approver, and upgrades them the way a
// cluster does: a minor upgrade over two InstallPlans in one approver run,
// the redhat-operators index moves to the next OpenShift minor's, and that
// index is ahead of virtc's version table (a z-stream 4.22.7 the table does
// not know, a 4.23.0 on another channel). On it a pin OLM passes is
// refused before anything is approved, whether the build had the
// catalog's graph or only the table (issue 42: the approver reads the live
// catalog); a minor upgrade and a z-stream upgrade to the version the
// table does not know, built with the catalog's graph (opm render, then
// virtc olm-graph), each land exactly on the pin. At each step OLM's own
// proposal is held against virtc's model of the live graph
// (internal/versions Channel.Next on what the registry serves), so the
// model cannot drift from OLM.
func TestOLMInstallsAndUpgradesOnThePin(t *testing.T) {
	e := start(t)
	e.startOLM("4.21")

	// A fresh install on 4.20.21 (OpenShift Virtualization one minor
	// behind the cluster's 4.21), from the 4.21 index: OLM proposes
	// exactly the startingCSV, the approver approves it, OLM installs it.
	jobs := e.apply(e.build("4.20.21"))
	for ns, args := range jobs {
		if log, err := e.approver(args, 4*time.Minute); err != nil {
			t.Fatalf("approver in %s: %v\n%s", ns, err, log)
		}
	}
	if got := e.csvPhase(cnv, hco("4.20.21")); got != "Succeeded" {
		t.Fatalf("%s: phase %q after the approver returned", hco("4.20.21"), got)
	}

	// Git pins 4.21.8: a minor upgrade over two of OLM's InstallPlans in
	// one run of the approver (4.21.0, which replaces 4.20.21, then the
	// head 4.21.8, whose olm.skipRange covers 4.21.0), landing on the pin.
	jobs = e.apply(e.build("4.21.8"))
	for ns, args := range jobs {
		log, err := e.approver(args, 4*time.Minute)
		if err != nil {
			t.Fatalf("approver in %s for 4.21.8: %v\n%s", ns, err, log)
		}
		if ns == cnv {
			for _, want := range []string{"approved InstallPlan", hco("4.21.0"), hco("4.21.8")} {
				if !strings.Contains(log, want) {
					t.Errorf("approver log for 4.20.21 → 4.21.8 does not show %q:\n%s", want, log)
				}
			}
		}
	}
	if got := e.csvPhase(cnv, hco("4.21.8")); got != "Succeeded" {
		t.Fatalf("%s: phase %q after the approver returned", hco("4.21.8"), got)
	}
	if got := e.csvPhase(adp, versions.OADPCSV("1.5.0")); got != "Succeeded" {
		t.Fatalf("%s: phase %q after the approver returned", versions.OADPCSV("1.5.0"), got)
	}

	e.upgradesOnACatalogAheadOfTheTable()
}

// The Subscriptions of the test.
const (
	cnv, hcoSub  = "openshift-cnv", "hco-operatorhub"
	adp, oadpSub = "openshift-adp", "redhat-oadp-operator"
)

func hco(v string) string { return versions.HCOCSV(mustParse(v)) }

// upgradesOnACatalogAheadOfTheTable is the second half of
// TestOLMInstallsAndUpgradesOnThePin, from 4.21.8 installed.
func (e *env) upgradesOnACatalogAheadOfTheTable() {
	t := e.t
	// The cluster moves to OpenShift 4.22: its redhat-operators index is
	// the 4.22 one, as Red Hat serves it some weeks after virtc's table
	// was written: the stable channel's head is 4.22.7, which the table
	// (head 4.22.6) does not know, and a candidate channel has 4.23.0
	// (WriteAheadCatalog).
	ahead := filepath.Join(e.dir, "catalog-4.22-ahead")
	if err := WriteAheadCatalog(ahead, e.schemas); err != nil {
		t.Fatal(err)
	}
	if err := e.olm.ServeCatalog(e.ctx, e.cp, e.tools, ahead, filepath.Join(e.dir, "olm-4.22")); err != nil {
		t.Fatal(err)
	}
	// What the approver reads of the real registry (opm serve, over the
	// gRPC call OLM reads it with) is the catalog's graph, and so is what
	// the repository keeps (opm render, cut by virtc olm-graph).
	live := e.liveChannel()
	graph := e.graphOf(ahead)
	if want := "4.22.7 4.22.6 4.22.5 4.22.4 4.22.3 4.22.2 4.22.1 4.22.0 4.21.8"; !strings.HasPrefix(versionsOf(live), want) {
		t.Fatalf("the registry's stable channel: %s, want it to start %s", versionsOf(live), want)
	}
	fromFile, err := olmindex.ReadFBC(ahead)
	if err != nil {
		t.Fatal(err)
	}
	fileCh, err := fromFile.Channel(versions.HCOChannelPackage, Channel, versions.HCOCSV)
	if err != nil || fmt.Sprint(fileCh.Bundles) != fmt.Sprint(live.Bundles) {
		t.Fatalf("the registry's graph differs from the catalog's (%v):\n%v\n%v", err, live.Bundles, fileCh.Bundles)
	}
	// OLM's own proposal is what the model on the live graph says.
	next, _, ok := live.Next(mustParse("4.21.8"))
	if !ok || next.Version != mustParse("4.22.0") {
		t.Fatalf("virtc's model of the live catalog: from 4.21.8 OLM offers %v (%v); the test expects 4.22.0", next.Version, ok)
	}
	e.waitProposal(cnv, hcoSub, hco("4.21.8"), []string{hco("4.22.0")})
	e.waitProposal(adp, oadpSub, versions.OADPCSV("1.5.0"), []string{versions.OADPCSV("1.6.0")})
	before := e.approvedPlans(cnv)

	// Git pins 4.22.6, the head of virtc's table, in a build that has no
	// graph of the catalog (its approver is told head 4.22.6). The catalog
	// moved since: OLM's route from 4.21.8 is 4.22.0, then 4.22.7, past
	// the pin. The approver reads the live catalog and refuses before the
	// first step; the cluster stays on 4.21.8 with nothing approved.
	jobs := e.apply(e.build("4.22.6"))
	log, err := e.approver(jobs[cnv], time.Minute)
	var refusal *approve.Error
	if !errors.As(err, &refusal) {
		t.Fatalf("approver for 4.22.6 on a catalog whose head is 4.22.7: %v, want a refusal\n%s", err, log)
	}
	for _, want := range []string{"head " + hco("4.22.7"), "installs " + hco("4.22.0"), "offers " + hco("4.22.7"), "newer than " + hco("4.22.6"), "pin where OLM lands from " + hco("4.21.8") + ": " + hco("4.22.0") + " or " + hco("4.22.7")} {
		if !strings.Contains(refusal.Msg, want) {
			t.Errorf("the refusal does not say %q: %s", want, refusal.Msg)
		}
	}
	if e.headSeen != hco("4.22.6") || !strings.Contains(log, "the build assumed "+hco("4.22.6")) {
		t.Errorf("the table's build told the approver head %s; its log:\n%s", e.headSeen, log)
	}
	e.unchanged(before, hco("4.21.8"))

	// Git pins 4.22.3, which no upgrade lands on: refused the same way.
	jobs = e.apply(e.build("4.22.3"))
	log, err = e.approver(jobs[cnv], time.Minute)
	if !errors.As(err, &refusal) || !strings.Contains(refusal.Msg, "offers "+hco("4.22.7")) {
		t.Fatalf("approver for the unreachable pin 4.22.3: %v, want a refusal naming 4.22.7\n%s", err, log)
	}
	e.unchanged(before, hco("4.21.8"))

	// Git pins 4.22.0 from a repository that keeps the catalog's graph: a
	// minor upgrade that lands exactly on the pin on the live catalog;
	// OADP moves to the 4.22 release. The build tells the approver the
	// graph's head, and OLM then proposes that head, which the approver of
	// this pin leaves alone.
	jobs = e.apply(e.build("4.22.0", graph))
	for ns, args := range jobs {
		if log, err := e.approver(args, 4*time.Minute); err != nil {
			t.Fatalf("approver in %s for 4.22.0: %v\n%s", ns, err, log)
		}
	}
	if e.headSeen != hco("4.22.7") {
		t.Errorf("a build with the catalog's graph told the approver head %s, want 4.22.7", e.headSeen)
	}
	if got := e.csvPhase(cnv, hco("4.22.0")); got != "Succeeded" {
		t.Fatalf("%s: phase %q after the minor upgrade", hco("4.22.0"), got)
	}
	if got := e.csvPhase(adp, versions.OADPCSV("1.6.0")); got != "Succeeded" {
		t.Fatalf("%s: phase %q after the upgrade", versions.OADPCSV("1.6.0"), got)
	}
	next, _, _ = live.Next(mustParse("4.22.0"))
	e.waitProposal(cnv, hcoSub, hco("4.22.0"), []string{hco(next.Version.String())})
	if next.Version != mustParse("4.22.7") {
		t.Fatalf("virtc's model of the live catalog: from 4.22.0 OLM offers %s; the test expects 4.22.7", next.Version)
	}
	if _, _, approved := e.subscription(cnv, hcoSub); approved {
		t.Fatalf("the approver of pin 4.22.0 approved OLM's next proposal %s", hco(next.Version.String()))
	}
	before = e.approvedPlans(cnv)

	// Git pins 4.22.6 from 4.22.0: OLM offers 4.22.7; refused before the
	// proposal is approved.
	jobs = e.apply(e.build("4.22.6", graph))
	log, err = e.approver(jobs[cnv], time.Minute)
	if !errors.As(err, &refusal) || !strings.Contains(refusal.Msg, "offers "+hco("4.22.7")) {
		t.Fatalf("approver for 4.22.6 from 4.22.0: %v, want a refusal naming 4.22.7\n%s", err, log)
	}
	e.unchanged(before, hco("4.22.0"))

	// Git pins 4.22.7, which virtc's table does not know: the build with
	// the catalog's graph compiles it, and the z-stream upgrade lands on
	// it in one step (its olm.skipRange covers 4.22.0), leaving only the
	// pin installed.
	jobs = e.apply(e.build("4.22.7", graph))
	if log, err := e.approver(jobs[cnv], 4*time.Minute); err != nil {
		t.Fatalf("approver for 4.22.7: %v\n%s", err, log)
	}
	e.eventually("the z-stream upgrade to end with only the pin installed", func() (bool, string) {
		installed, _, _ := e.subscription(cnv, hcoSub)
		names := e.csvs(cnv)
		return installed == hco("4.22.7") && e.csvPhase(cnv, hco("4.22.7")) == "Succeeded" && slices.Equal(names, []string{hco("4.22.7")}),
			fmt.Sprintf("installed %s, CSVs %q", installed, names)
	})
	// The candidate channel's 4.23.0 is no part of the stable channel's
	// graph: OLM proposes nothing more.
	if installed, proposed, _ := e.subscription(cnv, hcoSub); installed != hco("4.22.7") || len(proposed) > 0 && proposed[0] != hco("4.22.7") {
		t.Errorf("after 4.22.7: installed %s, OLM proposes %q", installed, proposed)
	}
}

// unchanged fails unless the namespace's approved InstallPlans are still
// before and the Subscription still has installed installed with its
// proposal unapproved: a refusal left the cluster as it was.
func (e *env) unchanged(before []string, installed string) {
	e.t.Helper()
	if after := e.approvedPlans("openshift-cnv"); !slices.Equal(after, before) {
		e.t.Fatalf("the refusal approved an InstallPlan: before %q, after %q", before, after)
	}
	if got, _, approved := e.subscription("openshift-cnv", "hco-operatorhub"); got != installed || approved {
		e.t.Fatalf("after the refusal: installed %s, proposal approved %v; want %s and not approved", got, approved, installed)
	}
}

// liveChannel reads the stable channel of kubevirt-hyperconverged from
// the registry the CatalogSource names, as the approver does.
func (e *env) liveChannel() *versions.Channel {
	e.t.Helper()
	data, err := e.cp.Get(e.ctx, "/apis/operators.coreos.com/v1alpha1/namespaces/"+CatalogNamespace+"/catalogsources/"+DefaultCatalog)
	if err != nil {
		e.t.Fatal(err)
	}
	var cs struct {
		Spec struct {
			Address string `json:"address"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &cs); err != nil {
		e.t.Fatal(err)
	}
	ix, err := olmindex.ListBundles(e.ctx, cs.Spec.Address, versions.HCOChannelPackage)
	if err != nil {
		e.t.Fatalf("ListBundles from opm serve at %s: %v", cs.Spec.Address, err)
	}
	ch, err := ix.Channel(versions.HCOChannelPackage, Channel, versions.HCOCSV)
	if err != nil {
		e.t.Fatal(err)
	}
	return ch
}

func versionsOf(ch *versions.Channel) string {
	var out []string
	for _, b := range ch.Bundles {
		out = append(out, b.Version.String())
	}
	return strings.Join(out, " ")
}

// csvs are the names of the CSVs in namespace.
func (e *env) csvs(namespace string) []string {
	e.t.Helper()
	csvs, err := CSVs(e.ctx, e.cp, namespace)
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, c := range csvs {
		names = append(names, c.Metadata.Name)
	}
	return names
}

// eventually waits up to a minute for cond, which says what it saw.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("waiting for %s: %s", what, saw)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func mustParse(s string) versions.Version {
	v, err := versions.Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}
