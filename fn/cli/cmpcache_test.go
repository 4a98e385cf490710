package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/virtc/virtc/fn/fleet"
)

// cmpRun runs the plugin's generate in the working directory with the
// tenant's Application's env (examples/argocd/applicationset.yaml: scope
// vms and the tenant) and the cache directory given ("off": none).
func cmpRun(t *testing.T, cache, tenant string) (string, string, int) {
	t.Helper()
	env := []string{AppPathEnv + "=clusters/east", "ARGOCD_ENV_SCOPE=vms", CacheEnv + "=" + cache}
	if tenant != "" {
		env = append(env, "ARGOCD_ENV_TENANT="+tenant)
	}
	var out, errs bytes.Buffer
	code := runCMPEnv(nil, env, nil, &out, &errs)
	return out.String(), errs.String(), code
}

// entries lists the cache's entries (not its temporary directories).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// Per-tenant Applications of one commit share one full build through the
// cache; each tenant's output stays what `virtc build --tenant` prints
// without it, also when the calls run at once.
func TestCMPCache(t *testing.T) {
	top := t.TempDir()
	app := filepath.Join(top, "clusters", "east")
	if _, err := fleet.Write(app, fleet.Options{Tenants: 4, VMs: 12, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	t.Chdir(app)
	cache := filepath.Join(t.TempDir(), "cache")
	tenants := tenantsOf(t, app)

	want := map[string][2]string{}
	for _, tn := range tenants {
		out, errs, code := cmpRun(t, "off", tn)
		if code != ExitOK || out == "" {
			t.Fatalf("uncached build of %s: exit %d, stderr:\n%s", tn, code, errs)
		}
		want[tn] = [2]string{out, errs}
	}

	// Concurrent calls, all missing at first: each prints its tenant's
	// output, and one entry is left.
	var wg sync.WaitGroup
	for i := range 3 * len(tenants) {
		tn := tenants[i%len(tenants)]
		wg.Go(func() {
			out, errs, code := cmpRun(t, cache, tn)
			if code != ExitOK || out != want[tn][0] || errs != want[tn][1] {
				t.Errorf("%s: exit %d, output equal %v, stderr equal %v", tn, code, out == want[tn][0], errs == want[tn][1])
			}
		})
	}
	wg.Wait()
	if got := entries(t, cache); len(got) != 1 {
		t.Fatalf("cache entries %v, want one", got)
	}

	// A hit is served from the entry: marking the entry's file shows it.
	entry := filepath.Join(cache, entries(t, cache)[0])
	if err := os.WriteFile(tenantFile(entry, tenants[0]), []byte("marked\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := cmpRun(t, cache, tenants[0]); out != "marked\n" {
		t.Fatalf("second call did not read the cache entry")
	}

	// One changed input byte is another key: a miss, and the new tree's
	// output.
	file := filepath.Join(app, "tenants", tenants[1]+".yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.Replace(data, []byte("app: "), []byte("app: x"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	wantOut, wantErr, _ := cmpRun(t, "off", tenants[1])
	if wantOut == want[tenants[1]][0] {
		t.Fatal("the changed byte does not change the tenant's output; the test needs another change")
	}
	out, errs, code := cmpRun(t, cache, tenants[1])
	if code != ExitOK || out != wantOut || errs != wantErr {
		t.Errorf("after a change: exit %d, output equal %v, stderr equal %v", code, out == wantOut, errs == wantErr)
	}
	if got := entries(t, cache); len(got) != 2 {
		t.Errorf("cache entries after a change %v, want two", got)
	}

	// An unknown tenant fails as without the cache.
	_, wantErr, wantCode := cmpRun(t, "off", "nosuch")
	_, errs, code = cmpRun(t, cache, "nosuch")
	if code != wantCode || errs != wantErr || code == ExitOK {
		t.Errorf("unknown tenant: exit %d (want %d), stderr:\n%s\nwant:\n%s", code, wantCode, errs, wantErr)
	}
}

// tenantsOf lists the fleet's tenants (one file each).
func tenantsOf(t *testing.T, app string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(app, "tenants", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tenants in %s: %v", app, err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	return names
}

// --tenant is taken out of the flags the key is made of, in every form.
func TestSplitTenant(t *testing.T) {
	for _, tc := range []struct {
		in     []string
		tenant string
		rest   string
	}{
		{[]string{"--scope=vms", "--tenant=shop", "--", "."}, "shop", "--scope=vms -- ."},
		{[]string{"--tenant", "shop", "--scope", "vms", "--", "."}, "shop", "--scope vms -- ."},
		{[]string{"-tenant=a", "--tenant=b", "--", "--tenant=c"}, "b", "-- --tenant=c"},
		{[]string{"--", "."}, "", "-- ."},
	} {
		tenant, rest := splitTenant(tc.in)
		if tenant != tc.tenant || fmt.Sprint(rest) != "["+tc.rest+"]" {
			t.Errorf("splitTenant(%q) = %q, %q; want %q, %q", tc.in, tenant, rest, tc.tenant, tc.rest)
		}
	}
}

// With the commit Argo CD names (ARGOCD_APP_REVISION), the key is the
// repository, the commit and the copy's file names: the files are not
// read (the commit names their bytes). A file more or less (the repo
// server's tar exclusions), another commit or another repository is
// another key; a revision that is not a commit hash (the CLI's streamed
// local files: "streamed") keys by the files' bytes.
func TestCacheKeyByCommit(t *testing.T) {
	top := t.TempDir()
	app := filepath.Join(top, "clusters", "east")
	file := filepath.Join(app, "tenant.yaml")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(app)
	where := place{base: top, prefix: "clusters/east"}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	key := func(revision, repo string) string {
		t.Helper()
		env := []string{RevisionEnv + "=" + revision, RepoURLEnv + "=" + repo}
		k, ok := cacheKey([]string{"--scope=vms", "--", "."}, env, where, filepath.Join(t.TempDir(), "cache"))
		if !ok {
			t.Fatalf("no key for revision %q", revision)
		}
		return k
	}
	write("name: a\n")
	byCommit, streamed := key(commit, "https://git.example/fleet"), key("streamed", "https://git.example/fleet")
	write("name: b\n") // the same size
	if got := key(commit, "https://git.example/fleet"); got != byCommit {
		t.Errorf("the commit's key changed with a file's bytes: the files were read")
	}
	if got := key("streamed", "https://git.example/fleet"); got == streamed {
		t.Errorf("streamed files: the key did not change with a file's bytes")
	}
	if key(strings.ToUpper(commit), "https://git.example/fleet") == byCommit || key("HEAD", "https://git.example/fleet") == byCommit {
		t.Errorf("a revision that is not a full lowercase commit hash keyed by the commit")
	}
	write("name: bb\n")
	if got := key(commit, "https://git.example/fleet"); got != byCommit {
		t.Errorf("the commit's key changed with a file's size: the files were stat'ed")
	}
	other := filepath.Join(app, "other.yaml")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := key(commit, "https://git.example/fleet"); got == byCommit {
		t.Errorf("the commit's key did not change with a file more in the copy")
	}
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	write("name: a\n")
	if key(commit, "https://git.example/other") == byCommit || key("1123456789abcdef0123456789abcdef01234567", "https://git.example/fleet") == byCommit {
		t.Errorf("another repository or commit gave the same key")
	}
	if key(commit, "https://git.example/fleet") != byCommit {
		t.Errorf("the key is not stable")
	}
}
