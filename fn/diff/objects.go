package diff

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	"github.com/virtc/virtc/fn/emit"
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
// namespace and name.
func compareObjects(base, head []emit.Object) ([]objectDiff, error) {
	type pair struct {
		obj        emit.Object
		base, head *emit.Object
	}
	byKey := map[objectKey]*pair{}
	var keys []objectKey
	add := func(o emit.Object, side func(*pair, *emit.Object)) {
		k := keyOf(o)
		p, ok := byKey[k]
		if !ok {
			p = &pair{obj: o}
			byKey[k] = p
			keys = append(keys, k)
		}
		side(p, &o)
	}
	for _, o := range base {
		add(o, func(p *pair, o *emit.Object) { p.base = o })
	}
	for _, o := range head {
		add(o, func(p *pair, o *emit.Object) { p.head = o })
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

	out := make([]objectDiff, 0, len(objs))
	for _, o := range objs {
		p := byKey[keyOf(o)]
		d := objectDiff{Object: Object{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}, baseObj: p.base, headObj: p.head}
		var err error
		if p.base != nil {
			if d.base, err = manifest(*p.base); err != nil {
				return nil, err
			}
		}
		if p.head != nil {
			if d.head, err = manifest(*p.head); err != nil {
				return nil, err
			}
		}
		switch {
		case p.base == nil:
			d.Status = Added
		case p.head == nil:
			d.Status = Removed
		case d.base == d.head:
			d.Status = Unchanged
		default:
			d.Status = Changed
		}
		if d.Status != Unchanged {
			d.Diff = Unified(d.base, d.head)
		}
		out = append(out, d)
	}
	return out, nil
}

// manifest is the object as virtc build prints it.
func manifest(o emit.Object) (string, error) {
	data, err := emit.Write([]emit.Object{o})
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref(o.Kind, o.Namespace, o.Name), err)
	}
	return string(data), nil
}
