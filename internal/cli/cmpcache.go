package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/virtc/virtc/internal/cmp"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
)

// CacheEnv names the directory of the plugin's output cache
// (cmp.CacheEnv; package internal/cmp describes the cache).
const CacheEnv = cmp.CacheEnv

// fullBuilds counts the plugin's full builds for the cache in this
// process.
var fullBuilds atomic.Int64

// FullBuilds is how many full builds for the plugin's cache this process
// has run: the tests of concurrent calls count compiles with it.
func FullBuilds() int64 { return fullBuilds.Load() }

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

// cmpBuild is runBuildAt for a plugin call the cache could answer but
// did not: it compiles the whole directory once, stores every tenant's
// output and prints the call's tenant's. It holds the key's lock
// (Call.Lock) until the entry is stored; release lets it go early, when
// the call builds its tenant alone and stores nothing.
func cmpBuild(call *cmp.Call, release func(), build, specFlags, paths []string, where place, stdin io.Reader, stdout, stderr io.Writer) int {
	_, rest := splitTenant(build)
	if wd, err := os.Getwd(); err != nil || !cmp.InTree(slices.Concat(specFlags, paths), wd, where.base) {
		release()
		return runBuildAt(build, where, stdin, stdout, stderr)
	}
	var msgs bytes.Buffer
	fullBuilds.Add(1)
	res, bf, opts, _, ok := compileArgsWith("build", rest, where, func(o *compile.Options) { o.Pieces = true }, nil, &msgs)
	if !ok || res.Diags.HasErrors() || bf.warnings != "" || !hasTenant(res, call.Tenant) ||
		len(opts.Scopes) > 0 && !slices.ContainsFunc(opts.Scopes, func(s emit.Scope) bool { return s != emit.Cluster }) {
		// What the full build cannot answer for the tenant (errors, an
		// unknown tenant, a scope with no tenant objects, the warnings
		// ConfigMap) the tenant's own build reports.
		release()
		return runBuildAt(build, where, stdin, stdout, stderr)
	}
	diags := diag.Format(located(res, where))
	outputs := tenantOutputs(res)
	call.Store(specFlags, paths, diags, outputs)
	release()
	io.WriteString(stderr, diags)
	i := slices.IndexFunc(outputs, func(o cmp.Output) bool { return o.Tenant == call.Tenant })
	if _, err := stdout.Write(bytes.Join(outputs[i].Parts, nil)); err != nil {
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
// order, and the separators emit.Write puts between them. The pieces are
// handed to the cache as they are: it writes them to its entry in one
// pass, and no tenant's output is copied into bytes of its own (at 10,000
// VMs that was a tenth of a miss's CPU, and 30 MB more memory).
func tenantOutputs(res compile.Result) []cmp.Output {
	of := make(map[string]*cmp.Output, len(res.Model.Tenants))
	outputs := make([]cmp.Output, len(res.Model.Tenants))
	for i, t := range res.Model.Tenants {
		outputs[i].Tenant = t.Name
		of[t.Name] = &outputs[i]
	}
	sep := []byte(emit.Separator)
	for i, o := range res.Objects {
		cands := []string{o.Namespace}
		if acc, err := meta.Accessor(o.Body); err == nil {
			if l := acc.GetLabels()[model.LabelTenant]; l != "" && l != o.Namespace {
				cands = append(cands, l)
			}
		}
		for _, t := range cands {
			out, ok := of[t]
			if !ok || !compile.OfTenant(o, t) {
				continue
			}
			if len(out.Parts) > 0 {
				out.Parts = append(out.Parts, sep)
			}
			out.Parts = append(out.Parts, res.Pieces[i])
		}
	}
	return outputs
}
