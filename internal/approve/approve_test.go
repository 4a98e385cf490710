package approve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/internal/olmindex"
)

// fake is an in-memory OLM namespace: a Subscription, its InstallPlans and
// CSVs. onApprove plays OLM: what the cluster does after an approval.
type fake struct {
	sub       Subscription
	plans     []Plan
	csv       map[string]string
	csvReason map[string]string // status.reason of a CSV
	approved  []string
	onApprove func(f *fake, plan string)
	// tick plays OLM between polls.
	tick func(f *fake, n int)
	n    int
	// catalog is the channel the CatalogSource's registry serves now;
	// reads counts the approver's reads of it.
	catalog []bundle
	reads   int
}

// catalogAddr is the fake CatalogSource's registry address.
const catalogAddr = "redhat-operators.openshift-marketplace.svc:50051"

func (f *fake) CatalogAddress(_ context.Context, ns, name string) (string, error) {
	if ns != "openshift-marketplace" || name != "redhat-operators" {
		return "", nil
	}
	return catalogAddr, nil
}

// readCatalog is the registry's ListBundles of f.catalog, as
// olmindex.ListBundles returns it.
func (f *fake) readCatalog(_ context.Context, addr, pkg string) (*olmindex.Index, error) {
	if addr != catalogAddr || pkg != "kubevirt-hyperconverged" {
		return nil, fmt.Errorf("read %s %s", addr, pkg)
	}
	f.reads++
	var entries []olmindex.Entry
	for _, b := range f.catalog {
		entries = append(entries, olmindex.Entry{Package: pkg, Channel: "stable", Name: b.name, Version: strings.TrimPrefix(b.name, hco), Replaces: b.replaces, SkipRange: b.skipRange})
	}
	return olmindex.New("the registry of CatalogSource at "+addr, nil, entries...)
}

func (f *fake) InstallPlans(context.Context, string) ([]Plan, error) { return f.plans, nil }
func (f *fake) Subscription(context.Context, string, string) (Subscription, error) {
	sub := f.sub
	sub.Package, sub.Channel, sub.Source, sub.SourceNamespace = "kubevirt-hyperconverged", "stable", "redhat-operators", "openshift-marketplace"
	return sub, nil
}
func (f *fake) CSV(_ context.Context, _, name string) (CSVStatus, error) {
	return CSVStatus{Phase: f.csv[name], Reason: f.csvReason[name]}, nil
}
func (f *fake) Approve(_ context.Context, _, name string) error {
	for i := range f.plans {
		if f.plans[i].Name == name {
			f.plans[i].Approved = true
			f.approved = append(f.approved, name)
			if f.onApprove != nil {
				f.onApprove(f, name)
			}
			return nil
		}
	}
	return io.ErrUnexpectedEOF
}

const (
	hco    = "kubevirt-hyperconverged-operator.v"
	v4203  = hco + "4.20.3"
	v4205  = hco + "4.20.5"
	v42021 = hco + "4.20.21"
	v4210  = hco + "4.21.0"
	v4213  = hco + "4.21.3"
	v4216  = hco + "4.21.6"
	v4218  = hco + "4.21.8"
	v4220  = hco + "4.22.0"
	v4222  = hco + "4.22.2"
	v4223  = hco + "4.22.3"
	v4225  = hco + "4.22.5"
	v4226  = hco + "4.22.6"
	v4227  = hco + "4.22.7"
)

// bundle is one entry of a catalog channel, as an index image's
// file-based catalog states it (olm.channel entries: name, replaces,
// skipRange).
type bundle struct{ name, replaces, skipRange string }

// hcoCatalog is the stable channel of a Red Hat index up to head: each
// minor's z-streams, each replacing the one before and skipping the
// earlier ones of its minor, a minor's first bundle replacing the previous
// minor's last (4.20.21, 4.21.8). It is written out here, not taken from
// internal/versions, so that the approver is tested against OLM's rules rather
// than against its own model. Red Hat may have published z-streams the
// version table does not know yet (4.22.7).
func hcoCatalog(head string) []bundle {
	var out []bundle
	prev := ""
	for _, m := range []struct {
		minor string
		last  int
	}{{"4.20", 21}, {"4.21", 8}, {"4.22", 7}} {
		for z := 0; z <= m.last; z++ {
			name := hco + m.minor + "." + strconv.Itoa(z)
			b := bundle{name: name, replaces: prev}
			if z > 0 {
				b.skipRange = ">=" + m.minor + ".0 <" + m.minor + "." + strconv.Itoa(z)
			}
			out = append(out, b)
			prev = name
			if name == head {
				return out
			}
		}
	}
	return out
}

// next is the CSV OLM's resolver proposes for the Subscription
// (operator-lifecycle-manager v0.42.0, which OpenShift 4.22 runs:
// pkg/controller/registry/resolver/resolver.go getSubscriptionVariables).
// With no installed CSV, the bundle spec.startingCSV names. Otherwise
// sortChannel orders the channel from its head (the bundle no other one
// replaces) along replaces; the candidates are the bundles whose
// olm.skipRange includes the installed version or whose replaces names
// the installed CSV (cache/predicates.go SkipRangeIncludesPredicate,
// ReplacesPredicate); they go to the solver as one Dependency in that
// order, and solver/constraints.go prefers the earliest: the candidate
// nearest the head wins.
func next(channel []bundle, installed, starting string) (string, bool) {
	if installed == "" {
		for _, b := range channel {
			if b.name == starting {
				return b.name, true
			}
		}
		return "", false
	}
	replacedBy := map[string]bool{}
	byName := map[string]bundle{}
	for _, b := range channel {
		replacedBy[b.replaces] = true
		byName[b.name] = b
	}
	var sorted []bundle
	for _, b := range channel {
		if !replacedBy[b.name] {
			for cur, ok := b, true; ok; cur, ok = byName[cur.replaces] {
				sorted = append(sorted, cur)
			}
		}
	}
	v := semver(strings.TrimPrefix(installed, hco))
	for _, b := range sorted {
		if b.replaces == installed {
			return b.name, true
		}
		if lo, hi, ok := strings.Cut(b.skipRange, " <"); ok && cmpSemver(v, semver(strings.TrimPrefix(lo, ">="))) >= 0 && cmpSemver(v, semver(hi)) < 0 {
			return b.name, true
		}
	}
	return "", false
}

func semver(s string) [3]int {
	var v [3]int
	for i, p := range strings.SplitN(s, ".", 3) {
		v[i], _ = strconv.Atoi(p)
	}
	return v
}

func cmpSemver(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			return a[i] - b[i]
		}
	}
	return 0
}

// olm plays OLM on the fake: once the Subscription's plan is done (or
// there is none), it proposes the next CSV its resolver chooses, needing
// approval (installPlanApproval Manual), one plan at a time; an approved
// plan's CSV is installed and succeeds.
func olm(f *fake, channel []bundle, starting string) {
	f.catalog = channel
	f.onApprove = install
	f.tick = func(f *fake, _ int) {
		if f.sub.InstallPlan != "" && planPhase(f, f.sub.InstallPlan) != "Complete" {
			return
		}
		csv, ok := next(channel, f.sub.InstalledCSV, starting)
		if !ok {
			f.sub.State = "AtLatestKnown"
			return
		}
		name := "install-" + strings.TrimPrefix(csv, hco)
		f.plans = append(f.plans, Plan{Name: name, CSVs: []string{csv}, Phase: "RequiresApproval"})
		f.sub.InstallPlan, f.sub.State = name, "UpgradePending"
	}
}

// install plays OLM after an approval: the plan's CSV is installed and
// succeeds, and the Subscription moves on.
func install(f *fake, name string) {
	for i := range f.plans {
		if f.plans[i].Name == name {
			f.plans[i].Phase = "Complete"
			csv := f.plans[i].CSVs[0]
			f.csv[csv] = "Succeeded"
			f.sub.InstalledCSV = csv
			f.sub.State = "AtLatestKnown"
		}
	}
}

func run(t *testing.T, f *fake, csv, head string) (string, error) {
	t.Helper()
	var log strings.Builder
	now := time.Unix(0, 0)
	if f.catalog == nil {
		f.catalog = hcoCatalog(head)
	}
	err := Run(context.Background(), f, Options{
		Namespace: "openshift-cnv", Subscription: "hco-operatorhub", CSV: csv, CatalogHead: head, ReadCatalog: f.readCatalog,
		Timeout: 5 * time.Minute, Interval: 10 * time.Second, Log: &log,
		Now: func() time.Time { return now },
		Sleep: func(context.Context, time.Duration) error {
			now = now.Add(10 * time.Second)
			f.n++
			if f.tick != nil {
				f.tick(f, f.n)
			}
			return nil
		},
	})
	return log.String(), err
}

// installed is a Subscription with csv installed and Succeeded.
func installed(csv string) *fake {
	return &fake{
		sub:   Subscription{InstalledCSV: csv, InstallPlan: "install-0", State: "AtLatestKnown"},
		plans: []Plan{{Name: "install-0", CSVs: []string{csv}, Approved: true, Phase: "Complete"}},
		csv:   map[string]string{csv: "Succeeded"},
	}
}

// A first install: OLM proposes the startingCSV, whatever the head.
func TestApprovesThePinnedCSV(t *testing.T) {
	f := &fake{sub: Subscription{State: ""}, csv: map[string]string{}}
	olm(f, hcoCatalog(v4226), v4213)
	log, err := run(t, f, v4213, v4218)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log)
	}
	if strings.Join(f.approved, ",") != "install-4.21.3" || f.sub.InstalledCSV != v4213 {
		t.Errorf("approved %v, installed %s", f.approved, f.sub.InstalledCSV)
	}
}

// Several plans, one step after another, each proposed by the in-memory
// OLM only after the previous one is installed: 4.20.5 → 4.20.21 → 4.21.0
// → 4.21.3 in a catalog whose head is 4.21.3, and 4.22.2 → 4.22.5, 4.21.8 →
// 4.22.0 → 4.22.3 the same way: the route lands on the pin.
func TestWalksTheRoute(t *testing.T) {
	for _, tc := range []struct {
		from, pin, approved string
	}{
		{v4205, v4213, "install-4.20.21 install-4.21.0 install-4.21.3"},
		{v4222, v4225, "install-4.22.5"},
		{v4218, v4223, "install-4.22.0 install-4.22.3"},
		{v4213, v4226, "install-4.21.8 install-4.22.0 install-4.22.6"},
	} {
		f := installed(tc.from)
		olm(f, hcoCatalog(tc.pin), "")
		log, err := run(t, f, tc.pin, tc.pin)
		if err != nil {
			t.Fatalf("%s → %s: %v\n%s", tc.from, tc.pin, err, log)
		}
		if got := strings.Join(f.approved, " "); got != tc.approved || f.sub.InstalledCSV != tc.pin {
			t.Errorf("%s → %s: approved %q, installed %s; want %q", tc.from, tc.pin, got, f.sub.InstalledCSV, tc.approved)
		}
	}
}

// The three upgrades in the default catalog, where OLM passes the
// pin: the approver refuses before approving anything, naming where OLM
// goes. (Approving 4.20.21 and 4.21.0 and then refusing 4.21.8 would leave
// the cluster half-way, with the HyperConverged of the old minor.)
func TestRefusesBeforeApprovingWhenOLMPassesThePin(t *testing.T) {
	for _, tc := range []struct {
		from, pin, head string
		want            []string
	}{
		{v4222, v4225, v4226, []string{"offers " + v4226, `">=4.22.0 <4.22.6" includes 4.22.2`, "newer than " + v4225}},
		{v4205, v4213, v4218, []string{"installs " + v42021, "then " + v4210, "then offers " + v4218}},
		{v4218, v4223, v4226, []string{"installs " + v4220, "then offers " + v4226}},
	} {
		f := installed(tc.from)
		olm(f, hcoCatalog(tc.head), "")
		_, err := run(t, f, tc.pin, tc.head)
		if err == nil || !IsRefusal(err) {
			t.Fatalf("%s → %s: want a refusal, got %v", tc.from, tc.pin, err)
		}
		for _, w := range append(tc.want, "approves none of its InstallPlans", "does not land on "+tc.pin) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s → %s: refusal %q does not say %q", tc.from, tc.pin, err, w)
			}
		}
		if len(f.approved) != 0 || f.n != 0 {
			t.Errorf("%s → %s: approved %v after %d polls", tc.from, tc.pin, f.approved, f.n)
		}
	}
}

// The catalog is not the one the build assumed: Red Hat published 4.22.7
// after the build, whose table ends at 4.22.6. The approver reads the live
// graph first and refuses before OLM has proposed anything, saying where
// OLM lands instead (the case: 4.21.8 → 4.22.6 used to approve
// 4.22.0 and then refuse 4.22.7, leaving the cluster half-way). If the
// catalog moves after the approver read it, a proposal off the route it
// read is refused too.
func TestRefusesOnTheLiveCatalog(t *testing.T) {
	for _, from := range []string{v4222, v4218} {
		f := installed(from)
		olm(f, hcoCatalog(v4227), "")
		log, err := run(t, f, v4226, v4226)
		if err == nil || !IsRefusal(err) {
			t.Fatalf("%s: want a refusal, got %v", from, err)
		}
		for _, want := range []string{"head " + v4227, "offers " + v4227, "newer than " + v4226, "approves none of its InstallPlans", "pin where OLM lands from " + from + ": "} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: refusal %q does not say %q", from, err, want)
			}
		}
		if len(f.approved) != 0 || f.n != 0 {
			t.Errorf("%s: approved %v after %d polls", from, f.approved, f.n)
		}
		if !strings.Contains(log, "head "+v4227+", 39 bundles OLM may upgrade to; the build assumed "+v4226) {
			t.Errorf("%s: the log does not say the live head differs from the build's:\n%s", from, log)
		}
	}
	// The minor upgrade 4.21.8 → 4.22.0, which lands exactly, approved
	// on the same live catalog.
	f := installed(v4218)
	olm(f, hcoCatalog(v4227), "")
	if log, err := run(t, f, v4220, v4226); err != nil || strings.Join(f.approved, " ") != "install-4.22.0" {
		t.Fatalf("4.21.8 → 4.22.0 on a catalog ahead: %v, approved %v\n%s", err, f.approved, log)
	}
	// The registry served head 4.22.6 when the approver read it; OLM then
	// resolves on a catalog that moved to 4.22.7.
	f = installed(v4222)
	olm(f, hcoCatalog(v4227), "")
	f.catalog = hcoCatalog(v4226)
	_, err := run(t, f, v4226, v4226)
	if err == nil || !IsRefusal(err) {
		t.Fatalf("want a refusal, got %v", err)
	}
	for _, want := range []string{"install-4.22.7", "proposes " + v4227, v4222 + " → " + v4226, "the catalog moved; not approved;", "install-0 [" + v4222 + "] (approved, Complete)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	if len(f.approved) != 0 {
		t.Errorf("approved %v", f.approved)
	}
	// The catalog moves mid-route: 4.22.0 is approved on a catalog whose
	// head is the pin 4.22.6; before the next approval the approver reads
	// the graph again, finds head 4.22.7, and stops there.
	f = installed(v4218)
	olm(f, hcoCatalog(v4226), "")
	f.onApprove = func(f *fake, name string) {
		install(f, name)
		f.catalog = hcoCatalog(v4227)
		olm(f, f.catalog, "")
		f.catalog = hcoCatalog(v4227)
	}
	_, err = run(t, f, v4226, v4226)
	if err == nil || !IsRefusal(err) || strings.Join(f.approved, " ") != "install-4.22.0" || !strings.Contains(err.Error(), "from "+v4220+", OLM offers "+v4227) {
		t.Errorf("catalog moved mid-route: approved %v, err %v", f.approved, err)
	}
	if f.reads < 2 {
		t.Errorf("the approver read the catalog %d times; want once before each approval", f.reads)
	}
	// Git pins the installed CSV: nothing to do, and OLM's pending plan
	// past it is left alone.
	f = installed(v4213)
	f.plans = append(f.plans, Plan{Name: "install-new", CSVs: []string{v4216}, Phase: "RequiresApproval"})
	f.sub.InstallPlan = "install-new"
	if _, err := run(t, f, v4213, v4218); err != nil || len(f.approved) != 0 {
		t.Fatalf("pinned version installed: err %v, approved %v", err, f.approved)
	}
	// Two minors at once: OLM would walk 4.20 → 4.21 → 4.22 in a catalog
	// holding all three, but OpenShift Virtualization runs only on its own
	// OpenShift minor: refused before approving 4.20.21.
	f = installed(v4205)
	olm(f, hcoCatalog(v4226), "")
	if _, err := run(t, f, v4226, v4226); err == nil || !strings.Contains(err.Error(), "one minor release at a time") || len(f.approved) != 0 {
		t.Errorf("two minors: %v, approved %v", err, f.approved)
	}
	// A pin the catalog does not have.
	if _, err := run(t, installed(v4213), v4216, v4213); err == nil || !strings.Contains(err.Error(), v4216+" pinned in Git is not in CatalogSource openshift-marketplace/redhat-operators (channel stable, head "+v4213+")") {
		t.Errorf("pin past the head: %v", err)
	}
}

func planPhase(f *fake, name string) string {
	for _, p := range f.plans {
		if p.Name == name {
			return p.Phase
		}
	}
	return ""
}

// An approved plan is not patched again; the approver waits for its CSV.
func TestAlreadyApproved(t *testing.T) {
	f := &fake{
		sub:   Subscription{InstallPlan: "install-abc"},
		plans: []Plan{{Name: "install-abc", CSVs: []string{v4213}, Approved: true, Phase: "Installing"}},
		csv:   map[string]string{},
	}
	f.tick = func(f *fake, n int) {
		if n == 3 {
			install(f, "install-abc")
		}
	}
	if _, err := run(t, f, v4213, v4218); err != nil {
		t.Fatal(err)
	}
	if len(f.approved) != 0 {
		t.Errorf("patched an approved plan: %v", f.approved)
	}
}

// No plan ever: the approver gives up after the timeout and says so.
func TestNoPlanTimesOut(t *testing.T) {
	f := &fake{csv: map[string]string{}}
	log, err := run(t, f, v4213, v4218)
	if err == nil || !strings.Contains(err.Error(), "timed out after 5m0s") || !strings.Contains(err.Error(), "no InstallPlan yet") {
		t.Fatalf("want a timeout naming the wait, got %v", err)
	}
	if f.n != 30 || strings.Count(log, "waiting:") != 1 {
		t.Errorf("polled %d times (want 30), log %q", f.n, log)
	}
	// The Subscription appears, then a plan, in time: approved.
	f = &fake{sub: Subscription{Missing: true}, csv: map[string]string{}, onApprove: install}
	f.tick = func(f *fake, n int) {
		if n == 2 {
			f.sub.Missing = false
		}
		if n == 4 {
			f.plans = []Plan{{Name: "install-x", CSVs: []string{v4213}, Phase: "RequiresApproval"}}
			f.sub.InstallPlan = "install-x"
		}
	}
	if _, err := run(t, f, v4213, v4218); err != nil || len(f.approved) != 1 {
		t.Fatalf("late plan: %v, approved %v", err, f.approved)
	}
}

func TestRefusesANewerInstalledCSVAndFailures(t *testing.T) {
	f := &fake{sub: Subscription{InstalledCSV: v4216}, csv: map[string]string{}}
	if _, err := run(t, f, v4213, v4218); err == nil || !strings.Contains(err.Error(), "newer than "+v4213) {
		t.Errorf("installed newer: %v", err)
	}
	f = &fake{sub: Subscription{InstallPlan: "p"}, plans: []Plan{{Name: "p", CSVs: []string{v4213}, Approved: true, Phase: "Failed"}}, csv: map[string]string{}}
	if _, err := run(t, f, v4213, v4218); err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("failed plan: %v", err)
	}
	f = &fake{sub: Subscription{InstalledCSV: v4213}, csv: map[string]string{v4213: "Failed"}, csvReason: map[string]string{v4213: "ComponentUnhealthy"}}
	if _, err := run(t, f, v4213, v4218); err == nil || !strings.Contains(err.Error(), "failed (ComponentUnhealthy") {
		t.Errorf("failed CSV: %v", err)
	}
}

// A CSV OLM fails because its requirements are no longer met (seen in
// test/internal/olm: the replaced CSV's garbage collection) is checked again by
// OLM: the approver waits for it instead of failing.
func TestWaitsOnCSVRequirementsNotMet(t *testing.T) {
	f := &fake{sub: Subscription{InstalledCSV: v4213}, csv: map[string]string{v4213: "Failed"}, csvReason: map[string]string{v4213: csvRequirementsNotMet}}
	f.tick = func(f *fake, n int) {
		if n == 3 {
			f.csv[v4213] = "Pending"
			f.csvReason[v4213] = "RequirementsNotMet"
		}
		if n == 5 {
			f.csv[v4213] = "Succeeded"
			f.csvReason[v4213] = "InstallSucceeded"
		}
	}
	log, err := run(t, f, v4213, v4218)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log)
	}
	if !strings.Contains(log, "is Failed (RequirementsNotMet") || !strings.Contains(log, "Succeeded") {
		t.Errorf("log:\n%s", log)
	}
}

// The HTTP client speaks OLM's REST paths, patches with a merge patch and
// sends the token.
func TestAPI(t *testing.T) {
	var patched string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		switch r.Method + " " + r.URL.Path {
		case "GET /apis/operators.coreos.com/v1alpha1/namespaces/openshift-cnv/installplans":
			json.NewEncoder(w).Encode(map[string]any{"items": []any{map[string]any{
				"metadata": map[string]any{"name": "install-abc"},
				"spec":     map[string]any{"clusterServiceVersionNames": []string{v4213}, "approved": false},
				"status":   map[string]any{"phase": "RequiresApproval"},
			}}})
		case "PATCH /apis/operators.coreos.com/v1alpha1/namespaces/openshift-cnv/installplans/install-abc":
			b, _ := io.ReadAll(r.Body)
			patched = r.Header.Get("Content-Type") + " " + string(b)
			w.Write([]byte(`{}`))
		case "GET /apis/operators.coreos.com/v1alpha1/namespaces/openshift-marketplace/catalogsources/pinned":
			// An address-based CatalogSource: spec.address wins over any
			// registry Service (operator-framework/api CatalogSource.Address).
			w.Write([]byte(`{"spec":{"sourceType":"grpc","address":"10.0.0.7:50051"},"status":{"registryService":{"serviceName":"x","serviceNamespace":"y","port":"1"}}}`))
		case "GET /apis/operators.coreos.com/v1alpha1/namespaces/openshift-marketplace/catalogsources/starting":
			// An image-based one whose registry pod is not up yet.
			w.Write([]byte(`{"spec":{"sourceType":"grpc","image":"registry.redhat.io/redhat/redhat-operator-index:v4.22"},"status":{}}`))
		case "GET /apis/operators.coreos.com/v1alpha1/namespaces/openshift-cnv/subscriptions/hco-operatorhub":
			w.Write([]byte(`{"status":{"installedCSV":"` + v4210 + `","state":"UpgradePending","installPlanRef":{"name":"install-abc"}}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tok := t.TempDir() + "/token"
	if err := writeFile(tok, "tok\n"); err != nil {
		t.Fatal(err)
	}
	a := &API{Server: srv.URL, TokenFile: tok, Client: srv.Client()}
	ctx := context.Background()
	plans, err := a.InstallPlans(ctx, "openshift-cnv")
	if err != nil || len(plans) != 1 || plans[0].CSVs[0] != v4213 || plans[0].Approved || plans[0].Phase != "RequiresApproval" {
		t.Fatalf("InstallPlans = %+v, %v", plans, err)
	}
	sub, err := a.Subscription(ctx, "openshift-cnv", "hco-operatorhub")
	if err != nil || sub.InstalledCSV != v4210 || sub.InstallPlan != "install-abc" {
		t.Fatalf("Subscription = %+v, %v", sub, err)
	}
	if err := a.Approve(ctx, "openshift-cnv", "install-abc"); err != nil || patched != `application/merge-patch+json {"spec":{"approved":true}}` {
		t.Fatalf("Approve: %v, sent %q", err, patched)
	}
	if sub, err := a.Subscription(ctx, "openshift-cnv", "nope"); err != nil || !sub.Missing {
		t.Fatalf("Subscription of a missing one = %+v, %v", sub, err)
	}
	if csv, err := a.CSV(ctx, "openshift-cnv", v4213); err != nil || csv.Phase != "" {
		t.Fatalf("CSV of a missing CSV = %+v, %v", csv, err)
	}
	if err := a.Approve(ctx, "openshift-cnv", "nope"); err == nil {
		t.Fatal("Approve of a missing plan succeeded")
	}
	for name, want := range map[string]string{"pinned": "10.0.0.7:50051", "starting": "", "missing": ""} {
		if got, err := a.CatalogAddress(ctx, "openshift-marketplace", name); err != nil || got != want {
			t.Errorf("CatalogAddress(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

// OLM v0.42.0 may leave the plan of a CSV it has installed Installing for
// a while (catalog-operator finishes a CRD step, WaitingForApi, after
// olm-operator installed the CSV: seen in test/internal/olm), and the Subscription
// names that plan until the next one is resolved. Mid-route (4.21.8 →
// 4.22.0 → 4.22.6) the approver waits for the next plan instead of taking
// the installed CSV's plan for a proposal off the route.
func TestWaitsPastTheInstalledCSVsLingeringPlan(t *testing.T) {
	f := installed(v4218)
	olm(f, hcoCatalog(v4226), "")
	settle := f.tick
	lingering := 0
	f.onApprove = func(f *fake, name string) {
		install(f, name)
		for i := range f.plans {
			if f.plans[i].Name == name {
				f.plans[i].Phase = "Installing"
			}
		}
		lingering = 3
	}
	f.tick = func(f *fake, n int) {
		if lingering > 0 {
			lingering--
			if lingering == 0 {
				for i := range f.plans {
					if f.plans[i].Name == f.sub.InstallPlan {
						f.plans[i].Phase = "Complete"
					}
				}
			}
			return
		}
		settle(f, n)
	}
	log, err := run(t, f, v4226, v4226)
	if err != nil {
		t.Fatalf("4.21.8 → 4.22.6 with a lingering Installing plan: %v\n%s", err, log)
	}
	if got := strings.Join(f.approved, " "); got != "install-4.22.0 install-4.22.6" || f.sub.InstalledCSV != v4226 {
		t.Errorf("approved %q, installed %s; want install-4.22.0 install-4.22.6 and %s", got, f.sub.InstalledCSV, v4226)
	}
	if !strings.Contains(log, "OLM's next InstallPlan after install-4.22.0") {
		t.Errorf("the approver did not wait for OLM's next plan past the lingering one:\n%s", log)
	}
}

// The registry cannot be read yet (its pod restarting, its Service not
// ready): the approver waits, as OLM cannot resolve without it either, and
// approves once it reads the graph. A CatalogSource with no address yet is
// waited for too.
func TestWaitsForTheCatalog(t *testing.T) {
	f := installed(v4218)
	olm(f, hcoCatalog(v4220), "")
	down := 2
	var log strings.Builder
	now := time.Unix(0, 0)
	err := Run(context.Background(), f, Options{
		Namespace: "openshift-cnv", Subscription: "hco-operatorhub", CSV: v4220, CatalogHead: v4220,
		ReadCatalog: func(ctx context.Context, addr, pkg string) (*olmindex.Index, error) {
			if down > 0 {
				down--
				return nil, fmt.Errorf("rpc error: code = Unavailable desc = connection refused")
			}
			return f.readCatalog(ctx, addr, pkg)
		},
		Timeout: 5 * time.Minute, Interval: 10 * time.Second, Log: &log,
		Now:   func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error { now = now.Add(d); f.n++; f.tick(f, f.n); return nil },
	})
	if err != nil || strings.Join(f.approved, " ") != "install-4.22.0" {
		t.Fatalf("approved %v, err %v\n%s", f.approved, err, log.String())
	}
	if strings.Count(log.String(), "transient API error") != 2 || !strings.Contains(log.String(), "reading CatalogSource openshift-marketplace/redhat-operators at "+catalogAddr) {
		t.Errorf("log:\n%s", log.String())
	}
}
