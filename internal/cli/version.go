package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
)

// release is a semantic version tag, the form releases are tagged with
// (and `go install …@vX.Y.Z` stamps into the binary).
var release = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// buildInfo is what `virtc version` says: the version (Version, set at
// link time by make build and make release; else the module version `go
// install …@VERSION` stamps), the commit and whether the tree had
// uncommitted changes (go build stamps them in a checkout), and the Go
// toolchain and platform.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// Commit and Modified are set at link time with Version (make build, make
// release), where go build's own stamp may be off (-buildvcs=false).
var Commit, Modified string

func readBuildInfo() buildInfo {
	b := buildInfo{Version: Version, Commit: Commit, Modified: Modified == "true", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok || b.Commit != "" {
		if ok && b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		return b
	}
	if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// pin is the version of this virtc that `go install
// github.com/virtc/virtc/cmd/virtc@PIN` installs again: its release tag,
// else its commit when built from a clean checkout; "" when there is none
// (a development build with uncommitted changes, or without version
// control information).
func (b buildInfo) pin() string {
	switch {
	case release.MatchString(b.Version):
		return b.Version
	case b.Commit != "" && !b.Modified:
		return b.Commit
	}
	return ""
}

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("version", "", stderr)
	output := fs.String("o", "", "output format: json, or the default one line")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	b := readBuildInfo()
	switch *output {
	case "":
		commit := b.Commit
		if commit == "" {
			commit = "unknown"
		} else if b.Modified {
			commit += ", modified"
		}
		fmt.Fprintf(stdout, "virtc %s (commit %s, %s, %s)\n", b.Version, commit, b.Go, b.Platform)
	case "json":
		data, _ := json.MarshalIndent(b, "", "  ")
		fmt.Fprintf(stdout, "%s\n", data)
	default:
		fmt.Fprintf(stderr, "virtc version: unknown -o %q (json)\n", *output)
		return ExitUsage
	}
	return ExitOK
}
