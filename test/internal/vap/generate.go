package vap

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/internal/rules"
)

// FieldAttempts are the writes a tenant could make to its VM with a field
// of KubeVirt's VirtualMachine type (kubevirt.io/api v1.8.4, read by
// reflection: every field, not the ones virtc's rules know) that virtc's
// allow list does not admit: each is set, with a value of its type, on a
// copy of vm, created as a new VM and written as an update of vm. The
// policy refuses every one (rule template-fields, or a rule of the
// field's own).
func FieldAttempts(vm map[string]any) []Attempt {
	var out []Attempt
	// entries: the type of each object on the allow list's paths (of a
	// list's entries: spec.x[]), so that an object the attempt creates on
	// the way carries what its schema requires, and an appended entry the
	// name its type keys it by.
	entries := map[string]reflect.Type{}
	var walk func(t reflect.Type, path []string, depth int)
	walk = func(t reflect.Type, path []string, depth int) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || depth > 6 {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, inline := jsonKey(f)
			if name == "-" || !f.IsExported() {
				continue
			}
			if inline {
				walk(f.Type, path, depth)
				continue
			}
			p := append(slices.Clone(path), name)
			set := sample(f.Type)
			if v, ok := valid[strings.Join(p, ".")]; ok {
				set = v
			}
			if set == nil {
				continue
			}
			switch admitted(p) {
			case outside:
				out = append(out, Attempt{Path: strings.Join(p, "."), Value: set})
			case inside:
				if f.Type.Kind() == reflect.Slice {
					p[len(p)-1] += "[]"
				}
				entries[strings.Join(p, ".")] = elemType(f.Type)
				walk(elemType(f.Type), p, depth+1)
			}
		}
	}
	walk(reflect.TypeFor[kubevirtv1.VirtualMachineSpec](), []string{"spec"}, 0)
	kept := out[:0]
	for _, a := range out {
		a.Object = withField(vm, a.Path, a.Value, entries)
		// A value the list admits after all (an empty object where it
		// wants one, bridge: {}) is no attempt.
		if len(rules.Outside(a.Object["spec"])) == 0 {
			continue
		}
		kept = append(kept, a)
	}
	return kept
}

// valid are values of the fields whose schema in KubeVirt's
// VirtualMachine CRD (v1.8.4, crd-yaml/kubevirt.io/
// kubevirt.io_virtualmachines.yaml) refuses sample's, so that the policy,
// not the schema, judges the attempt on a real API server.
var valid = map[string]any{
	// enum: Reboot, Terminate
	"spec.template.spec.domain.rebootPolicy": "Terminate",
	// "path must be absolute (start with '/')"
	"spec.template.spec.volumes[].containerPath": map[string]any{"path": "/var/run/secrets/virtc-probe"},
	// enum: kubevirt, archive
	"spec.dataVolumeTemplates[].spec.contentType": "archive",
}

// Attempt is a VM with a field the allow list does not admit.
type Attempt struct {
	Path   string
	Value  any
	Object map[string]any
}

type verdict int

const (
	inside  verdict = iota // the allow list has the field: look below it
	outside                // a field the allow list does not admit
	open                   // the allow list admits anything below it
)

// admitted places a path (list entries as name[]) on virtc's allow list,
// through rules.Outside on a probe value.
func admitted(path []string) verdict {
	probe := map[string]any{}
	cur := probe
	for _, p := range path[1 : len(path)-1] {
		name, list := strings.CutSuffix(p, "[]")
		next := map[string]any{}
		if list {
			cur[name] = []any{next}
		} else {
			cur[name] = next
		}
		cur = next
	}
	last, list := strings.CutSuffix(path[len(path)-1], "[]")
	// A value below the field tells "open" (anything admitted) from
	// "inside" (a field with its own list).
	deep := map[string]any{"virtcProbe": "x"}
	if list {
		cur[last] = []any{deep}
	} else {
		cur[last] = deep
	}
	out := rules.Outside(probe)
	full := "spec." + strings.Join(path[1:], ".")
	switch {
	case slices.Contains(out, full):
		return outside
	case len(out) == 0:
		return open
	}
	return inside
}

// elemType is the type a field's entries have (a list's element).
func elemType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t
}

// jsonKey is a field's JSON key, and whether it is inlined.
func jsonKey(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if strings.Contains(opts, "inline") || name == "" && f.Anonymous {
		return "", true
	}
	if name == "" {
		name = f.Name
	}
	return name, false
}

// sample is a value of a field's type as the API server holds it (its
// JSON form), nil for a type that has none worth writing.
func sample(t reflect.Type) any {
	switch t {
	case reflect.TypeFor[resource.Quantity](), reflect.TypeFor[*resource.Quantity]():
		return "1Gi"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "x"
	case reflect.Bool:
		return true
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64, reflect.Int8, reflect.Int16, reflect.Uint8, reflect.Uint16:
		return int64(1)
	case reflect.Float32, reflect.Float64:
		return float64(1)
	case reflect.Map:
		v := sample(t.Elem())
		if v == nil {
			return nil
		}
		return map[string]any{"x": v}
	case reflect.Slice:
		e := sample(t.Elem())
		if e == nil {
			return nil
		}
		return []any{e}
	case reflect.Struct:
		// An object with its first field set, so that it is not empty,
		// and the fields its schema requires (those without omitempty),
		// so that the API server's schema does not refuse it before the
		// policy judges it.
		out := map[string]any{}
		for _, f := range fields(t) {
			name, _ := jsonKey(f)
			required := !strings.Contains(f.Tag.Get("json"), "omitempty")
			if len(out) > 0 && !required {
				continue
			}
			if v := sample(f.Type); v != nil {
				out[name] = v
			}
		}
		return out
	case reflect.Interface:
		return nil
	}
	return nil
}

// withField is a deep copy of obj with value set at path (list entries
// path[]: an entry appended, holding only the field and the name its type
// is keyed by, name or metadata.name, so that the API server's strict
// decoding does not refuse it before the policy judges it).
func withField(obj map[string]any, path string, value any, entries map[string]reflect.Type) map[string]any {
	out := deepCopy(obj)
	parts := strings.Split(path, ".")
	var cur any = out
	for i, p := range parts {
		last := i == len(parts)-1
		name, list := strings.CutSuffix(p, "[]")
		m := cur.(map[string]any)
		if last {
			m[name] = value
			break
		}
		if list {
			// The entry is a copy of the list's first, if it has one,
			// renamed: a write as the tenant would make it, valid for the
			// schema but for the field.
			l, _ := m[name].([]any)
			entry := map[string]any{}
			if len(l) > 0 {
				if first, ok := l[0].(map[string]any); ok {
					entry = deepCopy(first)
				}
			}
			probe := fmt.Sprintf("virtc-probe-%d", i)
			switch t := entries[strings.Join(parts[:i+1], ".")]; {
			case t == nil:
			case hasKey(t, "name"):
				entry["name"] = probe
			case hasKey(t, "metadata"):
				meta, _ := entry["metadata"].(map[string]any)
				if meta == nil {
					meta = map[string]any{}
				}
				meta["name"] = probe
				entry["metadata"] = meta
			}
			m[name] = append(l, entry)
			cur = entry
			continue
		}
		next, ok := m[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			if t := entries[strings.Join(parts[:i+1], ".")]; t != nil {
				if v, ok := sample(t).(map[string]any); ok {
					next = v
				}
			}
			m[name] = next
		}
		cur = next
	}
	return out
}

// fields are a struct type's exported JSON fields, inlined ones' fields
// in their place.
func fields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		name, inline := jsonKey(f)
		switch {
		case !f.IsExported() || name == "-":
		case inline:
			out = append(out, fields(elemType(f.Type))...)
		default:
			out = append(out, f)
		}
	}
	return out
}

// hasKey tells whether a struct type has a field of that JSON key
// (inlined fields included).
func hasKey(t reflect.Type, key string) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		name, inline := jsonKey(f)
		if inline && hasKey(elemType(f.Type), key) || name == key {
			return true
		}
	}
	return false
}

func deepCopy(m map[string]any) map[string]any {
	data, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}
