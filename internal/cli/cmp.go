package cli

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/virtc/virtc/internal/cmp"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/krm"
	"github.com/virtc/virtc/internal/secret"
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

// runCMPEnv is runCMP in the environment env (os.Environ form). Its
// stderr is Argo CD's error message and log: every line is redacted,
// since the plugin's values come from the Application and the repository.
func runCMPEnv(args, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	rw := secret.NewWriter(stderr)
	defer rw.Flush()
	return runCMPRedacted(args, env, stdin, stdout, rw)
}

func runCMPRedacted(args, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
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
	// A call the cache answers reads no input (the hook in package
	// internal/cmp/hit answers most before virtc is initialised).
	call, cached := cmp.Prepare(args, env)
	release := func() {}
	if cached {
		if code, served := serve(call, stdout, stderr); served {
			return code
		}
		// Concurrent misses of this key compile once: wait for the one
		// compiling, then serve its entry. Without one (its build could not
		// be stored), each compiles again, at once rather than in turn.
		var waited bool
		release, waited = call.Lock(env)
		defer release()
		if waited {
			release()
		}
		if code, served := serve(call, stdout, stderr); served {
			return code
		}
	}
	specFlags, paths, ok := markerArgs(stderr)
	if !ok {
		return ExitFailed
	}
	build := cmp.BuildArgs(args, specFlags, envArgs, paths)
	io.WriteString(stderr, cmp.CommandLine(build))
	where := appPlace(env)
	where.plugin = true
	if !cached {
		return runBuildAt(build, where, stdin, stdout, stderr)
	}
	return cmpBuild(call, release, build, specFlags, paths, where, stdin, stdout, stderr)
}

// serve answers the call from the cache's entry, if it has one.
func serve(call *cmp.Call, stdout, stderr io.Writer) (code int, served bool) {
	served, err := call.Serve(stdout, stderr)
	if !served {
		return 0, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "virtc: %v\n", err)
		return ExitFailed, true
	}
	return ExitOK, true
}

// AppPathEnv is the application's path in its repository (cmp.AppPathEnv).
const AppPathEnv = cmp.AppPathEnv

// appPlace is where the plugin's working directory sits in the repository
// (cmp.AppPlace), so messages name files from the repository's top, like a
// reviewer sees them, and virtc.dev/source is the same as `virtc build`
// records in a checkout.
func appPlace(env []string) place {
	base, prefix := cmp.AppPlace(env)
	return place{base: base, prefix: prefix}
}

// markerArgs reads the options of the Compiler in the marker file, if the
// directory has one.
func markerArgs(stderr io.Writer) (flags, paths []string, ok bool) {
	spec, found, ok := readMarker(".", stderr)
	if !found || !ok {
		return nil, nil, ok
	}
	flags, paths = specArgs(spec)
	return flags, paths, true
}

// readMarker reads the Compiler of dir's marker file (compile.ReadMarker):
// found is false when dir has none; ok is false, the errors printed, when
// the file does not decode or holds more than one Compiler.
func readMarker(dir string, stderr io.Writer) (spec krm.Spec, found, ok bool) {
	diags := &diag.List{}
	spec, found = compile.ReadMarker(dir, diags)
	if diags.HasErrors() {
		report(compile.Result{Diags: diags}, stderr)
		return krm.Spec{}, true, false
	}
	return spec, found, true
}

// specArgs returns the build flags and input paths a Compiler spec stands
// for. No paths means the app directory itself.
func specArgs(s krm.Spec) (flags, paths []string) {
	for _, c := range s.CatalogDirs {
		flags = append(flags, "--catalog="+c)
	}
	if s.NoDefaultCatalog {
		flags = append(flags, "--no-default-catalog")
	}
	if s.Scope != "" {
		flags = append(flags, "--scope="+s.Scope)
	}
	if s.Tenant != "" {
		flags = append(flags, "--tenant="+s.Tenant)
	}
	for _, k := range slices.Sorted(maps.Keys(s.ExtStr)) {
		flags = append(flags, "--ext-str="+k+"="+s.ExtStr[k])
	}
	if s.WarningsConfigMap != "" {
		flags = append(flags, "--warnings-configmap="+s.WarningsConfigMap)
	}
	for _, p := range s.AppProjects {
		flags = append(flags, "--app-projects="+p)
	}
	return flags, s.Paths
}
