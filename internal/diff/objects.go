package diff

import (
	"bytes"
	"cmp"
	"reflect"
	"slices"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/par"
)

// objectKey identifies a generated object across the two sides.
type objectKey struct {
	APIVersion, Kind, Namespace, Name string
}

func keyOf(o emit.Object) objectKey {
	return objectKey{o.APIVersion, o.Kind, o.Namespace, o.Name}
}

// objectDiff is one object of either side with its status.
type objectDiff struct {
	Object
	// base and head are the object's manifests ("" when absent).
	base, head string
	// baseObj and headObj are the objects (nil when absent).
	baseObj, headObj *emit.Object
}

// specChanged reports whether the object's spec differs between the sides.
func (d objectDiff) specChanged() bool {
	if d.baseObj == nil || d.headObj == nil {
		return false
	}
	a, errA := emit.Generic(d.baseObj.Body)
	b, errB := emit.Generic(d.headObj.Body)
	return errA != nil || errB != nil || !reflect.DeepEqual(a["spec"], b["spec"])
}

// compareObjects pairs the objects of both sides by key and diffs their
// manifests. The result is in output order: emit's kind order, then
// namespace and name. basePieces and headPieces are the objects'
// manifests as compile's Options.Pieces serialized them (nil: serialize
// them here). An object whose bytes are equal on both sides is unchanged
// and costs one comparison: only the objects that differ keep their
// manifests and get a unified diff.
func compareObjects(base, head []emit.Object, basePieces, headPieces [][]byte) ([]objectDiff, error) {
	var err error
	if basePieces == nil {
		if basePieces, err = pieces(base); err != nil {
			return nil, err
		}
	}
	if headPieces == nil {
		if headPieces, err = pieces(head); err != nil {
			return nil, err
		}
	}
	type pair struct {
		obj                emit.Object
		base, head         *emit.Object
		baseBody, headBody []byte
	}
	byKey := make(map[objectKey]*pair, max(len(base), len(head)))
	var keys []objectKey
	add := func(o *emit.Object) *pair {
		k := keyOf(*o)
		p, ok := byKey[k]
		if !ok {
			p = &pair{obj: *o}
			byKey[k] = p
			keys = append(keys, k)
		}
		return p
	}
	for i := range base {
		p := add(&base[i])
		p.base, p.baseBody = &base[i], basePieces[i]
	}
	for i := range head {
		p := add(&head[i])
		p.head, p.headBody = &head[i], headPieces[i]
	}
	objs := make([]emit.Object, len(keys))
	for i, k := range keys {
		objs[i] = byKey[k].obj
	}
	emit.Sort(objs)
	// emit.Sort orders by kind, namespace and name; two API versions of
	// one kind and name need the version to keep the order total.
	slices.SortStableFunc(objs, func(a, b emit.Object) int {
		if a.Kind != b.Kind || a.Namespace != b.Namespace || a.Name != b.Name {
			return 0
		}
		return cmp.Compare(a.APIVersion, b.APIVersion)
	})

	out := make([]objectDiff, len(objs))
	par.For(len(objs), func(i int) {
		o := objs[i]
		p := byKey[keyOf(o)]
		d := objectDiff{Object: Object{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}, baseObj: p.base, headObj: p.head}
		switch {
		case p.base == nil:
			d.Status = Added
		case p.head == nil:
			d.Status = Removed
		case bytes.Equal(p.baseBody, p.headBody):
			d.Status = Unchanged
		default:
			d.Status = Changed
		}
		if d.Status != Unchanged {
			d.base, d.head = string(p.baseBody), string(p.headBody)
			d.Diff = Unified(d.base, d.head)
		}
		out[i] = d
	})
	return out, nil
}

// pieces serializes each object as virtc build prints it.
func pieces(objs []emit.Object) ([][]byte, error) {
	return emit.WriteEach(objs)
}
