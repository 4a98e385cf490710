// Package approve is the InstallPlan approver: the logic of `virtc
// approve-installplan`, which an Argo CD Sync hook Job runs beside each
// operator Subscription virtc compiles (render.Approver).
//
// virtc keeps installPlanApproval: Manual, so OLM installs nothing Git did
// not ask for. OLM then proposes one InstallPlan at a time for the
// Subscription (operator-framework/operator-lifecycle-manager
// pkg/controller/operators/catalog/operator.go, syncResolvingNamespace: a
// Manual Subscription's plan is created with spec.approved false and its
// status.installPlanRef names it; the next step is resolved only after the
// CSV of the approved plan is installed).
//
// Before it approves anything, the approver reads the upgrade graph of
// the catalog the Subscription really installs from (its CatalogSource's
// registry, over the gRPC call OLM's resolver reads it with:
// internal/olmindex ListBundles), not the catalog the build assumed: Red
// Hat publishes z-streams after any virtc binary was built. On that graph
// it models OLM's route from the installed CSV as OLM's resolver chooses
// (versions.Channel.Route: the bundle nearest the channel head whose
// replaces, skips or olm.skipRange names the installed CSV,
// operator-lifecycle-manager v0.42.0 pkg/controller/registry/resolver/
// resolver.go), and refuses at once, naming the CSVs and where OLM does
// land, when OLM would pass the pin or stop before it: the cluster is left
// as it was instead of half-way. It reads the graph again before each
// further approval, approves a plan only when it lists the next CSV of
// that route, waits for the pinned CSV to succeed, and otherwise fails,
// naming the CSVs it saw.
package approve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/virtc/virtc/internal/olmindex"
	"github.com/virtc/virtc/internal/versions"
)

// Plan is what the approver reads of an InstallPlan.
type Plan struct {
	Name string
	// CSVs are spec.clusterServiceVersionNames.
	CSVs []string
	// Approved is spec.approved.
	Approved bool
	// Phase is status.phase (RequiresApproval, Installing, Complete,
	// Failed …).
	Phase string
}

// Subscription is what the approver reads of a Subscription's status.
type Subscription struct {
	// InstalledCSV is status.installedCSV: empty before the first install.
	InstalledCSV string
	// CurrentCSV is status.currentCSV: the CSV OLM is moving to.
	CurrentCSV string
	// State is status.state (UpgradePending, AtLatestKnown …).
	State string
	// InstallPlan is status.installPlanRef.name: the plan of the step OLM
	// proposes now.
	InstallPlan string
	// Package, Channel, Source and SourceNamespace are spec.name,
	// spec.channel, spec.source and spec.sourceNamespace: the catalog and
	// channel OLM resolves the Subscription in.
	Package, Channel, Source, SourceNamespace string
	// Missing: the Subscription does not exist (yet: Argo CD may create the
	// hook before it in the same wave).
	Missing bool
}

// Cluster is the little of the API the approver uses: in its namespace,
// the verbs of its Role (get/list/patch installplans, get subscriptions,
// get clusterserviceversions), and in the catalog's namespace get of the
// Subscription's CatalogSource.
type Cluster interface {
	// CatalogAddress is the registry address of a CatalogSource (its
	// spec.address, else status.registryService: operator-framework/api
	// v0.42.0 pkg/operators/v1alpha1/catalogsource_types.go
	// CatalogSource.Address), "" while it has none or does not exist.
	CatalogAddress(ctx context.Context, namespace, name string) (string, error)
	InstallPlans(ctx context.Context, namespace string) ([]Plan, error)
	Approve(ctx context.Context, namespace, name string) error
	Subscription(ctx context.Context, namespace, name string) (Subscription, error)
	// CSV is a ClusterServiceVersion's status, Phase "" when it does not
	// exist (yet).
	CSV(ctx context.Context, namespace, name string) (CSVStatus, error)
}

// CSVStatus is a ClusterServiceVersion's status.phase, reason and message.
type CSVStatus struct {
	Phase, Reason, Message string
}

// csvRequirementsNotMet is the reason OLM fails an installed CSV with when
// its requirements are no longer met. OLM's Failed phase checks them again
// and returns the CSV to Pending when they are (operator-lifecycle-manager
// v0.42.0 pkg/controller/operators/olm/operator.go, transitionCSVState,
// cases CSVPhaseSucceeded and CSVPhaseFailed): the old CSV's garbage
// collection during a replacement can leave the new one's briefly unmet.
const csvRequirementsNotMet = "RequirementsNotMet"

// Options say what to approve.
type Options struct {
	Namespace    string
	Subscription string
	// CSV is the CSV Git pins (kubevirt-hyperconverged-operator.v4.22.3).
	CSV string
	// CatalogHead is the channel head of the catalog the Subscription
	// installs from, as the build assumed it (the CSV of
	// versions.DefaultHead, of spec.catalogSource.head, or of the catalog
	// file the build was given): the approver decides on the live
	// catalog, and says when its head differs from this one.
	CatalogHead string
	// ReadCatalog reads the graph of package pkg from a registry address;
	// nil: olmindex.ListBundles.
	ReadCatalog func(ctx context.Context, addr, pkg string) (*olmindex.Index, error)
	// Timeout bounds the whole run; Interval is the polling period.
	Timeout, Interval time.Duration
	Log               io.Writer
	// Sleep waits (tests make it advance a fake clock); nil: time.Sleep
	// bounded by ctx.
	Sleep func(context.Context, time.Duration) error
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Error is a refusal: the cluster proposes something Git did not ask for.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Run approves the InstallPlans on OLM's route to o.CSV and returns when
// that CSV has succeeded. It fails at once, before approving anything, when
// OLM's route from the installed CSV does not land on o.CSV; when the
// current plan lists a CSV other than the route's next one; when the
// installed CSV is newer than o.CSV; when an InstallPlan or the CSV
// failed; or on a permanent API error (Transient); and after o.Timeout when
// OLM proposes nothing or the API keeps failing transiently (retried with
// backoff until then).
func Run(ctx context.Context, c Cluster, o Options) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.ReadCatalog == nil {
		o.ReadCatalog = func(ctx context.Context, addr, pkg string) (*olmindex.Index, error) {
			return olmindex.ListBundles(ctx, addr, pkg)
		}
	}
	pin, err := versions.CSVVersion(o.CSV)
	if err != nil {
		return fmt.Errorf("--csv: %v", err)
	}
	if o.CatalogHead != "" {
		if _, err := versions.CSVVersion(o.CatalogHead); err != nil {
			return fmt.Errorf("--catalog-head: %v", err)
		}
	}
	st := &state{pin: pin}
	deadline := o.Now().Add(o.Timeout)
	var waiting string
	var backoff time.Duration
	for {
		done, why, err := step(ctx, c, o, st)
		if err != nil && Transient(err) {
			// The API server restarting, a load balancer dropping the
			// connection, throttling, a conflict: the next look may pass.
			// One such error used to fail the Job and with it the sync
			// (backoffLimit 0); now it waits, up to the same deadline.
			backoff = nextBackoff(backoff, o.Interval, err)
			if !o.Now().Add(backoff).Before(deadline) {
				return fmt.Errorf("timed out after %s retrying a transient API error: %w", o.Timeout, err)
			}
			fmt.Fprintf(o.Log, "transient API error, retrying in %s: %v\n", backoff, err)
			if err := o.Sleep(ctx, backoff); err != nil {
				return err
			}
			continue
		}
		backoff = 0
		if err != nil || done {
			return err
		}
		if why != waiting {
			fmt.Fprintf(o.Log, "waiting: %s\n", why)
			waiting = why
		}
		if !o.Now().Before(deadline) {
			plans, _ := c.InstallPlans(ctx, o.Namespace)
			return &Error{fmt.Sprintf("timed out after %s waiting for %s in %s (%s); InstallPlans seen: %s", o.Timeout, o.CSV, o.Namespace, why, describe(plans))}
		}
		if err := o.Sleep(ctx, o.Interval); err != nil {
			return err
		}
	}
}

// state is what the approver keeps between looks.
type state struct {
	pin versions.Version
	// live is the Subscription's channel as last read from its catalog;
	// stale: read it again before judging a proposal.
	live  *versions.Channel
	stale bool
	// told: the live catalog's head was logged.
	told string
}

// catalogError is a failure to read the live catalog over the network:
// the registry pod restarting, its Service not ready yet. OLM cannot
// resolve without it either; the approver waits.
type catalogError struct{ err error }

func (e *catalogError) Error() string { return e.err.Error() }
func (e *catalogError) Unwrap() error { return e.err }

// readChannel reads the Subscription's channel from its CatalogSource's
// registry: "" and why when it cannot yet.
func readChannel(ctx context.Context, c Cluster, o Options, st *state, sub Subscription) (string, error) {
	if sub.Source == "" || sub.SourceNamespace == "" || sub.Package == "" {
		return "", &Error{fmt.Sprintf("Subscription %s/%s names no catalog (spec.source, spec.sourceNamespace, spec.name): the approver cannot read the graph OLM resolves in", o.Namespace, o.Subscription)}
	}
	addr, err := c.CatalogAddress(ctx, sub.SourceNamespace, sub.Source)
	if err != nil {
		return "", err
	}
	if addr == "" {
		return fmt.Sprintf("CatalogSource %s/%s has no registry address yet", sub.SourceNamespace, sub.Source), nil
	}
	ix, err := o.ReadCatalog(ctx, addr, sub.Package)
	if err != nil {
		if ix == nil {
			return "", &catalogError{fmt.Errorf("reading CatalogSource %s/%s at %s: %w", sub.SourceNamespace, sub.Source, addr, err)}
		}
		return "", &Error{fmt.Sprintf("CatalogSource %s/%s: %v", sub.SourceNamespace, sub.Source, err)}
	}
	ch, err := ix.Channel(sub.Package, sub.Channel, func(v versions.Version) string { return csvName(o.CSV, v) })
	if err != nil {
		// What OLM's resolution fails on too (no such channel, no single
		// replaces chain): nothing to approve.
		return "", &Error{fmt.Sprintf("CatalogSource %s/%s: %v", sub.SourceNamespace, sub.Source, err)}
	}
	st.live, st.stale = ch, false
	head := ch.CSV(ch.Head())
	if head != st.told {
		st.told = head
		assumed := ""
		if o.CatalogHead != "" && o.CatalogHead != head {
			assumed = fmt.Sprintf("; the build assumed %s", o.CatalogHead)
		}
		fmt.Fprintf(o.Log, "catalog: CatalogSource %s/%s, package %s, channel %s: head %s, %d bundles OLM may upgrade to%s\n",
			sub.SourceNamespace, sub.Source, sub.Package, ch.Name, head, len(ch.Bundles), assumed)
	}
	return "", nil
}

// csvName names version v as the pinned CSV names its version
// (<operator>.v<x.y.z>).
func csvName(pinned string, v versions.Version) string {
	op, _, _ := strings.Cut(pinned, ".v")
	return op + ".v" + v.String()
}

// landings are where OLM's upgrade from v stops, in order: each CSV it
// installs on its own, up to where it offers nothing more.
func landings(ch *versions.Channel, from versions.Version) []string {
	var out []string
	for cur, i := from, 0; i <= len(ch.Bundles); i++ {
		b, _, ok := ch.Next(cur)
		if !ok {
			break
		}
		out = append(out, b.Name)
		cur = b.Version
	}
	return out
}

// route is OLM's route on the live channel from the installed CSV to the
// pin: the CSV a plan may list next, and the route for messages; or a
// refusal.
func route(o Options, st *state, sub Subscription) (next, desc string, err error) {
	ch, pin := st.live, st.pin
	source := fmt.Sprintf("CatalogSource %s/%s (channel %s, head %s)", sub.SourceNamespace, sub.Source, ch.Name, ch.CSV(ch.Head()))
	if sub.InstalledCSV == "" {
		if !ch.Has(pin) {
			return "", "", &Error{fmt.Sprintf("%s pinned in Git is not in %s: OLM cannot install it; the approver approves none of its InstallPlans", o.CSV, source)}
		}
		return o.CSV, "a first install of " + o.CSV + " (spec.startingCSV)", nil
	}
	from, err := versions.CSVVersion(sub.InstalledCSV)
	if err != nil {
		return "", "", &Error{fmt.Sprintf("Subscription %s/%s has %s installed: %v", o.Namespace, o.Subscription, sub.InstalledCSV, err)}
	}
	if sub.Package == versions.HCOChannelPackage {
		if err := versions.CheckMinors(from, pin); err != nil {
			return "", "", &Error{fmt.Sprintf("Subscription %s/%s has %s installed: %v; the approver approves none of its InstallPlans", o.Namespace, o.Subscription, sub.InstalledCSV, err)}
		}
	}
	instead := "the catalog offers no upgrade from " + sub.InstalledCSV
	if l := landings(ch, from); len(l) > 0 {
		instead = "pin where OLM lands from " + sub.InstalledCSV + ": " + strings.Join(l, " or ")
	}
	if !ch.Has(pin) {
		return "", "", &Error{fmt.Sprintf("%s pinned in Git is not in %s: OLM cannot install it; the approver approves none of its InstallPlans (%s)", o.CSV, source, instead)}
	}
	r := ch.Route(from, pin)
	if !r.Reached {
		return "", "", &Error{fmt.Sprintf("Subscription %s/%s: OLM's upgrade in %s does not land on %s pinned in Git: %s; the approver approves none of its InstallPlans (%s; or name a catalog image whose channel head is the pin in the Platform's spec.catalogSource)", o.Namespace, o.Subscription, source, o.CSV, r.Explain(), instead)}
	}
	var csvs []string
	for _, s := range r.Steps {
		csvs = append(csvs, ch.CSV(s.Version))
	}
	return csvs[0], sub.InstalledCSV + " → " + strings.Join(csvs, " → "), nil
}

// step looks once: done when the pinned CSV succeeded; otherwise what it
// waits for, or a refusal.
func step(ctx context.Context, c Cluster, o Options, st *state) (bool, string, error) {
	sub, err := c.Subscription(ctx, o.Namespace, o.Subscription)
	if err != nil {
		return false, "", err
	}
	if sub.Missing {
		return false, fmt.Sprintf("Subscription %s/%s does not exist yet", o.Namespace, o.Subscription), nil
	}
	if sub.InstalledCSV != "" && newer(sub.InstalledCSV, o.CSV) {
		return false, "", &Error{fmt.Sprintf("Subscription %s/%s has %s installed, newer than %s pinned in Git: OLM does not downgrade; pin %s or later in Git", o.Namespace, o.Subscription, sub.InstalledCSV, o.CSV, sub.InstalledCSV)}
	}
	if sub.InstalledCSV == o.CSV {
		csv, err := c.CSV(ctx, o.Namespace, o.CSV)
		switch {
		case err != nil:
			return false, "", err
		case csv.Phase == "Succeeded":
			fmt.Fprintf(o.Log, "%s is installed and Succeeded\n", o.CSV)
			return true, "", nil
		case csv.Phase == "Failed" && csv.Reason == csvRequirementsNotMet:
			return false, fmt.Sprintf("ClusterServiceVersion %s is Failed (%s: %s), which OLM checks again", o.CSV, csv.Reason, csv.Message), nil
		case csv.Phase == "Failed":
			return false, "", &Error{fmt.Sprintf("ClusterServiceVersion %s/%s failed (%s: %s)", o.Namespace, o.CSV, orNone(csv.Reason), csv.Message)}
		}
		return false, fmt.Sprintf("ClusterServiceVersion %s is %s", o.CSV, orNone(csv.Phase)), nil
	}
	plans, err := c.InstallPlans(ctx, o.Namespace)
	if err != nil {
		return false, "", err
	}
	p, pending, why := proposal(o, sub, plans)
	// The graph is read before anything is judged, and again before each
	// approval: the catalog may have moved since (Red Hat publishing, a
	// cluster upgrade moving redhat-operators to the next minor's index).
	if st.live == nil || st.stale || pending {
		if why, err := readChannel(ctx, c, o, st, sub); err != nil || why != "" {
			return false, why, err
		}
	}
	next, desc, err := route(o, st, sub)
	if err != nil {
		return false, "", err
	}
	if p == nil {
		return false, why, nil
	}
	if len(p.CSVs) != 1 || p.CSVs[0] != next {
		return false, "", &Error{fmt.Sprintf("InstallPlan %s/%s proposes %s, but OLM's route to %s pinned in Git goes %s, next %s, in CatalogSource %s/%s as read (head %s): the catalog moved; not approved; InstallPlans seen: %s",
			o.Namespace, p.Name, strings.Join(p.CSVs, ", "), o.CSV, desc, next, sub.SourceNamespace, sub.Source, st.live.CSV(st.live.Head()), describe(plans))}
	}
	if p.Phase == "Failed" {
		return false, "", &Error{fmt.Sprintf("InstallPlan %s/%s (%s) failed", o.Namespace, p.Name, strings.Join(p.CSVs, ", "))}
	}
	if !p.Approved {
		if err := c.Approve(ctx, o.Namespace, p.Name); err != nil {
			return false, "", fmt.Errorf("approving InstallPlan %s/%s: %w", o.Namespace, p.Name, err)
		}
		st.stale = true
		fmt.Fprintf(o.Log, "approved InstallPlan %s (%s) on the route %s\n", p.Name, strings.Join(p.CSVs, ", "), desc)
	}
	return false, fmt.Sprintf("InstallPlan %s (%s) is approved, %s", p.Name, strings.Join(p.CSVs, ", "), orNone(p.Phase)), nil
}

// proposal is the plan OLM proposes now, if there is one to judge, and
// whether it awaits approval; else what the approver waits for.
func proposal(o Options, sub Subscription, plans []Plan) (*Plan, bool, string) {
	if sub.InstallPlan == "" {
		return nil, false, fmt.Sprintf("no InstallPlan yet for Subscription %s (installed: %s)", o.Subscription, orNone(sub.InstalledCSV))
	}
	i := slices.IndexFunc(plans, func(p Plan) bool { return p.Name == sub.InstallPlan })
	if i < 0 {
		return nil, false, fmt.Sprintf("InstallPlan %s of Subscription %s not found yet", sub.InstallPlan, o.Subscription)
	}
	p := plans[i]
	if p.Approved && (p.Phase == "Complete" || sub.InstalledCSV != "" && slices.Equal(p.CSVs, []string{sub.InstalledCSV})) {
		// The Subscription still names the plan of the installed CSV:
		// OLM has not resolved the next step yet. That plan may still be
		// Installing after its CSV succeeded (catalog-operator finishes a
		// CRD step, WaitingForApi, after olm-operator installed the CSV:
		// seen with OLM v0.42.0 in test/internal/olm); OLM never proposes the
		// installed CSV again, so it is not a proposal to judge.
		return nil, false, fmt.Sprintf("OLM's next InstallPlan after %s (installed: %s)", p.Name, orNone(sub.InstalledCSV))
	}
	if len(p.CSVs) == 0 {
		return nil, false, fmt.Sprintf("InstallPlan %s lists no CSV yet", p.Name)
	}
	return &p, !p.Approved, ""
}

func describe(plans []Plan) string {
	if len(plans) == 0 {
		return "none"
	}
	var out []string
	for _, p := range plans {
		state := "not approved"
		if p.Approved {
			state = "approved"
		}
		out = append(out, fmt.Sprintf("%s [%s] (%s, %s)", p.Name, strings.Join(p.CSVs, ", "), state, orNone(p.Phase)))
	}
	return strings.Join(out, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// newer reports whether CSV a is a later version of the same operator as
// b (names <package>.v<x.y.z>).
func newer(a, b string) bool {
	pa, va, ok1 := strings.Cut(a, ".v")
	pb, vb, ok2 := strings.Cut(b, ".v")
	if !ok1 || !ok2 || pa != pb {
		return false
	}
	x, err1 := versions.Parse(va)
	y, err2 := versions.Parse(vb)
	return err1 == nil && err2 == nil && x.Compare(y) > 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Transient reports whether err is an API error worth retrying: the
// connection failed or timed out, or the server answered 429 (throttled),
// 409 (a conflict on the patch) or 5xx. Everything else is permanent and
// fails at once: 401/403 (the token or the Role is wrong), another 4xx (a
// request the server will never accept), a certificate the pod does not
// trust, and the approver's own refusals.
func Transient(err error) bool {
	if err == nil || IsRefusal(err) {
		return false
	}
	var ce *catalogError
	if errors.As(err, &ce) {
		return true
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == http.StatusTooManyRequests || apiErr.Code == http.StatusConflict || apiErr.Code >= 500
	}
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	if errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &opErr) || errors.As(err, &dnsErr) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// nextBackoff doubles the wait from one second up to the polling interval,
// or waits what the server's Retry-After asks (at most a minute).
func nextBackoff(prev, interval time.Duration, err error) time.Duration {
	d := min(max(2*prev, time.Second), max(interval, time.Second))
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.RetryAfter > d {
		d = min(apiErr.RetryAfter, time.Minute)
	}
	return d
}

// IsRefusal reports whether err is the approver refusing what it saw.
func IsRefusal(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
