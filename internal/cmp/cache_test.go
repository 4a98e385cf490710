package cmp

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// call is Prepare of a plugin call with the tenant Application's env
// (examples/argocd/applicationset.yaml) in app, a directory of the
// repository copy top, at clusters/east.
func call(t *testing.T, args []string, env ...string) (*Call, bool) {
	t.Helper()
	base := []string{AppPathEnv + "=clusters/east", "ARGOCD_ENV_SCOPE=vms", CacheEnv + "=" + filepath.Join(t.TempDir(), "cache")}
	return Prepare(args, append(base, env...))
}

// copyAt makes a repository copy with the app at clusters/east, runs in
// the app's directory and returns the app's path.
func copyAt(t *testing.T) string {
	t.Helper()
	app := filepath.Join(t.TempDir(), "clusters", "east")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "tenant.yaml"), []byte("name: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(app)
	return app
}

// With the commit Argo CD names (ARGOCD_APP_REVISION), the key is the
// repository, the commit and the copy's file names: the files are not
// read (the commit names their bytes). A file more or less (the repo
// server's tar exclusions), another commit or another repository is
// another key; a revision that is not a commit hash (the CLI's streamed
// local files: "streamed") keys by the files' bytes.
func TestCacheKeyByCommit(t *testing.T) {
	app := copyAt(t)
	file := filepath.Join(app, "tenant.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	key := func(revision, repo string) string {
		t.Helper()
		c, ok := call(t, nil, "ARGOCD_ENV_TENANT=shop", RevisionEnv+"="+revision, RepoURLEnv+"="+repo)
		if !ok {
			t.Fatalf("no key for revision %q", revision)
		}
		return c.Key()
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

// Every tenant of one build shares the key; every other input of the
// build is part of it.
func TestCacheKeyInputs(t *testing.T) {
	copyAt(t)
	key := func(args []string, env ...string) string {
		t.Helper()
		c, ok := call(t, args, env...)
		if !ok {
			t.Fatalf("no key for %q %q", args, env)
		}
		return c.Key()
	}
	shop := key(nil, "ARGOCD_ENV_TENANT=shop")
	if got := key(nil, "ARGOCD_ENV_TENANT=ops"); got != shop {
		t.Errorf("the tenant changed the key")
	}
	if got := key(nil, `ARGOCD_APP_PARAMETERS=[{"name":"tenant","string":"ops"}]`); got != shop {
		t.Errorf("the tenant as a parameter changed the key")
	}
	for _, other := range []string{
		key([]string{"--cluster=east"}, "ARGOCD_ENV_TENANT=shop"),
		key(nil, "ARGOCD_ENV_TENANT=shop", "ARGOCD_ENV_CLUSTER=east"),
		key(nil, "ARGOCD_ENV_TENANT=shop", `ARGOCD_APP_PARAMETERS=[{"name":"catalog","array":["../catalog"]}]`),
	} {
		if other == shop {
			t.Errorf("another flag gave the same key")
		}
	}
}

// What the cache cannot answer: the call compiles without it.
func TestPrepareDeclines(t *testing.T) {
	app := copyAt(t)
	if _, ok := call(t, nil, "ARGOCD_ENV_TENANT=shop"); !ok {
		t.Fatal("a tenant's call in a repository copy is not cached")
	}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
	}{
		{"no tenant", nil, nil},
		{"tenant in the arguments", []string{"--tenant=shop"}, nil},
		{"tenant in the arguments, two words", []string{"--tenant", "shop"}, []string{"ARGOCD_ENV_TENANT=shop"}},
		{"help", []string{"-h"}, []string{"ARGOCD_ENV_TENANT=shop"}},
		{"paths in the arguments", []string{"--", "vms"}, []string{"ARGOCD_ENV_TENANT=shop"}},
		{"a tenant that is a path", nil, []string{"ARGOCD_ENV_TENANT=../shop"}},
		{"cache off", nil, []string{"ARGOCD_ENV_TENANT=shop", CacheEnv + "=off"}},
		{"not where Argo CD runs it", nil, []string{"ARGOCD_ENV_TENANT=shop", AppPathEnv + "=clusters/west"}},
		{"catalog outside the copy", nil, []string{"ARGOCD_ENV_TENANT=shop", "ARGOCD_ENV_CATALOG=../../../elsewhere"}},
		{"catalog by an absolute path", nil, []string{"ARGOCD_ENV_TENANT=shop", "ARGOCD_ENV_CATALOG=" + app}},
		{"a flag name that is not one", nil, []string{"ARGOCD_ENV_TENANT=shop", "ARGOCD_ENV_9LIVES=x"}},
	} {
		if _, ok := call(t, tc.args, tc.env...); ok {
			t.Errorf("%s: cached", tc.name)
		}
	}
	if err := os.Symlink("tenant.yaml", filepath.Join(app, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, ok := call(t, nil, "ARGOCD_ENV_TENANT=shop"); ok {
		t.Errorf("a copy with a symlink: cached")
	}
}

// A stored entry serves every tenant's output, the diagnostics and the
// command line the call would print without the cache.
func TestStoreServe(t *testing.T) {
	copyAt(t)
	dir := filepath.Join(t.TempDir(), "cache")
	env := []string{AppPathEnv + "=clusters/east", CacheEnv + "=" + dir, "ARGOCD_ENV_SCOPE=vms"}
	shop, ok := Prepare([]string{"--cluster=east"}, append(env, "ARGOCD_ENV_TENANT=shop"))
	if !ok {
		t.Fatal("not cached")
	}
	var out, errs bytes.Buffer
	if served, _ := shop.Serve(&out, &errs); served || out.Len()+errs.Len() > 0 {
		t.Fatalf("an empty cache served %q %q", out.String(), errs.String())
	}
	shop.Store([]string{"--catalog=../p"}, []string{"vms"}, "warning: w\n", []Output{
		{Tenant: "shop", Parts: [][]byte{[]byte("kind: A\n")}},
		{Tenant: "ops", Parts: [][]byte{[]byte("kind: B\n"), []byte("---\n"), []byte("kind: C\n")}},
		{Tenant: "idle"},
	})
	ops, _ := Prepare([]string{"--cluster=east"}, append(env, "ARGOCD_ENV_TENANT=ops"))
	served, err := ops.Serve(&out, &errs)
	if !served || err != nil {
		t.Fatalf("served %v, %v", served, err)
	}
	if want := "virtc cmp: virtc build --cluster=east --catalog=../p --scope=vms --tenant=ops -- vms\nwarning: w\n"; errs.String() != want {
		t.Errorf("stderr %q, want %q", errs.String(), want)
	}
	if out.String() != "kind: B\n---\nkind: C\n" {
		t.Errorf("stdout %q", out.String())
	}
	nosuch, _ := Prepare([]string{"--cluster=east"}, append(env, "ARGOCD_ENV_TENANT=nosuch"))
	out.Reset()
	errs.Reset()
	if served, _ := nosuch.Serve(&out, &errs); served || out.Len()+errs.Len() > 0 {
		t.Errorf("a tenant without output was served")
	}
}

// The hit's fast path (Answer, package hit) serves an intact entry and
// misses on one with a byte flipped, printing nothing, so that the call
// compiles; the compile's entry is served again.
func TestAnswerFlipped(t *testing.T) {
	copyAt(t)
	exe := filepath.Join(t.TempDir(), "virtc")
	if err := os.WriteFile(exe, []byte("\x7fELF virtc"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{AppPathEnv + "=clusters/east", CacheEnv + "=" + filepath.Join(t.TempDir(), "cache"), "ARGOCD_ENV_TENANT=shop"}
	c, ok := PrepareFor(exe, nil, env)
	if !ok {
		t.Fatal("not cached")
	}
	store := func() {
		t.Helper()
		c.Store(nil, []string{"."}, "", []Output{
			{Tenant: "ops", Parts: [][]byte{[]byte("kind: O\n")}},
			{Tenant: "shop", Parts: [][]byte{[]byte("kind: S\n"), []byte("---\n"), []byte("kind: T\n")}},
		})
	}
	answer := func() (int, bool, string, string) {
		t.Helper()
		var out, errs bytes.Buffer
		code, ok := Answer(exe, nil, env, &out, &errs)
		return code, ok, out.String(), errs.String()
	}
	store()
	whole, err := os.ReadFile(c.Entry())
	if err != nil {
		t.Fatal(err)
	}
	const want = "kind: S\n---\nkind: T\n"
	if code, ok, out, _ := answer(); !ok || code != 0 || out != want {
		t.Fatalf("the intact entry: answered %v, exit %d, %q", ok, code, out)
	}
	at := bytes.Index(whole, []byte("kind: T"))
	for name, i := range map[string]int{"the header": len(entryMagic) + 1, "the tenant's output": at + len("kind: ")} {
		data := bytes.Clone(whole)
		data[i] ^= 0x20 // the same length: T is t
		if err := os.WriteFile(c.Entry(), data, 0o600); err != nil {
			t.Fatal(err)
		}
		if code, ok, out, errs := answer(); ok || code != 0 || out+errs != "" {
			t.Errorf("a byte of %s flipped: answered %v, exit %d, %q %q", name, ok, code, out, errs)
		}
	}
	store() // the compile the miss leads to
	if code, ok, out, _ := answer(); !ok || code != 0 || out != want {
		t.Errorf("the entry stored again: answered %v, exit %d, %q", ok, code, out)
	}
}

// The binary counts by its build ID (in its first bytes), not only by
// its path, size and modification time.
func TestBinaryID(t *testing.T) {
	dir := t.TempDir()
	mtime := time.Unix(1, 0)
	id := func(name string, head byte) [32]byte {
		t.Helper()
		p := filepath.Join(dir, name)
		data := bytes.Repeat([]byte{0}, 64<<10)
		data[4000] = head
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if !binaryID(h, filepath.Join(dir, "virtc")) {
			t.Fatal("binaryID failed")
		}
		return [32]byte(h.Sum(nil))
	}
	if id("virtc", 1) == id("virtc", 2) {
		t.Errorf("another build ID, the same size and time: the same identity")
	}
}

// Go's linker writes the build ID within the first 4 KiB that binaryID
// reads: this test binary's, as virtc's.
func TestBuildIDInFirstPage(t *testing.T) {
	f, err := elf.Open(os.Args[0])
	if err != nil {
		t.Skipf("not an ELF binary: %v", err)
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		t.Fatal("no .note.go.buildid section")
	}
	if end := s.Offset + s.Size; end > 4<<10 {
		t.Errorf("the build ID note ends at byte %d, after the 4 KiB binaryID reads", end)
	}
}

// flagName is the regular expression it replaces, on every string of up
// to five bytes from an alphabet that covers each of its cases.
func TestFlagName(t *testing.T) {
	re := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	alphabet := []byte("az09-A_.")
	var walk func(s []byte)
	walk = func(s []byte) {
		if got, want := flagName(string(s)), re.Match(s); got != want {
			t.Errorf("flagName(%q) = %v, want %v", s, got, want)
		}
		if len(s) == 5 {
			return
		}
		for _, c := range alphabet {
			walk(append(s, c))
		}
	}
	walk(nil)
}
