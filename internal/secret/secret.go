// Package secret is virtc's one scanner for secret material: the patterns
// that inline cloud-init data must not hold (the compile check in
// internal/rules and the cluster's ValidatingAdmissionPolicies read them),
// that no string of an input may hold where it reaches the cluster
// (decode), and that no message repeats (diag redacts them).
package secret

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"
)

// Pattern is one kind of secret material.
type Pattern struct {
	// Pattern is an RE2 regular expression: Go's regexp and CEL's
	// matches() (the ValidatingAdmissionPolicies of internal/render) read the
	// same syntax, so the compile check and the cluster's hold the same
	// rule.
	Pattern string
	// What names the material in messages ("a password").
	What string
	// Extent is how much of a string around a match Redact hides: the
	// match, the rest of its line (a key's value follows it), or the
	// block up to the END line of a PEM key.
	Extent Extent
}

// Extent is how much of a string Redact hides around a match.
type Extent int

const (
	Match Extent = iota
	Line
	PEMBlock
)

// Patterns find secret material.
var Patterns = []Pattern{
	{`(?im)^\s*(chpasswd|plain_text_passwd|hashed_passwd|passwd|password)\s*:`, "a password", Line},
	{`\$(1|2[aby]?|5|6|y|gy|7)\$[^\s:]{8,}`, "a password hash", Match},
	{`-----BEGIN [A-Z ]*PRIVATE KEY-----`, "a private key", PEMBlock},
	{`(?im)^\s*[a-z0-9_-]*(token|secret|api_?key|access_?key)[a-z0-9_-]*\s*[:=]`, "a token or secret key", Line},
	{`\bAKIA[0-9A-Z]{16}\b`, "an AWS access key", Match},
	{`\bgh[pousr]_[A-Za-z0-9]{36,}\b`, "a GitHub token", Match},
	// A URL's user information (RFC 3986 section 3.2.1) with a password:
	// a webhook or registry URL that logs in by itself.
	{`\b[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s:@]+:[^/?#\s@]+@`, "a password in a URL", Match},
}

// regexps are compiled on first use: a process that scans nothing (a
// cached virtc cmp call) does not pay for them.
var regexps = sync.OnceValue(func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(Patterns))
	for i, p := range Patterns {
		out[i] = regexp.MustCompile(p.Pattern)
	}
	return out
})

// pemEnd ends the block of a PEM private key.
var pemEnd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-----END [A-Z ]*PRIVATE KEY-----`) })

// Find returns what secret material s holds, in Patterns' order; none
// for most strings, which a scan of their bytes rules out without a
// regular expression.
func Find(s string) []string {
	if !mayHold(s) {
		return nil
	}
	var found []string
	for i, re := range regexps() {
		if re.MatchString(escapedLines(s)) {
			found = append(found, Patterns[i].What)
		}
	}
	return found
}

// Redact returns s with every piece of secret material replaced by
// "[redacted: WHAT]". A message quotes a value with strconv.Quote, so a
// line of it may start after `\n`: that is read as a line's start.
func Redact(s string) string {
	if !mayHold(s) {
		return s
	}
	t := escapedLines(s)
	type span struct {
		from, to int
		what     string
	}
	var spans []span
	for i, re := range regexps() {
		for _, m := range matches(re, t, Patterns[i].Extent == Line) {
			from, to := m[0], m[1]
			switch Patterns[i].Extent {
			case Line:
				to = lineEnd(t, to)
			case PEMBlock:
				if e := pemEnd().FindStringIndex(t[to:]); e != nil {
					to += e[1]
				} else {
					to = len(t)
				}
			}
			// A line pattern matches its line's leading space: keep it.
			for from < to && (t[from] == ' ' || t[from] == '\t' || t[from] == '\n' || t[from] == 0) {
				from++
			}
			spans = append(spans, span{from, to, Patterns[i].What})
		}
	}
	if len(spans) == 0 {
		return s
	}
	// Overlapping spans are hidden as one, named by the first.
	var b strings.Builder
	at := 0
	for len(spans) > 0 {
		first := 0
		for i, sp := range spans {
			if sp.from < spans[first].from {
				first = i
			}
		}
		sp := spans[first]
		spans = append(spans[:first], spans[first+1:]...)
		if sp.to <= at {
			continue
		}
		if sp.from < at {
			sp.from = at
		} else {
			b.WriteString(s[at:sp.from])
			b.WriteString("[redacted: " + sp.what + "]")
		}
		at = sp.to
	}
	b.WriteString(s[at:])
	return b.String()
}

// matches are re's matches in t. A line pattern (a key at a line's start,
// `password:`) is also tried where a message puts a value: after a quote,
// an '=' or ": " (`unknown image "password: x"`, `--ext-str=k=token: x`,
// `evaluation failed: token: x`).
func matches(re *regexp.Regexp, t string, line bool) [][]int {
	found := re.FindAllStringIndex(t, -1)
	if !line {
		return found
	}
	for i := 0; i < len(t); i++ {
		start := -1
		switch {
		case t[i] == '"' || t[i] == '\'' || t[i] == '=':
			start = i + 1
		case t[i] == ':' && i+1 < len(t) && t[i+1] == ' ':
			start = i + 2
		}
		if start < 0 || start >= len(t) {
			continue
		}
		if m := re.FindStringIndex(t[start:]); m != nil && m[0] == 0 {
			found = append(found, []int{start, start + m[1]})
		}
	}
	return found
}

// lineEnd is where the line that holds i ends in t: a newline, or the
// closing quote of a quoted value.
func lineEnd(t string, i int) int {
	for ; i < len(t); i++ {
		if t[i] == '\n' || t[i] == 0 || t[i] == '"' && (i == 0 || t[i-1] != '\\') {
			return i
		}
	}
	return i
}

// escapedLines is s with each escaped newline (the two bytes `\n` that
// strconv.Quote writes) turned into the two bytes NUL and newline: the
// line patterns then see a line's start there, and every offset of the
// result is the same offset in s.
func escapedLines(s string) string {
	if !strings.Contains(s, `\n`) {
		return s
	}
	return strings.ReplaceAll(s, `\n`, "\x00\n")
}

// mayHold reports whether s could hold any pattern's match: it holds one
// of the words every match holds (ASCII, any case). One pass over the
// bytes, so that every string of a build can be scanned.
func mayHold(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0xC5 || s[i] == 0xE2 {
			// The lead bytes of U+017F (ſ) and U+212A (the Kelvin
			// sign), which (?i) folds to s and k.
			return true
		}
		switch s[i] | 0x20 {
		case 'p':
			if hasFold(s[i:], "passw") || hasFold(s[i:], "private key") {
				return true
			}
		case 't':
			if hasFold(s[i:], "token") {
				return true
			}
		case 's':
			if hasFold(s[i:], "secret") {
				return true
			}
		case 'k':
			if hasFold(s[i:], "key") {
				return true
			}
		case 'a':
			if hasFold(s[i:], "akia") {
				return true
			}
		case 'g':
			if hasFold(s[i:], "gh") {
				return true
			}
		case '$' | 0x20:
			if s[i] == '$' {
				return true
			}
		case ':' | 0x20:
			if s[i] == ':' && strings.HasPrefix(s[i:], "://") {
				return true
			}
		}
	}
	return false
}

// hasFold reports whether s starts with the word w, in any case.
func hasFold(s, w string) bool {
	return len(s) >= len(w) && strings.EqualFold(s[:len(w)], w)
}

// Writer passes on what is written to it a line at a time, each line
// redacted: for a stream that also carries what is not a diagnostic (a
// flag's value in a usage error, a command line).
type Writer struct {
	w   io.Writer
	buf []byte
}

// NewWriter redacts what it passes on to w. Flush writes a last line
// that has no newline.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (r *Writer) Write(p []byte) (int, error) {
	r.buf = append(r.buf, p...)
	for {
		i := bytes.IndexByte(r.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		if _, err := io.WriteString(r.w, Redact(string(r.buf[:i+1]))); err != nil {
			return len(p), err
		}
		r.buf = r.buf[i+1:]
	}
}

// Flush writes what is left.
func (r *Writer) Flush() error {
	if len(r.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(r.w, Redact(string(r.buf)))
	r.buf = nil
	return err
}
