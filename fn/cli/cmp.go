package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/virtc/virtc/fn/cmp"
	"github.com/virtc/virtc/fn/compile"
	"github.com/virtc/virtc/fn/decode"
	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/krm"
	"github.com/virtc/virtc/fn/source"
)

// environ is the process environment; a variable so tests can set it.
var environ = os.Environ

// runCMP is the generate command of the Argo CD config management plugin:
// `virtc build` of the app directory (the working directory Argo CD gives
// the plugin), with flags from the plugin's parameters and env. Its own
// arguments (fixed in plugin.yaml) come first.
func runCMP(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprintln(stderr, "Usage: virtc cmp [build flags]\n\nRuns `virtc build [build flags] [flags from the environment] .` for Argo CD:\neach plugin parameter NAME and each plugin env entry NAME (ARGOCD_ENV_NAME)\nbecomes the build flag --name. Run 'virtc build -h' for the flags.")
			return ExitOK
		}
	}
	envArgs, err := cmp.Args(environ())
	if err != nil {
		fmt.Fprintf(stderr, "virtc cmp: %v\n", err)
		return ExitUsage
	}
	specArgs, paths, ok := markerArgs(stderr)
	if !ok {
		return ExitFailed
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	build := slices.Concat(args, specArgs, envArgs, []string{"--"}, paths)
	fmt.Fprintf(stderr, "virtc cmp: virtc build %s\n", strings.Join(build, " "))
	return runBuild(build, stdin, stdout, stderr)
}

// markerArgs reads the options of the Compiler in the marker file, if the
// directory has one.
func markerArgs(stderr io.Writer) (flags, paths []string, ok bool) {
	if _, err := os.Stat(cmp.MarkerFile); err != nil {
		return nil, nil, true
	}
	diags := &diag.List{}
	var specs []krm.Spec
	for _, doc := range source.Read([]string{cmp.MarkerFile}, source.Options{}, diags) {
		if _, kind := decode.Header(doc.Node); kind == krm.Kind {
			specs = append(specs, krm.DecodeConfig(doc, diags))
		}
	}
	if len(specs) > 1 {
		diags.Errorf(diag.Pos{File: cmp.MarkerFile}, "", "holds %d Compiler documents; keep one", len(specs))
	}
	if diags.HasErrors() {
		report(compile.Result{Diags: diags}, stderr)
		return nil, nil, false
	}
	if len(specs) == 1 {
		flags, paths = cmp.SpecArgs(specs[0])
	}
	return flags, paths, true
}
