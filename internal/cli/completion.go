package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/virtc/virtc/internal/decode"
)

// cmdSpec is what completion knows of a command: its name, summary and
// flags, read from the command's own flag set.
type cmdSpec struct {
	name, summary string
	flags         []flagSpec
	// words complete the command's arguments instead of file names.
	words []string
}

// argWords are the arguments of the commands that take words, not files.
var argWords = map[string][]string{
	"explain":    decode.Kinds,
	"schema":     decode.Kinds,
	"completion": {"bash", "zsh", "fish"},
}

type flagSpec struct {
	name, usage string
	takesValue  bool
}

// flagCapture is the stderr commandSpecs gives a command: newFlags records
// the flag sets made for it, and its help goes nowhere.
type flagCapture struct{ sets []*flag.FlagSet }

func (*flagCapture) Write(p []byte) (int, error) { return len(p), nil }

// commandSpecs runs each command with -h, its help discarded, and records
// the flag sets it makes: one definition of a command's flags serves its
// parsing, its help and the completion scripts.
func commandSpecs() []cmdSpec {
	var specs []cmdSpec
	for _, c := range commands() {
		if c.name == "completion" {
			specs = append(specs, cmdSpec{name: c.name, summary: c.summary, words: argWords[c.name]})
			continue
		}
		capture := &flagCapture{}
		name := c.name
		if name == "cmp" {
			name = "build" // cmp takes build's flags
		}
		for _, b := range commands() {
			if b.name == name {
				b.run([]string{"-h"}, strings.NewReader(""), io.Discard, capture)
			}
		}
		s := cmdSpec{name: c.name, summary: c.summary, words: argWords[c.name]}
		for _, fs := range capture.sets {
			fs.VisitAll(func(f *flag.Flag) {
				_, usage := flag.UnquoteUsage(f)
				b, isBool := f.Value.(interface{ IsBoolFlag() bool })
				s.flags = append(s.flags, flagSpec{name: f.Name, usage: usage, takesValue: !isBool || !b.IsBoolFlag()})
			})
		}
		slices.SortFunc(s.flags, func(a, b flagSpec) int { return strings.Compare(a.name, b.name) })
		s.flags = slices.CompactFunc(s.flags, func(a, b flagSpec) bool { return a.name == b.name })
		specs = append(specs, s)
	}
	return specs
}

func runCompletion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("completion", "bash|zsh|fish", stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: virtc completion bash|zsh|fish

Prints the shell completion script for virtc's commands and their flags
(values and arguments complete as file names). To load it:

  bash:  source <(virtc completion bash)     (or write it to /etc/bash_completion.d/virtc)
  zsh:   virtc completion zsh > "${fpath[1]}/_virtc"   (then start a new shell; compinit must be on)
  fish:  virtc completion fish > ~/.config/fish/completions/virtc.fish
`)
	}
	shells, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(shells) != 1 {
		fmt.Fprintln(stderr, "virtc completion: name one shell: bash, zsh or fish")
		fs.Usage()
		return ExitUsage
	}
	specs := commandSpecs()
	switch shells[0] {
	case "bash":
		writeBash(stdout, specs)
	case "zsh":
		writeZsh(stdout, specs)
	case "fish":
		writeFish(stdout, specs)
	default:
		fmt.Fprintf(stderr, "virtc completion: unknown shell %q (bash, zsh or fish)\n", shells[0])
		return ExitUsage
	}
	return ExitOK
}

// short is the first clause of a usage or summary, for a completion menu.
func short(s string) string {
	for _, sep := range []string{"; ", ": ", " (", ", "} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	if len(s) > 70 {
		s = s[:67] + "..."
	}
	return s
}

func writeBash(w io.Writer, specs []cmdSpec) {
	var names []string
	for _, s := range specs {
		names = append(names, s.name)
	}
	fmt.Fprintf(w, `# bash completion for virtc (virtc completion bash)
_virtc() {
    local cur prev cmd flags valued words
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=( $(compgen -W %q -- "$cur") )
        return
    fi
    cmd="${COMP_WORDS[1]}"
    case "$cmd" in
`, strings.Join(names, " "))
	for _, s := range specs {
		var all, valued []string
		for _, f := range s.flags {
			all = append(all, dashes(f.name)+f.name)
			if f.takesValue {
				valued = append(valued, "--"+f.name, "-"+f.name)
			}
		}
		fmt.Fprintf(w, "        %s) flags=%q; valued=%q; words=%q ;;\n", s.name, strings.Join(all, " "), " "+strings.Join(valued, " ")+" ", strings.Join(s.words, " "))
	}
	fmt.Fprint(w, `        *) return ;;
    esac
    # A flag's value, and an argument: a file name (or one of the
    # command's words).
    if [[ "$valued" == *" $prev "* ]]; then
        COMPREPLY=( $(compgen -f -- "$cur") )
        return
    fi
    if [[ "$cur" != -* ]]; then
        if [ -n "$words" ]; then
            COMPREPLY=( $(compgen -W "$words" -- "$cur") )
        else
            COMPREPLY=( $(compgen -f -- "$cur") )
        fi
        return
    fi
    COMPREPLY=( $(compgen -W "$flags" -- "$cur") )
}
complete -o filenames -o bashdefault -F _virtc virtc
`)
}

// zshQuote escapes a description for _describe and _arguments specs.
func zshQuote(s string) string {
	return strings.NewReplacer("'", `'\''`, "[", `\[`, "]", `\]`, ":", `\:`, "\\", `\\`).Replace(s)
}

func writeZsh(w io.Writer, specs []cmdSpec) {
	fmt.Fprint(w, `#compdef virtc
# zsh completion for virtc (virtc completion zsh)
_virtc() {
  local -a cmds
  cmds=(
`)
	for _, s := range specs {
		fmt.Fprintf(w, "    '%s:%s'\n", s.name, zshQuote(short(s.summary)))
	}
	fmt.Fprint(w, `  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'virtc command' cmds
    return
  fi
  local cmd=${words[2]}
  shift words
  (( CURRENT-- ))
  case $cmd in
`)
	for _, s := range specs {
		fmt.Fprintf(w, "    %s)\n      _arguments -S \\\n", s.name)
		for _, f := range s.flags {
			if f.takesValue {
				fmt.Fprintf(w, "        '%s%s=[%s]:value:_files' \\\n", dashes(f.name), f.name, zshQuote(short(f.usage)))
			} else {
				fmt.Fprintf(w, "        '%s%s[%s]' \\\n", dashes(f.name), f.name, zshQuote(short(f.usage)))
			}
		}
		if len(s.words) > 0 {
			fmt.Fprintf(w, "        '*:argument:(%s)'\n      ;;\n", strings.Join(s.words, " "))
		} else {
			fmt.Fprint(w, "        '*:file:_files'\n      ;;\n")
		}
	}
	fmt.Fprint(w, `  esac
}
if [ "$funcstack[1]" = "_virtc" ]; then
  _virtc "$@"
else
  compdef _virtc virtc
fi
`)
}

// fishQuote quotes a word for fish.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func writeFish(w io.Writer, specs []cmdSpec) {
	fmt.Fprint(w, "# fish completion for virtc (virtc completion fish)\ncomplete -c virtc -f\n")
	for _, s := range specs {
		fmt.Fprintf(w, "complete -c virtc -n __fish_use_subcommand -a %s -d %s\n", s.name, fishQuote(short(s.summary)))
	}
	for _, s := range specs {
		cond := fishQuote("__fish_seen_subcommand_from " + s.name)
		for _, f := range s.flags {
			opt := "-l " + f.name
			if len(f.name) == 1 {
				opt = "-s " + f.name
			}
			if f.takesValue {
				fmt.Fprintf(w, "complete -c virtc -n %s %s -r -F -d %s\n", cond, opt, fishQuote(short(f.usage)))
			} else {
				fmt.Fprintf(w, "complete -c virtc -n %s %s -d %s\n", cond, opt, fishQuote(short(f.usage)))
			}
		}
		if len(s.words) > 0 {
			fmt.Fprintf(w, "complete -c virtc -n %s -a %s\n", cond, fishQuote(strings.Join(s.words, " ")))
		} else {
			fmt.Fprintf(w, "complete -c virtc -n %s -F\n", cond)
		}
	}
}
