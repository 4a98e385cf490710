package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Formats of a report.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Formats lists the formats in the order they are documented.
var Formats = []string{FormatText, FormatMarkdown, FormatJSON}

// WriteOptions say how a report is written.
type WriteOptions struct {
	Format string
	// Diff includes the manifests' unified diff.
	Diff bool
	// Color uses ANSI colours (text format only).
	Color bool
}

// Write writes the report in the chosen format.
func Write(w io.Writer, r *Report, opts WriteOptions) error {
	if !opts.Diff {
		clone := *r
		clone.Objects = make([]Object, len(r.Objects))
		for i, o := range r.Objects {
			o.Diff = ""
			clone.Objects[i] = o
		}
		r = &clone
	}
	var data []byte
	switch opts.Format {
	case FormatJSON:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
		data = b.Bytes()
	case FormatMarkdown:
		data = []byte(Markdown(r, MarkdownLimit))
	default:
		data = []byte(Text(r, opts.Color))
	}
	_, err := w.Write(data)
	return err
}

// ANSI colours of the text format.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

type painter bool

func (p painter) paint(color, s string) string {
	if !p || s == "" {
		return s
	}
	return color + s + ansiReset
}

// verdict is the one-line outcome.
func verdict(r *Report) string {
	if r.Allowed {
		return "allowed"
	}
	return fmt.Sprintf("REFUSED (%d %s)", len(r.Refusals), plural(len(r.Refusals), "refusal", "refusals"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func summaryLine(s Summary) string {
	return fmt.Sprintf("%d added, %d removed, %d changed, %d unchanged", s.Added, s.Removed, s.Changed, s.Unchanged)
}

// statusMark is the one-character status of an object or subject.
func statusMark(status string) string {
	switch status {
	case Added:
		return "+"
	case Removed:
		return "-"
	}
	return "~"
}

func subjectName(s Subject) string {
	if s.Namespace == "" {
		return s.Name
	}
	return s.Namespace + "/" + s.Name
}

// Text renders the report for a terminal or a CI log.
func Text(r *Report, color bool) string {
	p := painter(color)
	var b strings.Builder
	head := fmt.Sprintf("virtc diff %s → %s: %s", r.Base, r.Head, verdict(r))
	if r.Allowed {
		b.WriteString(p.paint(ansiBold, head))
	} else {
		b.WriteString(p.paint(ansiBold+ansiRed, head))
	}
	fmt.Fprintf(&b, "\nobjects: %s\n", summaryLine(r.Summary))
	findings := func(title, color, fixLabel string, fs []Finding) {
		if len(fs) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s\n", p.paint(ansiBold+color, fmt.Sprintf("%s (%d):", title, len(fs))))
		for _, f := range fs {
			fmt.Fprintf(&b, "  %s %s [%s]\n", p.paint(color, "*"), f.Object, f.Rule)
			fmt.Fprintf(&b, "    %s\n", f.Message)
			if f.Fix != "" {
				fmt.Fprintf(&b, "    %s: %s\n", fixLabel, f.Fix)
			}
		}
	}
	findings("Refused", ansiRed, "instead", r.Refusals)
	findings("Warnings", ansiYellow, "to do", r.Warnings)
	subjects := func(title string, ss []Subject) {
		if len(ss) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s\n", p.paint(ansiBold, title+":"))
		for _, s := range ss {
			fmt.Fprintf(&b, "  %s %s (%s)\n", statusMark(s.Status), subjectName(s), s.Status)
			for _, c := range s.Changes {
				fmt.Fprintf(&b, "      %s [%s]\n", c.Detail, c.Effect)
			}
		}
	}
	if len(r.Platform) > 0 {
		fmt.Fprintf(&b, "\n%s\n", p.paint(ansiBold, "Platform:"))
		for _, c := range r.Platform {
			fmt.Fprintf(&b, "      %s [%s]\n", c.Detail, c.Effect)
		}
	}
	subjects("Tenants", r.Tenants)
	subjects("VMs", r.VMs)
	if len(r.Objects) > 0 {
		fmt.Fprintf(&b, "\n%s\n", p.paint(ansiBold, "Objects:"))
		for _, o := range r.Objects {
			fmt.Fprintf(&b, "  %s %s\n", statusMark(o.Status), o.Ref())
		}
	}
	for _, o := range r.Objects {
		if o.Diff == "" {
			continue
		}
		b.WriteByte('\n')
		b.WriteString(p.paint(ansiBold, fmt.Sprintf("--- %s: %s", r.Base, sideRef(o, o.Status != Added))))
		b.WriteByte('\n')
		b.WriteString(p.paint(ansiBold, fmt.Sprintf("+++ %s: %s", r.Head, sideRef(o, o.Status != Removed))))
		b.WriteByte('\n')
		for _, line := range strings.SplitAfter(strings.TrimSuffix(o.Diff, "\n"), "\n") {
			line = strings.TrimSuffix(line, "\n")
			switch {
			case strings.HasPrefix(line, "@@"):
				line = p.paint(ansiCyan, line)
			case strings.HasPrefix(line, "+"):
				line = p.paint(ansiGreen, line)
			case strings.HasPrefix(line, "-"):
				line = p.paint(ansiRed, line)
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// sideRef names an object in a diff header, or /dev/null where it does not
// exist, as diff -u does for new and deleted files.
func sideRef(o Object, exists bool) string {
	if !exists {
		return "/dev/null"
	}
	return o.Ref()
}

// effectLabels name the effects for readers of a pull request.
var effectLabels = map[string]string{
	EffectLive:      "live update",
	EffectRestart:   "**restart required**",
	EffectNextStart: "at next start",
	EffectOnline:    "online expansion",
	EffectStarts:    "starts the VM",
	EffectStops:     "**stops the VM**",
	EffectNone:      "none",
	EffectManual:    "manual step",
	EffectCreated:   "created",
	EffectDeleted:   "**deleted**",
	EffectRefused:   "❌ refused",
	// A platform upgrade's effects on running VMs.
	EffectMigrates:    "live-migrates",
	EffectOldLauncher: "**keeps the old launcher**",
	EffectEvicted:     "**restarted**",
	EffectCheck:       "**check first**",
}

// MarkdownLimit is GitHub's limit on the body of a comment, in characters.
// The Markdown writer counts bytes, which are never fewer than characters,
// so the comment fits however GitHub counts.
const MarkdownLimit = 65536

// Marker starts every Markdown report, so that a CI job can find and
// update its previous comment on a pull request.
const Marker = "<!-- virtc-diff -->"

// Markdown renders the report as a pull-request comment of at most limit
// characters: outcome and summary first, then refusals and warnings, the
// changes, and the manifests' diffs in collapsible sections. What does not
// fit is left out with a note saying how much.
func Markdown(r *Report, limit int) string {
	m := &mdWriter{limit: limit}
	icon := "✅"
	if !r.Allowed {
		icon = "❌"
	}
	m.block(fmt.Sprintf("%s\n### %s virtc diff: %s\n\n`%s` → `%s`\n\n| added | removed | changed | unchanged |\n|---:|---:|---:|---:|\n| %d | %d | %d | %d |\n",
		Marker, icon, verdict(r), r.Base, r.Head, r.Summary.Added, r.Summary.Removed, r.Summary.Changed, r.Summary.Unchanged))
	findings := func(title, fixLabel string, fs []Finding) {
		if len(fs) == 0 {
			return
		}
		var items []string
		for _, f := range fs {
			item := fmt.Sprintf("- **%s** (`%s`): %s", mdEscape(f.Object), f.Rule, mdEscape(f.Message))
			if f.Fix != "" {
				item += fmt.Sprintf("<br>**%s:** %s", fixLabel, mdEscape(f.Fix))
			}
			items = append(items, item+"\n")
		}
		m.list(fmt.Sprintf("\n#### %s (%d)\n\n", title, len(fs)), items)
	}
	findings("❌ Refused", "Instead", r.Refusals)
	findings("⚠️ Warnings", "To do", r.Warnings)
	var rows []string
	for _, c := range r.Platform {
		rows = append(rows, fmt.Sprintf("| ~ | platform | %s | %s |\n", mdEscape(c.Detail), effectLabels[c.Effect]))
	}
	for _, group := range []struct {
		kind string
		ss   []Subject
	}{{"tenant", r.Tenants}, {"VM", r.VMs}} {
		for _, s := range group.ss {
			for _, c := range s.Changes {
				rows = append(rows, fmt.Sprintf("| %s | %s %s | %s | %s |\n", statusMark(s.Status), group.kind, mdEscape(subjectName(s)), mdEscape(c.Detail), effectLabels[c.Effect]))
			}
		}
	}
	if len(rows) > 0 {
		m.list("\n#### Changes\n\n| | subject | change | effect |\n|---|---|---|---|\n", rows)
	}
	var sections []string
	for _, o := range r.Objects {
		if o.Diff == "" {
			continue
		}
		fence := "```"
		for strings.Contains(o.Diff, fence) {
			fence += "`"
		}
		sections = append(sections, fmt.Sprintf("<details><summary>%s %s (%s)</summary>\n\n%sdiff\n%s%s\n\n</details>\n", statusMark(o.Status), mdEscape(o.Ref()), o.Status, fence, o.Diff, fence))
	}
	if len(sections) > 0 {
		m.list("\n#### Manifests\n\n", sections)
	}
	return m.finish()
}

// mdWriter appends Markdown within a character budget.
type mdWriter struct {
	b       strings.Builder
	n       int
	limit   int
	omitted int
}

// truncationNote is what replaces the parts that do not fit; its length is
// reserved from the start so that it always fits.
const truncationNote = "\n> ✂️ Truncated: %d more items do not fit in a comment (at most 65,536 characters). Run `virtc diff` locally for the whole preview.\n"

// room is what is left once the truncation note (with a count of up to
// eight digits) is set aside.
func (m *mdWriter) room() int { return m.limit - m.n - len(truncationNote) - 8 }

func (m *mdWriter) block(s string) bool {
	if m.omitted > 0 || len(s) > m.room() {
		m.omitted++
		return false
	}
	m.b.WriteString(s)
	m.n += len(s)
	return true
}

// list writes a heading and as many items as fit.
func (m *mdWriter) list(heading string, items []string) {
	if m.omitted > 0 {
		m.omitted += len(items)
		return
	}
	if len(heading)+len(items[0]) > m.room() {
		m.omitted += len(items)
		return
	}
	m.block(heading)
	for i, it := range items {
		if !m.block(it) {
			m.omitted += len(items) - i - 1
			return
		}
	}
}

func (m *mdWriter) finish() string {
	if m.omitted > 0 {
		m.b.WriteString(fmt.Sprintf(truncationNote, m.omitted))
	}
	return m.b.String()
}

// mdEscape keeps text inside a table cell or list item: no pipes, no line
// breaks, no HTML.
func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}
