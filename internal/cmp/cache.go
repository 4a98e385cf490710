package cmp

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/virtc/virtc/internal/secret"
)

// This file is the plugin's output cache. It imports the standard library
// only (and internal/secret, which does too and compiles its patterns on
// first use), so that a cached call can be served by package hit before the rest
// of virtc (Kubernetes' API types, kyaml, kube-openapi, Jsonnet) is even
// initialised: starting those was most of a cached call's cost.
//
// Argo CD's CMP server runs generate once per Application, each time in a
// fresh copy of the repository (argo-cd v3.6.1 cmpserver/plugin/plugin.go,
// generateManifestGeneric: a new temporary work directory under
// ARGOCD_CMP_WORKDIR, removed after the call), so with one Application per
// tenant every tenant of a commit compiled and checked the whole directory
// again. Only the sidecar's own environment and file system outlive a call:
// the cache lives there.
//
// An entry is the full build's outcome (every check passed), keyed by a
// hash of everything that decides it (Prepare): virtc's own binary, the
// command's arguments, the flags from the environment other than
// --tenant, where the app sits in the repository, and the repository copy
// (which holds the marker file, and with it the Compiler's options). It
// holds the build's diagnostics (warnings), the Compiler's flags and paths
// (for the command line the call prints) and each tenant's output, exactly
// what `virtc build --tenant NAME` prints: the full output's objects of
// that tenant, in the full output's order. A failed build is not cached:
// each call compiles again and reports its errors itself.
//
// Entries are written to a temporary file and renamed into place, so a
// reader sees a whole entry or none and needs no lock. Concurrent misses
// of one key (Argo CD refreshes every Application of a commit at once:
// argo-cd v3.6.1 runs 20 status processors, and a plugin source's calls
// are not serialised) compile once: the first takes the key's lock
// (Call.Lock, an flock(2) on a small file beside the entries) and compiles
// while the others wait for it, then serve its entry. A call that dies
// releases the lock with its process. A reader that finds an entry removed
// by pruning compiles instead.

// CacheEnv names the directory of the plugin's output cache (the sidecar
// container's environment, not a plugin env entry); "off" turns the cache
// off. Default: virtc-cmp-cache in the temporary directory, which the
// example sidecar mounts as its own emptyDir (examples/argocd/
// repo-server-patch.yaml).
const CacheEnv = "VIRTC_CMP_CACHE"

// AppPathEnv is the application's path in its repository, which Argo CD's
// repo server gives a plugin (argo-cd v3.6.1 reposerver/repository/
// repository.go, newEnv: ARGOCD_APP_SOURCE_PATH=<spec.source.path>).
const AppPathEnv = "ARGOCD_APP_SOURCE_PATH"

// RevisionEnv and RepoURLEnv are the commit Argo CD's repo server
// resolved the application's source to and the repository's URL, which it
// gives a plugin (argo-cd v3.6.1 reposerver/repository/repository.go,
// newEnv: ARGOCD_APP_REVISION is the commitSHA that runManifestGen passes
// to GenerateManifests: for a Git source the full commit hash; for files
// streamed from the CLI, `argocd app diff --local` and the like,
// GenerateManifestWithFiles passes "streamed").
const (
	RevisionEnv = "ARGOCD_APP_REVISION"
	RepoURLEnv  = "ARGOCD_APP_SOURCE_REPO_URL"
)

// Bounds of the cache: the newest entries are kept, at most this many and
// this many bytes together (the entry just written is always kept).
const (
	cacheEntries = 16
	cacheBytes   = 2 << 30
)

// AppPlace is where the plugin's working directory sits in the repository:
// the repository's top (base) and the application's directory in it
// (prefix, slashes). The CMP server unpacks the whole repository and runs
// generate in the application's directory (cmpserver/plugin/plugin.go),
// and the copy may lack .git (ARGOCD_REPO_SERVER_PLUGIN_TAR_EXCLUSIONS
// often drops it). Empty when Argo CD did not name the directory or we do
// not run in it.
func AppPlace(env []string) (base, prefix string) {
	app, set := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, AppPathEnv+"="); ok {
			app, set = path.Clean(toSlash(v)), true
		}
	}
	if !set || path.IsAbs(app) || app == ".." || strings.HasPrefix(app, "../") {
		return "", ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", ""
	}
	if app == "." {
		// An Application of the repository's root (spec.source.path "."
		// or empty): the working directory is the top.
		return wd, ""
	}
	top, ok := strings.CutSuffix(toSlash(wd), "/"+app)
	if !ok {
		return "", ""
	}
	return fromSlash(top), app
}

// BuildArgs is the `virtc build` command line of a plugin call: the
// command's own arguments (plugin.yaml), the Compiler's flags (the marker
// file), the environment's flags (Args), then the input paths (the app
// directory when the Compiler names none).
func BuildArgs(args, specFlags, envArgs, paths []string) []string {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	return slices.Concat(args, specFlags, envArgs, []string{"--"}, paths)
}

// CommandLine is what a call prints on stderr first: the build it runs.
// Its values come from the Application and the repository: each is
// redacted (secret.Redact) and quoted when it holds a space, a quote or a
// control character, so that it can neither repeat a secret nor forge a
// line of Argo CD's log.
func CommandLine(build []string) string {
	args := make([]string, len(build))
	for i, a := range build {
		a = secret.Redact(a)
		if strings.ContainsFunc(a, func(r rune) bool { return r <= ' ' || r == '"' || r == '\'' || r == '\\' || r == 0x7f }) {
			a = strconv.Quote(a)
		}
		args[i] = a
	}
	return "virtc cmp: virtc build " + strings.Join(args, " ") + "\n"
}

// Call is a plugin call the cache can answer: one tenant's output of a
// full build that is keyed by its inputs.
type Call struct {
	dir string // the cache's directory
	key string
	// Tenant is the tenant whose output the call prints.
	Tenant  string
	args    []string // the command's own arguments
	envArgs []string // the environment's flags, --tenant included
	// revision and app are Argo CD's commit and Application, for the log
	// of builds.
	revision, app string
}

// Prepare is the cache's part of a call of `virtc cmp ARGS` in the
// environment env (os.Environ form), or false when the cache cannot
// answer it: the cache is off, the environment names no tenant (the
// per-tenant Applications of examples/argocd/applicationset.yaml give it
// as a parameter), the arguments name one or ask for help, Argo CD did
// not say where the app sits in the repository, an input lies outside
// the copy or is named by an absolute path, or the copy holds a symlink or
// an unreadable file.
//
// The key hashes virtc's binary (path, size, modification time and build
// information), the arguments, the environment's flags other than
// --tenant, the app's path in the repository and the repository copy. The
// copy counts by the path and bytes of every file, unless Argo CD named
// the commit it is (RevisionEnv is a full commit hash): a commit names
// each of its files' bytes, so the key then holds the repository's URL,
// the commit and the path of every file of the copy, read from the
// directories alone (no file opened, none stat'ed). The copy is the
// commit's tree less what the repo server's plugin tar exclusions leave
// out (argo-cd cmd/argocd-repo-server/commands/argocd_repo_server.go,
// --plugin-tar-exclude, read when the repo server starts): which files it
// holds is what can differ between two copies of one commit, and the
// paths say that. The marker file is one of the copy's files, so the key
// decides the Compiler's options without parsing them; the copy's own
// location is left out (Argo CD unpacks each call into a new temporary
// directory, and the output names files relative to the repository's
// top), which is why inputs must be named relative to it.
func Prepare(args, env []string) (*Call, bool) {
	exe, err := os.Executable()
	if err != nil {
		return nil, false
	}
	return PrepareFor(exe, args, env)
}

// PrepareFor is Prepare for the virtc binary at exe, an absolute path with
// no symlink in it (what os.Executable returns in that binary on Linux, so
// that the key is the one virtc computes itself): the plugin's front
// command (cmd/virtc-cmp) answers calls with it before it runs virtc.
func PrepareFor(exe string, args, env []string) (*Call, bool) {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if a == "--" || strings.HasPrefix(a, "-") && (name == "tenant" || name == "h" || name == "help") {
			return nil, false
		}
	}
	envArgs, err := Args(env)
	if err != nil {
		return nil, false
	}
	c := &Call{args: args, envArgs: envArgs}
	var keyArgs []string
	for _, a := range envArgs {
		if v, ok := strings.CutPrefix(a, "--tenant="); ok {
			c.Tenant = v
			continue
		}
		keyArgs = append(keyArgs, a)
	}
	if c.Tenant == "" || strings.ContainsAny(c.Tenant, `/\`) || c.Tenant == "." || c.Tenant == ".." {
		return nil, false
	}
	if c.dir = cacheDir(env); c.dir == "" {
		return nil, false
	}
	top, prefix := AppPlace(env)
	if top == "" {
		return nil, false
	}
	wd, err := os.Getwd()
	if err != nil || !InTree(slices.Concat(args, envArgs), wd, top) {
		return nil, false
	}
	var revision, repoURL string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, RevisionEnv+"="); ok {
			revision = v
		}
		if v, ok := strings.CutPrefix(kv, RepoURLEnv+"="); ok {
			repoURL = v
		}
	}
	c.revision = revision
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "ARGOCD_APP_NAME="); ok {
			c.app = v
		}
	}
	byCommit := commitHash(revision)
	if os.PathSeparator != '/' {
		return nil, false // paths below are slash-separated (Argo CD's sidecar runs on Linux)
	}
	h := sha256.New()
	fmt.Fprintf(h, "virtc cmp cache 3\x00")
	if byCommit {
		fmt.Fprintf(h, "commit\x00%s\x00%s\x00", repoURL, revision)
	}
	if !binaryID(h, exe) {
		return nil, false
	}
	fmt.Fprintf(h, "%s\x00args\x00", prefix)
	for _, a := range args {
		fmt.Fprintf(h, "%s\x00", a)
	}
	fmt.Fprintf(h, "env\x00")
	for _, a := range keyArgs {
		fmt.Fprintf(h, "%s\x00", a)
	}
	if !hashTree(h, top, "", c.dir, !byCommit) {
		return nil, false
	}
	c.key = hex.EncodeToString(h.Sum(nil))
	return c, true
}

// binaryID writes what identifies virtc's binary to h: its path, size and
// modification time, and its first 4 KiB, which hold the Go build ID (a
// hash of the build's inputs, flags and toolchain, so another version of
// virtc has another). Go's linker writes it as the ELF note
// .note.go.buildid before .text, in the file's first page (cmd/link/
// internal/ld/elf.go, asmbElf; TestBuildIDInFirstPage holds it, where
// cmd/internal/buildid reads 32 KiB to cover other formats too).
//
// Not runtime/debug's build information: this file imports neither
// runtime/debug nor path/filepath, because Go initialises a package only
// when nothing ready sorts before it, and about a hundred of virtc's
// dependencies sort before "path/filepath" and "runtime/debug":
// importing either made package hit wait for them.
func binaryID(h io.Writer, exe string) bool {
	f, err := openFile(exe)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false
	}
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00", exe, info.Size(), info.ModTime().UnixNano())
	head := make([]byte, 4<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return false
	}
	h.Write(head[:n])
	return true
}

// hashTree writes the files under dir (the copy's top joined with rel,
// slash-separated) to h in lexical order, depth first, as
// filepath.WalkDir visits them: each file's path from the top, and with
// bytes its size and bytes. It skips .git below the top and the cache's
// own directory, and fails on anything but directories and regular files
// and on what it cannot read.
//
// Without bytes this is most of a cached call's own work (500 names at
// 10,000 VMs), and in a process that lives a millisecond or two each page
// of memory it first touches costs a fault: the names are gathered into
// one buffer, reserved once (untouched pages cost nothing), and hashed
// once.
func hashTree(h io.Writer, top, rel, cacheDir string, bytes bool) bool {
	var buf []byte
	if !bytes {
		buf = make([]byte, 0, 64<<10)
	}
	ok := walkTree(top, rel, cacheDir, func(dir, name string) bool {
		if !bytes {
			if dir != "" {
				buf = append(append(buf, dir...), '/')
			}
			buf = append(append(buf, name...), 0)
			return true
		}
		p := name
		if dir != "" {
			p = dir + "/" + name
		}
		// Streamed: a copy's file that is no input (a disk image, a
		// video) costs its bytes' hashing, not their size in memory.
		f, info, err := openRegular(top + "/" + p)
		if err != nil {
			return false
		}
		defer f.Close()
		io.WriteString(h, p+"\x00"+strconv.FormatInt(info.Size(), 10)+"\x00")
		n, err := io.Copy(h, f)
		return err == nil && n == info.Size()
	})
	h.Write(buf)
	return ok
}

// dirent is a directory entry's name and whether it is a directory.
type dirent struct {
	name string
	dir  bool
}

// walkTree calls file with the directory (from the top) and name of every
// regular file under rel, in hashTree's order; false from file stops it.
// It is false when it meets anything but a directory or a regular file,
// or cannot read a directory.
func walkTree(top, rel, cacheDir string, file func(dir, name string) bool) bool {
	dir := top
	if rel != "" {
		dir = top + "/" + rel
	}
	list, ok := readDir(dir)
	if !ok {
		return false
	}
	slices.SortFunc(list, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	for _, e := range list {
		if !e.dir {
			if !file(rel, e.name) {
				return false
			}
			continue
		}
		p := e.name
		if rel != "" {
			p = rel + "/" + e.name
		}
		switch {
		case e.name == ".git" || top+"/"+p == cacheDir:
		case !walkTree(top, p, cacheDir, file):
			return false
		}
	}
	return true
}

// toSlash and fromSlash are filepath.ToSlash and FromSlash (not imported:
// see binaryID).
func toSlash(p string) string {
	if os.PathSeparator == '/' {
		return p
	}
	return strings.ReplaceAll(p, string(os.PathSeparator), "/")
}

func fromSlash(p string) string {
	if os.PathSeparator == '/' {
		return p
	}
	return strings.ReplaceAll(p, "/", string(os.PathSeparator))
}

// cacheDir is the cache's directory (absolute), or "" when it is off.
func cacheDir(env []string) string {
	dir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, CacheEnv+"="); ok {
			dir = v
		}
	}
	switch dir {
	case "off":
		return ""
	case "":
		dir = path.Join(os.TempDir(), "virtc-cmp-cache")
	}
	if !path.IsAbs(dir) {
		wd, err := os.Getwd()
		if err != nil {
			return ""
		}
		dir = path.Join(wd, dir)
	}
	return path.Clean(dir)
}

// InTree reports whether every input that build flags and paths name
// (positional arguments and --catalog values) is a relative path inside
// the repository copy top, from the working directory wd. The key leaves
// the copy's location out, so an absolute path would name another file in
// another copy, and a path outside the copy is not hashed.
func InTree(args []string, wd, top string) bool {
	for i, a := range args {
		p := a
		if v, ok := strings.CutPrefix(a, "--catalog="); ok {
			p = v
		} else if a == "--catalog" && i+1 < len(args) {
			continue
		} else if strings.HasPrefix(a, "-") {
			continue
		}
		if i > 0 && args[i-1] == "--catalog" {
			p = a
		}
		if path.IsAbs(p) {
			return false
		}
		if q := path.Join(wd, p); q != path.Clean(top) && !strings.HasPrefix(q, path.Clean(top)+"/") {
			return false
		}
	}
	return true
}

// commitHash matches a full Git commit hash (SHA-1 or SHA-256).
func commitHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Key is the call's cache key.
func (c *Call) Key() string { return c.key }

// Entry is the file of the call's entry.
func (c *Call) Entry() string { return path.Join(c.dir, c.key) }

// Serve prints the call's command line, the cached diagnostics and the
// tenant's output, if the entry has them, as the call would without the
// cache. An error is that of writing the output.
//
// It prints only bytes whose sums it has checked (entry.go): a damaged
// entry is a miss, and the call's compile stores a whole one in its
// place. The output is read into memory, checked and written from there
// (not sent from the file after the check), so what is printed is what
// was checked.
func (c *Call) Serve(stdout, stderr io.Writer) (served bool, err error) {
	f, info, err := openRegular(c.Entry())
	if err != nil {
		return false, nil
	}
	defer f.Close()
	first := make([]byte, 4<<10)
	n, _ := io.ReadFull(f, first)
	line, size, sum, ok := headerSize(first[:n])
	if !ok {
		return false, nil
	}
	if int64(line+size) > info.Size() {
		return false, nil
	}
	raw := make([]byte, size)
	got := copy(raw, first[line:n])
	if _, err := f.ReadAt(raw[got:], int64(line+got)); err != nil && got < size {
		return false, nil
	}
	if sha256.Sum256(raw) != sum {
		return false, nil
	}
	head, ok := parseHeader(raw)
	if !ok {
		return false, nil
	}
	off, length, sum, ok := head.lookup(c.Tenant, info.Size()-int64(line+size))
	if !ok {
		return false, nil
	}
	out := make([]byte, length)
	if _, err := f.ReadAt(out, int64(line+size)+off); err != nil || sha256.Sum256(out) != sum {
		return false, nil
	}
	now := time.Now()
	os.Chtimes(c.Entry(), now, now) // the newest use, for pruning
	io.WriteString(stderr, CommandLine(BuildArgs(c.args, head.flags, c.envArgs, head.paths)))
	io.WriteString(stderr, head.diags)
	_, err = stdout.Write(out)
	return true, err
}

// Answer serves a plugin call of the virtc binary at exe (PrepareFor)
// from the cache, if it holds the call's entry: ok is whether it did, code
// the exit status (1 when the output could not be written, as `virtc
// cmp` exits then). Command virtc (package hit) starts with it. When
// another call of the same key is compiling (it holds the key's lock),
// Answer waits for it and serves its entry, unless the plugin's front
// command has waited already (LockEnv is set).
func Answer(exe string, args, env []string, stdout, stderr io.Writer) (code int, ok bool) {
	call, ok := PrepareFor(exe, args, env)
	if !ok {
		return 0, false
	}
	if code, ok := call.answer(stdout, stderr); ok || lookupEnv(env, LockEnv) != "" {
		return code, ok
	}
	release, waited := call.Lock(nil)
	release()
	if !waited {
		return 0, false // none compiling: the caller compiles
	}
	return call.answer(stdout, stderr)
}

// Front is Answer for the plugin's front command (cmd/virtc-cmp), which
// execs virtc in its place when the cache cannot answer: on a miss it
// waits for a call of the same key that is compiling, in its own small
// process, and serves that call's entry; when none is compiling it takes
// the key's lock and hands it to the virtc it execs (execEnv holds
// LockEnv, the descriptor survives the exec), so that no other call
// starts a compile of the key between its lock and virtc's. execEnv is
// env when there is nothing to hand over.
func Front(exe string, args, env []string, stdout, stderr io.Writer) (code int, answered bool, execEnv []string) {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, LockEnv+"=") })
	call, ok := PrepareFor(exe, args, env)
	if !ok {
		return 0, false, env
	}
	if code, ok := call.answer(stdout, stderr); ok {
		return code, true, env
	}
	if err := os.MkdirAll(call.dir, 0o700); err != nil {
		return 0, false, env
	}
	fd, waited, ok := lockFile(path.Join(call.dir, lockPrefix+call.key), true)
	if !ok {
		return 0, false, env
	}
	if !waited {
		return 0, false, append(env, LockEnv+"="+strconv.Itoa(fd))
	}
	closeFD(fd)
	if code, ok := call.answer(stdout, stderr); ok {
		return code, true, env
	}
	return 0, false, append(env, LockEnv+"=none")
}

// answer serves the call from its entry, if the cache holds it.
func (c *Call) answer(stdout, stderr io.Writer) (code int, ok bool) {
	served, err := c.Serve(stdout, stderr)
	if !served {
		return 0, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "virtc: %v\n", err)
		return 1, true
	}
	return 0, true
}

// Lock takes the lock of the call's key, waiting while another call of
// the same key holds it (it is compiling the entry). waited says whether it
// had to wait: a call that waited and still finds no entry knows that the
// first one could not store it (its build failed, say), and should let the
// lock go at once rather than make the calls after it wait in turn. The
// lock costs nothing to leave behind: flock(2) is released when its file
// is closed or its process ends, and prune removes the file an hour after
// it was made. Where there is no flock(2), or the file cannot be made,
// release is a no-op and waited false.
//
// In env (os.Environ form), LockEnv is what the plugin's front command
// handed over (Front): the descriptor holding the lock already, which
// Lock takes over, or "none" (waited, and nothing to hold).
func (c *Call) Lock(env []string) (release func(), waited bool) {
	noop := func() {}
	switch v := lookupEnv(env, LockEnv); v {
	case "":
	case "none":
		return noop, true
	default:
		fd, err := strconv.Atoi(v)
		if err != nil || fd < 3 || !adoptFD(fd) {
			break
		}
		var once sync.Once
		return func() { once.Do(func() { closeFD(fd) }) }, false
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return noop, false
	}
	fd, waited, ok := lockFile(path.Join(c.dir, lockPrefix+c.key), false)
	if !ok {
		return noop, false
	}
	var once sync.Once
	return func() { once.Do(func() { closeFD(fd) }) }, waited
}

// LockEnv hands the key's lock from the plugin's front command to the
// virtc it execs in its place (Front, Call.Lock): the number of the
// inherited descriptor that holds it, or "none" when the front waited for
// another call of the key that then stored no entry.
const LockEnv = "VIRTC_CMP_LOCK"

// lockPrefix starts the name of a key's lock file; tempPrefix that of an
// entry being written (the key, "-" and os.CreateTemp's random digits).
const (
	lockPrefix = ".lock-"
	tempPrefix = ".tmp-"
)

// keyLen is the length of a key: a SHA-256 in lowercase hex.
const keyLen = 2 * sha256.Size

// isKey reports whether s has a key's form (an entry's header sum has it
// too).
func isKey(s string) bool {
	if len(s) != keyLen {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// isTemp reports whether name is that of a temporary entry (Store).
func isTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, tempPrefix)
	if !ok || len(rest) < keyLen+2 || !isKey(rest[:keyLen]) || rest[keyLen] != '-' {
		return false
	}
	for _, c := range []byte(rest[keyLen+1:]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// lookupEnv is the value of name in env (os.Environ form), "" if unset.
func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// Store writes the call's entry: the full build's diagnostics, the
// Compiler's flags and paths, and every tenant's output; then it prunes
// the oldest entries. The cache is an optimisation: a failure to write it
// leaves the build's result as it is.
//
// The entry is written to a temporary file and renamed into place, so a
// reader opens a whole entry or none.
func (c *Call) Store(specFlags, paths []string, diags string, outputs []Output) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	f, err := c.tempFile()
	if err != nil {
		return
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<20)
	err = writeEntry(w, specFlags, paths, diags, outputs)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err != nil || cerr != nil {
		return
	}
	if err := os.Rename(f.Name(), c.Entry()); err != nil {
		return
	}
	c.logBuild(len(outputs))
	c.prune()
}

// tempFile creates the file the call's entry is written to before it is
// renamed into place: a name isTemp knows.
func (c *Call) tempFile() (*os.File, error) {
	return os.CreateTemp(c.dir, tempPrefix+c.key+"-*")
}

// BuildsLog is the file in the cache's directory that has a line for
// each full build the plugin stored: which key, commit and Application
// built it, for how many tenants. After a commit, each key of it should
// have one line, however many Applications called at once (the sidecar's
// operators, and make e2e-argocd, read it).
const BuildsLog = "builds.log"

// buildsLogBytes bounds the log: beyond it, it moves to builds.log.1.
const buildsLogBytes = 1 << 20

// logBuild appends the build's line to the log: one short O_APPEND write,
// so lines of concurrent calls do not interleave.
func (c *Call) logBuild(tenants int) {
	file := path.Join(c.dir, BuildsLog)
	if info, err := os.Stat(file); err == nil && info.Size() > buildsLogBytes {
		os.Rename(file, file+".1")
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%s build key=%s revision=%s app=%s tenants=%d\n", time.Now().UTC().Format(time.RFC3339), c.key[:12], c.revision, c.app, tenants)
	f.Close()
}

// prune removes the least recently used entries beyond the bounds,
// temporary files and locks made an hour ago or more, and entries of
// earlier versions (directories). It removes only what has a name the
// cache gives (isKey, isTemp, lockPrefix and a key): the directory may be
// one a user named, holding files of their own.
func (c *Call) prune() {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type entry struct {
		name string
		used time.Time
		size int64
	}
	var list []entry
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue
		}
		p := path.Join(c.dir, e.Name())
		name, regular := e.Name(), info.Mode().IsRegular()
		lock, isLock := strings.CutPrefix(name, lockPrefix)
		switch {
		case regular && (isTemp(name) || isLock && isKey(lock)):
			// a lock file removed while held costs at most one more
			// compile of its key
			if time.Since(info.ModTime()) > time.Hour {
				os.Remove(p)
			}
		case e.IsDir() && isKey(name):
			os.RemoveAll(p)
		case regular && isKey(name):
			list = append(list, entry{name, info.ModTime(), info.Size()})
		default:
			// not the cache's, or builds.log (bounded by logBuild)
		}
	}
	slices.SortFunc(list, func(a, b entry) int {
		switch {
		case a.name == c.key:
			return -1
		case b.name == c.key:
			return 1
		}
		return b.used.Compare(a.used)
	})
	var total int64
	for i, e := range list {
		total += e.size
		if i > 0 && (i >= cacheEntries || total > cacheBytes) {
			os.Remove(path.Join(c.dir, e.name))
		}
	}
}
