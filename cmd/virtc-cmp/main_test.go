package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/virtc/virtc/internal/cli"
	// As in command virtc: a cached `virtc cmp` is answered in init.
	_ "github.com/virtc/virtc/internal/cmp/hit"
	"github.com/virtc/virtc/internal/fleet"
)

// The test binary is both commands, by the name it runs under: copied to
// a directory as virtc-cmp and as virtc, it is the plugin's front command
// and the virtc it runs on a miss (with virtc's cmp cache hook).
func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "virtc-cmp":
		main()
	case "virtc":
		code := cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		if f := os.Getenv(buildsEnv); f != "" && cli.FullBuilds() > 0 {
			if err := appendLine(f, fmt.Sprint(cli.FullBuilds())); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// buildsEnv names a file to which the test binary, run as virtc, adds a
// line for each process that compiled the whole directory for the cache.
const buildsEnv = "VIRTC_TEST_FULL_BUILDS"

func appendLine(file, line string) error {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// install copies the test binary into a new directory as virtc-cmp and
// virtc, and returns the directory.
func install(t *testing.T) string {
	t.Helper()
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"virtc-cmp", "virtc"} {
		if err := os.WriteFile(filepath.Join(dir, name), self, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fleetApp writes a small fleet at clusters/east of a new repository copy
// and returns the app directory and its tenants.
func fleetApp(t *testing.T) (string, []string) {
	t.Helper()
	app := filepath.Join(t.TempDir(), "clusters", "east")
	if _, err := fleet.Write(app, fleet.Options{Tenants: 4, VMs: 12, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(app, "tenants", "*.yaml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("tenants: %v %v", files, err)
	}
	var tenants []string
	for _, f := range files {
		tenants = append(tenants, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	return app, tenants
}

// env is the plugin environment of a tenant's Application (examples/argocd/
// applicationset.yaml) for a commit.
func env(tenant, cache string) []string {
	return []string{"ARGOCD_APP_SOURCE_PATH=clusters/east", "ARGOCD_APP_REVISION=0123456789abcdef0123456789abcdef01234567",
		"ARGOCD_APP_SOURCE_REPO_URL=https://git.example.com/fleet.git",
		"ARGOCD_ENV_SCOPE=vms", "ARGOCD_ENV_TENANT=" + tenant, "VIRTC_CMP_CACHE=" + cache}
}

// run runs bin/name ARGS in dir with env added; it returns the exit code.
func run(t *testing.T, bin, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errs.String()
	} else if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return 0, out.String(), errs.String()
}

// The front command prints what `virtc cmp` prints without the cache, for
// every tenant: the first call runs virtc (a miss: it compiles and stores
// every tenant), the others are answered by the front command itself,
// under the key virtc computed for itself: once the cache is filled,
// virtc is made impossible to run (its mode only: the key is its path,
// size, time and bytes), and the calls still succeed.
func TestFrontServesVirtcEntries(t *testing.T) {
	bin := install(t)
	app, tenants := fleetApp(t)
	cache := filepath.Join(t.TempDir(), "cache")
	want := map[string][2]string{}
	for _, tenant := range tenants {
		code, out, errs := run(t, filepath.Join(bin, "virtc"), app, env(tenant, "off"), "cmp")
		if code != 0 || out == "" {
			t.Fatalf("%s: virtc cmp without the cache: exit %d, %d bytes\n%s", tenant, code, len(out), errs)
		}
		want[tenant] = [2]string{out, errs}
	}
	front := filepath.Join(bin, "virtc-cmp")
	for i, tenant := range tenants {
		if i == 1 {
			if err := os.Chmod(filepath.Join(bin, "virtc"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errs := run(t, front, app, env(tenant, cache))
		if code != 0 {
			t.Fatalf("%s (call %d): exit %d\n%s", tenant, i, code, errs)
		}
		if out != want[tenant][0] || errs != want[tenant][1] {
			t.Errorf("%s (call %d): stdout equal %v, stderr %q, want %q", tenant, i, out == want[tenant][0], errs, want[tenant][1])
		}
	}
	// A call the cache cannot answer (another commit) needs virtc, which
	// cannot run now: the front command says so and fails.
	other := append(env(tenants[0], cache), "ARGOCD_APP_REVISION=1123456789abcdef0123456789abcdef01234567")
	if code, out, errs := run(t, front, app, other); code == 0 || out != "" || !strings.Contains(errs, "virtc-cmp: run "+filepath.Join(bin, "virtc")) {
		t.Errorf("a miss with virtc not executable: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// On a miss the front command is virtc cmp itself: the same arguments,
// the same exit status and streams, a refused input included.
func TestFrontRunsVirtc(t *testing.T) {
	bin := install(t)
	app, tenants := fleetApp(t)
	e := env(tenants[0], filepath.Join(t.TempDir(), "cache"))
	wantCode, wantOut, wantErr := run(t, filepath.Join(bin, "virtc"), app, e, "cmp", "-h")
	code, out, errs := run(t, filepath.Join(bin, "virtc-cmp"), app, e, "-h")
	if code != wantCode || out != wantOut || errs != wantErr || !strings.Contains(errs, "Usage: virtc cmp") {
		t.Errorf("virtc-cmp -h: exit %d %q %q, want virtc cmp -h: exit %d %q %q", code, out, errs, wantCode, wantOut, wantErr)
	}
	if err := os.WriteFile(filepath.Join(app, "tenants", tenants[0]+".yaml"), []byte("apiVersion: virtc.dev/v1alpha1\nkind: Tenant\nspec: {nosuch: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e = env(tenants[0], "off")
	wantCode, wantOut, wantErr = run(t, filepath.Join(bin, "virtc"), app, e, "cmp")
	code, out, errs = run(t, filepath.Join(bin, "virtc-cmp"), app, e)
	if wantCode == 0 || code != wantCode || out != "" || errs != wantErr {
		t.Errorf("a refused input: exit %d %q %q, want exit %d (not 0) %q %q", code, out, errs, wantCode, wantOut, wantErr)
	}
}

// Concurrent calls of every tenant on an empty cache (Argo CD refreshes a
// commit's Applications in parallel): each prints its tenant's output, and
// the directory is compiled once: the first call's front command hands the
// commit's lock to its virtc, the others wait in their front commands and
// serve its entry (cmp.Front).
func TestFrontConcurrent(t *testing.T) {
	bin := install(t)
	app, tenants := fleetApp(t)
	cache := filepath.Join(t.TempDir(), "cache")
	builds := filepath.Join(t.TempDir(), "builds")
	want := map[string]string{}
	for _, tenant := range tenants {
		_, out, _ := run(t, filepath.Join(bin, "virtc"), app, env(tenant, "off"), "cmp")
		want[tenant] = out
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3*len(tenants))
	for range 3 {
		for _, tenant := range tenants {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(filepath.Join(bin, "virtc-cmp"))
				cmd.Dir = app
				cmd.Env = append(os.Environ(), env(tenant, cache)...)
				cmd.Env = append(cmd.Env, buildsEnv+"="+builds)
				cmd.Stderr = io.Discard
				out, err := cmd.Output()
				if err != nil || string(out) != want[tenant] {
					errs <- fmt.Errorf("%s: %v, output equal %v", tenant, err, string(out) == want[tenant])
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ents, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("a temporary entry is left: %s", e.Name())
		}
	}
	data, err := os.ReadFile(builds)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 1 {
		t.Errorf("%d calls at once compiled the directory in %d processes, want one", 3*len(tenants), n)
	}
}

// With virtc a symlink, the key virtc computes names the file it points
// to, not the name beside this command: the front command leaves the
// cache to virtc, and the output is the same.
func TestFrontSymlinkedVirtc(t *testing.T) {
	bin := install(t)
	app, tenants := fleetApp(t)
	link := t.TempDir()
	self, err := os.ReadFile(filepath.Join(bin, "virtc-cmp"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(link, "virtc-cmp"), self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(bin, "virtc"), filepath.Join(link, "virtc")); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	for _, tenant := range tenants[:2] {
		_, want, _ := run(t, filepath.Join(bin, "virtc"), app, env(tenant, "off"), "cmp")
		code, out, errs := run(t, filepath.Join(link, "virtc-cmp"), app, env(tenant, cache))
		if code != 0 || out != want {
			t.Errorf("%s: exit %d, output equal %v\n%s", tenant, code, out == want, errs)
		}
	}
}
