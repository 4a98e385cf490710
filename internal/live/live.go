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
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/source"
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
	// The intents' parser reads the plain YAML that tools print (oc get
	// -o yaml) into the nodes yaml.v3 builds, in a fraction of its time
	// and memory; anything else goes to yaml.v3.
	next := func() (yaml.Node, error) { return yaml.Node{}, io.EOF }
	if docs, ok := source.FastParse(data); ok {
		next = func() (yaml.Node, error) {
			if len(docs) == 0 {
				return yaml.Node{}, io.EOF
			}
			n := docs[0]
			docs = docs[1:]
			return yaml.Node{Kind: yaml.DocumentNode, Line: n.Line, Column: 1, Content: []*yaml.Node{n}}, nil
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		next = func() (yaml.Node, error) {
			var node yaml.Node
			err := dec.Decode(&node)
			return node, err
		}
	}
	var out []Object
	for {
		node, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		body, ok := fastGeneric(&node)
		if !ok {
			doc, err := yaml.Marshal(&node)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			body, err = generic(doc)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, node.Line, err)
			}
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
	return emit.DecodeGeneric(js)
}

// fastGeneric is generic(yaml.Marshal(doc)) read straight from the nodes:
// mappings with string keys, sequences, and scalars of an obvious value
// (strings that YAML 1.1 and 1.2 both read as strings, decimal integers
// that fit in 64 bits, booleans, nulls) become their JSON values; any
// other scalar (a float, a timestamp, a plain string YAML 1.1 reads as
// something else) takes the long way on its own. A document with anchors,
// aliases, explicit tags, a key that is not an obvious string, duplicate
// keys, or that is not a mapping returns false, and the caller takes the
// long way for all of it: yaml.v3 writes the document, sigs.k8s.io/yaml
// turns it into JSON and encoding/json decodes that. The long way was most of virtc diff
// --live's and virtc import's time on a fleet's export (a 45 MB export of
// 10,000 VMs went through two YAML libraries and JSON). The test holds
// both ways equal on every form of value.
func fastGeneric(doc *yaml.Node) (map[string]any, bool) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, false
	}
	v, ok := nodeValue(doc.Content[0])
	if !ok {
		return nil, false
	}
	return v.(map[string]any), true
}

func nodeValue(n *yaml.Node) (any, bool) {
	if n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
		return nil, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		if n.Tag != "!!map" || len(n.Content)%2 != 0 {
			return nil, false
		}
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Anchor != "" {
				return nil, false
			}
			if k.Style&yaml.TaggedStyle != 0 {
				return nil, false
			}
			// A key is an obvious string or the document goes the long
			// way (<< merges, n is false).
			if key, ok := scalarValue(k); !ok || key != k.Value {
				return nil, false
			}
			if _, dup := m[k.Value]; dup {
				return nil, false
			}
			v, ok := nodeValue(n.Content[i+1])
			if !ok {
				return nil, false
			}
			m[k.Value] = v
		}
		return m, true
	case yaml.SequenceNode:
		if n.Tag != "!!seq" {
			return nil, false
		}
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, ok := nodeValue(c)
			if !ok {
				return nil, false
			}
			l[i] = v
		}
		return l, true
	case yaml.ScalarNode:
		if v, ok := scalarValue(n); ok {
			return v, true
		}
		// A scalar of another form (a float, a timestamp, a plain
		// string YAML 1.1 reads as something else): the long way, for
		// it alone. What the long way makes of a scalar depends on the
		// scalar only (it is written, and read back, as a value).
		doc, err := yaml.Marshal(&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: "v"}, n}})
		if err != nil {
			return nil, false
		}
		m, err := generic(doc)
		if err != nil || m == nil {
			return nil, false
		}
		v, ok := m["v"]
		return v, ok
	}
	return nil, false
}

// scalarValue is the value of a scalar of an obvious form (nodeValue).
func scalarValue(n *yaml.Node) (any, bool) {
	switch n.Tag {
	case "!!str":
		// yaml.v3 writes a node's plain scalar as it is, and
		// sigs.k8s.io/yaml's yaml.v2 reads it by YAML 1.1 (yes, on,
		// n are booleans there, 8911107684e110624140 a float): a
		// plain string is obvious only when YAML 1.1 reads it as
		// a string too (plainString).
		return n.Value, utf8.ValidString(n.Value) && (n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 || plainString(n.Value))
	case "!!int":
		return json.Number(n.Value), decimal(n.Value)
	case "!!bool":
		switch strings.ToLower(n.Value) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	case "!!null":
		switch n.Value {
		case "", "~", "null", "Null", "NULL":
			return nil, true
		}
	}
	return nil, false
}

// plainString reports whether a plain scalar is a string by YAML 1.1's
// rules as sigs.k8s.io/yaml's yaml.v2 applies them (v2.4.4 resolve.go,
// resolve) as well as by yaml.v3's: none of YAML 1.1's words (booleans
// such as yes, on, n; nulls; .inf, .nan), and, if it starts as a number
// would, none of the forms resolve tries (a timestamp's YYYY- start, an
// integer of any base with underscores, a float). The checks are
// resolve's own, or stricter.
func plainString(s string) bool {
	if s == "" || yaml11Words[s] {
		return false
	}
	switch c := s[0]; {
	case c == '.':
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case c == '+' || c == '-' || '0' <= c && c <= '9':
		if len(s) > 4 && s[4] == '-' && strings.IndexFunc(s[:4], func(r rune) bool { return r < '0' || r > '9' }) < 0 {
			return false // perhaps a timestamp
		}
		plain := strings.ReplaceAll(s, "_", "")
		if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return false
		}
		if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return false
		}
		if yamlStyleFloat().MatchString(plain) {
			return false
		}
		if b, ok := strings.CutPrefix(plain, "0b"); ok {
			_, err := strconv.ParseUint(b, 2, 64)
			return err != nil
		}
		if b, ok := strings.CutPrefix(plain, "-0b"); ok {
			_, err := strconv.ParseInt("-"+b, 2, 64)
			return err != nil
		}
		return true
	}
	return true
}

// yamlStyleFloat is yaml.v2's float form (resolve.go).
var yamlStyleFloat = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
})

// yaml11Words are the plain scalars yaml.v2 reads by name.
var yaml11Words = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"true": true, "True": true, "TRUE": true, "on": true, "On": true, "ON": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"false": true, "False": true, "FALSE": true, "off": true, "Off": true, "OFF": true,
	"~": true, "null": true, "Null": true, "NULL": true,
	".nan": true, ".NaN": true, ".NAN": true, ".inf": true, ".Inf": true, ".INF": true,
	"+.inf": true, "+.Inf": true, "+.INF": true, "-.inf": true, "-.Inf": true, "-.INF": true,
	"<<": true,
}

// decimal reports whether s is a decimal integer written as JSON writes
// it (no sign but a minus, no leading zero, no minus zero) that fits in
// an int64.
func decimal(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(digits) > 18 || digits[0] == '0' && (len(digits) > 1 || len(s) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
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
	return slices.Sorted(maps.Keys(m))
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
