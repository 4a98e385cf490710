//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The hostile-input suite (issue 43, docs/security.md): virtc run as the
// Argo CD plugin's sidecar runs it, on repositories and parameters an
// attacker wrote. Every case runs the built binaries as processes and
// must exit as designed, print nothing on stdout when it fails, stay
// within the stated memory and CPU time, and leak no byte of a planted
// secret or of a file outside the repository's copy: not on stdout, not
// on stderr, not in a file it writes.

// Bounds every case is held to unless it states its own (docs/security.md
// "Limits"): a refused input costs what reading its bytes costs.
const (
	hostileRSS = 256 << 20
	hostileCPU = 10 * time.Second
	// hostileWall ends a case that hangs (a FIFO opened blocking): a
	// hang detector, not a time bound (the case's bound is hostileCPU,
	// from its rusage). In CI make test runs niced beside the tool
	// builds, where piping 300 MiB to a process took over a minute of
	// wall time (cold, at c877596).
	hostileWall = 5 * time.Minute
)

// Planted material: none of it may appear in what virtc prints or writes.
const (
	plantedAWS    = "AKIAIOSFODNN7EXAMPLE"
	plantedPEM    = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
	plantedPass   = "hunter2-0f3c"
	plantedGitHub = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
	plantedOther  = "OTHER-TEAM-REPOSITORY-5d1e"
)

var planted = []string{plantedAWS, plantedPEM, plantedPass, plantedGitHub, plantedOther}

// sidecar is one plugin sidecar's temporary directory: this
// Application's repository copy and, unpacked beside it at the same time,
// another team's, which holds a valid catalog and a planted marker.
type sidecar struct {
	dir, top, app, other string
}

func newSidecar(t *testing.T) *sidecar {
	t.Helper()
	s := &sidecar{dir: t.TempDir()}
	s.top = filepath.Join(s.dir, "this-app")
	s.app = filepath.Join(s.top, "clusters", "east")
	s.other = filepath.Join(s.dir, "other-app")
	if err := copyTree(filepath.Join(root, "examples", "quickstart"), s.app); err != nil {
		t.Fatal(err)
	}
	s.write(t, "../../../other-app/catalog/sizes.yaml", "# "+plantedOther+"\napiVersion: virtc.dev/v1alpha1\nkind: Size\nmetadata: {name: other}\nspec: {cpu: 1, memory: 1Gi}\n")
	s.write(t, "../../../other-app/passwd.jsonnet", `"`+plantedOther+`"`)
	return s
}

// write writes a file, named from the application's directory.
func (s *sidecar) write(t *testing.T, rel, body string) string {
	t.Helper()
	p := filepath.Join(s.app, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (s *sidecar) marker(t *testing.T, spec string) {
	s.write(t, "virtc.yaml", "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: east}\nspec:\n"+spec)
}

// pluginEnv is what argocd-cmp-server gives the plugin: the Application's
// path in the repository and its parameters (argo-cd v3.6.1
// cmpserver/plugin/plugin.go, reposerver/repository/repository.go newEnv).
func pluginEnv(params string, env ...string) []string {
	e := append([]string{"ARGOCD_APP_SOURCE_PATH=clusters/east", "ARGOCD_APP_NAME=east"}, env...)
	if params != "" {
		e = append(e, "ARGOCD_APP_PARAMETERS="+params)
	}
	return e
}

// hostileRun is one process of a case.
type hostileRun struct {
	bin   string // virtc or virtc-cmp
	args  []string
	env   []string // added to a clean environment
	dir   string
	stdin io.Reader
}

type hostileResult struct {
	code           int
	stdout, stderr string
	rss            int64
	cpu            time.Duration
	timedOut       bool
}

func (r hostileRun) run(t *testing.T) hostileResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostileWall)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "bin", r.bin), r.args...)
	cmd.Dir = r.dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.dir, "VIRTC_CMP_CACHE=off"}, r.env...)
	cmd.Stdin = r.stdin
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	res := hostileResult{stdout: out.String(), stderr: errs.String(), timedOut: ctx.Err() != nil}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	default:
		t.Fatalf("%s %q: %v", r.bin, r.args, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.rss = ru.Maxrss << 10 // kilobytes on Linux
		res.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return res
}

// hostileCase is one attack and what virtc must do with it.
type hostileCase struct {
	name string
	// setup writes the attack and returns the process to run.
	setup func(t *testing.T, s *sidecar) hostileRun
	// code is the exit code designed for it; want is in stderr.
	code int
	want string
	// rss and cpu override the suite's bounds.
	rss int64
	cpu time.Duration
	// stdoutOnFailure: the command's stdout is a report, not manifests
	// (virtc import), so a failure may print it.
	stdoutOnFailure bool
	// check looks at what the case left behind (files it must not have
	// written).
	check func(t *testing.T, s *sidecar, r hostileResult)
}

func TestHostileInputs(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := newSidecar(t)
			run := tc.setup(t, s)
			if run.dir == "" {
				run.dir = s.app
			}
			if run.bin == "" {
				run.bin = "virtc"
			}
			r := run.run(t)
			if r.timedOut {
				t.Fatalf("did not end within %s (it hangs)", hostileWall)
			}
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\nstderr:\n%s", r.code, tc.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.stderr)
			}
			if r.code != 0 && r.stdout != "" && !tc.stdoutOnFailure {
				t.Errorf("failed with %d bytes on stdout:\n%.400s", len(r.stdout), r.stdout)
			}
			rss, cpu := tc.rss, tc.cpu
			if rss == 0 {
				rss = hostileRSS
			}
			if cpu == 0 {
				cpu = hostileCPU
			}
			if r.rss > rss {
				t.Errorf("peak RSS %d MiB, more than the %d MiB stated", r.rss>>20, rss>>20)
			}
			if r.cpu > cpu {
				t.Errorf("used %s of CPU, more than the %s stated", r.cpu, cpu)
			}
			for _, p := range planted {
				if strings.Contains(r.stdout, p) || strings.Contains(r.stderr, p) {
					t.Errorf("planted %q leaked:\nstdout:\n%.600s\nstderr:\n%s", p, r.stdout, r.stderr)
				}
			}
			if bytes.Contains([]byte(r.stdout+r.stderr), []byte("root:x:0:0")) {
				t.Error("/etc/passwd leaked")
			}
			leftInSidecar(t, s)
			if tc.check != nil {
				tc.check(t, s, r)
			}
		})
	}
}

// leftInSidecar fails when a file of the sidecar other than the two
// repositories' own holds planted material: no case may write it out.
func leftInSidecar(t *testing.T, s *sidecar) {
	t.Helper()
	filepath.WalkDir(s.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		if strings.HasPrefix(p, s.other+string(filepath.Separator)) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(s.dir, p)
		if !strings.HasPrefix(rel, "this-app") || strings.HasPrefix(rel, filepath.Join("this-app", "out")) {
			for _, pl := range planted {
				if bytes.Contains(data, []byte(pl)) {
					t.Errorf("%s holds planted %q", rel, pl)
				}
			}
		}
		return nil
	})
}

// build is `virtc build .` in the application's directory.
func buildCall(args ...string) hostileRun {
	return hostileRun{args: append([]string{"build"}, append(args, ".")...)}
}

// plugin is a call of the plugin's generate command.
func pluginCall(params string, env ...string) hostileRun {
	return hostileRun{bin: "virtc-cmp", env: pluginEnv(params, env...)}
}

func hostileCases() []hostileCase {
	return slices.Concat(pathCases(), secretCases(), injectionCases(), cacheCases(), boundCases())
}

// noFile checks that the case wrote no file name in the sidecar.
func noFile(name string) func(t *testing.T, s *sidecar, r hostileResult) {
	return func(t *testing.T, s *sidecar, r hostileResult) {
		if _, err := os.Lstat(filepath.Join(s.dir, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}

// pathCases: the plugin reads only inside the repository's copy, and takes
// only its own parameters, none that writes files or changes the exit
// contract.
func pathCases() []hostileCase {
	return []hostileCase{
		{
			name: "plugin/marker catalogDirs out of the copy",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.marker(t, "  catalogDirs: [../../../other-app/catalog]\n")
				return pluginCall("")
			},
			code: 1, want: `catalog "../../../other-app/catalog": outside the repository`,
		},
		{
			name: "plugin/marker paths absolute",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.marker(t, "  paths: [., "+s.other+"]\n")
				return pluginCall("")
			},
			code: 1, want: "an absolute path",
		},
		{
			name: "plugin/parameter catalog out of the copy",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return pluginCall(`[{"name":"catalog","array":["../../../other-app/catalog"]}]`)
			},
			code: 1, want: "outside the repository",
		},
		{
			name: "plugin/env catalog /etc",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return pluginCall("", "ARGOCD_ENV_CATALOG=/etc")
			},
			code: 1, want: "an absolute path",
		},
		{
			name: "plugin/symlinked catalog out of the copy",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				if err := os.Symlink(filepath.Join(s.other, "catalog"), filepath.Join(s.top, "shared")); err != nil {
					t.Fatal(err)
				}
				s.marker(t, "  catalogDirs: [../../shared]\n")
				return pluginCall("")
			},
			code: 1, want: "a symlink that leads outside the repository",
		},
		{
			name: "plugin/symlinked input to /etc/passwd",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				if err := os.Symlink("/etc/passwd", filepath.Join(s.app, "evil.yaml")); err != nil {
					t.Fatal(err)
				}
				return pluginCall("")
			},
			code: 1, want: "outside the input root",
		},
		{
			name: "plugin/jsonnet import out of the copy",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "steal.jsonnet", `{apiVersion: "virtc.dev/v1alpha1", kind: "Tenant", metadata: {name: import "../../../other-app/passwd.jsonnet"}}`)
				return pluginCall("")
			},
			code: 1, want: "it leaves the input root",
		},
		// Only the plugin's own parameters, none that writes files or
		// changes the exit contract.
		{
			name: "plugin/parameter cpuprofile",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return pluginCall(`[{"name":"cpuprofile","string":"` + filepath.Join(s.dir, "written") + `"}]`)
			},
			code: 2, want: `"cpuprofile" is not an option the plugin takes`,
			check: noFile("written"),
		},
		{
			name: "plugin/env MEMPROFILE",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return pluginCall("", "ARGOCD_ENV_MEMPROFILE="+filepath.Join(s.dir, "written"))
			},
			code: 2, want: `"memprofile" is not an option the plugin takes`,
			check: noFile("written"),
		},
		{
			name: "plugin/parameter help=true",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return pluginCall(`[{"name":"help","string":"true"}]`)
			},
			code: 2, want: `"help" is not an option the plugin takes`,
		},
		{
			name: "plugin/parameter o=json",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return pluginCall(`[{"name":"o","string":"json"}]`)
			},
			code: 2, want: `"o" is not an option the plugin takes`,
		},
		{
			name: "plugin/parameter name holding a token",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return pluginCall(`[{"name":"` + plantedGitHub + `x","string":"1"}]`)
			},
			code: 2, want: "is not an option the plugin takes",
		},
	}
}

// secretCases: no secret reaches the cluster or a message.
func secretCases() []hostileCase {
	return []hostileCase{
		{
			name: "secret/AWS key in a label",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "web01.yaml", strings.Replace(readExample(t, "web01.yaml"), "metadata:\n", "metadata:\n  labels:\n    aws: "+plantedAWS+"\n", 1))
				return pluginCall("")
			},
			code: 1, want: "metadata.labels.aws: holds an AWS access key",
		},
		{
			name: "secret/private key in an annotation",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "web01.yaml", strings.Replace(readExample(t, "web01.yaml"), "metadata:\n", "metadata:\n  annotations:\n    key: |\n      -----BEGIN OPENSSH PRIVATE KEY-----\n      "+plantedPEM+"\n      -----END OPENSSH PRIVATE KEY-----\n", 1))
				return buildCall()
			},
			code: 1, want: "holds a private key",
		},
		{
			name: "secret/password in the alert webhook",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "tenant.yaml", readExample(t, "tenant.yaml")+"  alerts:\n    webhook: https://alerts:"+plantedPass+"@hooks.example.com/x\n")
				return buildCall()
			},
			code: 1, want: "spec.alerts.webhook: holds a password in a URL",
		},
		{
			name: "secret/token pasted into image",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "web01.yaml", replaceLine(t, readExample(t, "web01.yaml"), "  image:", "  image: "+plantedGitHub))
				return buildCall()
			},
			code: 1, want: "[redacted: a GitHub token]",
		},
		{
			name: "secret/password line in image, repeated by the unknown image's message",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "web01.yaml", replaceLine(t, readExample(t, "web01.yaml"), "  image:", `  image: "password: `+plantedPass+`"`))
				return pluginCall("")
			},
			code: 1, want: `unknown image "[redacted: a password]"`,
		},
		{
			name: "secret/AWS key as a label key (the field path)",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "web01.yaml", strings.Replace(readExample(t, "web01.yaml"), "  labels: {app: shop}\n", "  labels: {app: shop, "+plantedAWS+": x}\n", 1))
				return pluginCall("")
			},
			code: 1, want: "metadata.labels.[redacted: an AWS access key]: is named by a key that holds an AWS access key",
		},
		{
			name: "secret/parameter values on the command line the plugin prints",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return pluginCall(`[{"name":"ext-str","map":{"k":"` + plantedAWS + `","t":"api_key: ` + plantedPass + `"}},{"name":"cluster","string":"east\nvirtc: forged line"}]`)
			},
			// The build passes (nothing reads the variables); the
			// command line is redacted and quoted.
			code: 0, want: `"--cluster=east\nvirtc: forged line"`,
			check: func(t *testing.T, s *sidecar, r hostileResult) {
				if strings.Contains(r.stderr, "\nvirtc: forged line") {
					t.Errorf("a parameter forged a line of the plugin's log:\n%s", r.stderr)
				}
			},
		},
		{
			name: "secret/plugin env named by a key",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return pluginCall("", "ARGOCD_ENV_"+plantedAWS+"=x")
			},
			code: 2, want: "plugin env (a name of 20 bytes that is not a flag's) is not an option",
			check: func(t *testing.T, s *sidecar, r hostileResult) {
				if strings.Contains(strings.ToLower(r.stderr), strings.ToLower(plantedAWS)) {
					t.Errorf("the env name was repeated:\n%s", r.stderr)
				}
			},
		},
		{
			name: "secret/warnings ConfigMap over Argo CD's own",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return pluginCall(`[{"name":"warnings-configmap","string":"argocd/argocd-cm"}]`)
			},
			code: 1, want: `warnings-configmap "argocd/argocd-cm": the plugin writes the warnings ConfigMap into openshift-cnv or a namespace of the build's tenants only`,
		},
		{
			name: "secret/std.trace into the warnings ConfigMap",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "extra.jsonnet", `std.trace("deploy with AKIA key `+plantedAWS+`", {apiVersion: "virtc.dev/v1alpha1", kind: "Tenant", metadata: {name: "extra"}, spec: {environment: "lab"}})`)
				return pluginCall(`[{"name":"warnings-configmap","string":"openshift-cnv/virtc-warnings"}]`)
			},
			// The build passes; the trace is a warning, redacted in
			// stderr and in the ConfigMap.
			code: 0, want: "[redacted: an AWS access key]",
			check: func(t *testing.T, s *sidecar, r hostileResult) {
				if !strings.Contains(r.stdout, "name: virtc-warnings") || !strings.Contains(r.stdout, "[redacted: an AWS access key]") {
					t.Errorf("the warnings ConfigMap does not hold the redacted trace:\n%.2000s", r.stdout)
				}
			},
		},
	}
}

// injectionCases: scripts and YAML written from user values.
func injectionCases() []hostileCase {
	return []hostileCase{
		{
			name: "script/restore-plan --app with a command",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return hostileRun{args: []string{"restore-plan", "--app", "x$(touch " + filepath.Join(s.dir, "pwned") + ")", "payments/web01", "."}}
			},
			code: 2, want: "is not an Argo CD Application name",
			check: noFile("pwned"),
		},
		{
			name: "script/init --repo-url with a newline",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return hostileRun{args: []string{"init", "--repo-url", "https://git.example.com/x.git\n  evil: true", filepath.Join(s.dir, "repo")}, dir: s.dir}
			},
			code: 2, want: "virtc init: --repo-url",
			check: noFile("repo"),
		},
		{
			name: "script/import of an export in namespace ..",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				data, err := os.ReadFile(filepath.Join("..", "golden", "import", "virtctl", "live.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				var export map[string]any
				if err := yaml.Unmarshal(data, &export); err != nil {
					t.Fatal(err)
				}
				for _, it := range export["items"].([]any) {
					meta := it.(map[string]any)["metadata"].(map[string]any)
					meta["namespace"] = ".."
					meta["name"] = "../../escaped"
				}
				js, _ := json.Marshal(export)
				p := filepath.Join(s.dir, "export.json")
				if err := os.WriteFile(p, js, 0o644); err != nil {
					t.Fatal(err)
				}
				return hostileRun{args: []string{"import", "--out", filepath.Join(s.dir, "a", "b", "out"), p}, dir: s.dir}
			},
			code: 1, want: "", stdoutOnFailure: true,
			check: func(t *testing.T, s *sidecar, r hostileResult) {
				if !strings.Contains(r.stdout, `metadata.namespace "..": not a Kubernetes namespace name`) {
					t.Errorf("the report does not say why the VM is refused:\n%s", r.stdout)
				}
				filepath.WalkDir(s.dir, func(p string, d os.DirEntry, err error) error {
					if err == nil && strings.Contains(d.Name(), "escaped") {
						t.Errorf("import wrote %s", p)
					}
					return nil
				})
			},
		},
	}
}

// cacheCases: the plugin's cache serves only what it wrote and checked,
// and removes only what it wrote. The first call of a tenant's Application
// fills the cache; an attacker who can write the cache's directory (another
// process of the sidecar) turns the tenant's VMs off in the entry, keeping
// its length, and leaves a file of its own there.
func cacheCases() []hostileCase {
	var first string
	return []hostileCase{{
		name: "cache/entry changed in place",
		setup: func(t *testing.T, s *sidecar) hostileRun {
			cache := filepath.Join(s.dir, "cache")
			call := pluginCall(`[{"name":"scope","string":"vms"},{"name":"tenant","string":"payments"}]`)
			call.env = append(call.env, "VIRTC_CMP_CACHE="+cache)
			call.dir = s.app
			r := call.run(t)
			if r.code != 0 || !strings.Contains(r.stdout, "runStrategy: Always") {
				t.Fatalf("the first call: exit %d\n%s", r.code, r.stderr)
			}
			first = r.stdout
			ents, err := os.ReadDir(cache)
			if err != nil {
				t.Fatal(err)
			}
			changed := 0
			for _, e := range ents {
				p := filepath.Join(cache, e.Name())
				data, err := os.ReadFile(p)
				if err != nil || !bytes.Contains(data, []byte("runStrategy: Always")) {
					continue
				}
				if err := os.WriteFile(p, bytes.ReplaceAll(data, []byte("runStrategy: Always"), []byte("runStrategy: Halted")), 0o644); err != nil {
					t.Fatal(err)
				}
				changed++
			}
			if changed != 1 {
				t.Fatalf("%d cache entries hold the tenant's VMs, want 1", changed)
			}
			if err := os.WriteFile(filepath.Join(cache, "notes.txt"), []byte("not the cache's"), 0o644); err != nil {
				t.Fatal(err)
			}
			return call
		},
		code: 0,
		check: func(t *testing.T, s *sidecar, r hostileResult) {
			if r.stdout != first {
				t.Errorf("the changed entry was served (or the output differs from the first call's):\n%.1000s", r.stdout)
			}
			if _, err := os.Stat(filepath.Join(s.dir, "cache", "notes.txt")); err != nil {
				t.Errorf("the cache removed a file it did not write: %v", err)
			}
		},
	}}
}

// boundCases: refused from the bytes, before they cost memory or time.
func boundCases() []hostileCase {
	return []hostileCase{
		{
			name: "bounds/8 MiB of document markers",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "dashes.yaml", strings.Repeat("---\n", 2<<20-1))
				return pluginCall("")
			},
			code: 1, want: "more than the 10000 one file may hold",
		},
		{
			name: "bounds/8 MiB of list items ended by carriage returns",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				for i := range 4 {
					s.write(t, fmt.Sprintf("cr%d.yaml", i), "a:\r"+strings.Repeat("- a\r", 2<<20-1))
				}
				return pluginCall("")
			},
			code: 1, want: "lines and list items, more than the 250000",
		},
		{
			name: "bounds/document markers after carriage returns",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "dashes.yaml", strings.Repeat("---\r", 2<<20-1))
				return pluginCall("")
			},
			code: 1, want: "more than the 10000 one file may hold",
		},
		{
			name: "bounds/four 8 MiB label maps",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				for i := range 4 {
					var b strings.Builder
					fmt.Fprintf(&b, "apiVersion: virtc.dev/v1alpha1\nkind: VM\nmetadata:\n  name: l%d\n  namespace: payments\n  labels:\n", i)
					for j := 0; b.Len() < 8<<20-64; j++ {
						fmt.Fprintf(&b, "    k%07d: v\n", j)
					}
					s.write(t, fmt.Sprintf("labels%d.yaml", i), b.String())
				}
				return pluginCall("")
			},
			code: 1, want: "lines and list items, more than the 250000",
		},
		{
			name: "bounds/a file over 8 MiB",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				s.write(t, "big.yaml", "# "+strings.Repeat("x", 9<<20)+"\n")
				return pluginCall("")
			},
			code: 1, want: "larger than the 8 MiB limit",
		},
		{
			name: "bounds/FIFO named *.yaml",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				if err := syscall.Mkfifo(filepath.Join(s.app, "fifo.yaml"), 0o644); err != nil {
					t.Fatal(err)
				}
				return pluginCall("")
			},
			code: 1, want: "fifo.yaml: cannot read: not a regular file",
		},
		{
			name: "bounds/symlink to a FIFO",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				if err := syscall.Mkfifo(filepath.Join(s.app, "fifo"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("fifo", filepath.Join(s.app, "link.yaml")); err != nil {
					t.Fatal(err)
				}
				return buildCall()
			},
			code: 1, want: "not a regular file",
		},
		{
			name: "bounds/1,500 nested directories",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				p := s.app
				for range 1500 {
					p = filepath.Join(p, "d")
				}
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
				return pluginCall("")
			},
			code: 1, want: "nested more than 32 deep",
		},
		{
			name: "bounds/build - with 300 MiB on stdin",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return hostileRun{args: []string{"build", "-"}, stdin: io.LimitReader(zeros{}, 300<<20)}
			},
			code: 2, want: "more than the 256 MiB",
			// Reading up to the bound costs the bound, once.
			rss: 768 << 20,
		},
		{
			name: "bounds/virtc fn with 300 MiB on stdin",
			setup: func(t *testing.T, s *sidecar) hostileRun {
				return hostileRun{args: []string{"fn"}, stdin: io.LimitReader(zeros{}, 300<<20)}
			},
			code: 1, want: "larger than the 256 MiB",
			rss: 768 << 20,
		},
	}
}

// zeros is an endless reader of spaces.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "examples", "quickstart", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// replaceLine replaces the first line starting with prefix.
func replaceLine(t *testing.T, s, prefix, line string) string {
	t.Helper()
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			lines[i] = line
			return strings.Join(lines, "\n")
		}
	}
	t.Fatalf("no line starts with %q", prefix)
	return ""
}
