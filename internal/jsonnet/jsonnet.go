// Package jsonnet evaluates Jsonnet inputs into virtc documents. A .jsonnet
// file must yield one object or an array of objects; each becomes a
// source.Doc and then goes through the same decoding and checks as YAML.
//
// Evaluation is confined and bounded: imports resolve only inside the input
// root and to the embedded virtc.libsonnet, no native functions are
// registered, and a file that recurses too deep, runs too long, allocates
// too much or yields too much output stops with an error (see Options).
package jsonnet

import (
	"cmp"
	"fmt"
	"maps"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	jsonnet "github.com/google/go-jsonnet"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

// Default limits of one evaluation.
const (
	// DefaultMaxStack is the deepest nesting of calls (go-jsonnet's own
	// default); a runaway recursion reaches it in milliseconds.
	DefaultMaxStack = 500
	// DefaultTimeout is the wall-clock time one file may take. Fleets and
	// catalogs evaluate in milliseconds.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxMemory is how much one file may allocate while it
	// evaluates.
	DefaultMaxMemory = 512 << 20
	// DefaultMaxOutput bounds the JSON a file yields: the same bound as one
	// YAML input file.
	DefaultMaxOutput = source.MaxFileSize
)

// Options configure Jsonnet evaluation. The zero value is ready to use:
// no external variables and the default limits. The CLI fills ExtStr from
// --ext-str; the KRM function from its configuration.
type Options struct {
	// ExtStr are the external string variables that std.extVar returns,
	// so that one source can serve several clusters.
	ExtStr map[string]string
	// MaxStack is the deepest nesting of calls; 0 means DefaultMaxStack.
	MaxStack int
	// Timeout is the wall-clock limit of one file; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxMemory is how many bytes one file may allocate (in total, garbage
	// included) during its evaluation; 0 means DefaultMaxMemory.
	MaxMemory uint64
	// MaxOutput is the largest JSON output of one file, in bytes; 0 means
	// DefaultMaxOutput.
	MaxOutput int
}

func (o Options) maxStack() int          { return cmp.Or(o.MaxStack, DefaultMaxStack) }
func (o Options) timeout() time.Duration { return cmp.Or(o.Timeout, DefaultTimeout) }
func (o Options) maxMemory() uint64      { return cmp.Or(o.MaxMemory, DefaultMaxMemory) }
func (o Options) maxOutput() int         { return cmp.Or(o.MaxOutput, DefaultMaxOutput) }
func (o Options) sortedExtStr() []string { return slices.Sorted(maps.Keys(o.ExtStr)) }

// ParseExtStr parses --ext-str values of the form key=value. An empty key
// or a missing '=' is an error; a later value of the same key wins, as
// with the jsonnet command.
func ParseExtStr(values []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range values {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid --ext-str %q: want key=value (for example cluster=prod-east)", kv)
		}
		out[k] = v
	}
	return out, nil
}

// Evaluate evaluates one .jsonnet file into documents. It has the signature
// of source.Options.Evaluate: file is the path to show, rel the path
// relative to the input root (kept in the documents), root the input root
// that imports must stay inside ("" allows only the embedded library).
// Problems are reported into diags, located in the Jsonnet file where the
// evaluator gives a place.
func (o Options) Evaluate(file, rel, root string, data []byte, diags *diag.List) []*source.Doc {
	if f := stillRunning(); f != "" {
		diags.Errorf(diag.Pos{File: file}, "", "not evaluated: the evaluation of %s was stopped by a limit and still runs", f)
		return nil
	}
	imp, err := newImporter(file, root)
	if err != nil {
		diags.Errorf(diag.Pos{File: file}, "", "%v", err)
		return nil
	}
	out, err := o.run(file, string(data), imp)
	return o.finish(file, rel, imp, out, err, diags)
}

// EvaluateEmbedded evaluates Jsonnet shipped in the binary (the default
// catalog): it may import only virtc.libsonnet, and runs synchronously
// without the limits, as it is virtc's own code. Its result is the same on
// every call, so it is computed once per process; the documents are new on
// each call.
func EvaluateEmbedded(file, rel string, data []byte, diags *diag.List) []*source.Doc {
	key := file + "\x00" + string(data)
	embedded.Lock()
	e, ok := embedded.cache[key]
	if !ok {
		e.imp, e.err = newImporter(file, "")
		if e.err == nil {
			tw := &traceWriter{}
			e.out.json, e.err = Options{}.evaluate(file, string(data), e.imp, tw)
			e.out.traces = tw.done()
		}
		embedded.cache[key] = e
	}
	embedded.Unlock()
	if e.imp == nil {
		diags.Errorf(diag.Pos{File: file}, "", "%v", e.err)
		return nil
	}
	return Options{}.finish(file, rel, e.imp, e.out, e.err, diags)
}

// embedded caches the evaluations of EvaluateEmbedded.
var embedded = struct {
	sync.Mutex
	cache map[string]embeddedResult
}{cache: map[string]embeddedResult{}}

type embeddedResult struct {
	imp *importer
	out result
	err error
}

func (o Options) finish(file, rel string, imp *importer, out result, err error, diags *diag.List) []*source.Doc {
	if err != nil {
		o.report(file, imp, err, diags)
		return nil
	}
	for _, t := range out.traces {
		diags.Warnf(t.pos, "", "std.trace: %s", t.msg)
	}
	if len(out.json) > o.maxOutput() {
		diags.Errorf(diag.Pos{File: file}, "", "output is %s, larger than the %s limit for one Jsonnet file (split it into several files)", size(uint64(len(out.json))), size(uint64(o.maxOutput())))
		return nil
	}
	return docs(file, rel, out.json, diags)
}

// evaluate parses and evaluates src; it is the part that runs in the
// evaluation goroutine.
func (o Options) evaluate(file, src string, imp *importer, tw *traceWriter) (string, error) {
	node, err := jsonnet.SnippetToAST(file, src)
	if err != nil {
		return "", err
	}
	if loc, ok := tailstrict(node); ok {
		return "", &locatedError{loc: loc, msg: tailstrictMsg}
	}
	vm := jsonnet.MakeVM()
	vm.MaxStack = o.maxStack()
	vm.Importer(imp)
	vm.SetTraceOut(tw)
	for _, k := range o.sortedExtStr() {
		vm.ExtVar(k, o.ExtStr[k])
	}
	return vm.Evaluate(node)
}

// result is what one evaluation produced.
type result struct {
	json   string
	traces []trace
}

// limitError is an evaluation stopped by a limit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// run evaluates in a goroutine and waits for it within the limits of time
// and memory, checked while it runs and again when it ends (so that a result
// does not depend on when the checks happened to look). go-jsonnet cannot be
// interrupted: an evaluation over a limit is abandoned and runs on until it
// ends. virtc, a command, exits once it has reported; until then, other
// Jsonnet files are not evaluated (see stillRunning).
func (o Options) run(file, src string, imp *importer) (result, error) {
	tw := &traceWriter{}
	type outcome struct {
		json string
		err  error
	}
	done := make(chan outcome, 1)
	ev := &evaluation{file: file}
	start, base := time.Now(), allocated()
	hook := testHookEvaluating
	go func() {
		defer ev.finished()
		if hook != nil {
			hook()
		}
		out, err := o.evaluate(file, src, imp, tw)
		done <- outcome{json: out, err: err}
	}()
	tooLong := &limitError{fmt.Sprintf("evaluation stopped: it took longer than %s, the time limit for one Jsonnet file (a runaway loop?)", o.timeout())}
	limits := func() error {
		if time.Since(start) > o.timeout() {
			return tooLong
		}
		if allocated()-base > o.maxMemory() {
			return &limitError{fmt.Sprintf("evaluation stopped: it allocated more than %s, the memory limit for one Jsonnet file (a runaway, or a huge output?)", size(o.maxMemory()))}
		}
		return nil
	}
	deadline := time.NewTimer(o.timeout())
	defer deadline.Stop()
	tick := time.NewTicker(memoryCheckInterval)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			if r.err != nil {
				return result{}, r.err
			}
			if err := limits(); err != nil {
				return result{}, err
			}
			return result{json: r.json, traces: tw.done()}, nil
		case <-deadline.C:
			ev.abandon()
			return result{}, tooLong
		case <-tick.C:
			if err := limits(); err != nil {
				ev.abandon()
				return result{}, err
			}
		}
	}
}

// testHookEvaluating, when set by a test, runs at the start of each bounded
// evaluation.
var testHookEvaluating func()

// evaluation tracks one goroutine, so that an abandoned one is known until
// it ends.
type evaluation struct {
	file      string
	mu        sync.Mutex
	done      bool
	abandoned bool
}

// abandoned evaluations still running, process-wide: the allocations they
// make would count against any other evaluation, and they use the CPU.
var abandoned struct {
	sync.Mutex
	files []string
	cond  *sync.Cond
}

func init() { abandoned.cond = sync.NewCond(&abandoned.Mutex) }

func (e *evaluation) abandon() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return
	}
	e.abandoned = true
	abandoned.Lock()
	abandoned.files = append(abandoned.files, e.file)
	abandoned.Unlock()
}

func (e *evaluation) finished() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.done = true
	if !e.abandoned {
		return
	}
	abandoned.Lock()
	if i := slices.Index(abandoned.files, e.file); i >= 0 {
		abandoned.files = slices.Delete(abandoned.files, i, i+1)
	}
	abandoned.cond.Broadcast()
	abandoned.Unlock()
}

// stillRunning names an abandoned evaluation that still runs, or is "".
func stillRunning() string {
	abandoned.Lock()
	defer abandoned.Unlock()
	if len(abandoned.files) == 0 {
		return ""
	}
	return abandoned.files[0]
}

// waitAbandoned waits until no abandoned evaluation runs (for tests).
func waitAbandoned() {
	abandoned.Lock()
	defer abandoned.Unlock()
	for len(abandoned.files) > 0 {
		abandoned.cond.Wait()
	}
}

// memoryCheckInterval is how often allocations are sampled during an
// evaluation.
const memoryCheckInterval = 5 * time.Millisecond

// allocated is the number of bytes the process has allocated on the heap so
// far (a running total, so it bounds what an evaluation can hold however
// the garbage collector runs).
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func size(n uint64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
