package rules

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/parser"
	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// TestReadsDeclared: the object fields a guardrail's CEL reads (its
// expression and message, through the policy's variables) are the fields
// its Reads declare, whose intent fields the compile's check reads: a rule
// that reads a field of the object its compile-time check does not know of
// fails here. Found by walking the parsed CEL: a field selected from
// object or oldObject, or from a variable, a list entry or a map key that
// stands for one, is read.
func TestReadsDeclared(t *testing.T) {
	vars := map[string]string{}
	for _, v := range policyVariables(Allowances{}) {
		vars[v.Name] = v.Expression
	}
	r := &reader{vars: vars, memo: map[string]*denotation{}}
	for _, g := range Guardrails {
		t.Run(g.Name, func(t *testing.T) {
			var reads []string
			for _, text := range []string{g.CEL(), g.Message} {
				reads = append(reads, r.reads(t, text)...)
			}
			for _, p := range reads {
				if !declared(g.Reads, p) {
					t.Errorf("reads %s, which its Reads do not declare", p)
				}
			}
			for _, d := range g.Reads {
				if !slices.ContainsFunc(reads, func(p string) bool { return within(p, norm(d.Object)) || within(norm(d.Object), p) }) {
					t.Errorf("declares %s, which its CEL does not read", d.Object)
				}
			}
		})
	}
}

// everyRule are the fields any rule reads to say which object it judges
// (variables where, name, vmName): not a rule's own.
var everyRule = []string{"metadata.name", "metadata.labels"}

// declared reports whether a read is declared: at or below a declared
// field, or above one (a has() on the way to it reads no value of its own).
func declared(reads []Read, p string) bool {
	if slices.ContainsFunc(everyRule, func(e string) bool { return within(p, e) || within(e, p) }) {
		return true
	}
	return slices.ContainsFunc(reads, func(r Read) bool { return within(p, norm(r.Object)) || within(norm(r.Object), p) })
}

// within reports whether path p lies at or below prefix.
func within(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+".")
}

// norm drops list markers: spec.a[*].b is spec.a.b.
func norm(p string) string { return strings.ReplaceAll(p, "[*]", "") }

// denotation is what an expression stands for: object paths (lists' entries
// with a trailing "@" when the value is a list built of them), and the
// paths it reads.
type denotation struct {
	paths []string
	reads []string
}

type reader struct {
	vars map[string]string
	memo map[string]*denotation
}

func (r *reader) parse(t *testing.T, text string) ast.Expr {
	t.Helper()
	p, err := parser.NewParser(parser.Macros(parser.AllMacros...), parser.EnableOptionalSyntax(true))
	if err != nil {
		t.Fatal(err)
	}
	a, errs := p.Parse(common.NewTextSource(text))
	if len(errs.GetErrors()) > 0 {
		t.Fatalf("%s: %v", text, errs.ToDisplayString())
	}
	return a.Expr()
}

// reads are the object paths an expression reads, normalized.
func (r *reader) reads(t *testing.T, text string) []string {
	d := r.eval(t, r.parse(t, text), map[string][]string{})
	var out []string
	for _, p := range d.reads {
		if n := norm(strings.TrimSuffix(p, "@")); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// variable is what a policy variable stands for.
func (r *reader) variable(t *testing.T, name string) *denotation {
	if d, ok := r.memo[name]; ok {
		return d
	}
	text, ok := r.vars[name]
	if !ok {
		t.Fatalf("no variable %s", name)
	}
	r.memo[name] = &denotation{}
	d := r.eval(t, r.parse(t, text), map[string][]string{})
	r.memo[name] = d
	return d
}

func (r *reader) eval(t *testing.T, e ast.Expr, env map[string][]string) *denotation {
	out := &denotation{}
	add := func(d *denotation) {
		out.reads = append(out.reads, d.reads...)
	}
	switch e.Kind() {
	case ast.IdentKind:
		switch n := e.AsIdent(); n {
		case "object", "oldObject":
			out.paths = []string{""}
		default:
			out.paths = env[n]
		}
	case ast.SelectKind:
		s := e.AsSelect()
		if s.Operand().Kind() == ast.IdentKind && s.Operand().AsIdent() == "variables" {
			d := r.variable(t, s.FieldName())
			return &denotation{paths: d.paths, reads: d.reads}
		}
		base := r.eval(t, s.Operand(), env)
		add(base)
		out.paths = selectField(base.paths, s.FieldName())
		out.reads = append(out.reads, out.paths...)
	case ast.CallKind:
		c := e.AsCall()
		var args []*denotation
		if c.IsMemberFunction() {
			args = append(args, r.eval(t, c.Target(), env))
		}
		for _, a := range c.Args() {
			args = append(args, r.eval(t, a, env))
		}
		for _, a := range args {
			add(a)
		}
		switch c.FunctionName() {
		case operators.OptSelect:
			name := c.Args()[1].AsLiteral().Value().(string)
			out.paths = selectField(args[0].paths, name)
			out.reads = append(out.reads, out.paths...)
		case operators.Index, operators.OptIndex:
			out.paths = entries(args[0].paths)
			out.reads = append(out.reads, out.paths...)
		case operators.Conditional:
			out.paths = append(slices.Clone(args[1].paths), args[2].paths...)
		case operators.Add, "orValue", "value":
			for _, a := range args {
				out.paths = append(out.paths, a.paths...)
			}
		}
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			d := r.eval(t, el, env)
			add(d)
			for _, p := range d.paths {
				out.paths = append(out.paths, strings.TrimSuffix(p, "@")+"@")
			}
		}
	case ast.MapKind:
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			add(r.eval(t, me.Key(), env))
			add(r.eval(t, me.Value(), env))
		}
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		rng := r.eval(t, c.IterRange(), env)
		add(rng)
		inner := map[string][]string{}
		for k, v := range env {
			inner[k] = v
		}
		inner[c.IterVar()] = entries(rng.paths)
		init := r.eval(t, c.AccuInit(), inner)
		add(init)
		inner[c.AccuVar()] = init.paths
		step := r.eval(t, c.LoopStep(), inner)
		add(step)
		inner[c.AccuVar()] = append(slices.Clone(init.paths), step.paths...)
		add(r.eval(t, c.LoopCondition(), inner))
		res := r.eval(t, c.Result(), inner)
		add(res)
		out.paths = res.paths
	}
	return out
}

// selectField selects a field of each path.
func selectField(paths []string, name string) []string {
	var out []string
	for _, p := range paths {
		p = strings.TrimSuffix(p, "@")
		if p == "" {
			out = append(out, name)
		} else {
			out = append(out, p+"."+name)
		}
	}
	return out
}

// entries are the entries (or keys) of each path's list or map: a built
// list's are its paths.
func entries(paths []string) []string {
	var out []string
	for _, p := range paths {
		if q, ok := strings.CutSuffix(p, "@"); ok {
			out = append(out, q)
		} else {
			out = append(out, p+"[*]")
		}
	}
	return out
}

var _ = admissionv1.Validation{}
