package jsonnet

import (
	"errors"
	"fmt"
	"strings"

	jsonnet "github.com/google/go-jsonnet"
	"github.com/google/go-jsonnet/ast"
	"github.com/google/go-jsonnet/toolutils"

	"github.com/virtc/virtc/internal/diag"
)

// staticError is go-jsonnet's (internal) error of parsing and static
// analysis, which knows its place.
type staticError interface {
	error
	Loc() ast.LocationRange
}

// locatedError is virtc's own error at a place of a Jsonnet file.
type locatedError struct {
	loc ast.LocationRange
	msg string
}

func (e *locatedError) Error() string          { return e.msg }
func (e *locatedError) Loc() ast.LocationRange { return e.loc }

// tailstrictMsg explains why tailstrict is refused: go-jsonnet runs a tail
// call on the Go stack without counting it against the stack limit, so a
// runaway tailstrict recursion would crash virtc instead of stopping.
const tailstrictMsg = "tailstrict is not accepted: virtc cannot bound the depth of tail calls (remove it; recursion is then limited like any other call)"

// tailstrict finds the first call marked tailstrict in a parsed file.
func tailstrict(root ast.Node) (ast.LocationRange, bool) {
	var found *ast.LocationRange
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		if n == nil || found != nil {
			return
		}
		if a, ok := n.(*ast.Apply); ok && a.TailStrict {
			found = a.Loc()
			return
		}
		for _, c := range toolutils.Children(n) {
			walk(c)
		}
	}
	walk(root)
	if found == nil {
		return ast.LocationRange{}, false
	}
	return *found, true
}

// report turns an evaluation error into a diagnostic located in the user's
// files: the innermost frame of the stack that is in one of them. When the
// error arose in the embedded or standard library, the message says where.
func (o Options) report(file string, imp *importer, err error, diags *diag.List) {
	var le *limitError
	var re jsonnet.RuntimeError
	var se staticError
	switch {
	case errors.As(err, &le):
		diags.Errorf(diag.Pos{File: file}, "", "%s", le.msg)
	case errors.As(err, &re):
		if se, ok := imp.placedError(re.Msg); ok {
			o.report(file, imp, se, diags)
			return
		}
		pos, where := locate(file, imp, re.StackTrace)
		msg := strings.TrimSuffix(re.Msg, ".")
		if msg == "max stack frames exceeded" {
			msg = fmt.Sprintf("calls nested deeper than %d, the stack limit (a runaway recursion?)", o.maxStack())
		}
		diags.Errorf(pos, "", "evaluation failed: %s%s", msg, where)
	case errors.As(err, &se):
		loc := se.Loc()
		pos := diag.Pos{File: file}
		if loc.IsSet() && imp.isUser(loc.FileName) {
			pos = diag.Pos{File: loc.FileName, Line: loc.Begin.Line, Col: loc.Begin.Column}
		}
		msg := se.Error()
		if loc.IsSet() {
			msg = strings.TrimPrefix(msg, loc.String()+" ")
		}
		if _, ours := se.(*locatedError); !ours {
			msg = "invalid Jsonnet: " + msg
		}
		diags.Errorf(pos, "", "%s", msg)
	default:
		diags.Errorf(diag.Pos{File: file}, "", "evaluation failed: %v", err)
	}
}

// locate finds the innermost frame in a user file, and describes the
// innermost frame when it is elsewhere (the embedded or standard library).
func locate(file string, imp *importer, trace []jsonnet.TraceFrame) (diag.Pos, string) {
	where := ""
	for i := len(trace) - 1; i >= 0; i-- {
		loc := trace[i].Loc
		if !loc.IsSet() {
			continue
		}
		if imp.isUser(loc.FileName) {
			return diag.Pos{File: loc.FileName, Line: loc.Begin.Line, Col: loc.Begin.Column}, where
		}
		if where == "" && loc.FileName != "" {
			where = fmt.Sprintf(" (at %s:%d:%d)", loc.FileName, loc.Begin.Line, loc.Begin.Column)
		}
	}
	return diag.Pos{File: file}, where
}
