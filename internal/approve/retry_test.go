package approve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// olmServer plays the API server for one Subscription with one InstallPlan
// of v4213: the plan is approved by a PATCH, and from then on the CSV is
// installed and Succeeded. fail, when set, answers a request instead (its
// status code; 0 passes the request on).
type olmServer struct {
	mu       sync.Mutex
	approved bool
	requests []string
	fail     func(n int, r *http.Request) int
}

func (s *olmServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	if s.fail != nil {
		if code := s.fail(len(s.requests), r); code != 0 {
			if code == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "3")
			}
			http.Error(w, `{"kind":"Status","message":"injected"}`, code)
			return
		}
	}
	const base = "/apis/operators.coreos.com/v1alpha1/namespaces/openshift-cnv/"
	if r.URL.Path == "/apis/operators.coreos.com/v1alpha1/namespaces/openshift-marketplace/catalogsources/redhat-operators" {
		// An image-based CatalogSource: OLM runs its registry behind a
		// Service and records it in status.registryService.
		json.NewEncoder(w).Encode(map[string]any{"spec": map[string]any{"sourceType": "grpc", "image": "registry.redhat.io/redhat/redhat-operator-index:v4.22"},
			"status": map[string]any{"registryService": map[string]any{"protocol": "grpc", "serviceName": "redhat-operators", "serviceNamespace": "openshift-marketplace", "port": "50051"}}})
		return
	}
	switch r.Method + " " + strings.TrimPrefix(r.URL.Path, base) {
	case "GET subscriptions/hco-operatorhub":
		st := map[string]any{"state": "UpgradePending", "currentCSV": v4213, "installPlanRef": map[string]any{"name": "install-abc"}}
		if s.approved {
			st = map[string]any{"state": "AtLatestKnown", "currentCSV": v4213, "installedCSV": v4213, "installPlanRef": map[string]any{"name": "install-abc"}}
		}
		json.NewEncoder(w).Encode(map[string]any{"spec": subSpec, "status": st})
	case "GET installplans":
		phase := "RequiresApproval"
		if s.approved {
			phase = "Complete"
		}
		json.NewEncoder(w).Encode(map[string]any{"items": []any{map[string]any{
			"metadata": map[string]any{"name": "install-abc"},
			"spec":     map[string]any{"clusterServiceVersionNames": []string{v4213}, "approved": s.approved},
			"status":   map[string]any{"phase": phase},
		}}})
	case "PATCH installplans/install-abc":
		s.approved = true
		w.Write([]byte(`{}`))
	case "GET clusterserviceversions/" + v4213:
		json.NewEncoder(w).Encode(map[string]any{"status": map[string]any{"phase": "Succeeded"}})
	default:
		http.NotFound(w, r)
	}
}

// subSpec is the Subscription's spec as virtc renders it.
var subSpec = map[string]any{"name": "kubevirt-hyperconverged", "channel": "stable", "source": "redhat-operators", "sourceNamespace": "openshift-marketplace", "installPlanApproval": "Manual"}

// runAPI runs the approver against srv with a fake clock that advances by
// each wait; it returns the log, the error and the waits.
func runAPI(t *testing.T, srv *httptest.Server, timeout time.Duration) (string, error, []time.Duration) {
	t.Helper()
	tok := t.TempDir() + "/token"
	if err := writeFile(tok, "tok\n"); err != nil {
		t.Fatal(err)
	}
	a := &API{Server: srv.URL, TokenFile: tok, Client: srv.Client()}
	var log strings.Builder
	var waits []time.Duration
	now := time.Unix(0, 0)
	err := Run(context.Background(), a, Options{
		Namespace: "openshift-cnv", Subscription: "hco-operatorhub", CSV: v4213, CatalogHead: v4218,
		ReadCatalog: (&fake{catalog: hcoCatalog(v4218)}).readCatalog,
		Timeout:     timeout, Interval: 10 * time.Second, Log: &log,
		Now: func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error {
			waits = append(waits, d)
			now = now.Add(d)
			return nil
		},
	})
	return log.String(), err, waits
}

// A transient failure of each kind on the way, then success: the Job
// approves the plan and ends well, having waited with backoff.
func TestRetriesTransientAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int
		wait time.Duration
	}{
		{"503 from a restarting API server", http.StatusServiceUnavailable, time.Second},
		{"500", http.StatusInternalServerError, time.Second},
		{"429 throttled, Retry-After honoured", http.StatusTooManyRequests, 3 * time.Second},
		{"409 conflict on the patch", http.StatusConflict, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &olmServer{}
			failed := 0
			s.fail = func(_ int, r *http.Request) int {
				// Fail twice: the first Subscription read (or the PATCH,
				// for 409) and the next try.
				target := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/subscriptions/hco-operatorhub")
				if tc.code == http.StatusConflict {
					target = r.Method == http.MethodPatch
				}
				if target && failed < 2 {
					failed++
					return tc.code
				}
				return 0
			}
			srv := httptest.NewServer(s)
			defer srv.Close()
			log, err, waits := runAPI(t, srv, 5*time.Minute)
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, log)
			}
			if !s.approved {
				t.Errorf("the plan was not approved; requests %v", s.requests)
			}
			if strings.Count(log, "transient API error") != 2 {
				t.Errorf("want two retries logged:\n%s", log)
			}
			if len(waits) < 2 || waits[0] != tc.wait {
				t.Errorf("waits %v, want the first %s", waits, tc.wait)
			}
			if tc.code != http.StatusTooManyRequests && waits[1] != 2*waits[0] {
				t.Errorf("waits %v: want the backoff doubled", waits)
			}
		})
	}
}

// An API that keeps failing: the Job retries until its deadline, then
// fails naming the last error.
func TestTransientErrorsUntilTheDeadline(t *testing.T) {
	s := &olmServer{fail: func(int, *http.Request) int { return http.StatusServiceUnavailable }}
	srv := httptest.NewServer(s)
	defer srv.Close()
	log, err, waits := runAPI(t, srv, 2*time.Minute)
	if err == nil || !strings.Contains(err.Error(), "timed out after 2m0s retrying a transient API error") || !strings.Contains(err.Error(), "503 Service Unavailable") {
		t.Fatalf("got %v, want the deadline with the last error\n%s", err, log)
	}
	var total time.Duration
	for _, w := range waits {
		total += w
		if w > 10*time.Second {
			t.Errorf("waited %s, more than the polling interval", w)
		}
	}
	if total > 2*time.Minute || total < 90*time.Second {
		t.Errorf("waited %s in all (%v), want close to the 2m deadline", total, waits)
	}
}

// Permanent errors fail at once, after one request: the approver's token
// or Role is wrong, and waiting does not fix that.
func TestPermanentAPIErrorsFailAtOnce(t *testing.T) {
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusBadRequest} {
		s := &olmServer{fail: func(int, *http.Request) int { return code }}
		srv := httptest.NewServer(s)
		log, err, waits := runAPI(t, srv, 5*time.Minute)
		srv.Close()
		if err == nil || Transient(err) || len(waits) != 0 || len(s.requests) != 1 {
			t.Errorf("%d: got %v after %d requests and waits %v, want a failure at once\n%s", code, err, len(s.requests), waits, log)
		}
	}
}

// A connection refused (the API server's address down) is transient.
func TestConnectionErrorsAreTransient(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	a := &API{Server: "http://" + addr, Client: &http.Client{Timeout: 5 * time.Second}}
	_, err = a.Subscription(context.Background(), "openshift-cnv", "hco-operatorhub")
	if err == nil || !Transient(err) {
		t.Errorf("connection refused: %v, want transient", err)
	}
	if !Transient(io.ErrUnexpectedEOF) || !Transient(&net.DNSError{Err: "timeout", IsTimeout: true}) {
		t.Error("EOF and DNS errors are transient")
	}
	if Transient(&Error{"refused"}) || Transient(errors.New("x")) {
		t.Error("refusals and unknown errors are permanent")
	}
}

// A certificate the pod does not trust is misconfiguration: permanent. A
// server that does not answer within the client's timeout: transient.
func TestCertificateAndTimeoutErrors(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(&olmServer{})
	defer tlsSrv.Close()
	a := &API{Server: tlsSrv.URL, Client: &http.Client{Timeout: 5 * time.Second}}
	if _, err := a.Subscription(context.Background(), "openshift-cnv", "hco-operatorhub"); err == nil || Transient(err) {
		t.Errorf("untrusted certificate: %v, want a permanent error", err)
	}
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer slow.Close()
	defer close(release)
	a = &API{Server: slow.URL, Client: &http.Client{Timeout: 50 * time.Millisecond}}
	if _, err := a.Subscription(context.Background(), "openshift-cnv", "hco-operatorhub"); err == nil || !Transient(err) {
		t.Errorf("client timeout: %v, want transient", err)
	}
}
