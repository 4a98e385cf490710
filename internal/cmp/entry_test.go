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
// is a miss: never part of an output, never another tenant's. A changed
// header byte is a miss also where the lengths still add up (its sum).
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
	line, size, _, ok := headerSize(whole)
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
			if served, out := serve(data); served {
				t.Errorf("byte %d of the header set to %q: served %q", i, b, out)
			}
		}
	}
	if served, out := serve([]byte(entryMagic + "1125899906842624 " + strings.Repeat("0", 64) + "\n" + string(whole[line:]))); served {
		t.Errorf("a header that claims a petabyte: served %q", out)
	}
	if served, out := serve(whole); !served || out != "kind: B\n" {
		t.Errorf("the whole entry again: served %v %q", served, out)
	}
}

// A byte flipped anywhere in an entry keeps every length in place: the
// sums find it. A call whose bytes (the header, its tenant's output) hold
// it misses and prints nothing; a call whose bytes do not is served them,
// whole. Every byte is some call's, and the intact entry is served again.
func TestEntryFlipped(t *testing.T) {
	dir := t.TempDir()
	outputs := []Output{
		{Tenant: "a", Parts: [][]byte{[]byte("kind: A\n")}},
		{Tenant: "b", Parts: [][]byte{[]byte("kind: B\n"), []byte("---\n"), []byte("kind: BB\n")}},
		{Tenant: "c"},
		{Tenant: "d", Parts: [][]byte{[]byte("kind: D\n")}},
	}
	entryCall(t, dir, "").Store([]string{"--scope=vms"}, []string{"."}, "warning: w\n", outputs)
	file := entryCall(t, dir, "").Entry()
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line, size, _, ok := headerSize(whole)
	if !ok {
		t.Fatalf("the entry's first line: %q", whole)
	}
	type place struct{ from, to int } // of a tenant's output in the file
	places := map[string]place{}
	want := map[string][2]string{}
	from := line + size
	for _, o := range outputs {
		places[o.Tenant] = place{from, from + int(o.size())}
		from += int(o.size())
		var out, errs bytes.Buffer
		if served, err := entryCall(t, dir, o.Tenant).Serve(&out, &errs); !served || err != nil {
			t.Fatalf("%s: the intact entry: served %v, %v", o.Tenant, served, err)
		}
		want[o.Tenant] = [2]string{out.String(), errs.String()}
	}
	if want["b"][0] != "kind: B\n---\nkind: BB\n" {
		t.Fatalf("b: the intact entry served %q", want["b"][0])
	}
	for i := range whole {
		for _, flip := range []byte{0x01, 0x20, 0x80} {
			data := bytes.Clone(whole)
			data[i] ^= flip
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			noticed := false
			for _, o := range outputs {
				p := places[o.Tenant]
				mine := i < line+size || p.from <= i && i < p.to
				var out, errs bytes.Buffer
				served, _ := entryCall(t, dir, o.Tenant).Serve(&out, &errs)
				switch {
				case mine && (served || out.Len()+errs.Len() > 0):
					t.Errorf("byte %d ^ %#x, %s's: served %v, %q %q", i, flip, o.Tenant, served, out.String(), errs.String())
				case !mine && (!served || out.String() != want[o.Tenant][0] || errs.String() != want[o.Tenant][1]):
					t.Errorf("byte %d ^ %#x, not %s's: served %v, %q %q", i, flip, o.Tenant, served, out.String(), errs.String())
				}
				noticed = noticed || !served
			}
			if !noticed {
				t.Errorf("byte %d ^ %#x: no call noticed", i, flip)
			}
		}
	}
	if err := os.WriteFile(file, whole, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range outputs {
		var out, errs bytes.Buffer
		if served, _ := entryCall(t, dir, o.Tenant).Serve(&out, &errs); !served || out.String() != want[o.Tenant][0] {
			t.Errorf("%s: the intact entry again: served %v %q", o.Tenant, served, out.String())
		}
	}
}

// An entry of the previous version (no sums) is a miss, not misread.
func TestEntryPreviousVersion(t *testing.T) {
	dir := t.TempDir()
	c := entryCall(t, dir, "a")
	body := "1:0,1:0,0:,1:1,1:a,1:0,1:8,"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data := fmt.Sprintf("virtc-cmp-entry 3 %d\n%skind: A\n", len(body), body)
	if err := os.WriteFile(c.Entry(), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if served, _ := c.Serve(&out, &errs); served || out.Len()+errs.Len() > 0 {
		t.Errorf("a version 3 entry was served: %q %q", out.String(), errs.String())
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
	f, err := (&Call{dir: dir, key: strings.Repeat("cd", 32)}).tempFile()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	dead := f.Name()
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
	if strings.Contains(kept, filepath.Base(old)) || strings.Contains(kept, filepath.Base(dead)) {
		t.Errorf("an earlier version's entry or a dead call's file kept: %v", got)
	}
}

// Pruning removes only what has a name the cache gives: whatever else is
// in its directory stays, older than every entry and the cache over its
// bound. The cache's own leftovers, as old, go.
func TestPruneForeign(t *testing.T) {
	key := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name string
		kind string // "file", "dir" (holding a file) or "link" (to a file)
		own  bool
	}{
		{"notes.txt", "file", false},
		{"notes", "dir", false},
		{strings.Repeat("AB", 32), "file", false}, // a key's length, not lowercase hex
		{strings.Repeat("g", 64), "file", false},  // a key's length, not hex
		{key[:63], "file", false},                 // one short
		{key + "0", "file", false},                // one more
		{key + ".bak", "file", false},
		{key[:63], "dir", false},
		{strings.Repeat("ef", 32), "link", false}, // a key's name, not a file
		{".tmp-notes", "file", false},
		{".tmp-" + key, "file", false},
		{".tmp-" + key + "-", "file", false},
		{".tmp-" + key + "-x1", "file", false},
		{".tmp-" + key + "-1", "dir", false},
		{".lock-notes", "file", false},
		{".lock-" + key + "x", "file", false},
		{BuildsLog + ".old", "file", false},
		{".tmp-" + key + "-123", "file", true},
		{".lock-" + key, "file", true},
		{strings.Repeat("12", 32), "dir", true}, // an entry of an earlier version
	} {
		t.Run(tc.name+" "+tc.kind, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, tc.name)
			var err error
			switch tc.kind {
			case "file":
				err = os.WriteFile(p, []byte("mine\n"), 0o600)
			case "dir":
				if err = os.Mkdir(p, 0o700); err == nil {
					err = os.WriteFile(filepath.Join(p, "notes.txt"), []byte("mine\n"), 0o600)
				}
			case "link":
				target := filepath.Join(t.TempDir(), "notes.txt")
				if err = os.WriteFile(target, []byte("mine\n"), 0o600); err == nil {
					err = os.Symlink(target, p)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			long := time.Now().Add(-48 * time.Hour)
			if err := os.Chtimes(p, long, long); err != nil {
				t.Fatal(err)
			}
			for i := range cacheEntries + 2 {
				c := &Call{dir: dir, key: fmt.Sprintf("%064x", i+1)}
				c.Store(nil, nil, "", []Output{{Tenant: "a", Parts: [][]byte{[]byte("x")}}})
			}
			_, err = os.Lstat(p)
			switch {
			case tc.own && err == nil:
				t.Errorf("the cache's own %s %q was kept", tc.kind, tc.name)
			case !tc.own && err != nil:
				t.Errorf("%s %q pruned: %v", tc.kind, tc.name, err)
			case !tc.own && tc.kind == "dir":
				if data, err := os.ReadFile(filepath.Join(p, "notes.txt")); err != nil || string(data) != "mine\n" {
					t.Errorf("the file in directory %q: %v %q", tc.name, err, data)
				}
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, e := range ents {
				if isKey(e.Name()) && e.Type().IsRegular() {
					n++
				}
			}
			if n != cacheEntries {
				t.Errorf("%d entries left, want %d", n, cacheEntries)
			}
		})
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
