package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/diff"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/jsonnet"
)

// Colour modes of --color.
const (
	colorAuto   = "auto"
	colorAlways = "always"
	colorNever  = "never"
)

// diffSide is one tree to compile: its PATHs and catalog PATHs, how to
// show its file names, and whether a missing PATH means "nothing there".
type diffSide struct {
	label    string
	paths    []string
	catalogs []string
	// display maps file names as read (alone or within a message) to the
	// names shown.
	display func(string) string
	// optional PATHs may be missing: a directory the change adds does not
	// exist on the base.
	optional bool
	// warnings are printed for the head only: the base's are old news.
	warnings bool
	// tree, for two trees, is the side's top: its files' virtc.dev/source
	// paths are relative to it, so that the same file in both trees is the
	// same source.
	tree string
}

func runDiff(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("diff", "(--base REF [--head REF] [PATH...] | REV1 REV2 [PATH...] | --live EXPORT [PATH...] | OLD NEW)", stderr)
	base := fs.String("base", "", "compile PATHs (default .) at this git ref, through a temporary git worktree, and compare them with the working tree (or --head)")
	headRef := fs.String("head", "", "with --base: compare with PATHs at this git ref instead of the working tree; `virtc diff REV1 REV2 [PATH...]` is --base REV1 --head REV2")
	format := fs.String("format", diff.FormatText, "output format: "+strings.Join(diff.Formats, ", "))
	withDiff := fs.Bool("diff", true, "include the unified diff of the manifests")
	color := fs.String("color", colorAuto, "colour the text output: auto (when stdout is a terminal), always or never")
	noDefaults := fs.Bool("no-default-catalog", false, "use only catalog entries from the inputs, not the embedded default catalog")
	var catalogs stringList
	fs.Var(&catalogs, "catalog", "a catalog file or directory to read besides the PATHs, on both sides (repeatable)")
	scope := fs.String("scope", "all", "compare only these scopes' objects: "+emit.ScopeHelp+" (everything is still checked)")
	var extStr stringList
	fs.Var(&extStr, "ext-str", "an external variable key=value for Jsonnet inputs, on both sides (repeatable)")
	liveExport := fs.String("live", "", "compare PATHs (default .) with the live objects of this export (oc get vm,dv,pvc,nad -o yaml; - for stdin) instead of another tree")
	prof := addProfileFlags(fs)
	paths, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	batchGC()
	defer prof.start(stderr)()
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "virtc diff: "+format+"\n", a...)
		fs.Usage()
		return ExitUsage
	}
	if !slices.Contains(diff.Formats, *format) {
		return usage("unknown --format %q (one of %s)", *format, strings.Join(diff.Formats, ", "))
	}
	if !slices.Contains([]string{colorAuto, colorAlways, colorNever}, *color) {
		return usage("unknown --color %q (auto, always or never)", *color)
	}
	if _, known := emit.ParseScope(*scope); !known {
		return usage("unknown --scope %q (%s)", *scope, emit.ScopeHelp)
	}
	ext, err := jsonnet.ParseExtStr(extStr)
	if err != nil {
		return usage("%v", err)
	}

	useColor := *color == colorAlways || *color == colorAuto && isTerminal(stdout) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	if *liveExport != "" {
		if *base != "" {
			return usage("--live and --base compare with different things: name one")
		}
		return runLiveDiff(*liveExport, paths, catalogs, *noDefaults, *format, *withDiff, useColor, stdin, stdout, stderr)
	}
	// Two revisions, as `git diff REV1 REV2 [PATH...]` names them: when
	// neither of the first two arguments is a file or directory and both
	// are commits of the repository that holds the paths.
	if *base == "" && *headRef == "" && len(paths) >= 2 && !exists(paths[0]) && !exists(paths[1]) {
		at := "."
		if len(paths) > 2 {
			at = repoDir(paths[2])
		}
		if isCommit(at, paths[0]) && isCommit(at, paths[1]) {
			*base, *headRef, paths = paths[0], paths[1], paths[2:]
		}
	}
	if *headRef != "" && *base == "" {
		return usage("--head %s needs --base: the revision to compare it with", *headRef)
	}
	var old, head diffSide
	if *base != "" {
		if len(paths) == 0 {
			paths = []string{"."}
		}
		// The repository is the one that holds the paths, wherever virtc
		// runs.
		checkout := func(ref string) (*baseTree, []string, []string, bool) {
			tree, err := checkoutBase(ref, repoDir(paths[0]))
			if err != nil {
				fmt.Fprintf(stderr, "virtc diff: %v\n", err)
				return nil, nil, nil, false
			}
			p, err := tree.mapPaths(paths)
			if err == nil {
				var c []string
				if c, err = tree.mapPaths(catalogs); err == nil {
					return tree, p, c, true
				}
			}
			tree.remove()
			fmt.Fprintf(stderr, "virtc diff: %v\n", err)
			return nil, nil, nil, false
		}
		tree, basePaths, baseCatalogs, ok := checkout(*base)
		if !ok {
			return ExitUsage
		}
		defer tree.remove()
		old = diffSide{label: *base, paths: basePaths, catalogs: baseCatalogs, display: tree.display, optional: true}
		head = diffSide{label: "working tree", paths: paths, catalogs: catalogs, warnings: true}
		if *headRef != "" {
			htree, headPaths, headCatalogs, ok := checkout(*headRef)
			if !ok {
				return ExitUsage
			}
			defer htree.remove()
			head = diffSide{label: *headRef, paths: headPaths, catalogs: headCatalogs, display: htree.display, warnings: true, optional: true}
		}
	} else {
		if len(paths) != 2 {
			return usage("name two trees to compare (OLD NEW), two git revisions (REV1 REV2 [PATH...]), or a git ref with --base REF")
		}
		old = diffSide{label: paths[0], paths: paths[:1], catalogs: catalogs, tree: paths[0]}
		head = diffSide{label: paths[1], paths: paths[1:], catalogs: catalogs, warnings: true, tree: paths[1]}
	}

	spec := api.CompilerSpec{NoDefaultCatalog: *noDefaults, Scope: *scope, ExtStr: ext}
	// Pieces: each object serialized once, compared by its bytes.
	pieces := func(o *compile.Options) { o.Pieces = true }
	oldRes, oldOK := compileSide(old, spec, pieces, stderr)
	headRes, headOK := compileSide(head, spec, pieces, stderr)
	if !oldOK || !headOK {
		return ExitUsage
	}
	rep, err := diff.Compare(oldRes, headRes, diff.Options{Base: old.label, Head: head.label, Cluster: diff.DefaultCluster})
	if err != nil {
		fmt.Fprintf(stderr, "virtc diff: %v\n", err)
		return ExitUsage
	}
	if err := diff.Write(stdout, rep, diff.WriteOptions{Format: *format, Diff: *withDiff, Color: useColor}); err != nil {
		fmt.Fprintf(stderr, "virtc diff: %v\n", err)
		return ExitUsage
	}
	if !rep.Allowed {
		return ExitRefused
	}
	return ExitOK
}

// compileSide compiles one side (spec with the side's paths and
// catalogs; tune, if not nil, sets the output's form) and prints its
// diagnostics: errors of either side, which stop the diff, and the head's
// warnings.
func compileSide(s diffSide, spec api.CompilerSpec, tune func(*compile.Options), stderr io.Writer) (compile.Result, bool) {
	diags := &diag.List{}
	spec.Paths, spec.CatalogDirs = s.paths, s.catalogs
	if s.optional {
		spec.Paths = slices.DeleteFunc(slices.Clone(spec.Paths), func(p string) bool {
			_, err := os.Stat(p)
			return os.IsNotExist(err)
		})
	}
	// Each side's marker files name its catalog, as for virtc build.
	req, ok := request(spec, place{base: s.tree}, stderr)
	if !ok {
		return compile.Result{}, false
	}
	opts, err := req.Options()
	if err != nil {
		fmt.Fprintf(stderr, "virtc diff: %v\n", err)
		return compile.Result{}, false
	}
	if tune != nil {
		tune(&opts)
	}
	req.ReadProjects(&opts, diags)
	docs := req.Read(diags)
	var res compile.Result
	if len(docs) == 0 && !diags.HasErrors() && s.optional {
		// Nothing at the base: everything in the head is new.
		res = compile.Result{Diags: diags}
	} else {
		res = compile.Compile(docs, opts, diags)
	}
	list := res.Diags.Sorted()
	if s.display != nil {
		for i := range list {
			list[i].File = s.display(list[i].File)
			list[i].Message = s.display(list[i].Message)
		}
	}
	if res.Diags.HasErrors() {
		n := len(res.Diags.Errors())
		fmt.Fprintf(stderr, "virtc diff: %s does not compile (%d error%s):\n", s.label, n, plural(n))
		io.WriteString(stderr, diag.Format(slices.DeleteFunc(list, func(d diag.Diagnostic) bool { return d.Severity != diag.Error })))
		return res, false
	}
	if s.warnings {
		io.WriteString(stderr, diag.Format(list))
	}
	return res, true
}

// exists reports whether path names a file or directory.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
