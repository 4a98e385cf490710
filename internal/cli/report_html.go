package cli

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/placement"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/sizing"
)

// reportHTMLText is the page `virtc report --format html` writes: one
// self-contained file (inline CSS, no script, no external asset), from
// the same rows, placement and diagnostics as the text report.
//
//go:embed report.html
var reportHTMLText string

var reportHTMLTemplate = template.Must(template.New("report.html").Funcs(template.FuncMap{
	// pct is a per-mille width as a CSS percentage.
	"pct": func(permille int64) string { return fmt.Sprintf("%d.%d%%", permille/10, permille%10) },
	// rest is what a per-mille leaves of the whole.
	"rest": func(permille int64) int64 { return 1000 - permille },
	// dict passes named values to a sub-template.
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
}).Parse(reportHTMLText))

// htmlPage is what report.html shows.
type htmlPage struct {
	Platform string // name and version, empty without a Platform
	Pools    []htmlPool
	Tenants  []htmlTenant
	VMs      []vmReport
	Warnings []string
}

// htmlPool is a worker pool's capacity: a bar each for CPU and memory.
type htmlPool struct {
	Name    string
	Nodes   int64
	Reserve poolReserve
	// Lines are the pool's reserve as the text report states it.
	Lines []htmlLine
	CPU   htmlBar
	Mem   htmlBar
}

// htmlLine is a reserveLine for the template.
type htmlLine struct {
	Text string
	Sub  []string
}

// htmlBar splits a capacity into what running VMs request, what N+1
// keeps for the loss of the largest failure domain, and what is free, as
// per-mille widths (Over: requests and reserve exceed the capacity).
type htmlBar struct {
	Used, Reserved, Free int64 // ‰ of the capacity
	Over                 bool
	Text                 string
}

// htmlTenant is a tenant's quota use.
type htmlTenant struct {
	Name  string
	Tier  string
	Quota []htmlQuota // empty: no quota
}

// htmlQuota is one quota and what the tenant's VMs need of it.
type htmlQuota struct {
	What          string
	Used, Allowed string
	Permille      int64 // ‰ of the quota the VMs need
	Over          bool
}

// barOf splits capacity into used, reserved for the N+1 loss (capacity
// minus what remains after it) and free.
func barOf(used, capacity, remaining int64, format func(int64) string) htmlBar {
	if capacity <= 0 {
		return htmlBar{Text: "no capacity"}
	}
	reserved := capacity - remaining
	per := func(n int64) int64 { return max(0, min(1000, n*1000/capacity)) }
	b := htmlBar{Used: per(used), Over: used+reserved > capacity}
	b.Reserved = min(per(reserved), 1000-b.Used)
	b.Free = 1000 - b.Used - b.Reserved
	b.Text = fmt.Sprintf("%s used, %s reserved for N+1, %s free of %s",
		format(used), format(reserved), format(max(0, capacity-used-reserved)), format(capacity))
	return b
}

func poolsHTML(pl *placement.Result) []htmlPool {
	var out []htmlPool
	// CPU in cores, so that the four figures of a bar share a unit
	cores := func(m int64) string { return strconv.FormatFloat(float64(m)/1000, 'f', -1, 64) + " cores" }
	for _, pp := range pl.Pools {
		var lines []htmlLine
		for _, l := range reserveLines(pp) {
			lines = append(lines, htmlLine{Text: l.text, Sub: l.sub})
		}
		out = append(out, htmlPool{
			Name: pp.Pool.Name, Nodes: pp.Pool.Spec.Nodes, Reserve: reserveOf(pp), Lines: lines,
			CPU: barOf(pp.Requests.MilliCPU, pp.Capacity.MilliCPU, pp.Remaining.MilliCPU, cores),
			Mem: barOf(pp.Requests.Memory, pp.Capacity.Memory, pp.Remaining.Memory, gibText),
		})
	}
	return out
}

// tenantsHTML are the tenants' quotas against what their VMs need, as
// the build's quota check sums them (sizing.Model.Tenant, policy
// quotaFit).
func tenantsHTML(m *resolve.Model) []htmlTenant {
	var out []htmlTenant
	for _, t := range m.Tenants {
		ht := htmlTenant{Name: t.Name, Tier: t.Spec.Tier}
		if q := t.Spec.Quota; q != nil {
			u := sizing.KubeVirt.Tenant(t)
			add := func(what string, used, allowed int64, format func(int64) string) {
				hq := htmlQuota{What: what, Used: format(used), Allowed: format(allowed), Over: used > allowed}
				if allowed > 0 {
					hq.Permille = min(1000, used*1000/allowed)
				} else if used > 0 {
					hq.Permille = 1000
				}
				ht.Quota = append(ht.Quota, hq)
			}
			count := func(n int64) string { return fmt.Sprint(n) }
			bytes := func(n int64) string { q := sizing.Bytes(n); return q.String() }
			if q.VMs != nil {
				add("VMs", u.VMs, *q.VMs, count)
			}
			if q.CPU != nil {
				add("vCPUs", u.VCPUs, *q.CPU, count)
			}
			if q.Memory != nil {
				add("guest memory", u.Guest, q.Memory.Value(), bytes)
			}
			if q.Storage != nil {
				add("disks", u.Storage, q.Storage.Value(), bytes)
			}
		}
		out = append(out, ht)
	}
	return out
}

// writeReportHTML writes the page.
func writeReportHTML(w io.Writer, m *resolve.Model, rows []vmReport, pl *placement.Result, diags []diag.Diagnostic) error {
	page := htmlPage{Pools: poolsHTML(pl), Tenants: tenantsHTML(m), VMs: rows}
	if p := m.Platform; p != nil {
		page.Platform = p.Name + " " + p.Version.String()
	}
	for _, d := range diags {
		if d.Severity == diag.Warning {
			page.Warnings = append(page.Warnings, strings.TrimSuffix(diag.Format([]diag.Diagnostic{d}), "\n"))
		}
	}
	return reportHTMLTemplate.Execute(w, page)
}
