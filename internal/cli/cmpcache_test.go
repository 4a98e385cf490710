package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/virtc/virtc/internal/cmp"
	"github.com/virtc/virtc/internal/fleet"
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
		if !strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(e.Name(), cmp.BuildsLog) {
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
	// output, one entry is left, and the directory was compiled once (the
	// others waited for the key's lock, then served the entry).
	before := fullBuilds.Load()
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
	if n := fullBuilds.Load() - before; n != 1 {
		t.Errorf("%d concurrent misses of one key compiled the directory %d times, want once", 3*len(tenants), n)
	}
	// The log of builds says so, with the entry's key.
	log, err := os.ReadFile(filepath.Join(cache, cmp.BuildsLog))
	if lines := strings.Split(strings.TrimSpace(string(log)), "\n"); err != nil || len(lines) != 1 ||
		!strings.Contains(lines[0], " build key="+entries(t, cache)[0][:12]+" ") || !strings.HasSuffix(lines[0], fmt.Sprintf(" tenants=%d", len(tenants))) {
		t.Errorf("builds.log after one build: %v\n%s", err, log)
	}

	// A hit is served from the entry: storing a marked one shows it.
	call, ok := cmp.Prepare(nil, []string{AppPathEnv + "=clusters/east", "ARGOCD_ENV_SCOPE=vms", CacheEnv + "=" + cache, "ARGOCD_ENV_TENANT=" + tenants[0]})
	if !ok || entries(t, cache)[0] != call.Key() {
		t.Fatalf("the test's call is not the entry's: %v", ok)
	}
	call.Store(nil, nil, "", []cmp.Output{{Tenant: tenants[0], Parts: [][]byte{[]byte("mark"), []byte("ed\n")}}})
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
