package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/alerts"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/placement"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/rules"
)

// vmReport is one row of `virtc report`, also its JSON form.
type vmReport struct {
	Tenant string `json:"tenant"`
	VM     string `json:"vm"`
	Class  string `json:"class"`
	// Classes are all the rows of the eligibility matrix the VM is in,
	// most restrictive (Class) first: it needs every row's evidence.
	Classes   []string `json:"classes"`
	Status    string   `json:"status"`
	Reasons   []string `json:"reasons,omitempty"`
	Storage   []string `json:"storageProfiles"`
	Networks  []string `json:"networkProfiles"`
	Migration string   `json:"migration"`
	Eviction  string   `json:"evictionStrategy"`
	Backup    string   `json:"backupPolicy"`
	Tier      string   `json:"tier"`
	// Environment is lab for a tenant that is not onboarded (Tenant
	// spec.environment): its conditional classes run without evidence.
	Environment string   `json:"environment,omitempty"`
	Evidence    []string `json:"evidenceRequired"`
	// Acceptance is accepted (every required check has evidence that
	// counts), conditional (some have none) or excluded.
	Acceptance string `json:"acceptance"`
	// Accepted names, per check, the Evidence that accepts it.
	Accepted []string `json:"evidenceAccepted"`
	// Missing names each required check without evidence, and why.
	Missing []string `json:"evidenceMissing"`
	// GuestHealth is none, readiness, or readiness and liveness (probes
	// on the QEMU guest agent).
	GuestHealth string `json:"guestHealth"`
	// DraftProfiles are the catalog profiles the VM uses that are not
	// promoted yet (spec.draft): no production VM may use them.
	DraftProfiles []string `json:"draftProfiles,omitempty"`
	// MigrationPolicy is the catalog policy KubeVirt applies to the VM.
	MigrationPolicy string `json:"migrationPolicy,omitempty"`
	// Placement is the VM's worker pool and eligible nodes (absent
	// without pools in the catalog).
	Placement *placementReport `json:"placement,omitempty"`
	// Monitoring says what of the VM virtc's alerts watch, and what not
	// and why (absent when the build compiles no monitoring: no Platform,
	// or spec.monitoring.enabled false).
	Monitoring []alerts.Item `json:"monitoring,omitempty"`
	// Guardrails are the rules the cluster enforces for the VM's tenant
	// (its ValidatingAdmissionPolicy), not only virtc's build.
	Guardrails guardrailsReport `json:"guardrails"`
}

// placementReport is where a VM can run.
type placementReport struct {
	Pool string `json:"pool"`
	// PoolNodes and ClusterNodes are the nodes of its pool and of all
	// pools; EligibleNodes those that can run it after every constraint.
	PoolNodes     int64 `json:"poolNodes"`
	ClusterNodes  int64 `json:"clusterNodes"`
	EligibleNodes int64 `json:"eligibleNodes"`
	// FewerThanTwo: after a node failure a restart has nowhere to go.
	FewerThanTwo bool        `json:"fewerThanTwoEligible"`
	Constraints  []string    `json:"constraints"`
	Reserve      poolReserve `json:"poolReserve"`
}

// poolReserve is a pool's capacity and maintenance reserve.
type poolReserve struct {
	VMs            int    `json:"runningVMs"`
	RequestsCPU    string `json:"requestsCPU"`
	RequestsMemory string `json:"requestsMemory"`
	CapacityCPU    string `json:"capacityCPU"`
	CapacityMemory string `json:"capacityMemory"`
	Lose           string `json:"nPlusOneLoses"`
	RemainingCPU   string `json:"remainingCPU"`
	RemainingMem   string `json:"remainingMemory"`
	NPlusOne       bool   `json:"nPlusOne"`
	// NPlusOneProblems say why N+1 fails: capacity, required spread groups.
	NPlusOneProblems []string `json:"nPlusOneProblems,omitempty"`
	DrainOK          bool     `json:"drainCompletes"`
	DrainProblems    []string `json:"drainProblems,omitempty"`
	VMsPerNode       int64    `json:"vmsPerNode"`
	Concurrent       int64    `json:"concurrentMigrations"`
	Rounds           int64    `json:"migrationRounds"`
	// FitsAllUp: the VMs fit node by node with every node up.
	FitsAllUp bool `json:"fitsAllNodesUp"`
	// NPlusOnePlacement is a placement of the VMs on the nodes left after
	// the N+1 loss, and the room each keeps; NPlusOneUnplaced the VMs it
	// leaves out.
	NPlusOnePlacement []nodeReport `json:"nPlusOnePlacement"`
	NPlusOneUnplaced  []string     `json:"nPlusOneUnplaced,omitempty"`
	// DrainStops are the VMs a drain shuts down (they cannot live-migrate);
	// DrainRestarts those of them KubeVirt restarts on another node.
	DrainStops    []string `json:"drainStops,omitempty"`
	DrainRestarts []string `json:"drainRestarts,omitempty"`
}

// nodeReport is one node of a pool in a placement.
type nodeReport struct {
	Node       int64    `json:"node"`
	Domain     int64    `json:"domain,omitempty"`
	VMs        []string `json:"vms"`
	FreeCPU    string   `json:"freeCPU"`
	FreeMemory string   `json:"freeMemory"`
}

func runReport(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("report", "PATH...", stderr)
	format := fs.String("format", "text", "text, markdown, json, or html (one self-contained page: per worker pool the capacity used, reserved for N+1 and free; per tenant its quota use; each VM's class, evidence and where it can run; the warnings)")
	fs.StringVar(format, "o", *format, "the same as --format (kubectl's -o)")
	asOf := addAsOfFlag(fs)
	paths, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	asOfDate, ok := parseAsOf("report", *asOf, stderr)
	if !ok {
		return ExitUsage
	}
	if *format != "text" && *format != "markdown" && *format != "json" && *format != "html" {
		fmt.Fprintf(stderr, "virtc report: unknown format %q (text, markdown, json or html)\n", *format)
		return ExitUsage
	}
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "virtc report: name at least one file or directory")
		return ExitUsage
	}
	req, ok := request(api.CompilerSpec{Paths: paths}, place{}, stderr)
	if !ok {
		return ExitFailed
	}
	req.AsOf = asOfDate
	batchGC()
	// The report reads the model; the manifests are rendered (and so
	// checked) but not serialized: that was a third of its time.
	res := compile.Run(req, func(o *compile.Options) { o.GateWarnings, o.ObjectsOnly = true, true }, &diag.List{})
	if code := report(res, stderr); code != ExitOK {
		return code
	}
	pl := placement.Analyze(res.Model)
	rows := reportRows(res.Model, pl)
	plan, err := alerts.Compile(res.Model, model.ScheduleName)
	if err != nil {
		fmt.Fprintf(stderr, "virtc report: monitoring: %v\n", err)
		return ExitFailed
	}
	if plan != nil {
		for i := range rows {
			rows[i].Monitoring = plan.Coverage[rows[i].Tenant+"/"+rows[i].VM]
		}
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if rows == nil {
			rows = []vmReport{}
		}
		enc.Encode(rows)
	case "html":
		if err := writeReportHTML(stdout, res.Model, rows, pl, located(res, place{})); err != nil {
			fmt.Fprintf(stderr, "virtc report: %v\n", err)
			return ExitFailed
		}
	case "markdown":
		writeReportMarkdown(stdout, rows)
		writePlacementMarkdown(stdout, rows, pl)
		writeMonitoringMarkdown(stdout, rows)
		writeGuardrailsMarkdown(stdout, res.Model)
	default:
		writeReportText(stdout, rows)
		writePlacementText(stdout, rows, pl)
		writeMonitoringText(stdout, rows)
		writeGuardrailsText(stdout, res.Model)
	}
	return ExitOK
}

func reportRows(m *resolve.Model, pl *placement.Result) []vmReport {
	var rows []vmReport
	ctx := eligibility.ContextOf(m)
	var clusterNodes int64
	reserves := map[string]poolReserve{}
	for _, pp := range pl.Pools {
		clusterNodes += pp.Pool.Spec.Nodes
		reserves[pp.Pool.Name] = reserveOf(pp)
	}
	// A production VM also needs the exact-version compatibility gate of
	// the baseline version its Platform is on or upgrading to (the build
	// refuses it without; the report shows it per VM so the acceptance
	// column is the whole truth).
	_, gate := eligibility.PlatformGate(m)
	for _, t := range m.Tenants {
		for _, vm := range t.VMs {
			r := eligibility.Classify(vm)
			a := eligibility.Accept(vm, r, ctx)
			if vm.Tier == resolve.TierProduction && a.Status != eligibility.Refused {
				for _, j := range gate {
					r.Evidence = append(r.Evidence, j.Description)
					a.Judged = append(a.Judged, j)
					if j.Evidence == "" {
						a.Status = eligibility.Pending
					}
				}
			}
			row := vmReport{
				Tenant: t.Name, VM: vm.Name, Class: r.Class.Name, Classes: r.Names(), Status: string(r.Class.Status), Reasons: r.Reasons,
				Environment: t.Spec.Environment,
				Migration:   vm.Migration, Eviction: string(model.EvictionStrategy(vm)),
				Backup: vm.Backup.Name, Tier: vm.Tier, Evidence: r.Evidence,
				Guardrails: guardrailsOf(t),
			}
			seen := map[string]bool{}
			for _, st := range append([]resolve.Storage{vm.RootStorage}, disksStorage(vm)...) {
				if !seen[st.Name] {
					seen[st.Name] = true
					row.Storage = append(row.Storage, st.Name)
				}
			}
			for _, n := range vm.Networks {
				row.Networks = append(row.Networks, n.Name)
			}
			if row.Evidence == nil {
				row.Evidence = []string{}
			}
			row.Acceptance, row.Accepted, row.Missing = a.Status, []string{}, []string{}
			for _, j := range a.Judged {
				if j.Evidence != "" {
					row.Accepted = append(row.Accepted, j.Check+": "+j.Evidence)
				} else {
					row.Missing = append(row.Missing, j.Missing())
				}
			}
			pv := pl.VMs[vm]
			row.GuestHealth = guestHealth(vm)
			for _, d := range rules.DraftProfiles(vm) {
				row.DraftProfiles = append(row.DraftProfiles, d.String())
			}
			row.MigrationPolicy = pv.Policy
			if vm.Pool != nil {
				row.Placement = &placementReport{
					Pool: vm.Pool.Name, PoolNodes: pv.Nodes, ClusterNodes: clusterNodes, EligibleNodes: pv.Eligible,
					FewerThanTwo: pv.Eligible < 2, Constraints: pv.Constraints, Reserve: reserves[vm.Pool.Name],
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// tierText is a VM's tier, marked (lab) when its tenant is not onboarded.
func tierText(r vmReport) string {
	if r.Environment != "" {
		return r.Tier + " (" + r.Environment + ")"
	}
	return r.Tier
}

func disksStorage(vm *resolve.VM) []resolve.Storage {
	var out []resolve.Storage
	for _, d := range vm.Disks {
		out = append(out, d.Storage)
	}
	return out
}

func writeReportText(w io.Writer, rows []vmReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tVM\tCLASS\tSTATUS\tACCEPTANCE\tSTORAGE\tNETWORKS\tMIGRATION\tBACKUP\tTIER")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s (%s)\t%s\t%s\n", r.Tenant, r.VM, r.Class, r.Status, r.Acceptance,
			strings.Join(r.Storage, ","), strings.Join(r.Networks, ","), r.Migration, r.Eviction, r.Backup, tierText(r))
	}
	tw.Flush()
	for _, r := range rows {
		if len(r.Missing) == 0 && len(r.Accepted) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s/%s (%s, %s):\n", r.Tenant, r.VM, strings.Join(r.Classes, ", "), r.Acceptance)
		for _, e := range r.Accepted {
			fmt.Fprintf(w, "  accepted  %s\n", e)
		}
		for _, e := range r.Missing {
			fmt.Fprintf(w, "  missing   %s\n", e)
		}
	}
}

func writeReportMarkdown(w io.Writer, rows []vmReport) {
	fmt.Fprintln(w, "| Tenant | VM | Class | Status | Acceptance | Storage | Networks | Migration | Backup | Tier | Evidence accepted | Evidence missing |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
	list := func(l []string) string {
		if len(l) == 0 {
			return "none"
		}
		return cell(strings.Join(l, "<br>"))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s (`%s`) | %s | %s | %s | %s |\n", r.Tenant, r.VM, strings.Join(r.Classes, "<br>"), r.Status, r.Acceptance,
			strings.Join(r.Storage, ", "), strings.Join(r.Networks, ", "), r.Migration, r.Eviction, r.Backup, tierText(r), list(r.Accepted), list(r.Missing))
	}
}

// writeMonitoringText lists, per VM, what virtc's alerts watch and what
// they do not (and why).
func writeMonitoringText(w io.Writer, rows []vmReport) {
	if !slices.ContainsFunc(rows, func(r vmReport) bool { return len(r.Monitoring) > 0 }) {
		return
	}
	fmt.Fprintln(w, "\nMonitoring (alerts virtc compiles; spec.monitoring of the Platform):")
	for _, r := range rows {
		fmt.Fprintf(w, "\n%s/%s (%s):\n", r.Tenant, r.VM, r.Tier)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, it := range r.Monitoring {
			alert := it.Alert
			if alert == "" {
				alert = "-"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", it.What, alert, it.Detail)
		}
		tw.Flush()
	}
}

// writeMonitoringMarkdown is writeMonitoringText as a table.
func writeMonitoringMarkdown(w io.Writer, rows []vmReport) {
	if !slices.ContainsFunc(rows, func(r vmReport) bool { return len(r.Monitoring) > 0 }) {
		return
	}
	fmt.Fprint(w, "\n## Monitoring\n\n")
	fmt.Fprintln(w, "| Tenant | VM | Watched | Not watched |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, r := range rows {
		var watched, not []string
		for _, it := range r.Monitoring {
			if it.Alert != "" {
				watched = append(watched, it.What+": "+it.Alert+" ("+it.Detail+")")
			} else {
				not = append(not, it.What+": "+strings.TrimPrefix(it.Detail, "not watched: "))
			}
		}
		cell := func(l []string) string {
			if len(l) == 0 {
				return "none"
			}
			return strings.ReplaceAll(strings.Join(l, "<br>"), "|", "\\|")
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.Tenant, r.VM, cell(watched), cell(not))
	}
}
