package bench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Table writes the results as one Markdown table, followed by the targets
// of issue 9 with the measured figures (reported, not asserted).
func Table(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| VMs | tenants | objects | output | (1) virtc build | (1) peak RSS | (1) VMs/s | (2) kustomize + virtc fn | (2) peak RSS | virtc fn alone | fn share of (2) | (3) kustomize pass-through | (3) peak RSS | 1/3 | 2/3 | runs | load 1 min |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		objects := "-"
		if r.Objects > 0 {
			objects = fmt.Sprint(r.Objects)
		}
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s → %s |\n",
			r.VMs, r.Tenants, objects, formatBytes(r.Virtc.Output),
			wall(r.Virtc), rss(r.Virtc), rate(r.VMs, r.Virtc),
			wall(r.KRM), rss(r.KRM), wall(r.Fn), share(r.Fn, r.KRM), wall(r.Anchor), rss(r.Anchor),
			ratio(r.Virtc, r.Anchor), ratio(r.KRM, r.Anchor), runs(r), r.LoadBefore, r.LoadAfter)
	}
}

// Comparison writes the baseline's virtc build beside this one's, when the
// session had a baseline.
func Comparison(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| VMs | baseline virtc build | baseline peak RSS | virtc build | peak RSS | speed-up |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		speedup := "-"
		if measured(r.Baseline) && measured(r.Virtc) && r.Virtc.Wall > 0 {
			speedup = fmt.Sprintf("%.1f×", r.Baseline.Wall.Seconds()/r.Virtc.Wall.Seconds())
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s |\n", r.VMs, wall(r.Baseline), rss(r.Baseline), wall(r.Virtc), rss(r.Virtc), speedup)
	}
}

// Targets writes each target of the issue with its measured figure.
func Targets(w io.Writer, rows []Row) {
	by := map[int]Row{}
	for _, r := range rows {
		by[r.VMs] = r
	}
	line := func(format string, args ...any) { fmt.Fprintf(w, "- "+format+"\n", args...) }
	if r, ok := by[1]; ok && measured(r.Virtc) {
		line("one-VM tenant: virtc build %s wall (target < 50 ms)", formatDuration(r.Virtc.Wall))
	}
	if r, ok := by[1000]; ok && measured(r.Virtc) {
		line("1,000 VMs: virtc build / kustomize pass-through = %s (target ≤ 1/20 = 0.05)", ratio(r.Virtc, r.Anchor))
		switch {
		case measured(r.KRM) && measured(r.Fn):
			line("1,000 VMs: virtc as the KRM function takes %s of the %s kustomize build with it: %s (target ≤ 10%%)", wall(r.Fn), wall(r.KRM), share(r.Fn, r.KRM))
		case r.KRM.Missing != "":
			line("1,000 VMs: kustomize with virtc as the function: %s", r.KRM.Missing)
		default:
			line("1,000 VMs: virtc as the KRM function %s; kustomize with it %s: the share is %s (target ≤ 10%%)", wall(r.Fn), wall(r.KRM), share(r.Fn, r.KRM))
		}
	}
	for _, r := range rows {
		if sp := r.PerTenant; sp != nil {
			over := ""
			if sp.TimedOut {
				over = ", stopped at a build over the limit"
			}
			line("%s VMs with kustomize one tenant at a time: %d builds of at most %d resources, %s in all, the longest %s (one kustomization of the whole fleet: %s)%s",
				thousands(r.VMs), sp.Builds, sp.Largest, formatDuration(sp.Sum), formatDuration(sp.Max), wall(r.Anchor), over)
		}
	}
	if r, ok := by[10000]; ok && measured(r.Virtc) {
		line("10,000 VMs: virtc build %s wall, %s peak RSS (targets ≤ 1.5 s, ≤ 1 GiB)", wall(r.Virtc), rss(r.Virtc))
		if big, ok := by[100000]; ok && measured(big.Virtc) {
			line("100,000 VMs: virtc build %s wall, %s peak RSS: %.1f× the 10,000-VM time for 10× the VMs (target ≤ 12×)",
				wall(big.Virtc), rss(big.Virtc), big.Virtc.Wall.Seconds()/r.Virtc.Wall.Seconds())
		}
	}
}

// thousands writes 10000 as 10,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func measured(s Summary) bool { return s.Missing == "" && s.Runs > 0 && !s.TimedOut }

func wall(s Summary) string {
	switch {
	case s.Missing != "":
		return s.Missing
	case s.Runs == 0:
		return "-"
	case s.TimedOut:
		return "> " + formatDuration(s.Limit)
	}
	return formatDuration(s.Wall)
}

func rss(s Summary) string {
	if s.Missing != "" || s.Runs == 0 || s.TimedOut || s.PeakRSS == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", float64(s.PeakRSS)/(1<<20))
}

func rate(vms int, s Summary) string {
	if !measured(s) || s.Wall <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(vms)/s.Wall.Seconds())
}

// ratio is a/b; when b ran over its limit, only a bound is known.
func ratio(a, b Summary) string {
	if !measured(a) || b.Missing != "" || b.Runs == 0 {
		return "-"
	}
	if b.TimedOut {
		return fmt.Sprintf("< %.4f", a.Wall.Seconds()/b.Limit.Seconds())
	}
	return fmt.Sprintf("%.4f", a.Wall.Seconds()/b.Wall.Seconds())
}

// share is a as a percentage of b; an upper bound when b ran over its
// limit.
func share(a, b Summary) string {
	if !measured(a) || b.Missing != "" || b.Runs == 0 {
		return "-"
	}
	if b.TimedOut {
		return fmt.Sprintf("< %.1f%%", 100*a.Wall.Seconds()/b.Limit.Seconds())
	}
	return fmt.Sprintf("%.1f%%", 100*a.Wall.Seconds()/b.Wall.Seconds())
}

func runs(r Row) string {
	parts := []string{fmt.Sprint(r.Virtc.Runs)}
	if r.Baseline.Runs > 0 {
		parts = append(parts, fmt.Sprint(r.Baseline.Runs))
	}
	for _, s := range []Summary{r.KRM, r.Fn, r.Anchor} {
		if s.Missing == "" {
			parts = append(parts, fmt.Sprint(s.Runs))
		}
	}
	return strings.Join(parts, "/")
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < 100*time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f s", d.Seconds())
}

func formatBytes(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n < 1e6:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// Machine describes where the benchmark ran: what BENCHMARKS.md records
// beside the table.
func Machine(kustomize string) []string {
	lines := []string{
		fmt.Sprintf("date: %s", time.Now().UTC().Format("2006-01-02 15:04 UTC")),
		fmt.Sprintf("CPUs (nproc): %d, GOMAXPROCS %d", runtime.NumCPU(), runtime.GOMAXPROCS(0)),
		fmt.Sprintf("CPU: %s", cpuModel()),
		fmt.Sprintf("memory: %s", memTotal()),
		fmt.Sprintf("Go: %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH),
	}
	if kustomize != "" {
		out, err := exec.Command(kustomize, "version").Output()
		v := strings.TrimSpace(string(out))
		if err != nil {
			v = "unknown (" + err.Error() + ")"
		}
		lines = append(lines, "kustomize: "+v)
	}
	return append(lines, "load average (1 min): "+LoadAverage())
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "n/a"
	}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "n/a"
}

func memTotal() string {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "n/a"
	}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == "MemTotal" {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "n/a"
}
