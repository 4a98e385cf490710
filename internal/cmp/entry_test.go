package cmp

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// entryCall is a call of tenant on an entry of its own in a new cache.
func entryCall(t *testing.T, dir, tenant string) *Call {
	t.Helper()
	return &Call{dir: dir, key: strings.Repeat("ab", 32), Tenant: tenant}
}

// Every tenant is served its output's bytes, whatever the flags, paths and
// diagnostics hold (the netstrings' own bytes among them), also a tenant
// with no objects; a tenant the entry does not hold is not served.
func TestEntryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"--ext-str=a=1:2,3", "--catalog=x\ny"}
	paths := []string{"vms", "", "12:ab,"}
	diags := "warning: a,\n3:abc,\n"
	var outputs []Output
	want := map[string]string{}
	for i := range 300 {
		name := fmt.Sprintf("t%03d", (i*7)%300) // not in name order
		var parts [][]byte
		for k := range i % 5 {
			parts = append(parts, []byte(fmt.Sprintf("kind: K%d\nname: %s\n", k, name)), []byte("---\n"))
		}
		outputs = append(outputs, Output{Tenant: name, Parts: parts})
		want[name] = string(bytes.Join(parts, nil))
	}
	entryCall(t, dir, "").Store(flags, paths, diags, outputs)
	for name, w := range want {
		var out, errs bytes.Buffer
		c := entryCall(t, dir, name)
		if served, err := c.Serve(&out, &errs); !served || err != nil {
			t.Fatalf("%s: served %v, %v", name, served, err)
		}
		if out.String() != w {
			t.Fatalf("%s: output %q, want %q", name, out.String(), w)
		}
		if wantErr := CommandLine(BuildArgs(nil, flags, nil, paths)) + diags; errs.String() != wantErr {
			t.Fatalf("%s: stderr %q, want %q", name, errs.String(), wantErr)
		}
	}
	var out, errs bytes.Buffer
	if served, _ := entryCall(t, dir, "t300").Serve(&out, &errs); served || out.Len()+errs.Len() > 0 {
		t.Errorf("a tenant the entry does not hold was served")
	}
}

// A damaged entry (cut short anywhere, or a byte of its header changed)
// is a miss: never part of an output, never another tenant's.
func TestEntryDamaged(t *testing.T) {
	dir := t.TempDir()
	c := entryCall(t, dir, "b")
	c.Store([]string{"--scope=vms"}, []string{"."}, "warning: w\n", []Output{
		{Tenant: "a", Parts: [][]byte{[]byte("kind: A\n")}},
		{Tenant: "b", Parts: [][]byte{[]byte("kind: B\n")}},
	})
	whole, err := os.ReadFile(c.Entry())
	if err != nil {
		t.Fatal(err)
	}
	line, size, ok := headerSize(whole)
	if !ok {
		t.Fatalf("the entry's first line: %q", whole)
	}
	serve := func(data []byte) (bool, string) {
		t.Helper()
		if err := os.WriteFile(c.Entry(), data, 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errs bytes.Buffer
		served, _ := c.Serve(&out, &errs)
		return served, out.String()
	}
	for n := range len(whole) {
		if served, out := serve(whole[:n]); served {
			t.Errorf("cut to %d bytes: served %q", n, out)
		}
	}
	for i := range line + size {
		for _, b := range []byte{'0', '9', ':', ','} {
			data := bytes.Clone(whole)
			if data[i] == b {
				continue
			}
			data[i] = b
			if served, out := serve(data); served && out != "kind: B\n" {
				t.Errorf("byte %d of the header set to %q: served %q", i, b, out)
			}
		}
	}
	if served, out := serve([]byte(entryMagic + "1125899906842624\n" + string(whole[line:]))); served {
		t.Errorf("a header that claims a petabyte: served %q", out)
	}
	if served, out := serve(whole); !served || out != "kind: B\n" {
		t.Errorf("the whole entry again: served %v %q", served, out)
	}
}

// Pruning keeps the entry just written and the most recently used ones
// within the bounds, and removes the directories of earlier versions and
// temporary files left by a call that died.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, strings.Repeat("0", 64))
	if err := os.MkdirAll(filepath.Join(old, "tenants"), 0o700); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, ".tmp-dead")
	if err := os.WriteFile(dead, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(dead, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	var keys []string
	for i := range cacheEntries + 4 {
		c := &Call{dir: dir, key: fmt.Sprintf("%064x", i+1)}
		c.Store(nil, nil, "", []Output{{Tenant: "a", Parts: [][]byte{[]byte("x")}}})
		used := base.Add(time.Duration(i) * time.Minute)
		if i == 2 {
			used = time.Now() // used again lately
		}
		if err := os.Chtimes(c.Entry(), used, used); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, c.key)
	}
	last := &Call{dir: dir, key: keys[0]} // written again, though oldest by time
	last.Store(nil, nil, "", []Output{{Tenant: "a"}})
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		if e.Name() != BuildsLog { // kept, and not an entry
			got = append(got, e.Name())
		}
	}
	if len(got) != cacheEntries {
		t.Errorf("%d entries left, want %d: %v", len(got), cacheEntries, got)
	}
	kept := strings.Join(got, " ")
	for _, k := range []string{keys[0], keys[2], keys[len(keys)-1]} {
		if !strings.Contains(kept, k) {
			t.Errorf("entry %s pruned", k)
		}
	}
	for _, k := range []string{keys[1], keys[3]} {
		if strings.Contains(kept, k) {
			t.Errorf("old entry %s kept", k)
		}
	}
	if strings.Contains(kept, filepath.Base(old)) || strings.Contains(kept, ".tmp-dead") {
		t.Errorf("an earlier version's entry or a dead call's file kept: %v", got)
	}
}

// TestBuildsLogBounded: each stored build is a line of builds.log, with
// its key, commit, Application and tenant count; past its bound the log
// moves to builds.log.1, so the cache's disk use stays bounded.
func TestBuildsLogBounded(t *testing.T) {
	dir := t.TempDir()
	c := &Call{dir: dir, key: strings.Repeat("ab", 32), revision: "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b", app: "virtc-east-tenant-shop"}
	c.Store(nil, nil, "", []Output{{Tenant: "a"}, {Tenant: "b"}})
	log, err := os.ReadFile(path.Join(dir, BuildsLog))
	if err != nil || !strings.HasSuffix(string(log), " build key=abababababab revision=4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b app=virtc-east-tenant-shop tenants=2\n") {
		t.Fatalf("builds.log: %v %q", err, log)
	}
	if err := os.WriteFile(path.Join(dir, BuildsLog), make([]byte, buildsLogBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Store(nil, nil, "", []Output{{Tenant: "a"}})
	if info, err := os.Stat(path.Join(dir, BuildsLog+".1")); err != nil || info.Size() != buildsLogBytes+1 {
		t.Errorf("the full log was not moved aside: %v", err)
	}
	if log, _ := os.ReadFile(path.Join(dir, BuildsLog)); strings.Count(string(log), "\n") != 1 {
		t.Errorf("the new log: %q", log)
	}
}

// TestRootApplicationCached: a tenant call of an Application whose path
// is the repository's root (".") has a cache key, as one in a directory.
func TestRootApplicationCached(t *testing.T) {
	top := t.TempDir()
	if err := os.WriteFile(path.Join(top, "vm.yaml"), []byte("kind: VM\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(top)
	for _, p := range []string{".", ""} {
		c, ok := Prepare(nil, []string{AppPathEnv + "=" + p, "ARGOCD_ENV_TENANT=shop", CacheEnv + "=" + t.TempDir()})
		if !ok || c.Key() == "" {
			t.Errorf("path %q: not cached", p)
		}
	}
}
