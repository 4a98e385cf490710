// Package cli is virtc's command line: it parses arguments, runs one
// command and returns the exit code. Everything is testable without pipes.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/virtc/virtc/internal/diag"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailed  = 1 // the input was refused
	ExitUsage   = 2 // the command line was wrong
	ExitRefused = 1
)

// Version is set at link time (-ldflags -X).
var Version = "dev"

type command struct {
	name    string
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"init", "write a new GitOps repository for a platform: a cluster's Platform, a catalog, tenants with a VM each, the Argo CD wiring and a pull-request preview workflow", runInit},
		{"build", "compile intents and catalog into manifests on stdout", runBuild},
		{"validate", "check intents and catalog; print nothing on success", runValidate},
		{"catalog", "list the catalog: sizes, images, profiles, backup policies", runCatalog},
		{"report", "print each VM's eligibility class and the evidence it still needs", runReport},
		{"facts", "print the PlatformFacts of the Platform among the inputs, for tenant repositories' builds", runFacts},
		{"restore-plan", "print a recovery script for a VM or a tenant that works under Argo CD automated sync (in place, a copy with --to, a tenant with --tenant, --other-cluster, a snapshot with --snapshot)", runRestorePlan},
		{"explain", "describe a kind or one of its fields (KIND[.field.path]), its type, documentation and fields, like kubectl explain", runExplain},
		{"schema", "print the JSON Schema of a kind, for editors and validators", runSchema},
		{"diff", "show what a change does to the cluster; refuse destructive changes", runDiff},
		{"import", "write intents for live VMs (an oc get -o yaml export) and report what they do not carry", runImport},
		{"gen-fleet", "write a seeded synthetic fleet of intents (for benchmarks)", runGenFleet},
		{"version", "print virtc's version, commit, Go toolchain and platform (-o json)", runVersion},
		{"install", "copy this virtc executable to a file or directory (the image's init container)", runInstall},
		{"cmp", "run as the Argo CD plugin: build . with flags from the plugin's parameters and env", runCMP},
		{"olm-graph", "print the upgrade graph of virtc's operators from a file-based catalog (opm render of an index image), for the platform repository: builds and diffs then model OLM's route on it", runOLMGraph},
		{"approve-installplan", "in the platform's approver Job: read the live catalog's graph, approve the InstallPlans on OLM's route to the pinned CSV, refusing before any approval a route that does not land on it", runApprove},
		{"fn", "run as a KRM function (kustomize, kpt): ResourceList on stdin, result on stdout", runFn},
		{"completion", "print the shell completion script for bash, zsh or fish", runCompletion},
	}
}

// Main runs virtc with args (without the program name).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if !isTerminal(stdin) {
			return runFn(nil, stdin, stdout, stderr)
		}
		usage(stderr)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		usage(stdout)
		return ExitOK
	case "--version":
		return runVersion(nil, stdin, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if near, ok := diag.Nearest(name, names); ok {
		fmt.Fprintf(stderr, "virtc: unknown command %q; did you mean %q?\n\n", name, near)
	} else {
		fmt.Fprintf(stderr, "virtc: unknown command %q\n\n", name)
	}
	usage(stderr)
	return ExitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "virtc compiles VM intents and a platform catalog into OpenShift Virtualization manifests.")
	fmt.Fprintln(w, "\nUsage:\n  virtc <command> [flags] [PATH...]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'virtc <command> -h' for a command's flags.")
}

// newFlags makes a flag set that reports to stderr and does not exit. Its
// help names flags as the docs do, --name (Go's flag package takes -name
// and --name alike).
func newFlags(name, args string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: virtc %s [flags] %s\n\nFlags:\n", name, args)
		printFlags(stderr, fs)
	}
	if c, ok := stderr.(*flagCapture); ok {
		c.sets = append(c.sets, fs)
	}
	return fs
}

// printFlags is flag.PrintDefaults with --name.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		line := "  " + dashes(f.Name) + f.Name
		if arg == "value" {
			arg = "VALUE" // a repeatable flag's
		}
		if arg != "" {
			line += " " + arg
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "[]" {
			if arg == "string" {
				line += fmt.Sprintf(" (default %q)", d)
			} else {
				line += fmt.Sprintf(" (default %v)", d)
			}
		}
		fmt.Fprintln(w, line)
	})
}

// dashes is how help names a flag: -o, --catalog.
func dashes(name string) string {
	if len(name) == 1 {
		return "-"
	}
	return "--"
}

// parse parses flags anywhere among the arguments (flags may follow paths).
// A wrong flag is reported as virtc's other errors are: what is wrong and
// what would be right (the nearest flag for a misspelt one), then the
// command's help.
func parse(fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var positional []string
	for {
		out, help := fs.Output(), fs.Usage
		fs.SetOutput(io.Discard)
		fs.Usage = func() {}
		err := fs.Parse(args)
		fs.SetOutput(out)
		fs.Usage = help
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.Usage()
				return nil, ExitOK, false
			}
			fmt.Fprintf(out, "virtc %s: %s\n", fs.Name(), flagError(fs, err))
			fs.Usage()
			return nil, ExitUsage, false
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, 0, true
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), 0, true
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// flagError rephrases the flag package's error: flags as --name, and for
// an unknown flag the nearest known one.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name := strings.TrimLeft(rest, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if near, ok := diag.Nearest(name, names); ok {
			return fmt.Sprintf("unknown flag %s%s; did you mean %s%s?", dashes(name), name, dashes(near), near)
		}
		return fmt.Sprintf("unknown flag %s%s (virtc %s -h lists its flags)", dashes(name), name, fs.Name())
	}
	if rest, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		name := strings.TrimLeft(rest, "-")
		return fmt.Sprintf("flag %s%s needs a value", dashes(name), name)
	}
	return strings.Replace(msg, " for flag -", " for flag --", 1)
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
