// Package diag collects located problems: every stage reports into one List,
// and the CLI prints them sorted, so a user sees all mistakes at once.
package diag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/virtc/virtc/internal/secret"
)

// Severity of a diagnostic. Errors stop a compile; warnings do not.
type Severity int

const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Pos is a place in an input file. Line and Col are 1-based; zero means unknown.
type Pos struct {
	File string
	Line int
	Col  int
	// Shadowed marks a place inside a part of its document that already
	// has a structural error (a value of the wrong type, a missing field):
	// a diagnostic there would be a consequence of that error, so List
	// drops it. source.Doc.Pos sets it.
	Shadowed bool
}

// Diagnostic is one problem: where it is, which field, what is wrong.
type Diagnostic struct {
	Pos
	Severity Severity
	// Field is the field path inside the object, for example spec.disks[0].size.
	Field   string
	Message string
	// Rule names the guardrail (internal/rules) whose compile-time check made
	// this refusal: the cluster's policy refuses the same object by the
	// same rule. Empty for a problem that is not a guardrail's.
	Rule string
	// Subject is what the rule judged: the VM ("namespace/name") whose
	// objects the cluster refuses by the same rule.
	Subject string
}

func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", d.Line, max(d.Col, 1))
	}
	b.WriteString(": ")
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	if d.Field != "" {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Covers reports whether a structural error at the field path broken (a
// value of the wrong type, a missing field) makes a diagnostic at field a
// consequence of it: field is broken itself, lies inside it, or is an
// object that contains it (spec for spec.size; the document, ""). A list
// that contains it is not covered: spec.hostDevices can still be checked
// when spec.hostDevices[0].deviceName is missing.
func Covers(broken, field string) bool {
	switch {
	case broken == "" || field == "" || field == broken:
		return true
	case strings.HasPrefix(field, broken) && (field[len(broken)] == '.' || field[len(broken)] == '['):
		return true
	}
	return strings.HasPrefix(broken, field+".")
}

// List gathers diagnostics from all stages.
type List struct {
	items []Diagnostic
	// parent and rule: a list made by Rule records into parent, each
	// diagnostic tagged with rule.
	parent        *List
	rule, subject string
}

// Add records a diagnostic, unless its place is shadowed by a structural
// error (see Pos.Shadowed).
//
// A message never repeats secret material (secret.Redact): it reaches
// Argo CD's UI, CI logs and the warnings ConfigMap, whatever value an input
// or a Jsonnet std.trace put in it.
func (l *List) Add(d Diagnostic) {
	if d.Shadowed {
		return
	}
	d.Message = secret.Redact(d.Message)
	// A field path names map keys, and a file is named by the repository:
	// either can be where the secret was put.
	d.Field, d.File = secret.Redact(d.Field), secret.Redact(d.File)
	if l.parent != nil {
		d.Rule, d.Subject = l.rule, l.subject
		l.parent.Add(d)
		return
	}
	l.items = append(l.items, d)
}

// Rule is a list that records into l, tagging every diagnostic with the
// guardrail rule (Diagnostic.Rule). Only Add, Errorf and Warnf are for it:
// it holds nothing itself.
func (l *List) Rule(rule string) *List { return l.RuleFor(rule, "") }

// RuleFor is Rule for a subject: the VM ("namespace/name") the rule judges
// (Diagnostic.Subject).
func (l *List) RuleFor(rule, subject string) *List {
	for l.parent != nil {
		l = l.parent
	}
	return &List{parent: l, rule: rule, subject: subject}
}

// Errorf records an error at pos.
func (l *List) Errorf(pos Pos, field, format string, args ...any) {
	l.Add(Diagnostic{Pos: pos, Severity: Error, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Warnf records a warning at pos.
func (l *List) Warnf(pos Pos, field, format string, args ...any) {
	l.Add(Diagnostic{Pos: pos, Severity: Warning, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Append adds every diagnostic of other.
func (l *List) Append(other *List) { l.items = append(l.items, other.items...) }

// HasErrors reports whether any diagnostic is an error.
func (l *List) HasErrors() bool {
	for _, d := range l.items {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// ErrorsSince reports whether an error was added after the list had n
// diagnostics (see Len).
func (l *List) ErrorsSince(n int) bool {
	for _, d := range l.items[n:] {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Len is the number of diagnostics.
func (l *List) Len() int { return len(l.items) }

// Sorted returns the diagnostics ordered by file, line, column, field and
// message, without duplicates: the same input always prints the same report.
func (l *List) Sorted() []Diagnostic {
	out := slices.Clone(l.items)
	slices.SortFunc(out, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col),
			cmp.Compare(a.Field, b.Field),
			cmp.Compare(a.Severity, b.Severity),
			cmp.Compare(a.Message, b.Message),
		)
	})
	return slices.Compact(out)
}

// Errors returns only the error diagnostics, sorted.
func (l *List) Errors() []Diagnostic {
	return slices.DeleteFunc(l.Sorted(), func(d Diagnostic) bool { return d.Severity != Error })
}

// Warnings returns only the warnings, sorted.
func (l *List) Warnings() []Diagnostic {
	return slices.DeleteFunc(l.Sorted(), func(d Diagnostic) bool { return d.Severity != Warning })
}

// Format renders sorted diagnostics one per line, with repeats of one
// mistake condensed (see Condense).
func Format(ds []Diagnostic) string {
	var b strings.Builder
	for _, e := range Condense(ds) {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}
