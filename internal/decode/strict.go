// Package decode turns YAML documents into virtc objects strictly: unknown
// fields, wrong types, duplicate keys, aliases and bad quantities are errors
// located at the offending node, and every problem of a document is reported,
// not only the first.
package decode

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

var quantityType = reflect.TypeFor[resource.Quantity]()

// maxQuantity bounds every quantity (1Pi): far beyond any disk or memory,
// and small enough that sums over a fleet cannot overflow.
const maxQuantity = 1 << 50

// wholeNumber matches integers too large for YAML to resolve as !!int.
var wholeNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-+]?[0-9]+$`) })

// forbidden are fields people try in an intent that a tenant may not set:
// they name what the platform decides instead. Keyed by Go type and field.
var forbidden = map[string]string{}

func init() {
	placement := "a VM cannot choose its nodes: placement belongs to the platform (name a worker pool of the catalog in spec.pool)"
	for _, f := range []string{"nodeSelector", "tolerations", "affinity", "nodeName", "schedulerName", "priorityClassName", "topologySpreadConstraints"} {
		forbidden["VMSpec."+f] = placement
	}
	privileged := "a VM cannot ask for privileged settings: the platform runs every VM unprivileged"
	for _, f := range []string{"privileged", "securityContext", "hostNetwork", "hostPID", "hostIPC", "serviceAccountName"} {
		forbidden["VMSpec."+f] = privileged
	}
	raw := "virtc writes the KubeVirt spec itself; describe the VM with size, image, disks and networks"
	for _, f := range []string{"domain", "template", "dataVolumeTemplates", "instancetype", "preference", "running", "volumes", "interfaces"} {
		forbidden["VMSpec."+f] = raw
	}
	forbidden["VMSpec.evictionStrategy"] = "set spec.migration (Required, IfPossible or Never) instead of the eviction strategy"
	forbidden["VMSpec.namespace"] = "a VM lives in its Tenant's namespace: set metadata.namespace"
	forbidden["ObjectMeta.ownerReferences"] = "ownership is virtc's: remove metadata.ownerReferences"
}

// field is one settable field of a struct, flattened through inline embeds.
type field struct {
	name     string
	index    []int
	required bool
	enum     []string
	pattern  *regexp.Regexp
	// hint says in words what pattern wants.
	hint string
}

var fieldCache sync.Map // reflect.Type -> []field

// Fields lists the fields of a struct type as the decoder sees them. The
// schema generator uses the same list, so schema and decoder cannot disagree.
func fields(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && opts == "inline" {
			for _, inner := range fields(sf.Type) {
				inner.index = append([]int{i}, inner.index...)
				out = append(out, inner)
			}
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := field{name: name, index: []int{i}, required: !strings.Contains(opts, "omitempty")}
		if e := sf.Tag.Get("enum"); e != "" {
			f.enum = strings.Split(e, ",")
		}
		if p := sf.Tag.Get("pattern"); p != "" {
			f.pattern = regexp.MustCompile(p)
			f.hint = sf.Tag.Get("hint")
		}
		out = append(out, f)
	}
	fieldCache.Store(t, out)
	return out
}

// decoder decodes one document.
type decoder struct {
	doc   *source.Doc
	diags *diag.List
	// kind is the document's kind, for hints.
	kind string
	// structural is set by errors that leave the object incomplete or
	// not as written (a wrong type, an unknown or missing field). Value
	// errors (enum, pattern) do not set it.
	structural bool
	// broken are the field paths of structural errors that left a value
	// unset: checks of what they cover are skipped (see diag.Covers).
	broken []string
}

// valueErrorf reports a well-formed field with a value that is not
// accepted, unless a structural error covers it: that value may only be
// unset because of it.
func (d *decoder) valueErrorf(n *yaml.Node, path, format string, args ...any) {
	for _, b := range d.broken {
		if diag.Covers(b, path) {
			return
		}
	}
	d.diags.Errorf(d.pos(n, path), path, format, args...)
}

// pos is the place of node n at path: its own line, or where the document
// as written in its file has that path (source.Doc.Lines).
func (d *decoder) pos(n *yaml.Node, path string) diag.Pos {
	pos := diag.Pos{File: d.doc.File}
	switch {
	case !d.doc.NoLines && n != nil:
		pos.Line, pos.Col = n.Line, n.Column
	case d.doc.NoLines && d.doc.Lines != nil:
		at := source.Lookup(d.doc.Lines, path)
		pos.Line, pos.Col = at.Line, at.Column
	}
	return pos
}

// warnf reports a field that is accepted but has no effect.
func (d *decoder) warnf(path, format string, args ...any) {
	d.diags.Warnf(d.pos(d.at(path), path), path, format, args...)
}

// errorf reports a structural error: the value at path is left unset.
func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	d.broken = append(d.broken, path)
	d.extraf(n, path, format, args...)
}

// extraf reports something in the document that is not part of the
// object (an unknown field): the object is not as written, but what it
// holds is complete.
func (d *decoder) extraf(n *yaml.Node, path, format string, args ...any) {
	d.structural = true
	d.diags.Errorf(d.pos(n, path), path, format, args...)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!str":
		return "a string"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	}
	return "a scalar"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// value decodes n into v. It reports whether v was set.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind == yaml.AliasNode {
		d.errorf(n, path, "YAML aliases are not accepted (write the value out)")
		return false
	}
	if n.Anchor != "" {
		d.errorf(n, path, "YAML anchors are not accepted (write the value out)")
		return false
	}
	if isNull(n) {
		return false
	}
	t := v.Type()
	if t == quantityType {
		return d.quantity(n, v, path)
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if d.value(n, p.Elem(), path) {
			v.Set(p)
			return true
		}
		return false
	case reflect.Struct:
		return d.object(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, path, "must be a list, not %s", kindName(n))
			return false
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if !d.value(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i)) && isNull(item) {
				d.errorf(item, fmt.Sprintf("%s[%d]", path, i), "must not be empty")
			}
		}
		v.Set(s)
		return true
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.errorf(n, path, "must be a mapping, not %s", kindName(n))
			return false
		}
		m := reflect.MakeMapWithSize(t, len(n.Content)/2)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if !d.key(k, path, seen) {
				continue
			}
			ev := reflect.New(t.Elem()).Elem()
			d.value(val, ev, join(path, k.Value))
			m.SetMapIndex(reflect.ValueOf(k.Value), ev)
		}
		v.Set(m)
		return true
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.errorf(n, path, "must be a string, not %s", kindName(n))
			return false
		}
		if n.Tag != "!!str" && n.Tag != "!!timestamp" && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
			d.errorf(n, path, "must be a string, not %s (quote it: %q)", kindName(n), n.Value)
			return false
		}
		v.SetString(n.Value)
		return true
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			d.errorf(n, path, "must be true or false, not %s", kindName(n))
			return false
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			d.errorf(n, path, "must be true or false")
			return false
		}
		v.SetBool(b)
		return true
	case reflect.Int64, reflect.Int32, reflect.Int:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!float" && wholeNumber().MatchString(n.Value) {
			d.errorf(n, path, "number %s is out of range", truncate(n.Value))
			return false
		}
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			d.errorf(n, path, "must be a whole number, not %s", kindName(n))
			return false
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil || i > MaxInt || i < MinInt {
			d.errorf(n, path, "number %s is out of range", truncate(n.Value))
			return false
		}
		v.SetInt(i)
		return true
	}
	panic(fmt.Sprintf("decode: unsupported field type %s", t))
}

func (d *decoder) key(k *yaml.Node, path string, seen map[string]bool) bool {
	if k.Kind != yaml.ScalarNode {
		d.errorf(k, path, "keys must be strings, not %s", kindName(k))
		return false
	}
	if k.Tag == "!!merge" {
		d.errorf(k, path, "YAML merge keys (<<) are not accepted (write the fields out)")
		return false
	}
	if seen[k.Value] {
		d.errorf(k, join(path, k.Value), "duplicate key %q", k.Value)
		return false
	}
	seen[k.Value] = true
	return true
}

func (d *decoder) object(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "must be a mapping, not %s", kindName(n))
		return false
	}
	fs := fields(v.Type())
	set := make([]bool, len(fs))
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.key(k, path, seen) {
			continue
		}
		fi := slices.IndexFunc(fs, func(f field) bool { return f.name == k.Value })
		if fi < 0 {
			if why, ok := forbidden[v.Type().Name()+"."+k.Value]; ok {
				d.valueErrorf(k, join(path, k.Value), "%s", why)
				continue
			}
			names := make([]string, len(fs))
			for j, f := range fs {
				names[j] = f.name
			}
			d.extraf(k, join(path, k.Value), "%s", diag.UnknownField(d.kind, k.Value, names))
			continue
		}
		f := fs[fi]
		fv := v.FieldByIndex(f.index)
		fp := join(path, f.name)
		// A present key counts as given even when its value is wrong: the
		// value's error is enough, "missing" would be noise.
		set[fi] = !isNull(val)
		if d.value(val, fv, fp) {
			if f.enum != nil {
				d.enum(f.enum, fv, val, fp)
			}
			if f.pattern != nil && fv.Kind() == reflect.String && !f.pattern.MatchString(fv.String()) {
				hint := f.hint
				if hint == "" {
					hint = "it must match " + f.pattern.String()
				}
				d.valueErrorf(val, fp, "invalid value %q: %s", truncate(fv.String()), hint)
			}
		}
	}
	for i, f := range fs {
		if f.required && !set[i] {
			d.errorf(n, join(path, f.name), "required field is missing")
		}
	}
	return true
}

// enum checks a string, or each string of a list, against a closed set.
func (d *decoder) enum(set []string, v reflect.Value, n *yaml.Node, path string) {
	check := func(s string, n *yaml.Node, path string) {
		if slices.Contains(set, s) {
			return
		}
		msg := fmt.Sprintf("%q is not one of %s", s, strings.Join(set, ", "))
		if near, ok := diag.Nearest(s, set); ok {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		d.valueErrorf(n, path, "%s", msg)
	}
	switch v.Kind() {
	case reflect.String:
		check(v.String(), n, path)
	case reflect.Slice:
		for i := range v.Len() {
			if i < len(n.Content) {
				check(v.Index(i).String(), n.Content[i], fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
}

func (d *decoder) quantity(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!int") {
		d.errorf(n, path, "must be a quantity such as 40Gi, not %s", kindName(n))
		return false
	}
	q, err := resource.ParseQuantity(n.Value)
	if err != nil {
		d.errorf(n, path, "invalid quantity %q (a number with a binary unit, such as 512Mi or 40Gi)", truncate(n.Value))
		return false
	}
	if q.Sign() < 0 {
		d.errorf(n, path, "quantity %q must not be negative", n.Value)
		return false
	}
	if q.CmpInt64(maxQuantity) > 0 {
		d.errorf(n, path, "quantity %q is out of range (at most 1Pi)", truncate(n.Value))
		return false
	}
	v.Set(reflect.ValueOf(q))
	return true
}

func truncate(s string) string {
	if len(s) > 100 {
		return s[:97] + "..."
	}
	return s
}
