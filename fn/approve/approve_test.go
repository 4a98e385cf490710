package approve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// fake is an in-memory OLM namespace: a Subscription, its InstallPlans and
// CSVs. onApprove plays OLM: what the cluster does after an approval.
type fake struct {
	sub       Subscription
	plans     []Plan
	csv       map[string]string
	approved  []string
	onApprove func(f *fake, plan string)
	// tick plays OLM between polls.
	tick func(f *fake, n int)
	n    int
}

func (f *fake) InstallPlans(context.Context, string) ([]Plan, error) { return f.plans, nil }
func (f *fake) Subscription(context.Context, string, string) (Subscription, error) {
	return f.sub, nil
}
func (f *fake) CSVPhase(_ context.Context, _, name string) (string, error) { return f.csv[name], nil }
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
	v4203  = "kubevirt-hyperconverged-operator.v4.20.3"
	v42021 = "kubevirt-hyperconverged-operator.v4.20.21"
	v4210  = "kubevirt-hyperconverged-operator.v4.21.0"
	v4213  = "kubevirt-hyperconverged-operator.v4.21.3"
	v4216  = "kubevirt-hyperconverged-operator.v4.21.6"
)

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

func run(t *testing.T, f *fake, csv string, via ...string) (string, error) {
	t.Helper()
	var log strings.Builder
	now := time.Unix(0, 0)
	err := Run(context.Background(), f, Options{
		Namespace: "openshift-cnv", Subscription: "hco-operatorhub", CSV: csv, Via: via,
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

func TestApprovesThePinnedCSV(t *testing.T) {
	f := &fake{
		sub:       Subscription{InstallPlan: "install-abc", State: "UpgradePending"},
		plans:     []Plan{{Name: "install-abc", CSVs: []string{v4213}, Phase: "RequiresApproval"}},
		csv:       map[string]string{},
		onApprove: install,
	}
	log, err := run(t, f, v4213)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log)
	}
	if strings.Join(f.approved, ",") != "install-abc" {
		t.Errorf("approved %v, want [install-abc]", f.approved)
	}
}

func TestRefusesACSVOffThePath(t *testing.T) {
	f := &fake{
		sub:   Subscription{InstalledCSV: v4213, InstallPlan: "install-new"},
		plans: []Plan{{Name: "install-old", CSVs: []string{v4213}, Approved: true, Phase: "Complete"}, {Name: "install-new", CSVs: []string{v4216}, Phase: "RequiresApproval"}},
		csv:   map[string]string{v4213: "Succeeded"},
	}
	// Git pins 4.21.3 → nothing to do: installed and Succeeded, and the
	// pending 4.21.6 plan is left alone.
	if _, err := run(t, f, v4213); err != nil || len(f.approved) != 0 {
		t.Fatalf("pinned version installed: err %v, approved %v", err, f.approved)
	}
	// Git pins 4.22.x's path but the catalog proposes 4.21.6: refused,
	// naming what it saw.
	f.sub.InstalledCSV = v4203
	_, err := run(t, f, v4210, v42021)
	if err == nil || !IsRefusal(err) {
		t.Fatalf("want a refusal, got %v", err)
	}
	for _, want := range []string{"install-new", v4216, "not on the path to " + v4210, v42021, "install-old [" + v4213 + "] (approved, Complete)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	if len(f.approved) != 0 {
		t.Errorf("approved %v", f.approved)
	}
}

// Several plans, one step after another: 4.20.3 → 4.20.21 → 4.21.0 →
// 4.21.3, each proposed only after the previous one is installed, as OLM
// does with Manual approval.
func TestWalksThePath(t *testing.T) {
	next := map[string]string{v4203: v42021, v42021: v4210, v4210: v4213}
	f := &fake{
		sub: Subscription{InstalledCSV: v4203},
		plans: []Plan{
			{Name: "install-0", CSVs: []string{v4203}, Approved: true, Phase: "Complete"},
		},
		csv:       map[string]string{v4203: "Succeeded"},
		onApprove: install,
	}
	f.tick = func(f *fake, n int) {
		// OLM resolves the next step one poll after an install.
		if f.sub.InstallPlan == "" || planPhase(f, f.sub.InstallPlan) == "Complete" {
			if csv, ok := next[f.sub.InstalledCSV]; ok {
				name := "install-" + strings.TrimPrefix(csv, "kubevirt-hyperconverged-operator.v")
				f.plans = append(f.plans, Plan{Name: name, CSVs: []string{csv}, Phase: "RequiresApproval"})
				f.sub.InstallPlan = name
			}
		}
	}
	f.sub.InstallPlan = "install-0"
	log, err := run(t, f, v4213, v42021, v4210)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log)
	}
	if got := strings.Join(f.approved, " "); got != "install-4.20.21 install-4.21.0 install-4.21.3" {
		t.Errorf("approved %q", got)
	}
	if len(f.approved) != 3 || f.sub.InstalledCSV != v4213 {
		t.Errorf("approved %v, installed %s", f.approved, f.sub.InstalledCSV)
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
	if _, err := run(t, f, v4213); err != nil {
		t.Fatal(err)
	}
	if len(f.approved) != 0 {
		t.Errorf("patched an approved plan: %v", f.approved)
	}
}

// No plan ever: the approver gives up after the timeout and says so.
func TestNoPlanTimesOut(t *testing.T) {
	f := &fake{csv: map[string]string{}}
	log, err := run(t, f, v4213)
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
	if _, err := run(t, f, v4213); err != nil || len(f.approved) != 1 {
		t.Fatalf("late plan: %v, approved %v", err, f.approved)
	}
}

func TestRefusesANewerInstalledCSVAndFailures(t *testing.T) {
	f := &fake{sub: Subscription{InstalledCSV: v4216}, csv: map[string]string{}}
	if _, err := run(t, f, v4213); err == nil || !strings.Contains(err.Error(), "newer than "+v4213) {
		t.Errorf("installed newer: %v", err)
	}
	f = &fake{sub: Subscription{InstallPlan: "p"}, plans: []Plan{{Name: "p", CSVs: []string{v4213}, Approved: true, Phase: "Failed"}}, csv: map[string]string{}}
	if _, err := run(t, f, v4213); err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("failed plan: %v", err)
	}
	f = &fake{sub: Subscription{InstalledCSV: v4213}, csv: map[string]string{v4213: "Failed"}}
	if _, err := run(t, f, v4213); err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("failed CSV: %v", err)
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
	if phase, err := a.CSVPhase(ctx, "openshift-cnv", v4213); err != nil || phase != "" {
		t.Fatalf("CSVPhase of a missing CSV = %q, %v", phase, err)
	}
	if err := a.Approve(ctx, "openshift-cnv", "nope"); err == nil {
		t.Fatal("Approve of a missing plan succeeded")
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
