package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/virtc/virtc/fn/compile"
	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/emit"
	"github.com/virtc/virtc/fn/render"
)

// CacheEnv names the directory of the plugin's output cache (the sidecar
// container's environment, not a plugin env entry); "off" turns the cache
// off. Default: virtc-cmp-cache in the temporary directory, which the
// example sidecar mounts as its own emptyDir (examples/argocd/
// repo-server-patch.yaml).
const CacheEnv = "VIRTC_CMP_CACHE"

// Bounds of the cache: the newest entries are kept, at most this many and
// this many bytes together (the entry just written is always kept).
const (
	cacheEntries = 16
	cacheBytes   = 2 << 30
)

// The plugin's output cache. Argo CD's CMP server runs generate once per
// Application, each time in a fresh copy of the repository (argo-cd
// cmpserver/plugin/plugin.go, generateManifestGeneric: a new temporary
// work directory under ARGOCD_CMP_WORKDIR, removed after the call), so
// with one Application per tenant every tenant of a commit compiled and
// checked the whole directory again. Only the sidecar's own environment
// and file system outlive a call: the cache lives there.
//
// An entry is the full build's outcome (every check passed), keyed by a
// hash of everything that decides it: virtc's own binary, the build
// flags other than --tenant, where the app sits in the repository, and
// the repository copy: the path and bytes of every file, or the commit
// Argo CD names and every file's path and size (cacheKey). It holds the
// build's diagnostics (warnings) and each tenant's output, exactly what
// `virtc build --tenant NAME` prints: the full output's objects of that
// tenant (compile.OfTenant), in the full output's order. A failed build
// is not cached: each call compiles again and reports its errors itself.
//
// Entries are written to a temporary directory and renamed into place,
// so a reader sees a whole entry or none and needs no lock; concurrent
// misses both compile, and the first rename wins (same bytes). A reader
// that finds an entry removed by pruning compiles instead.
type cmpCache struct{ dir string }

func openCMPCache(env []string) *cmpCache {
	dir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, CacheEnv+"="); ok {
			dir = v
		}
	}
	switch dir {
	case "off":
		return nil
	case "":
		dir = filepath.Join(os.TempDir(), "virtc-cmp-cache")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	return &cmpCache{dir: abs}
}

// splitTenant removes --tenant from build's flags (those before "--")
// and returns the tenant named last.
func splitTenant(build []string) (tenant string, rest []string) {
	end := slices.Index(build, "--")
	if end < 0 {
		end = len(build)
	}
	for i := 0; i < end; i++ {
		a := build[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "tenant" {
			rest = append(rest, a)
			continue
		}
		if !hasValue && i+1 < end {
			i++
			value = build[i]
		}
		tenant = value
	}
	return tenant, append(rest, build[end:]...)
}

// cmpBuild is runBuildAt for the plugin: a build for one tenant is served
// from the cache, or compiles the whole directory once for every tenant.
func cmpBuild(build, env []string, where place, stdin io.Reader, stdout, stderr io.Writer) int {
	c := openCMPCache(env)
	tenant, rest := splitTenant(build)
	if c == nil || tenant == "" {
		return runBuildAt(build, where, stdin, stdout, stderr)
	}
	key, ok := cacheKey(rest, env, where, c.dir)
	if !ok {
		return runBuildAt(build, where, stdin, stdout, stderr)
	}
	if c.serve(key, tenant, stdout, stderr) {
		return ExitOK
	}
	var msgs bytes.Buffer
	res, bf, opts, _, ok := compileArgsWith("build", rest, where, func(o *compile.Options) { o.Pieces = true }, &msgs)
	if !ok || res.Diags.HasErrors() || bf.warnings != "" || !hasTenant(res, tenant) ||
		len(opts.Scopes) > 0 && !slices.ContainsFunc(opts.Scopes, func(s emit.Scope) bool { return s != emit.Cluster }) {
		// What the full build cannot answer for the tenant (errors, an
		// unknown tenant, a scope with no tenant objects, the warnings
		// ConfigMap) the tenant's own build reports.
		return runBuildAt(build, where, stdin, stdout, stderr)
	}
	diags := diag.Format(located(res, where))
	outputs := tenantOutputs(res)
	c.store(key, diags, outputs)
	io.WriteString(stderr, diags)
	if _, err := stdout.Write(outputs[tenant]); err != nil {
		fmt.Fprintf(stderr, "virtc: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}

func hasTenant(res compile.Result, tenant string) bool {
	if res.Model == nil {
		return false
	}
	for _, t := range res.Model.Tenants {
		if t.Name == tenant {
			return true
		}
	}
	return false
}

// tenantOutputs is each tenant's output: its objects' pieces, in output
// order, as emit.Write joins them.
func tenantOutputs(res compile.Result) map[string][]byte {
	out := map[string][]byte{}
	for _, t := range res.Model.Tenants {
		out[t.Name] = []byte{}
	}
	for i, o := range res.Objects {
		cands := []string{o.Namespace}
		if acc, err := meta.Accessor(o.Body); err == nil {
			if l := acc.GetLabels()[render.LabelTenant]; l != "" && l != o.Namespace {
				cands = append(cands, l)
			}
		}
		for _, t := range cands {
			b, ok := out[t]
			if !ok || !compile.OfTenant(o, t) {
				continue
			}
			if len(b) > 0 {
				b = append(b, "---\n"...)
			}
			out[t] = append(b, res.Pieces[i]...)
		}
	}
	return out
}

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

// cacheKey hashes what decides the full build: virtc itself, the flags
// and paths, where the app sits in the repository, and the repository
// copy. Only the copy's own location is left out: Argo CD unpacks each
// call into a new temporary directory, and the output names files
// relative to the repository's top.
//
// The copy counts by the path and bytes of every file, unless Argo CD
// named the commit it is (RevisionEnv is a full commit hash): a commit
// names each of its files' bytes, so the key then holds the repository's
// URL, the commit and the path of every file of the copy, read from the
// directories alone (no file opened, none stat'ed). The copy is the
// commit's tree less what the repo server's plugin tar exclusions leave
// out (argo-cd cmd/argocd-repo-server/commands/argocd_repo_server.go,
// --plugin-tar-exclude, read when the repo server starts): which files it
// holds is what can differ between two copies of one commit, and the
// paths say that. Reading and hashing every file was most of a cache
// hit's cost (at 10,000 VMs in 500 tenant files, 4 MB for every one of
// 500 calls), and stat'ing each a fifth of what remained.
//
// It declines (false) what it cannot hash honestly: a repository whose
// top Argo CD did not name (ARGOCD_APP_SOURCE_PATH), a path outside the
// copy, a symlink in it, an unreadable file.
func cacheKey(args, env []string, where place, cacheDir string) (string, bool) {
	if where.base == "" {
		return "", false
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
	byCommit := commitHash(revision)
	h := sha256.New()
	fmt.Fprintf(h, "virtc cmp cache 1\x00")
	if byCommit {
		fmt.Fprintf(h, "commit\x00%s\x00%s\x00", repoURL, revision)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", false
	}
	info, err := os.Stat(exe)
	if err != nil {
		return "", false
	}
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00", exe, info.Size(), info.ModTime().UnixNano())
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(h, "%s\x00", bi.String())
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	top := where.base
	fmt.Fprintf(h, "%s\x00", where.prefix)
	for _, a := range args {
		fmt.Fprintf(h, "%s\x00", a)
	}
	// Inputs named by the flags and paths must be inside the tree hashed.
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
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(wd, p)
		}
		if rel, err := filepath.Rel(top, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", false
		}
	}
	ok := true
	err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != top || p == cacheDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			ok = false
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(top, p)
		if byCommit {
			fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(data))
		h.Write(data)
		return nil
	})
	if err != nil || !ok {
		return "", false
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// tenantFile is a tenant's output in an entry (tenant names are DNS
// labels: no separators).
func tenantFile(entry, tenant string) string {
	return filepath.Join(entry, "tenants", tenant+".yaml")
}

// serve writes the cached diagnostics and tenant output, if the entry has
// them.
func (c *cmpCache) serve(key, tenant string, stdout, stderr io.Writer) bool {
	if strings.ContainsAny(tenant, `/\`) || tenant == "." || tenant == ".." {
		return false
	}
	entry := filepath.Join(c.dir, key)
	diags, err := os.ReadFile(filepath.Join(entry, "diagnostics"))
	if err != nil {
		return false
	}
	out, err := os.ReadFile(tenantFile(entry, tenant))
	if err != nil {
		return false
	}
	now := time.Now()
	os.Chtimes(entry, now, now) // the newest use, for pruning
	io.WriteString(stderr, string(diags))
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "virtc: %v\n", err)
	}
	return true
}

// store writes an entry and prunes the oldest. The cache is an
// optimisation: a failure to write it leaves the build's result as it is.
func (c *cmpCache) store(key, diags string, outputs map[string][]byte) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	tmp, err := os.MkdirTemp(c.dir, ".tmp-")
	if err != nil {
		return
	}
	defer os.RemoveAll(tmp)
	if err := os.Mkdir(filepath.Join(tmp, "tenants"), 0o700); err != nil {
		return
	}
	for t, out := range outputs {
		if err := os.WriteFile(tenantFile(tmp, t), out, 0o600); err != nil {
			return
		}
	}
	// The diagnostics file last: serve needs it, so it marks a whole
	// entry even if renames were not atomic.
	if err := os.WriteFile(filepath.Join(tmp, "diagnostics"), []byte(diags), 0o600); err != nil {
		return
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, key)); err != nil {
		return // another call stored the same entry first
	}
	c.prune(key)
}

// prune removes the least recently used entries beyond the bounds, and
// temporary directories of calls that died an hour ago or more.
func (c *cmpCache) prune(keep string) {
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
		if err != nil || !e.IsDir() {
			continue
		}
		p := filepath.Join(c.dir, e.Name())
		if strings.HasPrefix(e.Name(), ".tmp-") {
			if time.Since(info.ModTime()) > time.Hour {
				os.RemoveAll(p)
			}
			continue
		}
		var size int64
		filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					size += fi.Size()
				}
			}
			return nil
		})
		list = append(list, entry{e.Name(), info.ModTime(), size})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].name == keep || list[j].name == keep {
			return list[i].name == keep
		}
		return list[i].used.After(list[j].used)
	})
	var total int64
	for i, e := range list {
		total += e.size
		if i > 0 && (i >= cacheEntries || total > cacheBytes) {
			os.RemoveAll(filepath.Join(c.dir, e.name))
		}
	}
}
