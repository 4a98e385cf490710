package rules

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// celString quotes s as a CEL string literal, in single quotes (the JSON
// of a network attachment's config keeps its double quotes unescaped).
func celString(s string) string {
	return "'" + celEscaper.Replace(s) + "'"
}

// celEscaper escapes a CEL single-quoted string literal (built once, on
// first use: strings.Replacer builds its tables lazily).
var celEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`)

// celList writes a list of strings as a CEL list literal.
func celList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = celString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// celMap writes a map of strings as a CEL map literal, keys sorted.
func celMap(m map[string]string) string { return celMapOf(m, celString) }

// celMapOf writes a map as a CEL map literal, keys sorted, each value as
// value writes it.
func celMapOf[V any](m map[string]V, value func(V) string) string {
	keys := slices.Sorted(maps.Keys(m))
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = celString(k) + ": " + value(m[k])
	}
	return "{" + strings.Join(q, ", ") + "}"
}

// celShapes writes inline sizes as a CEL map from the size's name to
// "sockets/cores/threads/guest" (a CEL map literal's values share a type).
func celShapes(shapes []InlineShape) string {
	m := map[string]string{}
	for _, s := range shapes {
		m[s.Name] = fmt.Sprintf("%d/%d/%d/%s", s.Sockets, s.Cores, s.Threads, s.Guest)
	}
	return celMap(m)
}

// celPoolLists writes, per pool (by name), one of its lists as a CEL map.
func celPoolLists(pools []PoolPlacement, list func(PoolPlacement) []string) string {
	q := make([]string, len(pools))
	for i, p := range pools {
		q[i] = celString(p.Name) + ": " + celList(list(p))
	}
	return "{" + strings.Join(q, ", ") + "}"
}

// celMapOfLists writes a map of string lists as a CEL map literal, keys
// sorted.
func celMapOfLists(m map[string][]string) string { return celMapOf(m, celList) }

// celValue writes a JSON value (what an object's field holds in the API
// server's eyes) as a CEL literal: objects as maps with sorted keys,
// numbers as CEL writes integers when they are whole.
func celValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprint(x)
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprint(int64(x))
		}
		return fmt.Sprint(x)
	case json.Number:
		return x.String()
	case string:
		return celString(x)
	case []any:
		// dyn(): the API server's CEL wants a literal's entries of one
		// type (HomogeneousAggregateLiterals).
		q := make([]string, len(x))
		for i, e := range x {
			q[i] = "dyn(" + celValue(e) + ")"
		}
		return "[" + strings.Join(q, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		q := make([]string, len(keys))
		for i, k := range keys {
			q[i] = celString(k) + ": dyn(" + celValue(x[k]) + ")"
		}
		return "{" + strings.Join(q, ", ") + "}"
	}
	panic(fmt.Sprintf("celValue: %T", v))
}

// jsonValue is a Go value as the API server holds it: its JSON form
// decoded into maps, lists and scalars.
func jsonValue(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var x any
	if err := json.Unmarshal(data, &x); err != nil {
		panic(err)
	}
	return x
}

// cdiActCEL is the CEL test of cdiActKey on the annotation key v.
func cdiActCEL(v string) string {
	var or []string
	for _, p := range cdiActKeys {
		if strings.HasSuffix(p, ".") {
			or = append(or, v+".startsWith("+celString(p)+")")
		} else {
			or = append(or, v+" == "+celString(p))
		}
	}
	return "(" + strings.Join(or, " || ") + ")"
}

// keptCEL is true when the write keeps the field at path (a dotted path
// from the object's root) as the object already had it.
func keptCEL(path string) string {
	parts := strings.Split(path, ".")
	guard := []string{"oldObject != null"}
	for i := range parts {
		guard = append(guard, "has(oldObject."+strings.Join(parts[:i+1], ".")+")")
	}
	return "(" + strings.Join(guard, " && ") + " && oldObject." + path + " == object." + path + ")"
}

// revisionKeptCEL is true when a VM has no spec.<matcher>.revisionName
// or keeps the one it had: KubeVirt records the revision itself, and uses
// a revision a writer names without checking that it is the named
// instance type's or preference's (KubeVirt v1.8.4
// pkg/instancetype/find/revision.go).
func revisionKeptCEL(matcher string) string {
	return "(!has(object.spec." + matcher + ".revisionName) || " + keptCEL("spec."+matcher+".revisionName") + ")"
}

// CEL is the rule's validation: its Expression, or, for a rule that judges
// changes, the Expression of a write that changes a field it reads.
func (g Guardrail) CEL() string {
	if !g.Changes || len(g.Reads) == 0 {
		return g.Expression
	}
	return "(" + sameCEL(g.Reads) + ") || (" + g.Expression + ")"
}

// sameCEL is true for an update that keeps the fields (a list from its
// first entry on: the whole list): CEL's optional selection compares what
// the object had there with what it has, absent or not.
func sameCEL(reads []Read) string {
	var paths []string
	for _, r := range reads {
		p, _, _ := strings.Cut(r.Object, "[*]")
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	// A path inside another compared path is compared with it.
	paths = slices.DeleteFunc(paths, func(p string) bool {
		return slices.ContainsFunc(paths, func(q string) bool { return q != p && strings.HasPrefix(p, q+".") })
	})
	out := []string{"oldObject != null"}
	for _, p := range paths {
		opt := ".?" + strings.ReplaceAll(p, ".", ".?")
		out = append(out, "oldObject"+opt+" == object"+opt)
	}
	return strings.Join(out, " && ")
}

// celMapOfInts writes a map of integer lists as a CEL map literal, keys
// sorted.
func celMapOfInts(m map[string][]int64) string {
	return celMapOf(m, func(ints []int64) string {
		vs := make([]string, len(ints))
		for j, v := range ints {
			vs[j] = fmt.Sprint(v)
		}
		return "[" + strings.Join(vs, ", ") + "]"
	})
}
