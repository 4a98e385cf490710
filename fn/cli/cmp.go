package cli

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
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
	return runCMPEnv(args, environ(), stdin, stdout, stderr)
}

// runCMPEnv is runCMP in the environment env (os.Environ form).
func runCMPEnv(args, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprintln(stderr, "Usage: virtc cmp [build flags]\n\nRuns `virtc build [build flags] [flags from the environment] .` for Argo CD:\neach plugin parameter NAME and each plugin env entry NAME (ARGOCD_ENV_NAME)\nbecomes the build flag --name. Run 'virtc build -h' for the flags.")
			return ExitOK
		}
	}
	envArgs, err := cmp.Args(env)
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
	return cmpBuild(build, env, appPlace(env), stdin, stdout, stderr)
}

// AppPathEnv is the application's path in its repository, which Argo CD's
// repo server gives a plugin (argo-cd v3.6.1 reposerver/repository/
// repository.go, newEnv: ARGOCD_APP_SOURCE_PATH=<spec.source.path>).
const AppPathEnv = "ARGOCD_APP_SOURCE_PATH"

// appPlace is where the plugin's working directory sits in the repository:
// the CMP server unpacks the whole repository and runs generate in the
// application's directory (cmpserver/plugin/plugin.go), and the copy may
// lack .git (ARGOCD_REPO_SERVER_PLUGIN_TAR_EXCLUSIONS often drops it). So
// messages name files from the repository's top, like a reviewer sees them,
// and virtc.dev/source is the same as `virtc build` records in a checkout.
func appPlace(env []string) place {
	var app string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, AppPathEnv+"="); ok {
			app = path.Clean(filepath.ToSlash(v))
		}
	}
	if app == "" || app == "." || path.IsAbs(app) || app == ".." || strings.HasPrefix(app, "../") {
		return place{}
	}
	wd, err := os.Getwd()
	if err != nil {
		return place{}
	}
	top, ok := strings.CutSuffix(filepath.ToSlash(wd), "/"+app)
	if !ok {
		return place{}
	}
	return place{base: filepath.FromSlash(top), prefix: app}
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
