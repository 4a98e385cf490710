package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/fleet"
)

// Mode names, in table order.
const (
	ModeBuild       = "build"
	ModeValidate    = "validate"
	ModeReport      = "report"
	ModeDiff        = "diff OLD NEW"
	ModeDiffBase    = "diff --base HEAD"
	ModeDiffLive    = "diff --live EXPORT"
	ModeImport      = "import EXPORT"
	ModeGenerator   = "fn (generator)"
	ModeTransformer = "fn (transformer)"
	ModeCMP         = "cmp, every tenant"
	ModeCMPAtOnce   = "cmp, 20 at once"
	// ModeCMPFleet is every tenant's call of one commit, at most 20
	// running at once, as Argo CD's status processors work through a
	// commit's Applications.
	ModeCMPFleet = "cmp, every tenant 20 at once"
)

// atOnce is how many plugin calls ModeCMPAtOnce starts together: the
// status processors of Argo CD's application controller (argo-cd v3.6.1
// cmd/argocd-application-controller/commands/
// argocd_application_controller.go, --status-processors default 20),
// which refresh the Applications of a commit at once; the repo server's
// parallelism limit is 0, unlimited (cmd/argocd-repo-server/commands/
// argocd_repo_server.go), and a plugin source allows concurrent
// processing.
const atOnce = 20

// ModeRow is one fleet measured in every mode, each beside virtc build of
// the same fleet in the same rounds.
type ModeRow struct {
	VMs, Tenants int
	// Changed is how many tenant files the head of the diffs changes.
	Changed int
	// ExportVMs is how many VirtualMachines the export holds.
	ExportVMs             int
	Modes                 []string
	Results               map[string]Summary
	LoadBefore, LoadAfter string
}

// RunModes measures each fleet size in every mode (see BENCHMARKS.md,
// "Every mode at fleet scale"), round by round: every mode once per
// round, cfg.Runs(n) rounds.
//
// The fleet is a git repository whose HEAD is the generated fleet and
// whose working tree changes the app label of one VM in every hundredth
// tenant file (at least one): the head of diff OLD NEW and of diff --base
// HEAD. The export, for diff --live and import, is what `oc get
// vm,dv,pvc,nad -o yaml` would give of the applied base: the base's
// VirtualMachines, DataVolumes, PersistentVolumeClaims and
// NetworkAttachmentDefinitions as one List (without what the cluster adds:
// status, uid, defaults). cmp runs Argo CD's generate once per tenant,
// one after another, as the ApplicationSet's per-tenant Applications of
// one commit do (plugin parameters scope vms and the tenant, and the
// commit of the copied tree as ARGOCD_APP_REVISION), in a fresh copy of
// the repository each time and with a cache that starts empty every
// round; its time and CPU are the sums, its RSS the largest. cmp, 20 at
// once, starts 20 such calls together (the first 20 tenants, each in its
// own copy, the copies made before the clock starts): its time is from the
// start to the last call's end, its CPU the sum, its RSS the sum of the
// calls' peaks (an upper bound of what they hold together).
func RunModes(cfg Config, sizes []int) ([]ModeRow, error) {
	var rows []ModeRow
	noLimit := 24 * time.Hour
	for _, n := range sizes {
		opts := cfg.fleetOptions(n)
		row := ModeRow{VMs: n, Tenants: opts.Tenants, Results: map[string]Summary{}}
		dir := filepath.Join(cfg.Work, fmt.Sprintf("modes-%d", n))
		if err := os.RemoveAll(dir); err != nil {
			return rows, err
		}
		old := filepath.Join(dir, "old")
		repo := filepath.Join(dir, "repo")
		app := filepath.Join(repo, "fleet")
		cfg.logf("modes: fleet of %d VMs in %d tenants: generating %s", n, opts.Tenants, old)
		if _, err := fleet.Write(old, opts); err != nil {
			return rows, err
		}
		if _, err := fleet.Write(app, opts); err != nil {
			return rows, err
		}
		if err := gitCommit(repo); err != nil {
			return rows, err
		}
		changed, err := changeFleet(app)
		if err != nil {
			return rows, err
		}
		row.Changed = changed
		// The export and the transformer's list are written by a child
		// process: a child's peak RSS counts the parent's (the kernel
		// records the peak of the memory a vfork child shares at exec),
		// so the driver must never hold a fleet's output.
		export := filepath.Join(dir, "export.yaml")
		trl := filepath.Join(dir, "transformer.yaml")
		self, err := os.Executable()
		if err != nil {
			return rows, err
		}
		prep := exec.Command(self, PrepareCommand, cfg.Virtc, old, export, app, trl)
		prep.Stderr = os.Stderr
		vms, err := prep.Output()
		if err != nil {
			return rows, fmt.Errorf("%s: %v", PrepareCommand, err)
		}
		if _, err := fmt.Sscan(string(vms), &row.ExportVMs); err != nil {
			return rows, fmt.Errorf("%s printed %q", PrepareCommand, vms)
		}
		gdir, grl, err := KRMGenerator(cfg.Virtc, app, filepath.Join(dir, "generator"))
		if err != nil {
			return rows, err
		}
		v := cfg.Virtc
		imported := filepath.Join(dir, "imported")
		series := map[string]*series{
			ModeBuild:       {cmd: Command{Name: v, Args: []string{"build", app}}},
			ModeValidate:    {cmd: Command{Name: v, Args: []string{"validate", app}}},
			ModeReport:      {cmd: Command{Name: v, Args: []string{"report", app}}},
			ModeDiff:        {cmd: Command{Name: v, Args: []string{"diff", "--color=never", old, app}}},
			ModeDiffBase:    {cmd: Command{Name: v, Args: []string{"diff", "--color=never", "--base", "HEAD", "fleet"}, Dir: repo}},
			ModeDiffLive:    {cmd: Command{Name: v, Args: []string{"diff", "--color=never", "--live", export, old}}},
			ModeImport:      {cmd: Command{Name: v, Args: []string{"import", "--out", imported, export}}, prepare: func() error { return os.RemoveAll(imported) }},
			ModeGenerator:   {cmd: Command{Name: v, Args: []string{"fn"}, Dir: gdir, Stdin: grl}},
			ModeTransformer: {cmd: Command{Name: v, Args: []string{"fn"}, Dir: app, Stdin: trl}},
		}
		row.Modes = slices.Clone(AllModes)
		if len(cfg.Modes) > 0 {
			row.Modes = slices.DeleteFunc(row.Modes, func(m string) bool { return m != ModeBuild && !slices.Contains(cfg.Modes, m) })
		}
		for _, s := range series {
			s.limit = noLimit
		}
		// import compiles and compares VM by VM and diff --live parses the
		// export through JSON: at fleet size they can run for hours, so
		// they have kustomize's limit (a run over it is the last).
		series[ModeImport].limit, series[ModeDiffLive].limit = cfg.Limit, cfg.Limit
		tenants, err := tenantNames(app)
		if err != nil {
			return rows, err
		}
		revision, err := treeCommit(repo)
		if err != nil {
			return rows, err
		}
		var cmpRuns, atOnceRuns, fleetRuns []Sample
		generate := Command{Name: cfg.CMP}
		if cfg.CMP == "" {
			generate = Command{Name: v, Args: []string{"cmp"}}
		}
		row.LoadBefore = LoadAverage()
		runs := cfg.Runs(n)
		for r := range runs {
			var done []string
			for _, m := range row.Modes {
				if m == ModeCMP || m == ModeCMPAtOnce || m == ModeCMPFleet {
					calls, at := tenants, 1
					switch m {
					case ModeCMPAtOnce:
						calls, at = slices.Repeat(tenants, (atOnce+len(tenants)-1)/len(tenants))[:atOnce], atOnce
					case ModeCMPFleet:
						at = atOnce
					}
					x, err := cmpCalls(generate, repo, "fleet", revision, calls, at, filepath.Join(dir, "cmp"))
					if err != nil {
						return rows, err
					}
					switch m {
					case ModeCMP:
						cmpRuns = append(cmpRuns, x)
					case ModeCMPAtOnce:
						atOnceRuns = append(atOnceRuns, x)
					default:
						fleetRuns = append(fleetRuns, x)
					}
					done = append(done, fmt.Sprintf("%s %s", m, formatDuration(x.Wall)))
					continue
				}
				if err := series[m].run(); err != nil {
					return rows, err
				}
				done = append(done, fmt.Sprintf("%s %s", m, last(series[m])))
			}
			cfg.logf("  round %d/%d: %s (load %s)", r+1, runs, strings.Join(done, ", "), LoadAverage())
		}
		row.LoadAfter = LoadAverage()
		for m, s := range series {
			row.Results[m] = s.summary()
		}
		row.Results[ModeCMP] = Summarize(cmpRuns, noLimit)
		row.Results[ModeCMPAtOnce] = Summarize(atOnceRuns, noLimit)
		row.Results[ModeCMPFleet] = Summarize(fleetRuns, noLimit)
		rows = append(rows, row)
		os.RemoveAll(dir)
	}
	return rows, nil
}

// AllModes are the modes RunModes times, in the order of each round.
var AllModes = []string{ModeBuild, ModeValidate, ModeReport, ModeDiff, ModeDiffBase, ModeDiffLive, ModeImport, ModeGenerator, ModeTransformer, ModeCMP, ModeCMPAtOnce, ModeCMPFleet}

// PrepareCommand is the driver's hidden first argument that writes the
// export and the transformer list of RunModes in a child process:
// PrepareCommand VIRTC OLD EXPORT APP LIST; it prints the export's VMs.
const PrepareCommand = "_prepare-modes"

// Prepare is PrepareCommand's work.
func Prepare(args []string) error {
	if len(args) != 5 {
		return fmt.Errorf("%s VIRTC OLD EXPORT APP LIST", PrepareCommand)
	}
	vms, err := WriteExport(args[0], args[1], args[2])
	if err != nil {
		return err
	}
	if _, err := WriteTransformerList(args[3], args[4]); err != nil {
		return err
	}
	fmt.Println(vms)
	return nil
}

// gitCommit makes dir a git repository with everything in it committed.
func gitCommit(dir string) error {
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=bench", "-c", "user.email=bench@virtc.dev", "commit", "-q", "-m", "fleet"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

var appLabel = regexp.MustCompile(`(?m)^    app: (\S+)$`)

// changeFleet changes the app label of the first VM in every hundredth
// tenant file (at least one) and returns how many files it changed.
func changeFleet(app string) (int, error) {
	files, err := filepath.Glob(filepath.Join(app, "tenants", "*.yaml"))
	if err != nil {
		return 0, err
	}
	sort.Strings(files)
	n := 0
	for i, f := range files {
		if i%100 != 0 {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return n, err
		}
		loc := appLabel.FindSubmatchIndex(data)
		if loc == nil {
			continue
		}
		data = append(data[:loc[2]:loc[2]], append([]byte("changed-"), data[loc[2]:]...)...)
		if err := os.WriteFile(f, data, 0o644); err != nil {
			return n, err
		}
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no VM app label to change", app)
	}
	return n, nil
}

// WriteExport builds dir and writes its VMs, DataVolumes, claims and
// network attachments as one List, as `oc get vm,dv,pvc,nad -o yaml`
// prints what is applied; it returns the number of VMs.
func WriteExport(virtc, dir, file string) (int, error) {
	var out bytes.Buffer
	cmd := exec.Command(virtc, "build", dir)
	cmd.Stdout = &out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("virtc build %s: %v\n%s", dir, err, stderr.String())
	}
	kinds := map[string]bool{"VirtualMachine": true, "DataVolume": true, "PersistentVolumeClaim": true, "NetworkAttachmentDefinition": true}
	var items []any
	vms := 0
	dec := yaml.NewDecoder(&out)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err == io.EOF {
			break
		} else if err != nil {
			return 0, err
		}
		kind, _ := obj["kind"].(string)
		if !kinds[kind] {
			continue
		}
		if kind == "VirtualMachine" {
			vms++
		}
		items = append(items, obj)
	}
	data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": items})
	if err != nil {
		return 0, err
	}
	return vms, os.WriteFile(file, data, 0o644)
}

// tenantNames are the fleet's tenants (one file each).
func tenantNames(app string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(app, "tenants", "*.yaml"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	sort.Strings(names)
	return names, nil
}

// treeCommit is a commit of repo's working tree as it is (git stash
// create: a commit object of the tracked files' changes that no branch
// points to), or HEAD when the tree is clean: the revision the cmp calls
// get, as Argo CD's repo server gives the plugin the commit it checked out
// (ARGOCD_APP_REVISION), here the commit of exactly the files copied.
func treeCommit(repo string) (string, error) {
	for _, args := range [][]string{{"stash", "create"}, {"rev-parse", "HEAD"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
		}
		if c := strings.TrimSpace(string(out)); c != "" {
			return c, nil
		}
	}
	return "", fmt.Errorf("%s: no commit", repo)
}

// cmpCalls runs the plugin's generate command for each of tenants, one
// after another or all at once, each in a fresh copy of the repository (as
// Argo CD's CMP server unpacks one per call; the copies are made before
// the clock starts), sharing a cache that starts empty. In turn, it returns
// the summed wall time; at once, the time from the start to the last end;
// CPU is the sum, RSS the largest in turn and the sum at once.
func cmpCalls(generate Command, repo, appPath, revision string, tenants []string, at int, dir string) (Sample, error) {
	if err := os.RemoveAll(dir); err != nil {
		return Sample{}, err
	}
	defer os.RemoveAll(dir)
	cache := filepath.Join(dir, "cache")
	call := func(i int, t string) (Command, error) {
		work := filepath.Join(dir, fmt.Sprintf("call-%d", i))
		if err := copyTree(repo, work); err != nil {
			return Command{}, err
		}
		env := append(os.Environ(),
			"ARGOCD_APP_SOURCE_PATH="+appPath,
			"ARGOCD_APP_REVISION="+revision,
			"ARGOCD_APP_SOURCE_REPO_URL=file://"+repo,
			// The tenant Application's plugin parameters (examples/argocd/
			// applicationset.yaml), as Argo CD's repo server passes them
			// (argo-cd pkg/apis/application/v1alpha1/types.go,
			// ApplicationSourcePluginParameters.Environ and
			// ApplicationSourcePluginParameter.MarshalJSON): a JSON list,
			// and one PARAM_ variable each.
			`ARGOCD_APP_PARAMETERS=[{"name":"scope","string":"vms"},{"name":"tenant","string":"`+t+`"}]`,
			"PARAM_SCOPE=vms",
			"PARAM_TENANT="+t,
			"VIRTC_CMP_CACHE="+cache)
		return Command{Name: generate.Name, Args: generate.Args, Dir: filepath.Join(work, appPath), Env: env}, nil
	}
	var total Sample
	if at > 1 && len(tenants) > at {
		return cmpPool(call, tenants, at, dir)
	}
	if at <= 1 {
		for i, t := range tenants {
			c, err := call(i, t)
			if err != nil {
				return total, err
			}
			x, err := Measure(c, 24*time.Hour)
			if err != nil {
				return total, err
			}
			os.RemoveAll(filepath.Join(dir, fmt.Sprintf("call-%d", i)))
			total.Wall += x.Wall
			total.CPU += x.CPU
			total.Output += x.Output
			total.PeakRSS = max(total.PeakRSS, x.PeakRSS)
		}
		return total, nil
	}
	cmds := make([]Command, len(tenants))
	for i, t := range tenants {
		c, err := call(i, t)
		if err != nil {
			return total, err
		}
		cmds[i] = c
	}
	samples := make([]Sample, len(cmds))
	errs := make([]error, len(cmds))
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Go(func() { samples[i], errs[i] = Measure(c, 24*time.Hour) })
	}
	wg.Wait()
	total.Wall = time.Since(start)
	for i, x := range samples {
		if errs[i] != nil {
			return total, errs[i]
		}
		total.CPU += x.CPU
		total.Output += x.Output
		total.PeakRSS += x.PeakRSS
	}
	return total, nil
}

// cmpPool runs every tenant's call with at most at of them running at
// once, each in a fresh copy made just before it starts (as Argo CD's CMP
// server unpacks one per call; the copies are inside the wall time, not
// the CPU). Wall is the start to the last call's end, CPU the sum, RSS the
// sum of the at largest peaks: an upper bound of what the calls running
// together hold.
func cmpPool(call func(int, string) (Command, error), tenants []string, at int, dir string) (Sample, error) {
	samples := make([]Sample, len(tenants))
	errs := make([]error, len(tenants))
	next := make(chan int)
	start := time.Now()
	var wg sync.WaitGroup
	for range at {
		wg.Go(func() {
			for i := range next {
				c, err := call(i, tenants[i])
				if err == nil {
					samples[i], err = Measure(c, 24*time.Hour)
				}
				errs[i] = err
				os.RemoveAll(filepath.Join(dir, fmt.Sprintf("call-%d", i)))
			}
		})
	}
	for i := range tenants {
		next <- i
	}
	close(next)
	wg.Wait()
	var total Sample
	total.Wall = time.Since(start)
	peaks := make([]int64, 0, len(samples))
	for i, x := range samples {
		if errs[i] != nil {
			return total, errs[i]
		}
		total.CPU += x.CPU
		total.Output += x.Output
		peaks = append(peaks, x.PeakRSS)
	}
	slices.Sort(peaks)
	for _, p := range peaks[max(0, len(peaks)-at):] {
		total.PeakRSS += p
	}
	return total, nil
}

// copyTree copies the regular files under src (not .git) to dst.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			if info.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}

// ModeTable writes the rows as one Markdown table: each mode's median
// wall time, CPU time and peak RSS, and their ratios to virtc build of
// the same fleet in the same rounds.
func ModeTable(w io.Writer, rows []ModeRow) {
	fmt.Fprintln(w, "| VMs | tenants | mode | wall | CPU | peak RSS | wall / build | CPU / build | RSS / build | runs | load 1 min |")
	fmt.Fprintln(w, "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		b := r.Results[ModeBuild]
		for _, m := range r.Modes {
			s := r.Results[m]
			fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %s | %s | %d | %s → %s |\n",
				r.VMs, r.Tenants, m, wall(s), formatDuration(s.CPU), rss(s),
				timeRatio(s, b), cpuRatio(s, b), rssRatio(s, b), s.Runs, r.LoadBefore, r.LoadAfter)
		}
	}
}

func cpuRatio(a, b Summary) string {
	if !measured(a) || !measured(b) || b.CPU == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a.CPU.Seconds()/b.CPU.Seconds())
}
