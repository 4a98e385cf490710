package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/fleet"
)

// The test binary is virtc when asked: hit's init runs in it as in
// virtc (it answers `cmp` calls the cache has before TestMain), and
// everything else reaches main.
func TestMain(m *testing.M) {
	if os.Getenv("VIRTC_TEST_AS_VIRTC") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// virtc runs this test binary as `virtc ARGS` in dir with env added.
func virtc(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(env, "VIRTC_TEST_AS_VIRTC=1")...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("virtc %s: %v\n%s", strings.Join(args, " "), err, errs.String())
	}
	return out.String(), errs.String()
}

// A cached plugin call is answered while virtc is being initialised,
// before the Kubernetes API types, kyaml and kube-openapi (most of a
// call's start-up): GODEBUG=inittrace=1 lists every package initialised,
// and none of those is. Every call prints what the call without the
// cache prints.
func TestCMPHitBeforeInit(t *testing.T) {
	top := t.TempDir()
	app := filepath.Join(top, "clusters", "east")
	if _, err := fleet.Write(app, fleet.Options{Tenants: 3, VMs: 9, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(app, "tenants", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tenants: %v", err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	env := func(tenant, cache string) []string {
		return []string{"ARGOCD_APP_SOURCE_PATH=clusters/east", "ARGOCD_APP_REVISION=0123456789abcdef0123456789abcdef01234567",
			"ARGOCD_ENV_SCOPE=vms", "ARGOCD_ENV_TENANT=" + tenant, "VIRTC_CMP_CACHE=" + cache}
	}
	heavy := func(trace string) []string {
		var pkgs []string
		for _, l := range strings.Split(trace, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "init" &&
				(strings.HasPrefix(f[1], "k8s.io/api/") || strings.HasPrefix(f[1], "k8s.io/kube-openapi/pkg/validation/") || strings.HasPrefix(f[1], "sigs.k8s.io/kustomize/")) {
				pkgs = append(pkgs, f[1])
			}
		}
		return pkgs
	}
	for i, f := range files {
		tenant := strings.TrimSuffix(filepath.Base(f), ".yaml")
		wantOut, wantErr := virtc(t, app, env(tenant, "off"), "cmp")
		if wantOut == "" {
			t.Fatalf("%s: no output", tenant)
		}
		trace := append(env(tenant, cache), "GODEBUG=inittrace=1")
		out, errs := virtc(t, app, trace, "cmp")
		if out != wantOut || !strings.HasSuffix(errs, wantErr) {
			t.Errorf("%s: output equal %v, stderr ends as without the cache %v", tenant, out == wantOut, strings.HasSuffix(errs, wantErr))
		}
		switch pkgs := heavy(errs); {
		case i == 0 && len(pkgs) == 0:
			t.Errorf("%s: the first call (a miss) initialised none of the heavy packages; the test cannot tell a hit", tenant)
		case i > 0 && len(pkgs) > 0:
			t.Errorf("%s: a cached call initialised %s", tenant, strings.Join(pkgs, ", "))
		}
	}
}
