package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/diff"
	"github.com/virtc/virtc/internal/importer"
	"github.com/virtc/virtc/internal/live"
)

// reportFile is the import report written beside the intents (not a YAML
// input, so builds skip it).
const reportFile = "IMPORT-REPORT.txt"

func runImport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("import", "--out DIR (FILE... | -)", stderr)
	out := fs.String("out", "", "directory to write the intents, tenants and new catalog entries into")
	noDefaults := fs.Bool("no-default-catalog", false, "use only catalog entries from --catalog, not the embedded default catalog")
	deferChanges := fs.Bool("defer-changes", false, "adopt a VM that policy refuses only for inline cloud-init secrets in the compliant form (a Secret reference), listing each changed field: KubeVirt marks it RestartRequired and the change takes effect at its next restart, the owner's decision")
	var catalogs stringList
	fs.Var(&catalogs, "catalog", "a catalog file or directory the intents will be compiled with (repeatable)")
	prof := addProfileFlags(fs)
	paths, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	defer prof.start(stderr)()
	// An import holds the export, the intents and the compiled objects
	// until it writes: its heap is almost all live, as a build's, and it
	// runs under build's soft memory limit (at 10,000 VMs the heap grew to
	// 3.3 GB between two collections without it).
	batchGC()
	limitBuildMemory()
	if *out == "" || len(paths) == 0 {
		fmt.Fprintln(stderr, "virtc import: name the output directory (--out DIR) and the exports (FILE... or - for stdin)")
		fs.Usage()
		return ExitUsage
	}
	objs, err := live.Read(paths, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "virtc import: %v\n", err)
		return ExitUsage
	}
	diags := &diag.List{}
	docs := compile.Request{CompilerSpec: api.CompilerSpec{CatalogDirs: catalogs}}.Read(diags)
	if diags.HasErrors() {
		io.WriteString(stderr, diag.Format(diags.Sorted()))
		return ExitUsage
	}
	res := importer.Import(objs, docs, catalog.Options{NoDefaults: *noDefaults}, importer.Options{DeferChanges: *deferChanges})
	if p, ok := outsideOut(res.Files); ok {
		fmt.Fprintf(stderr, "virtc import: %q: the export's names make a path outside --out %s (want NAMESPACE/NAME.yaml, of DNS-1123 names); nothing written\n", p, *out)
		return ExitFailed
	}
	for _, f := range res.Files {
		p := filepath.Join(*out, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintf(stderr, "virtc import: %v\n", err)
			return ExitUsage
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			fmt.Fprintf(stderr, "virtc import: %v\n", err)
			return ExitUsage
		}
	}
	report := res.Report()
	if err := os.MkdirAll(*out, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(*out, reportFile), []byte(report), 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "virtc import: %v\n", err)
			return ExitUsage
		}
	}
	io.WriteString(stdout, report)
	if len(res.Refused) > 0 {
		return ExitRefused
	}
	return ExitOK
}

// outsideOut is the first file path that would leave the output
// directory (.., absolute, empty). The paths are made of the export's
// namespaces and names, which the importer checks; one that would still
// leave it refuses the whole import before any file is written.
func outsideOut(files []importer.File) (string, bool) {
	for _, f := range files {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return f.Path, true
		}
	}
	return "", false
}

// runLiveDiff compiles PATHs and compares the result with a live export.
func runLiveDiff(export string, paths, catalogs []string, noDefaults bool, format string, withDiff, color bool, stdin io.Reader, stdout, stderr io.Writer) int {
	objs, err := live.Read([]string{export}, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "virtc diff: %v\n", err)
		return ExitUsage
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	res, ok := compileSide(diffSide{label: "git", paths: paths, catalogs: catalogs, warnings: true}, api.CompilerSpec{NoDefaultCatalog: noDefaults}, nil, stderr)
	if !ok {
		return ExitUsage
	}
	rep, err := live.Diff(res.Objects, objs, "live ("+export+")", "git", res.Model)
	if err != nil {
		fmt.Fprintf(stderr, "virtc diff: %v\n", err)
		return ExitUsage
	}
	if err := diff.Write(stdout, rep, diff.WriteOptions{Format: format, Diff: withDiff, Color: color}); err != nil {
		fmt.Fprintf(stderr, "virtc diff: %v\n", err)
		return ExitUsage
	}
	if !rep.Allowed {
		return ExitRefused
	}
	return ExitOK
}
