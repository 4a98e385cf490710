package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/virtc/virtc/internal/fleet"
)

// Config is one benchmark session.
type Config struct {
	// Virtc is the virtc binary to measure.
	Virtc string
	// CMP is the plugin's generate command, virtc-cmp (cmd/virtc-cmp, beside
	// virtc in the image), which the cmp mode runs for every tenant; empty
	// runs `virtc cmp` itself (the rounds before virtc-cmp).
	CMP string
	// Modes are the modes RunModes times beside build (names as in its
	// table: ModeCMP, ModeDiff, ...); empty for every mode.
	Modes []string
	// Baseline is another virtc binary (an earlier build) timed beside
	// Virtc on every fleet, for before/after figures; empty for none.
	Baseline string
	// Kustomize is the kustomize binary; empty leaves its columns out.
	Kustomize string
	// Work holds the fleets and compiled outputs.
	Work string
	// Sizes are the fleets, in VMs, measured with every tool.
	Sizes []int
	// VirtcOnly are fleets measured with virtc build alone (the large
	// ones, for linear growth).
	VirtcOnly []int
	// PerTenant are fleets (among Sizes) that are also built by kustomize
	// one tenant at a time: the remedy for kustomize's cost on large
	// kustomizations. One pass, after the alternating runs.
	PerTenant []int
	// Runs is how many runs of each tool a fleet gets.
	Runs func(vms int) int
	// Limit bounds one kustomize run; a run over it is killed, reported as
	// "> limit", and the tool is not run again on that fleet.
	Limit time.Duration
	// KRM prepares a kustomization that runs virtc as a KRM function over
	// the intents in fleetDir; it returns its directory and the
	// ResourceList kustomize hands the function, for timing the function
	// alone. Nil when virtc has no KRM function: those columns then say
	// KRMMissing.
	KRM func(virtc, fleetDir, workDir string) (dir, resourceList string, err error)
	// KRMMissing says why the KRM column is empty when KRM is nil.
	KRMMissing string
	// VMsPerTenant is the fleets' average tenant size; 0 is
	// VMsPerTenant's (20). The fleets of 10,000 VMs in 50
	// tenants are 200.
	VMsPerTenant int
	// Log receives progress lines.
	Log io.Writer
}

// Row is one fleet's results.
type Row struct {
	VMs     int
	Tenants int
	// Objects is the number of documents virtc writes for the fleet.
	Objects int
	// Virtc is (1), KRM (2) and Anchor (3) of the table; Fn is virtc
	// running as the function alone, on the ResourceList of (2).
	Virtc, KRM, Fn, Anchor Summary
	// Baseline is Config.Baseline's virtc build, when one is given.
	Baseline Summary
	// Load is the 1-minute load average before and after the fleet's runs.
	LoadBefore, LoadAfter string
	// PerTenant is kustomize building each tenant's output on its own.
	PerTenant *Split
}

// Split is one pass of kustomize over a fleet's tenants, one
// kustomization each.
type Split struct {
	Builds int
	// Sum and Max are the total and the longest wall time of the builds.
	Sum, Max time.Duration
	// Largest is the most resources in one kustomization.
	Largest  int
	TimedOut bool
}

// Run generates each fleet, compiles it once for the anchor, then runs the
// tools in turn (virtc, kustomize with virtc, kustomize alone; again and
// again) and returns the medians.
func Run(cfg Config) ([]Row, error) {
	var rows []Row
	for _, n := range cfg.Sizes {
		row, err := cfg.fleet(n, true)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	for _, n := range cfg.VirtcOnly {
		row, err := cfg.fleet(n, false)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (cfg Config) logf(format string, args ...any) {
	if cfg.Log != nil {
		fmt.Fprintf(cfg.Log, format+"\n", args...)
	}
}

// series is one tool's runs on a fleet.
type series struct {
	cmd     Command
	limit   time.Duration
	samples []Sample
	missing string
	// once: stop after a timed-out run.
	stopped bool
	// prepare, if set, runs before each run, untimed (a fresh output
	// directory).
	prepare func() error
}

func (s *series) run() error {
	if s.missing != "" || s.stopped {
		return nil
	}
	if s.prepare != nil {
		if err := s.prepare(); err != nil {
			return err
		}
	}
	x, err := Measure(s.cmd, s.limit)
	if err != nil {
		return err
	}
	s.samples = append(s.samples, x)
	s.stopped = x.TimedOut
	return nil
}

func (s *series) summary() Summary {
	sum := Summarize(s.samples, s.limit)
	sum.Missing = s.missing
	return sum
}

func (cfg Config) fleet(n int, all bool) (Row, error) {
	opts, dir, intents, err := cfg.writeFleet("vms", "", n)
	row := Row{VMs: n, Tenants: opts.Tenants}
	if err != nil {
		return row, err
	}

	noLimit := 24 * time.Hour
	virtc := &series{cmd: Command{Name: cfg.Virtc, Args: []string{"build", intents}}, limit: noLimit}
	baseline := &series{cmd: Command{Name: cfg.Baseline, Args: []string{"build", intents}}, limit: noLimit}
	if cfg.Baseline == "" {
		baseline.missing = "no baseline"
	}
	krm := &series{limit: cfg.Limit}
	fn := &series{limit: noLimit}
	anchor := &series{limit: cfg.Limit}
	switch {
	case !all:
		krm.missing, fn.missing, anchor.missing = "not run (virtc only)", "not run (virtc only)", "not run (virtc only)"
	case cfg.Kustomize == "":
		krm.missing, fn.missing, anchor.missing = "n/a (no kustomize)", "n/a (no kustomize)", "n/a (no kustomize)"
	default:
		compiled := filepath.Join(dir, "compiled")
		objects, err := compileFleet(cfg.Virtc, compiled, intents)
		if err != nil {
			return row, err
		}
		row.Objects = objects
		anchor.cmd = Command{Name: cfg.Kustomize, Args: []string{"build", compiled}}
		if cfg.KRM == nil {
			krm.missing, fn.missing = cfg.KRMMissing, cfg.KRMMissing
		} else {
			kdir, rl, err := cfg.KRM(cfg.Virtc, intents, filepath.Join(dir, "krm"))
			if err != nil {
				return row, err
			}
			krm.cmd = Command{Name: cfg.Kustomize, Args: []string{"build", "--enable-alpha-plugins", "--enable-exec", kdir}}
			fn.cmd = Command{Name: cfg.Virtc, Args: []string{"fn"}, Dir: kdir, Stdin: rl}
		}
	}

	row.LoadBefore = LoadAverage()
	runs := cfg.Runs(n)
	for r := range runs {
		for _, s := range []*series{virtc, baseline, krm, fn, anchor} {
			if err := s.run(); err != nil {
				return row, err
			}
		}
		cfg.logf("  run %d/%d: virtc %s%s%s%s%s (load %s)", r+1, runs, last(virtc), lastIf(" baseline ", baseline), lastIf(" kustomize+virtc ", krm), lastIf(" virtc fn ", fn), lastIf(" kustomize ", anchor), LoadAverage())
	}
	row.LoadAfter = LoadAverage()
	row.Virtc, row.KRM, row.Fn, row.Anchor = virtc.summary(), krm.summary(), fn.summary(), anchor.summary()
	row.Baseline = baseline.summary()
	if all && cfg.Kustomize != "" && slices.Contains(cfg.PerTenant, n) {
		split, err := cfg.perTenant(intents, filepath.Join(dir, "tenants"))
		if err != nil {
			return row, err
		}
		row.PerTenant = split
	}
	if !all {
		os.RemoveAll(dir)
	}
	return row, nil
}

func last(s *series) string {
	if len(s.samples) == 0 {
		return "-"
	}
	x := s.samples[len(s.samples)-1]
	if x.TimedOut {
		return "> " + formatDuration(s.limit)
	}
	return formatDuration(x.Wall)
}

func lastIf(label string, s *series) string {
	if s.missing != "" {
		return ""
	}
	return label + last(s)
}

// KRMGenerator writes a kustomization that runs virtc as an exec KRM
// function in generator form (a Compiler naming the fleet's directory, as
// examples/kustomize-generator does), and the ResourceList kustomize
// v5.8.2 hands the function for it: the Compiler as the only item and as
// the functionConfig, with the annotations kustomize adds.
func KRMGenerator(virtc, fleetDir, dir string) (string, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	rel, err := filepath.Rel(dir, fleetDir)
	if err != nil {
		return "", "", err
	}
	rel = filepath.ToSlash(rel)
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ngenerators:\n- compiler.yaml\n"
	compiler := fmt.Sprintf("apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata:\n  name: virtc\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: %s\nspec:\n  paths: [%s]\n", virtc, rel)
	list := fmt.Sprintf(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: virtc.dev/v1alpha1
  kind: Compiler
  metadata:
    annotations:
      config.kubernetes.io/function: |
        exec:
          path: %[1]s
      config.kubernetes.io/local-config: 'true'
      config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/annotations-migration-resource-id: '0'
      internal.config.kubernetes.io/id: '1'
      config.k8s.io/id: '1'
    name: virtc
  spec:
    paths:
    - %[2]s
functionConfig:
  apiVersion: virtc.dev/v1alpha1
  kind: Compiler
  metadata:
    annotations:
      config.kubernetes.io/function: |
        exec:
          path: %[1]s
      config.kubernetes.io/local-config: 'true'
    name: virtc
  spec:
    paths:
    - %[2]s
`, virtc, rel)
	for name, data := range map[string]string{"kustomization.yaml": k, "compiler.yaml": compiler, "resourcelist.yaml": list} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return "", "", err
		}
	}
	return dir, filepath.Join(dir, "resourcelist.yaml"), nil
}

// perTenant compiles each tenant file with the fleet's catalog into a
// kustomization of its own, then builds them one after the other.
func (cfg Config) perTenant(intents, dir string) (*Split, error) {
	files, err := filepath.Glob(filepath.Join(intents, "tenants", "*.yaml"))
	if err != nil {
		return nil, err
	}
	catalog := filepath.Join(intents, filepath.FromSlash(fleet.CatalogFile))
	split := &Split{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		kdir := filepath.Join(dir, name)
		objects, err := compileFleet(cfg.Virtc, kdir, catalog, f)
		if err != nil {
			return nil, err
		}
		split.Largest = max(split.Largest, objects)
		x, err := Measure(Command{Name: cfg.Kustomize, Args: []string{"build", kdir}}, cfg.Limit)
		if err != nil {
			return nil, err
		}
		split.Builds++
		split.Sum += x.Wall
		split.Max = max(split.Max, x.Wall)
		if x.TimedOut {
			split.TimedOut = true
			break
		}
	}
	cfg.logf("  per tenant: %d kustomize builds, %s in all, %s the longest", split.Builds, formatDuration(split.Sum), formatDuration(split.Max))
	return split, nil
}

// compileFleet runs virtc once to write the anchor's input: the fleet's
// output in one file with a kustomization listing it. It returns the
// number of documents.
func compileFleet(virtc, dir string, inputs ...string) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(virtc, append([]string{"build"}, inputs...)...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("virtc build %s: %v\n%s", strings.Join(inputs, " "), err, stderr.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "all.yaml"), out.Bytes(), 0o644); err != nil {
		return 0, err
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- all.yaml\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		return 0, err
	}
	return Documents(out.Bytes()), nil
}

// Documents counts the documents of a YAML stream written by virtc.
func Documents(stream []byte) int {
	if len(bytes.TrimSpace(stream)) == 0 {
		return 0
	}
	// A leading separator starts the first document, not a second one.
	return 1 + bytes.Count(stream, []byte("\n---\n"))
}

// LoadAverage is the 1-minute load average, or "n/a" where the system
// does not publish it.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := bytes.Fields(data)
	if len(f) == 0 {
		return "n/a"
	}
	return string(f[0])
}

// ErrNoRuns is returned by Check when a configuration would measure
// nothing.
var ErrNoRuns = errors.New("bench: no fleet sizes")

// Check validates a configuration before a long session starts.
func (cfg Config) Check() error {
	if len(cfg.Sizes)+len(cfg.VirtcOnly) == 0 {
		return ErrNoRuns
	}
	if cfg.Runs == nil {
		return errors.New("bench: Runs is not set")
	}
	for _, n := range append(append([]int{}, cfg.Sizes...), cfg.VirtcOnly...) {
		if n < 1 || cfg.Runs(n) < 1 {
			return fmt.Errorf("bench: fleet of %d VMs with %d runs", n, cfg.Runs(n))
		}
	}
	if _, err := os.Stat(cfg.Virtc); err != nil {
		return fmt.Errorf("bench: virtc binary: %w", err)
	}
	for _, m := range cfg.Modes {
		if !slices.Contains(AllModes, m) {
			return fmt.Errorf("bench: no mode %q (modes: %s)", m, strings.Join(AllModes, "|"))
		}
	}
	if cfg.CMP != "" {
		if _, err := os.Stat(cfg.CMP); err != nil {
			return fmt.Errorf("bench: virtc-cmp binary: %w", err)
		}
	}
	if cfg.Baseline != "" {
		if _, err := os.Stat(cfg.Baseline); err != nil {
			return fmt.Errorf("bench: baseline virtc binary: %w", err)
		}
	}
	if cfg.Kustomize != "" {
		if _, err := os.Stat(cfg.Kustomize); err != nil {
			return fmt.Errorf("bench: kustomize binary: %w", err)
		}
	}
	if cfg.Limit <= 0 {
		return errors.New("bench: the time limit must be positive")
	}
	return nil
}
