package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/virtc/virtc/internal/diag"
)

// The forms of build's and validate's problems on stderr (--diagnostics).
const (
	diagText   = "text"
	diagJSON   = "json"
	diagGitHub = "github"
)

var diagFormats = []string{diagText, diagJSON, diagGitHub}

// jsonDiagnostic is one problem in --diagnostics json: what CI tools need
// to place it (file, line, column, field) and to group it (severity, the
// guardrail's rule and the VM it judged).
type jsonDiagnostic struct {
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Severity string `json:"severity"`
	Field    string `json:"field,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Subject  string `json:"subject,omitempty"`
	Message  string `json:"message"`
}

// writeDiagnostics writes ds (sorted, files named as for text) in format
// and returns the exit code they call for.
func writeDiagnostics(w io.Writer, format string, ds []diag.Diagnostic) int {
	errs, warns := 0, 0
	for _, d := range ds {
		if d.Severity == diag.Error {
			errs++
		} else {
			warns++
		}
	}
	switch format {
	case diagJSON:
		out := struct {
			Diagnostics []jsonDiagnostic `json:"diagnostics"`
			Errors      int              `json:"errors"`
			Warnings    int              `json:"warnings"`
		}{Diagnostics: []jsonDiagnostic{}, Errors: errs, Warnings: warns}
		for _, d := range ds {
			sev := "warning"
			if d.Severity == diag.Error {
				sev = "error"
			}
			j := jsonDiagnostic{File: d.File, Line: d.Line, Severity: sev, Field: d.Field, Rule: d.Rule, Subject: d.Subject, Message: d.Message}
			if d.Line > 0 {
				j.Column = max(d.Col, 1)
			}
			out.Diagnostics = append(out.Diagnostics, j)
		}
		data, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintf(w, "%s\n", data)
	case diagGitHub:
		// Workflow commands: the runner reads them on stderr as on stdout
		// (actions/runner src/Runner.Worker/Handlers/ScriptHandler.cs: an
		// OutputManager with the ActionCommandManager on each stream), and
		// shows each on its file's line in the pull request.
		for _, d := range ds {
			cmd := "warning"
			if d.Severity == diag.Error {
				cmd = "error"
			}
			props := []string{"file=" + ghProperty(d.File)}
			if d.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", d.Line), fmt.Sprintf("col=%d", max(d.Col, 1)))
			}
			title := "virtc"
			if d.Rule != "" {
				title += " " + d.Rule
			}
			props = append(props, "title="+ghProperty(title))
			msg := d.Message
			if d.Field != "" {
				msg = d.Field + ": " + msg
			}
			fmt.Fprintf(w, "::%s %s::%s\n", cmd, strings.Join(props, ","), ghData(msg))
		}
		if errs > 0 {
			fmt.Fprintf(w, "virtc: %d error%s\n", errs, plural(errs))
		}
	}
	if errs > 0 {
		return ExitFailed
	}
	return ExitOK
}

// ghData and ghProperty escape a workflow command's message and property
// values as @actions/core does (packages/core/src/command.ts).
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
