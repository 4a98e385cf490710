package diag

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Repeated diagnostics are condensed: when one mistake is made in many
// objects (a fleet of VMs naming the same unknown image, inputs that all
// lack an annotation), a report shows the first few with their places and
// then one line with the count and the fix they share. Fewer repeats than
// GroupMin are shown one by one.
const (
	// GroupMin is the smallest number of diagnostics of one shape that
	// are condensed.
	GroupMin = 6
	// GroupShown is how many of them are shown before the summary.
	GroupShown = 3
)

// Shape is what diagnostics of one check on different objects have in
// common: the severity, the field path with list indexes abstracted
// (spec.disks[*].size) and the message with quoted names and numbers
// abstracted (unknown image "…"; did you mean "…"?). Diagnostics of one
// shape are repeats of one mistake.
func (d Diagnostic) Shape() string {
	return d.Severity.String() + "\x00" + FieldShape(d.Field) + "\x00" + messageShape(d.Message)
}

var (
	indexRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[[0-9]+\]`) })
	quotedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.)*"`) })
	// numberRE matches numbers and quantities (6, 4.22, 40Gi) standing
	// alone, not the digits inside a name such as u1.medium.
	numberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[0-9]+(?:\.[0-9]+)*[A-Za-z]*\b`) })
)

// FieldShape abstracts the list indexes of a field path:
// spec.disks[2].size becomes spec.disks[*].size.
func FieldShape(field string) string { return indexRE().ReplaceAllString(field, "[*]") }

func messageShape(msg string) string {
	return numberRE().ReplaceAllString(quotedRE().ReplaceAllString(msg, `"…"`), "N")
}

// Fix is the part of a message that says what to do: its closing
// parenthesis when that is a phrase of three words or more (`… (add the
// annotation to the file)`, not `… (1Ti)`), or a closing question after
// "; " (`unknown size "u1.meduim"; did you mean "u1.medium"?`). It is
// empty when the message has neither.
func Fix(msg string) string {
	if strings.HasSuffix(msg, ")") {
		if p := closingParen(msg); len(strings.Fields(p)) >= 3 {
			return p
		}
		return ""
	}
	if i := strings.LastIndex(msg, "; "); i >= 0 && strings.HasSuffix(msg, "?") {
		return msg[i+2:]
	}
	return ""
}

// closingParen returns what the parenthesis that ends msg holds, or ""
// when it does not start after the beginning of the message.
func closingParen(msg string) string {
	depth := 0
	inQuote := false
	for i := len(msg) - 1; i > 0; i-- {
		switch msg[i] {
		case '"':
			if msg[i-1] != '\\' {
				inQuote = !inQuote
			}
		case ')':
			if !inQuote {
				depth++
			}
		case '(':
			if !inQuote {
				depth--
				if depth == 0 {
					return msg[i+1 : len(msg)-1]
				}
			}
		}
	}
	return ""
}

// Repeat stands for the diagnostics of one shape that a report leaves out.
type Repeat struct {
	Severity Severity
	// Field is the field path of all of them, with [*] for list indexes
	// that differ.
	Field string
	// Omitted of Total diagnostics are not shown.
	Omitted, Total int
	// Fix is the fix all of them share (see Fix), or empty.
	Fix string
	// Names are the names the omitted ones are about (the first quoted
	// word of each message) that the shown ones are not, when the members
	// do not all name the same: at most MaxNames, so that different
	// mistakes of one shape (six different unknown images) are not hidden.
	Names []string
	// MoreNames counts the names left out of Names.
	MoreNames int
}

// MaxNames bounds Repeat.Names.
const MaxNames = 5

func (r Repeat) String() string {
	what := "errors"
	if r.Severity == Warning {
		what = "warnings"
	}
	s := fmt.Sprintf("... and %d more %s like these (%d in all)", r.Omitted, what, r.Total)
	if len(r.Names) > 0 {
		s += ", about " + strings.Join(r.Names, ", ")
		if r.MoreNames > 0 {
			s += fmt.Sprintf(" and %d more", r.MoreNames)
		}
	}
	if r.Fix != "" {
		s += "; fix for all: " + r.Fix
	}
	return s
}

// Entry is one line of a report: a diagnostic, or, when Repeat is set,
// the summary of the repeats left out after the diagnostics before it.
type Entry struct {
	Diagnostic
	Repeat *Repeat
}

func (e Entry) String() string {
	if e.Repeat != nil {
		return e.Repeat.String()
	}
	return e.Diagnostic.String()
}

// Condense turns sorted diagnostics into the lines of a report: a shape
// with GroupMin or more diagnostics is shown as its first GroupShown (in
// the given order) followed by a Repeat, all at the place of the first;
// everything else is shown as it is, in the given order.
func Condense(ds []Diagnostic) []Entry {
	byShape := map[string][]int{}
	shapes := make([]string, len(ds))
	for i, d := range ds {
		shapes[i] = d.Shape()
		byShape[shapes[i]] = append(byShape[shapes[i]], i)
	}
	out := make([]Entry, 0, len(ds))
	for i, d := range ds {
		members := byShape[shapes[i]]
		if len(members) < GroupMin {
			out = append(out, Entry{Diagnostic: d})
			continue
		}
		if members[0] != i {
			continue // shown with the first of its shape
		}
		for _, j := range members[:GroupShown] {
			out = append(out, Entry{Diagnostic: ds[j]})
		}
		out = append(out, Entry{Repeat: summarize(ds, members)})
	}
	return out
}

func summarize(ds []Diagnostic, members []int) *Repeat {
	first := ds[members[0]]
	r := &Repeat{Severity: first.Severity, Field: first.Field, Omitted: len(members) - GroupShown, Total: len(members), Fix: Fix(first.Message)}
	for _, j := range members[1:] {
		d := ds[j]
		if d.Field != r.Field {
			r.Field = FieldShape(first.Field)
		}
		if Fix(d.Message) != r.Fix {
			r.Fix = ""
		}
	}
	shown := map[string]bool{}
	for _, j := range members[:GroupShown] {
		shown[quotedRE().FindString(ds[j].Message)] = true
	}
	seen := map[string]bool{}
	for _, j := range members[GroupShown:] {
		name := quotedRE().FindString(ds[j].Message)
		if name == "" || shown[name] || seen[name] {
			continue
		}
		seen[name] = true
		if len(r.Names) < MaxNames {
			r.Names = append(r.Names, name)
		} else {
			r.MoreNames++
		}
	}
	return r
}
