package cli

import (
	"bufio"
	"fmt"
	"io"

	"github.com/virtc/virtc/internal/olmindex"
)

// runOLMGraph is `virtc olm-graph`: the upgrade graph of virtc's packages
// from a file-based catalog of any size (`opm render IMAGE`), as a small
// file-based catalog a platform repository keeps beside its Platform, so
// that build, diff and the approver's --catalog-head model OLM's route on
// the catalog the cluster installs from rather than on virtc's version
// table (docs/platform.md, "When Red Hat publishes a z-stream").
func runOLMGraph(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("olm-graph", "FILE|DIR|-", stderr)
	var packages stringList
	fs.Var(&packages, "package", "an OLM package to keep (repeatable; default: "+fmt.Sprint(olmindex.VirtcPackages)+")")
	rest, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		fmt.Fprintln(stderr, "virtc olm-graph: name one file-based catalog: a file (opm render output, JSON or YAML), a catalog directory, or - for stdin")
		return ExitUsage
	}
	if len(packages) == 0 {
		packages = olmindex.VirtcPackages
	}
	var in io.Reader
	path := rest[0]
	if path == "-" {
		in, path = stdin, "stdin"
	}
	w := bufio.NewWriter(stdout)
	if err := olmindex.WriteGraph(w, path, in, packages); err != nil {
		fmt.Fprintf(stderr, "virtc olm-graph: %v\n", err)
		return ExitFailed
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "virtc olm-graph: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}
