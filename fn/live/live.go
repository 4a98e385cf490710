// Package live reads objects exported from a cluster (`oc get vm,dv,pvc,nad
// -n NS -o yaml`: a List, or a stream of documents) and compares what virtc
// would apply with them.
//
// The comparison looks only at the fields virtc sets, as Argo CD's
// server-side diff does (argo-cd v3.6.1 gitops-engine/pkg/diff/diff.go:
// serverSideDiff compares the live object with the dry-run result of
// applying the desired fields, and removeWebhookMutation reverts what no
// field of Argo CD's manager set to the live values). A live object carries fields nobody wrote in Git:
// status, managedFields and server metadata (uid, resourceVersion,
// creationTimestamp, generation), and the defaults of mutating webhooks
// and controllers (KubeVirt v1.8.4 pkg/virt-api/webhooks/mutating-webhook/
// mutators/vm-mutator.go: firmware uuid and serial on create, machine type,
// architecture; the VM controller the instancetype's and preference's
// revisionName; no default kind, which neither the mutator nor the CRD
// writes; CDI's
// defaults on DataVolumes and PVCs such as volumeName). Applying virtc's
// manifest leaves such fields as they are, so they are not differences:
//
//   - in a map, only the keys virtc sets are compared; other keys are the
//     server's or another tool's and stay;
//   - a list is atomic in KubeVirt's and Kubernetes' schemas for the lists
//     virtc writes (disks, interfaces, volumes, networks, access modes):
//     applying it replaces the live list, so its elements must be equal as
//     a whole, every key of either side (null values aside, which the API
//     server drops);
//   - quantities are equal when they are the same amount (1Gi and 1024Mi).
package live

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	sigsyaml "sigs.k8s.io/yaml"
)

// Object is one live object, cleaned of what the server alone writes.
type Object struct {
	APIVersion, Kind, Namespace, Name string
	// Body is the object as JSON-like values (json.Number for numbers).
	Body map[string]any
	// File is where it was read.
	File string
}

// Ref is "Kind namespace/name".
func (o Object) Ref() string { return o.Kind + " " + o.Namespace + "/" + o.Name }

// serverMetadata are metadata fields the API server sets.
var serverMetadata = []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// Read reads exports from files, "-" meaning r.
func Read(paths []string, r io.Reader) ([]Object, error) {
	var out []Object
	for _, p := range paths {
		var data []byte
		var err error
		if p == "-" {
			data, err = io.ReadAll(r)
		} else {
			data, err = os.ReadFile(p)
		}
		if err != nil {
			return nil, err
		}
		objs, err := Parse(data, p)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	slices.SortStableFunc(out, func(a, b Object) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// Parse splits a YAML stream into objects, opening Lists.
func Parse(data []byte, file string) ([]Object, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []Object
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		doc, err := yaml.Marshal(&node)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		body, err := generic(doc)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, node.Line, err)
		}
		if body == nil {
			continue
		}
		items := []map[string]any{body}
		if kind, _ := body["kind"].(string); strings.HasSuffix(kind, "List") {
			items = nil
			list, _ := body["items"].([]any)
			for _, it := range list {
				if m, ok := it.(map[string]any); ok {
					items = append(items, m)
				}
			}
		}
		for _, it := range items {
			o := clean(it)
			o.File = file
			if o.Kind == "" || o.Name == "" {
				return nil, fmt.Errorf("%s:%d: an object without kind or metadata.name", file, node.Line)
			}
			out = append(out, o)
		}
	}
	return out, nil
}

func generic(doc []byte) (map[string]any, error) {
	js, err := sigsyaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// clean drops status and server metadata.
func clean(m map[string]any) Object {
	delete(m, "status")
	meta, _ := m["metadata"].(map[string]any)
	for _, k := range serverMetadata {
		delete(meta, k)
	}
	o := Object{Body: m}
	o.APIVersion, _ = m["apiVersion"].(string)
	o.Kind, _ = m["kind"].(string)
	o.Namespace, _ = meta["namespace"].(string)
	o.Name, _ = meta["name"].(string)
	return o
}

// Difference is a field virtc sets that has another value on the live
// object.
type Difference struct {
	// Path is the field: spec.template.spec.domain.devices.disks,
	// metadata.labels["virtc.dev/vm"].
	Path string
	// Desired and Live are the values (nil when absent).
	Desired, Live any
	// Removed: a field the live object's last-applied configuration has
	// and virtc's manifest lacks, which kubectl apply deletes.
	Removed bool
}

// Compare lists the differences between what virtc applies and the live
// object, in path order.
func Compare(desired, live map[string]any) []Difference {
	var out []Difference
	compareMap("", desired, live, &out)
	return out
}

// JoinPath appends a map key to a field path, quoting keys that hold a dot
// or a slash (labels, annotations): metadata.labels["virtc.dev/vm"].
func JoinPath(path, key string) string {
	if strings.ContainsAny(key, "./") {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func compareMap(path string, desired, live map[string]any, out *[]Difference) {
	for _, k := range sortedKeys(desired) {
		d := desired[k]
		l, ok := live[k]
		p := JoinPath(path, k)
		if d == nil {
			continue
		}
		dm, dIsMap := d.(map[string]any)
		if (!ok || l == nil) && dIsMap {
			// Each key on its own: an empty map sets nothing, and labels
			// are told apart by key.
			compareMap(p, dm, map[string]any{}, out)
			continue
		}
		if !ok || l == nil {
			*out = append(*out, Difference{Path: p, Desired: d})
			continue
		}
		lm, lIsMap := l.(map[string]any)
		if dIsMap && lIsMap {
			compareMap(p, dm, lm, out)
			continue
		}
		if !Equal(d, l) {
			*out = append(*out, Difference{Path: p, Desired: d, Live: l})
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Equal compares two values as a whole (the elements of an atomic list):
// every key of either side, nulls aside, quantities by amount.
func Equal(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for _, k := range unionKeys(av, bv) {
			if !Equal(av[k], bv[k]) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !Equal(av[i], bv[i]) {
				return false
			}
		}
		return true
	case string:
		bv, ok := b.(string)
		if !ok {
			return sameNumber(av, b)
		}
		return av == bv || sameQuantity(av, bv)
	case json.Number:
		return sameNumber(string(av), b)
	}
	return reflect.DeepEqual(a, b)
}

func unionKeys(a, b map[string]any) []string {
	var keys []string
	for k, v := range a {
		if v != nil {
			keys = append(keys, k)
		}
	}
	for k, v := range b {
		if _, dup := a[k]; !dup && v != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func sameNumber(a string, b any) bool {
	switch bv := b.(type) {
	case json.Number:
		return sameQuantity(a, string(bv))
	case string:
		return sameQuantity(a, bv)
	}
	return false
}

func sameQuantity(a, b string) bool {
	qa, errA := resource.ParseQuantity(a)
	qb, errB := resource.ParseQuantity(b)
	return errA == nil && errB == nil && qa.Cmp(qb) == 0
}
