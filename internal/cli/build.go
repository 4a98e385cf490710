package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/alerts"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/jsonnet"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/internal/warnings"
)

// stdinName names the documents of the PATH - in messages.
const stdinName = "<stdin>"

// place says where the inputs sit in their repository when the caller knows
// better than the files do: the Argo CD plugin runs in the application's
// directory of a copy of the repository, which may lack its .git.
type place struct {
	// base is the repository's top: virtc.dev/source paths are relative
	// to it. Empty: see source.SourcePath.
	base string
	// prefix is the inputs' directory in the repository (slashes):
	// messages name files below it, so that they read as repository paths.
	prefix string
	// plugin says the Argo CD plugin runs the build: it has put the
	// options of the directory's marker file into the arguments already
	// (markerArgs), so the build does not read the marker again.
	plugin bool
}

// buildFlags are the flags of build that shape the output, not the compile.
type buildFlags struct {
	// warnings is NAMESPACE/NAME of the warnings ConfigMap; empty for none.
	warnings string
	// diagnostics is the form of the problems on stderr (diagFormats).
	diagnostics string
	// output is the manifests' form: yaml (a stream) or json (a List).
	output string
}

// compileArgsWith compiles what the arguments of build or validate ask
// for and returns the build's own flags and the compile's options; tune,
// if not nil, sets the options of the output's form (Options.Pieces,
// Options.Chunks) before the compile. A PATH "-" is a YAML or JSON
// stream on stdin, read after the files.
func compileArgsWith(name string, args []string, where place, tune func(*compile.Options), stdin io.Reader, stderr io.Writer) (compile.Result, buildFlags, compile.Options, int, bool) {
	var bf buildFlags
	fs := newFlags(name, "PATH... (- for stdin)", stderr)
	if name == "build" {
		fs.StringVar(&bf.output, "o", "yaml", "the manifests' form: yaml (a stream of documents) or json (one List, as kubectl get -o json prints), for kubectl apply -f and jq")
		fs.StringVar(&bf.warnings, "warnings-configmap", "", "also print a ConfigMap `NAMESPACE/NAME` listing the build's warnings (empty when there are none), so that Argo CD shows them with the Application's resources")
	}
	fs.StringVar(&bf.diagnostics, "diagnostics", diagText, "the form of errors and warnings on stderr: text (file:line:col: field: message), json (one document for tools), or github (GitHub Actions annotations on the files' lines)")
	noDefaults := fs.Bool("no-default-catalog", false, "use only catalog entries from the inputs, not the embedded default catalog")
	var catalogs, projects stringList
	fs.Var(&catalogs, "catalog", "a catalog file or directory to read besides the PATHs (repeatable)")
	fs.Var(&projects, "app-projects", "a file or directory of the Argo CD AppProjects the tenants' Applications run in: each Tenant must have its project, virtc-tenant-NAME, permitting what its --scope vms build prints (repeatable; a directory's virtc.yaml may name them)")
	scope := fs.String("scope", "all", "print only these scopes' objects: "+emit.ScopeHelp+" (everything is still checked)")
	tenant := fs.String("tenant", "", "print only this tenant's objects: its namespace's, its Namespace, its backup Schedules and Backups (everything is still checked)")
	extVars := addJsonnetFlags(fs)
	prof := addProfileFlags(fs)
	asOf := addAsOfFlag(fs)
	paths, code, ok := parse(fs, args)
	if !ok {
		return compile.Result{}, bf, compile.Options{}, code, false
	}
	if name == "build" && bf.output != "yaml" && bf.output != "json" {
		fmt.Fprintf(stderr, "virtc %s: unknown -o %q (yaml or json)\n", name, bf.output)
		return compile.Result{}, bf, compile.Options{}, ExitUsage, false
	}
	if !slices.Contains(diagFormats, bf.diagnostics) {
		fmt.Fprintf(stderr, "virtc %s: unknown --diagnostics %q (%s)\n", name, bf.diagnostics, strings.Join(diagFormats, ", "))
		return compile.Result{}, bf, compile.Options{}, ExitUsage, false
	}
	if bf.warnings != "" {
		if err := warnings.Check(bf.warnings); err != nil {
			fmt.Fprintf(stderr, "virtc %s: --warnings-configmap %q: %v\n", name, bf.warnings, err)
			return compile.Result{}, bf, compile.Options{}, ExitUsage, false
		}
	}
	asOfDate, ok := parseAsOf(name, *asOf, stderr)
	if !ok {
		return compile.Result{}, bf, compile.Options{}, ExitUsage, false
	}
	if _, known := emit.ParseScope(*scope); !known {
		fmt.Fprintf(stderr, "virtc %s: unknown scope %q (%s)\n", name, *scope, emit.ScopeHelp)
		return compile.Result{}, bf, compile.Options{}, ExitUsage, false
	}
	ext, err := extVars()
	if err != nil {
		fmt.Fprintf(stderr, "virtc %s: %v\n", name, err)
		return compile.Result{}, bf, compile.Options{}, ExitUsage, false
	}
	if len(paths) == 0 {
		fmt.Fprintf(stderr, "virtc %s: name at least one file or directory (or - for stdin)\n", name)
		fs.Usage()
		return compile.Result{}, bf, compile.Options{}, ExitUsage, false
	}
	var fromStdin []byte
	if i := slices.Index(paths, "-"); i >= 0 {
		if slices.Contains(paths[i+1:], "-") || stdin == nil {
			fmt.Fprintf(stderr, "virtc %s: - (stdin) may be named once, and only where virtc has a stdin\n", name)
			return compile.Result{}, bf, compile.Options{}, ExitUsage, false
		}
		data, err := io.ReadAll(io.LimitReader(stdin, source.MaxInput+1))
		if err == nil && len(data) > source.MaxInput {
			err = fmt.Errorf("more than the %d MiB a build's inputs may hold", source.MaxInput>>20)
		}
		if err != nil {
			fmt.Fprintf(stderr, "virtc %s: reading stdin: %v\n", name, err)
			return compile.Result{}, bf, compile.Options{}, ExitUsage, false
		}
		fromStdin = data
		paths = slices.Delete(slices.Clone(paths), i, i+1)
	}
	spec := api.CompilerSpec{
		Paths:             paths,
		CatalogDirs:       catalogs,
		NoDefaultCatalog:  *noDefaults,
		Scope:             *scope,
		Tenant:            *tenant,
		ExtStr:            ext,
		WarningsConfigMap: bf.warnings,
		AppProjects:       projects,
	}
	if where.plugin && !where.confine(spec, stderr) {
		return compile.Result{}, bf, compile.Options{}, ExitFailed, false
	}
	req, ok := request(spec, where, stderr)
	if !ok {
		return compile.Result{}, bf, compile.Options{}, ExitFailed, false
	}
	req.AsOf = asOfDate
	batchGC()
	defer prof.start(stderr)()
	diags := &diag.List{}
	if fromStdin != nil {
		// Named <stdin> in messages; no file, so no virtc.dev/source.
		req.Items = source.Parse(stdinName, "", fromStdin, diags)
	}
	// The scope was checked above: Options cannot fail here.
	opts, _ := req.Options()
	if tune != nil {
		tune(&opts)
	}
	req.ReadProjects(&opts, diags)
	return compile.Compile(req.Read(diags), opts, diags), bf, opts, 0, true
}

// request is the compile.Request of a command that reads PATHs: spec,
// with the catalogs of the marker files of the directories among its
// paths (compile.Request.WithMarkers), unless the plugin has put them in
// already, each file or directory read once.
func request(spec api.CompilerSpec, where place, stderr io.Writer) (compile.Request, bool) {
	r := compile.Request{CompilerSpec: spec, Base: where.base}
	if where.plugin {
		return r, true
	}
	diags := &diag.List{}
	r = r.WithMarkers(spec.Paths, diags)
	if diags.HasErrors() {
		report(compile.Result{Diags: diags}, stderr)
		return r, false
	}
	return r, true
}

// addAsOfFlag adds --as-of, the day acceptance evidence expiry is judged
// on. Without it, SOURCE_DATE_EPOCH (the reproducible-builds variable: CI
// sets it to the commit's time) gives the day; without either, each VM is
// judged as of the newest date of the Evidence that concerns its tenant:
// the output never depends on the clock.
func addAsOfFlag(fs *flag.FlagSet) *string {
	return fs.String("as-of", "", "judge acceptance evidence expiry as of this day, YYYY-MM-DD (default: the day of $SOURCE_DATE_EPOCH, else per tenant the newest date of its and the platform's Evidence)")
}

func parseAsOf(name, s string, stderr io.Writer) (time.Time, bool) {
	if s == "" {
		epoch := os.Getenv("SOURCE_DATE_EPOCH")
		if epoch == "" {
			return time.Time{}, true
		}
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil || sec < 0 {
			fmt.Fprintf(stderr, "virtc %s: SOURCE_DATE_EPOCH %q is not a number of seconds since 1970 (git log -1 --format=%%ct)\n", name, epoch)
			return time.Time{}, false
		}
		return time.Unix(sec, 0).UTC().Truncate(24 * time.Hour), true
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		fmt.Fprintf(stderr, "virtc %s: --as-of %q is not a date YYYY-MM-DD\n", name, s)
		return time.Time{}, false
	}
	return t, true
}

// report prints diagnostics and returns the exit code for them.
func report(res compile.Result, stderr io.Writer) int {
	return reportAt(res, place{}, diagText, stderr)
}

// reportAt is report with files named from the repository's top, in the
// form format names (diagFormats).
func reportAt(res compile.Result, where place, format string, stderr io.Writer) int {
	if format != diagText {
		return writeDiagnostics(stderr, format, located(res, where))
	}
	io.WriteString(stderr, diag.Format(located(res, where)))
	if res.Diags.HasErrors() {
		n := len(res.Diags.Errors())
		fmt.Fprintf(stderr, "virtc: %d error%s\n", n, plural(n))
		return ExitFailed
	}
	return ExitOK
}

// located are the diagnostics with files named as reportAt names them.
func located(res compile.Result, where place) []diag.Diagnostic {
	ds := res.Diags.Sorted()
	if where.prefix != "" {
		for i := range ds {
			ds[i].File = inRepository(where.prefix, ds[i].File)
		}
	}
	return ds
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func runBuild(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runBuildAt(args, place{}, stdin, stdout, stderr)
}

func runBuildAt(args []string, where place, stdin io.Reader, stdout, stderr io.Writer) int {
	// The output comes in chunks, serialized whole before the first byte
	// is written (a failed compile prints nothing), never joined into a
	// second copy; the typed objects and the inputs' nodes are let go of
	// on the way (compile.Options.Chunks).
	limitBuildMemory()
	res, bf, _, code, ok := compileArgsWith("build", args, where, func(o *compile.Options) { o.Chunks = true }, stdin, stderr)
	if !ok {
		return code
	}
	if code := reportAt(res, where, bf.diagnostics, stderr); code != ExitOK {
		return code
	}
	if where.plugin && bf.warnings != "" && !ownNamespace(bf.warnings, res) {
		// An Application's warnings ConfigMap could otherwise take over
		// any ConfigMap its project may write (argocd/argocd-cm), and
		// prune it with the Application.
		fmt.Fprintf(stderr, "virtc cmp: warnings-configmap %q: the plugin writes the warnings ConfigMap into %s or a namespace of the build's tenants only\n", bf.warnings, alerts.PlatformNamespace)
		return ExitFailed
	}
	out := res.Chunks
	if bf.warnings != "" {
		// The ConfigMap lists the warnings as stderr names them; it
		// follows the output as warnings.Append appends it.
		if slices.ContainsFunc(out, func(c []byte) bool { return len(c) > 0 }) {
			out = append(out, []byte("---\n"))
		}
		out = append(out, warnings.Doc(bf.warnings, located(res, where)))
	}
	res = compile.Result{}
	if bf.output == "json" {
		list, err := jsonList(out)
		if err != nil {
			fmt.Fprintf(stderr, "virtc: %v\n", err)
			return ExitFailed
		}
		out = [][]byte{list}
	}
	// The chunks are the objects and the separators between them: one
	// write each would be a system call per object.
	w := bufio.NewWriterSize(stdout, 1<<20)
	for i, c := range out {
		if _, err := w.Write(c); err != nil {
			fmt.Fprintf(stderr, "virtc: %v\n", err)
			return ExitFailed
		}
		out[i] = nil
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "virtc: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}

// ownNamespace reports whether the NAMESPACE/NAME ref is in OpenShift
// Virtualization's namespace or a tenant's of the build.
func ownNamespace(ref string, res compile.Result) bool {
	ns, _, _ := strings.Cut(ref, "/")
	if ns == alerts.PlatformNamespace {
		return true
	}
	return res.Model != nil && slices.ContainsFunc(res.Model.Tenants, func(t *resolve.Tenant) bool { return t.Name == ns })
}

func runValidate(args []string, stdin io.Reader, _, stderr io.Writer) int {
	res, bf, _, code, ok := compileArgsWith("validate", args, place{}, nil, stdin, stderr)
	if !ok {
		return code
	}
	return reportAt(res, place{}, bf.diagnostics, stderr)
}

// inRepository names a file of a message from the repository's top: a file
// read from the working directory gets prefix; absolute paths and what is
// no file ("<stdin>", "VM ns/name") stay as they are.
func inRepository(prefix, file string) string {
	if file == "" || filepath.IsAbs(file) {
		return file
	}
	if _, err := os.Stat(file); err != nil {
		return file
	}
	return path.Join(prefix, filepath.ToSlash(file))
}

// addJsonnetFlags adds --ext-str and --cluster, the external variables of
// Jsonnet inputs, and returns what parses them after fs.Parse.
func addJsonnetFlags(fs *flag.FlagSet) func() (map[string]string, error) {
	var extStr stringList
	fs.Var(&extStr, "ext-str", "an external variable key=value for Jsonnet inputs, read with std.extVar (repeatable)")
	cluster := fs.String("cluster", "", "the cluster to compile for: the Jsonnet external variable cluster (std.extVar('cluster')), so one source serves several clusters")
	return func() (map[string]string, error) {
		ext, err := jsonnet.ParseExtStr(extStr)
		if err != nil {
			return nil, err
		}
		if *cluster != "" {
			if prev, set := ext["cluster"]; set && prev != *cluster {
				return nil, fmt.Errorf("--cluster %s and --ext-str cluster=%s disagree", *cluster, prev)
			}
			if ext == nil {
				ext = map[string]string{}
			}
			ext["cluster"] = *cluster
		}
		return ext, nil
	}
}

// jsonList is the YAML stream of chunks as one JSON List of its objects,
// in their order (kubectl apply -f reads a List as its items).
func jsonList(chunks [][]byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(bytes.Join(chunks, nil)))
	items := []any{}
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("-o json: %v", err)
		}
		if v := nodeValue(&n); v != nil {
			items = append(items, v)
		}
	}
	data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("-o json: %v", err)
	}
	return append(data, '\n'), nil
}

// nodeValue is a YAML node as the value encoding/json writes as the same
// JSON the API server reads: numbers keep their text, and a scalar that
// YAML would read as a timestamp stays the string it is in the manifest.
func nodeValue(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return nodeValue(n.Content[0])
	case yaml.AliasNode:
		return nodeValue(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = nodeValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			l = append(l, nodeValue(c))
		}
		return l
	}
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		n.Decode(&b)
		return b
	case "!!int", "!!float":
		if _, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil && !strings.ContainsAny(n.Value, "_xXoO") {
			return json.Number(n.Value)
		}
		var v any
		n.Decode(&v)
		return v
	}
	return n.Value
}
