package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Object is one manifest of a YAML stream, as JSON data.
type Object struct {
	APIVersion, Kind, Namespace, Name string
	// Doc is the manifest decoded from JSON (maps, slices, float64, string,
	// bool, nil), comparable with what the API server returns.
	Doc map[string]any
}

// Group is the API group of the object ("" for the core group).
func (o Object) Group() string {
	if i := strings.Index(o.APIVersion, "/"); i >= 0 {
		return o.APIVersion[:i]
	}
	return ""
}

// Key identifies the object regardless of its API version.
func (o Object) Key() string {
	return o.Group() + "/" + o.Kind + "/" + o.Namespace + "/" + o.Name
}

func (o Object) String() string {
	if o.Namespace == "" {
		return fmt.Sprintf("%s %s %s", o.APIVersion, o.Kind, o.Name)
	}
	return fmt.Sprintf("%s %s %s/%s", o.APIVersion, o.Kind, o.Namespace, o.Name)
}

// ParseObjects splits a YAML stream into objects, keeping their order.
// Empty documents are skipped; a document without apiVersion, kind or
// metadata.name is an error.
func ParseObjects(stream []byte) ([]Object, error) {
	dec := yaml.NewDecoder(bytes.NewReader(stream))
	var out []Object
	for i := 0; ; i++ {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if doc == nil {
			continue
		}
		obj, err := objectOf(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		out = append(out, obj)
	}
}

func objectOf(doc any) (Object, error) {
	data, err := json.Marshal(doc)
	if err != nil {
		return Object{}, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return Object{}, fmt.Errorf("not a mapping: %w", err)
	}
	meta, _ := m["metadata"].(map[string]any)
	str := func(v any) string { s, _ := v.(string); return s }
	o := Object{
		APIVersion: str(m["apiVersion"]),
		Kind:       str(m["kind"]),
		Namespace:  str(meta["namespace"]),
		Name:       str(meta["name"]),
		Doc:        m,
	}
	if o.APIVersion == "" || o.Kind == "" || o.Name == "" {
		return Object{}, fmt.Errorf("not a Kubernetes object (apiVersion %q, kind %q, metadata.name %q)", o.APIVersion, o.Kind, o.Name)
	}
	return o, nil
}

// Stream writes objects as a YAML stream of JSON documents, in order.
func Stream(objs []Object) ([]byte, error) {
	var b bytes.Buffer
	for _, o := range objs {
		data, err := json.Marshal(o.Doc)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(data)
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

// LiveObjects decodes `kubectl get -o json` output (one object or a List)
// into objects by Key.
func LiveObjects(data []byte) (map[string]Object, error) {
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	docs := []any{top}
	if top["kind"] == "List" {
		items, _ := top["items"].([]any)
		docs = items
	}
	out := map[string]Object{}
	for _, d := range docs {
		o, err := objectOf(d)
		if err != nil {
			return nil, err
		}
		out[o.Key()] = o
	}
	return out, nil
}

// Contains lists where got differs from want, treating want as a subset:
// every field of want must be in got with an equal value (the server adds
// defaults and metadata); lists must have the same length. Quantities the
// server writes in canonical form ("1024Mi" as "1Gi") count as equal.
func Contains(want, got any) []string {
	var diffs []string
	contains("", want, got, &diffs)
	return diffs
}

func contains(path string, want, got any, diffs *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: want an object, server has %s", orRoot(path), show(got)))
			return
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: missing on the server (want %s)", path, k, show(w[k])))
				continue
			}
			contains(path+"."+k, w[k], gv, diffs)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %s, server has %s", orRoot(path), show(want), show(got)))
			return
		}
		for i := range w {
			contains(path+"["+strconv.Itoa(i)+"]", w[i], g[i], diffs)
		}
	default:
		if reflect.DeepEqual(want, got) || sameQuantity(want, got) {
			return
		}
		*diffs = append(*diffs, fmt.Sprintf("%s: want %s, server has %s", orRoot(path), show(want), show(got)))
	}
}

func sameQuantity(a, b any) bool {
	as, ok1 := a.(string)
	bs, ok2 := b.(string)
	if !ok1 || !ok2 {
		return false
	}
	qa, err1 := resource.ParseQuantity(as)
	qb, err2 := resource.ParseQuantity(bs)
	return err1 == nil && err2 == nil && qa.Cmp(qb) == 0
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

func show(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(data) > 200 {
		return string(data[:200]) + "..."
	}
	return string(data)
}

// Comparable strips what differs between two otherwise equal objects
// created at different times: identity, timestamps, generation, status, and
// the time of each managedFields entry (the owned fields stay).
func Comparable(o Object) map[string]any {
	data, _ := json.Marshal(o.Doc)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation"} {
			delete(meta, k)
		}
		if mf, ok := meta["managedFields"].([]any); ok {
			for _, e := range mf {
				if em, ok := e.(map[string]any); ok {
					delete(em, "time")
				}
			}
		}
	}
	return m
}
