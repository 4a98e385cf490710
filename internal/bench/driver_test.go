package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/test/conform"
)

// TestMain: started with BENCH_HELPER set, the test binary is a process
// for the driver to measure (helper).
func TestMain(m *testing.M) {
	if mode := os.Getenv("BENCH_HELPER"); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

// helper is what the test binary does when the driver measures it.
func helper(mode string) int {
	switch mode {
	case "write":
		// 3 MB of output, and about 64 MiB touched.
		buf := make([]byte, 64<<20)
		for i := range buf {
			buf[i] = byte(i)
		}
		os.Stdout.Write(bytes.Repeat([]byte("x"), 3_000_000))
		return int(buf[len(buf)-1]) - 255
	case "sleep":
		time.Sleep(time.Minute)
		return 0
	case "cat":
		n, _ := io.Copy(os.Stdout, os.Stdin)
		if n == 0 {
			return 4
		}
		return 0
	case "fail":
		fmt.Fprintln(os.Stderr, "helper: refused")
		return 3
	}
	return 2
}

func helperCommand(mode string) Command {
	return Command{Name: os.Args[0], Env: append(os.Environ(), "BENCH_HELPER="+mode)}
}

func TestMeasureCountsOutputAndMemory(t *testing.T) {
	s, err := Measure(helperCommand("write"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if s.Output != 3_000_000 {
		t.Errorf("output %d bytes, want 3000000", s.Output)
	}
	if s.TimedOut || s.Wall <= 0 {
		t.Errorf("sample %+v", s)
	}
	if runtime.GOOS == "linux" && s.PeakRSS < 64<<20 {
		t.Errorf("peak RSS %d bytes, want at least the 64 MiB the helper touched", s.PeakRSS)
	}
}

func TestMeasureReadsStdin(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := helperCommand("cat")
	c.Stdin = in
	s, err := Measure(c, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if s.Output != 5 {
		t.Errorf("output %d bytes, want the 5 of stdin", s.Output)
	}
}

func TestMeasureStopsAtTheLimit(t *testing.T) {
	s, err := Measure(helperCommand("sleep"), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !s.TimedOut {
		t.Errorf("a minute's sleep did not time out at 300 ms: %+v", s)
	}
}

func TestMeasureReportsFailures(t *testing.T) {
	_, err := Measure(helperCommand("fail"), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "helper: refused") {
		t.Errorf("error %v, want one with the process's stderr", err)
	}
}

func TestSummarizeTakesMedians(t *testing.T) {
	ms := time.Millisecond
	s := Summarize([]Sample{{Wall: 30 * ms, PeakRSS: 3, Output: 9}, {Wall: 10 * ms, PeakRSS: 1, Output: 9}, {Wall: 20 * ms, PeakRSS: 5, Output: 9}}, time.Second)
	if s.Wall != 20*ms || s.PeakRSS != 3 || s.Output != 9 || s.Runs != 3 || s.TimedOut {
		t.Errorf("summary %+v", s)
	}
	if s := Summarize([]Sample{{Wall: 10 * ms}, {Wall: 40 * ms}}, time.Second); s.Wall != 10*ms {
		t.Errorf("median of two is %v, want the lower, 10ms", s.Wall)
	}
	if s := Summarize([]Sample{{Wall: 2 * time.Second, TimedOut: true}}, time.Second); !s.TimedOut {
		t.Error("a timed-out run does not mark the series")
	}
}

func TestTable(t *testing.T) {
	ms := time.Millisecond
	rows := []Row{
		{VMs: 1, Tenants: 1, Objects: 12, LoadBefore: "0.50", LoadAfter: "0.60",
			Virtc:  Summary{Runs: 5, Wall: 20 * ms, PeakRSS: 12 << 20, Output: 8000},
			KRM:    Summary{Runs: 5, Wall: 400 * ms, PeakRSS: 30 << 20},
			Fn:     Summary{Runs: 5, Wall: 30 * ms, PeakRSS: 12 << 20},
			Anchor: Summary{Runs: 5, Wall: 40 * ms, PeakRSS: 20 << 20}},
		{VMs: 1000, Tenants: 50, Objects: 4700, LoadBefore: "1.00", LoadAfter: "1.10",
			PerTenant: &Split{Builds: 50, Sum: 9 * time.Second, Max: 400 * ms, Largest: 180},
			Virtc:     Summary{Runs: 5, Wall: 100 * ms, PeakRSS: 40 << 20, Output: 4_500_000},
			KRM:       Summary{Runs: 1, TimedOut: true, Limit: 120 * time.Second, Wall: 120 * time.Second},
			Fn:        Summary{Runs: 5, Wall: 300 * ms, PeakRSS: 50 << 20},
			Anchor:    Summary{Runs: 1, TimedOut: true, Limit: 120 * time.Second, Wall: 120 * time.Second}},
		{VMs: 10000, Tenants: 500, Virtc: Summary{Runs: 3, Wall: 1000 * ms, PeakRSS: 400 << 20, Output: 45_000_000}},
		{VMs: 100000, Tenants: 5000, Virtc: Summary{Runs: 3, Wall: 10500 * ms, PeakRSS: 4000 << 20, Output: 450_000_000},
			KRM: Summary{Missing: "not run (virtc only)"}, Fn: Summary{Missing: "not run (virtc only)"}, Anchor: Summary{Missing: "not run (virtc only)"}},
	}
	var b bytes.Buffer
	Table(&b, rows)
	Targets(&b, rows)
	out := b.String()
	for _, want := range []string{
		"| 1 | 1 | 12 | 8 kB | 20.0 ms | 12 MiB | 50 | 400.0 ms | 30 MiB | 30.0 ms | 7.5% | 40.0 ms | 20 MiB | 0.5000 | 10.0000 | 5/5/5/5 | 0.50 → 0.60 |",
		"| 1000 | 50 | 4700 | 4.5 MB | 100.0 ms | 40 MiB | 10000 | > 120 s | - | 300.0 ms | < 0.2% | > 120 s | - | < 0.0008 | - | 5/1/5/1 |",
		"| 100000 | 5000 | - | 450.0 MB | 10.50 s | 4000 MiB | 9524 | not run (virtc only) |",
		"- one-VM tenant: virtc build 20.0 ms wall (target < 50 ms)",
		"- 1,000 VMs: virtc build / kustomize pass-through = < 0.0008 (target ≤ 1/20 = 0.05)",
		"- 1,000 VMs: virtc as the KRM function 300.0 ms; kustomize with it > 120 s: the share is < 0.2% (target ≤ 10%)",
		"- 10,000 VMs: virtc build 1.00 s wall, 400 MiB peak RSS",
		"- 1,000 VMs with kustomize one tenant at a time: 50 builds of at most 180 resources, 9.00 s in all, the longest 400.0 ms (one kustomization of the whole fleet: > 120 s)",
		"10.50 s wall, 4000 MiB peak RSS: 10.5× the 10,000-VM time",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// The driver runs end to end on small fleets with the real virtc binary
// (and kustomize where it is installed), and the anchor's input is the
// output virtc writes.
func TestRunSmallFleets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds virtc")
	}
	dir := t.TempDir()
	virtc := filepath.Join(dir, "virtc")
	build := exec.Command("go", "build", "-o", virtc, "github.com/virtc/virtc/cmd/virtc")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	kustomize, err := conform.Tool("kustomize", "KUSTOMIZE_BIN")
	if err != nil {
		conform.Skip(t, err)
	}
	var log bytes.Buffer
	cfg := Config{
		Virtc: virtc, Baseline: virtc, Kustomize: kustomize, Work: filepath.Join(dir, "work"),
		Sizes: []int{1, 40}, VirtcOnly: []int{60}, PerTenant: []int{40},
		Runs: func(int) int { return 2 }, Limit: time.Minute,
		KRM: KRMGenerator, Log: &log,
	}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	rows, err := Run(cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for _, r := range rows[:2] {
		compiled, err := os.ReadFile(filepath.Join(cfg.Work, fmt.Sprintf("vms-%d", r.VMs), "compiled", "all.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Virtc.Runs != 2 || r.Anchor.Runs != 2 || r.Virtc.Output != int64(len(compiled)) {
			t.Errorf("%d VMs: %+v, compiled output %d bytes", r.VMs, r, len(compiled))
		}
		if r.Objects != Documents(compiled) || r.Objects < 2*r.VMs { // at least a VM and its data disk claim each
			t.Errorf("%d VMs: %d objects", r.VMs, r.Objects)
		}
		// kustomize writes the objects virtc generates, formatted its way;
		// the function alone writes them inside a ResourceList.
		if r.Anchor.Output == 0 || r.KRM.Runs != 2 || r.KRM.Output < r.Virtc.Output*9/10 || r.Fn.Runs != 2 || r.Fn.Output < r.Virtc.Output {
			t.Errorf("%d VMs: virtc %+v, anchor %+v, KRM %+v, fn %+v", r.VMs, r.Virtc, r.Anchor, r.KRM, r.Fn)
		}
	}
	if sp := rows[1].PerTenant; sp == nil || sp.Builds != 2 || sp.Largest == 0 || sp.Sum < sp.Max || sp.TimedOut {
		t.Errorf("per-tenant pass %+v, want 2 builds", sp)
	}
	if rows[0].PerTenant != nil {
		t.Error("a per-tenant pass on a fleet that did not ask for one")
	}
	var cmp bytes.Buffer
	Comparison(&cmp, rows)
	if rows[0].Baseline.Runs != 2 || rows[2].Baseline.Output != rows[2].Virtc.Output || !strings.Contains(cmp.String(), "| 60 | ") {
		t.Errorf("baseline runs: %+v\n%s", rows[0].Baseline, cmp.String())
	}
	if big := rows[2]; big.VMs != 60 || big.Virtc.Runs != 2 || big.Anchor.Missing == "" {
		t.Errorf("virtc-only row %+v", big)
	}
}

func TestDocuments(t *testing.T) {
	for in, want := range map[string]int{"": 0, "a: 1\n": 1, "a: 1\n---\nb: 2\n": 2, "---\na: 1\n---\nb: 2\n": 2} {
		if got := Documents([]byte(in)); got != want {
			t.Errorf("Documents(%q) = %d, want %d", in, got, want)
		}
	}
}

// --modes names modes as the table does; a name it does not know fails
// before anything runs, and a missing virtc-cmp too.
func TestCheckModes(t *testing.T) {
	cfg := Config{Virtc: os.Args[0], Sizes: []int{1}, Runs: func(int) int { return 1 }, Limit: time.Minute, Modes: []string{ModeCMP, ModeDiff}}
	if err := cfg.Check(); err != nil {
		t.Errorf("modes %q: %v", cfg.Modes, err)
	}
	cfg.Modes = []string{"cmp"}
	if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), `no mode "cmp"`) {
		t.Errorf("mode cmp: %v, want no mode", err)
	}
	cfg.Modes, cfg.CMP = nil, filepath.Join(t.TempDir(), "virtc-cmp")
	if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), "virtc-cmp") {
		t.Errorf("a missing virtc-cmp: %v", err)
	}
}
