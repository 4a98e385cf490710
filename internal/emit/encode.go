package emit

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The encoder writes a typed object straight as YAML, with the result
// Generic and the map writer would give: the object's JSON form (the same
// field names, omitempty/omitzero, embedding and Marshaler rules as
// encoding/json), keys sorted, status and empty structs dropped. Going
// through JSON text and maps cost most of a build's time; the tests compare
// both paths byte for byte.

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
	numberType        = reflect.TypeFor[json.Number]()
)

// maxDepth bounds nesting, as a guard against cyclic values (which
// encoding/json reports as an error too).
const maxDepth = 500

// encField is one JSON field of a struct type.
type encField struct {
	name string
	// key is the name written as a YAML key.
	key       string
	index     []int
	omitEmpty bool
	omitZero  bool
	quoted    bool
	isZero    func(reflect.Value) bool
	// info describes the field's type.
	info *typeInfo
}

// typeInfo is what the encoder needs to know about a type, computed once.
// The infos of a type and of every type it contains are built together and
// linked, so that walking a value looks nothing up but interfaces' dynamic
// types.
type typeInfo struct {
	t    reflect.Type
	kind reflect.Kind
	// addrMarshaler: *T implements json.Marshaler (used when addressable).
	addrMarshaler bool
	marshaler     bool
	addrText      bool
	text          bool
	// byteSlice: a []byte written as base64.
	byteSlice bool
	// stringMap: exactly map[string]string (labels, annotations).
	stringMap bool
	// fields of a struct, sorted by name (the order they are written in).
	fields []encField
	// elem describes what a pointer points to and what a slice, array or
	// map holds.
	elem *typeInfo
}

var (
	typeInfos sync.Map // reflect.Type -> *typeInfo, complete ones only
	buildMu   sync.Mutex
)

var stringMapType = reflect.TypeFor[map[string]string]()

func infoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	building := map[reflect.Type]*typeInfo{}
	ti := buildInfo(t, building)
	// Publish only once every linked info is filled in.
	for bt, bi := range building {
		typeInfos.LoadOrStore(bt, bi)
	}
	return ti
}

// buildInfo makes the info of t and of the types it contains; building
// holds those in progress, so recursive types end.
func buildInfo(t reflect.Type, building map[reflect.Type]*typeInfo) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	if ti, ok := building[t]; ok {
		return ti
	}
	ti := &typeInfo{
		t:         t,
		kind:      t.Kind(),
		marshaler: t.Implements(marshalerType),
		text:      t.Implements(textMarshalerType),
		stringMap: t == stringMapType,
	}
	building[t] = ti
	if t.Kind() != reflect.Pointer {
		pt := reflect.PointerTo(t)
		ti.addrMarshaler = pt.Implements(marshalerType)
		ti.addrText = pt.Implements(textMarshalerType)
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		pe := reflect.PointerTo(t.Elem())
		ti.byteSlice = !pe.Implements(marshalerType) && !pe.Implements(textMarshalerType)
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		ti.elem = buildInfo(t.Elem(), building)
	case reflect.Struct:
		ti.fields = structFields(t)
		for i := range ti.fields {
			ti.fields[i].info = buildInfo(t.FieldByIndex(ti.fields[i].index).Type, building)
		}
	}
	return ti
}

// structFields lists a struct's JSON fields by encoding/json's rules:
// embedded structs without a name are flattened, the shallowest (then the
// tagged) field of a name wins, and ambiguous names are dropped.
func structFields(t reflect.Type) []encField {
	type candidate struct {
		encField
		tagged bool
	}
	type level struct {
		typ   reflect.Type
		index []int
	}
	var fields []candidate
	next := []level{{typ: t}}
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count := map[reflect.Type]int{}
		for _, c := range current {
			count[c.typ]++
		}
		nextCount := map[reflect.Type]int{}
		for _, f := range current {
			if visited[f.typ] {
				continue
			}
			visited[f.typ] = true
			for i := range f.typ.NumField() {
				sf := f.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTag(name) {
					name = ""
				}
				index := append(slices.Clone(f.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					c := candidate{tagged: name != ""}
					if name == "" {
						name = sf.Name
					}
					c.name, c.index = name, index
					c.omitEmpty = hasOption(opts, "omitempty")
					c.omitZero = hasOption(opts, "omitzero")
					if hasOption(opts, "string") {
						switch ft.Kind() {
						case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
							reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
							reflect.Float32, reflect.Float64, reflect.String:
							c.quoted = true
						}
					}
					if c.omitZero {
						c.isZero = zeroFunc(sf.Type)
					}
					fields = append(fields, c)
					if count[f.typ] > 1 {
						// Two embeddings of the same type at one depth make
						// its names ambiguous.
						fields = append(fields, c)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, level{typ: ft, index: index})
				}
			}
		}
	}
	slices.SortFunc(fields, func(a, b candidate) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	var out []encField
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		// The first of a name dominates, unless the second is as shallow
		// and as tagged: then the name is ambiguous and dropped.
		if j-i == 1 || len(fields[i].index) != len(fields[i+1].index) || fields[i].tagged != fields[i+1].tagged {
			f := fields[i].encField
			var b bytes.Buffer
			writeScalarString(&b, f.name)
			f.key = b.String()
			out = append(out, f)
		}
		i = j
	}
	return out
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

func validTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// zeroFunc is how omitzero decides for a field type with an IsZero method
// (nil when reflect's zero test applies).
func zeroFunc(t reflect.Type) func(reflect.Value) bool {
	type isZeroer interface{ IsZero() bool }
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || (v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) || v.Interface().(isZeroer).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.IsNil() || v.Interface().(isZeroer).IsZero() }
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			// Through a pointer when it can: boxing a struct such as
			// metav1.Time into an interface allocates a copy each time.
			if v.CanAddr() {
				return v.Addr().Interface().(isZeroer).IsZero()
			}
			return v.Interface().(isZeroer).IsZero()
		}
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	}
	return nil
}

// IsEmptyValue is encoding/json's omitempty test, with the cheapest
// accessor for each kind.
func IsEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return v.String() == ""
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Slice, reflect.Map, reflect.Array:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.IsZero()
	}
	return false
}

// shape is what a value becomes in JSON.
type shape int

const (
	shapeNull shape = iota
	// shapeScalar is a number or boolean, written as its text.
	shapeScalar
	// shapeString is a string, quoted when YAML needs it.
	shapeString
	shapeObject
	shapeArray
)

// resolved is a value reduced to its JSON shape: a scalar's text, or the
// struct, map or list to walk.
type resolved struct {
	shape  shape
	scalar string
	v      reflect.Value
	// ti describes v for objects and arrays.
	ti *typeInfo
}

// writeScalar writes a scalar or string shape.
func (e *encoder) writeScalar(r resolved) {
	if r.shape == shapeString {
		writeScalarString(e.b, r.scalar)
		return
	}
	e.b.WriteString(r.scalar)
}

type encoder struct {
	b     *bytes.Buffer
	depth int
}

// writeBody writes one object. It must encode as a JSON object.
func writeBody(b *bytes.Buffer, body any) error {
	e := &encoder{b: b}
	r, err := e.resolve(reflect.ValueOf(body), nil, false)
	if err != nil {
		return err
	}
	switch r.shape {
	case shapeNull:
		// Generic reads null as an empty object.
		return nil
	case shapeObject:
	default:
		return fmt.Errorf("json: cannot unmarshal %T into an object", body)
	}
	_, err = e.object(r.v, r.ti, 0, false, true)
	return err
}

// resolve follows pointers, interfaces and Marshalers to a value's shape.
// ti describes v's type; nil means look it up (an interface's value).
func (e *encoder) resolve(v reflect.Value, ti *typeInfo, quoted bool) (resolved, error) {
	for {
		if !v.IsValid() {
			return resolved{shape: shapeNull}, nil
		}
		if ti == nil {
			ti = infoOf(v.Type())
		}
		kind := ti.kind
		switch {
		case kind != reflect.Pointer && ti.addrMarshaler && v.CanAddr():
			return e.marshalJSON(v.Addr())
		case ti.marshaler:
			if kind == reflect.Pointer && v.IsNil() {
				return resolved{shape: shapeNull}, nil
			}
			return e.marshalJSON(v)
		case kind != reflect.Pointer && ti.addrText && v.CanAddr():
			return textValue(v.Addr())
		case ti.text:
			if kind == reflect.Pointer && v.IsNil() {
				return resolved{shape: shapeNull}, nil
			}
			return textValue(v)
		}
		switch kind {
		case reflect.Pointer:
			if v.IsNil() {
				return resolved{shape: shapeNull}, nil
			}
			v, ti = v.Elem(), ti.elem
			continue
		case reflect.Interface:
			if v.IsNil() {
				return resolved{shape: shapeNull}, nil
			}
			v, ti, quoted = v.Elem(), nil, false
			continue
		case reflect.Struct:
			return resolved{shape: shapeObject, v: v, ti: ti}, nil
		case reflect.Map:
			if v.IsNil() {
				return resolved{shape: shapeNull}, nil
			}
			return resolved{shape: shapeObject, v: v, ti: ti}, nil
		case reflect.Slice:
			if v.IsNil() {
				return resolved{shape: shapeNull}, nil
			}
			if ti.byteSlice {
				return stringValue(base64.StdEncoding.EncodeToString(v.Bytes())), nil
			}
			return resolved{shape: shapeArray, v: v, ti: ti}, nil
		case reflect.Array:
			return resolved{shape: shapeArray, v: v, ti: ti}, nil
		case reflect.String:
			if ti.t == numberType {
				n := v.String()
				if n == "" {
					n = "0"
				}
				if !json.Valid([]byte(n)) {
					return resolved{}, fmt.Errorf("json: invalid number literal %q", n)
				}
				if quoted {
					return stringValue(n), nil
				}
				return resolved{shape: shapeScalar, scalar: n}, nil
			}
			if quoted {
				inner, _ := json.Marshal(v.String())
				return stringValue(string(inner)), nil
			}
			return stringValue(v.String()), nil
		case reflect.Bool:
			return number(strconv.FormatBool(v.Bool()), quoted), nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return number(strconv.FormatInt(v.Int(), 10), quoted), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return number(strconv.FormatUint(v.Uint(), 10), quoted), nil
		case reflect.Float32, reflect.Float64:
			s, err := formatFloat(v.Float(), ti.t.Bits())
			if err != nil {
				return resolved{}, err
			}
			return number(s, quoted), nil
		}
		return resolved{}, &json.UnsupportedTypeError{Type: v.Type()}
	}
}

// number is a bool or number literal, or its text as a string when the
// field asks for ",string".
func number(text string, quoted bool) resolved {
	if quoted {
		return stringValue(text)
	}
	return resolved{shape: shapeScalar, scalar: text}
}

func stringValue(s string) resolved {
	return resolved{shape: shapeString, scalar: s}
}

// validUTF8 replaces each invalid byte by U+FFFD, as encoding/json does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// formatFloat writes a float as encoding/json does.
func formatFloat(f float64, bits int) (string, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "", &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, bits)}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b := strconv.AppendFloat(nil, f, format, -1, bits)
	if format == 'e' {
		// e-09 is written e-9.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return string(b), nil
}

func textValue(v reflect.Value) (resolved, error) {
	text, err := v.Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		return resolved{}, &json.MarshalerError{Type: v.Type(), Err: err}
	}
	return stringValue(string(text)), nil
}

// marshalJSON calls a type's MarshalJSON. The common results, null and a
// plain string (a quantity, a time), are taken as they are; anything else
// is decoded as encoding/json's result would be.
func (e *encoder) marshalJSON(v reflect.Value) (resolved, error) {
	data, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil {
		return resolved{}, &json.MarshalerError{Type: v.Type(), Err: err}
	}
	data = bytes.TrimSpace(data)
	switch {
	case string(data) == "null":
		return resolved{shape: shapeNull}, nil
	case len(data) >= 2 && data[0] == '"' && data[len(data)-1] == '"' && bytes.IndexByte(data[1:len(data)-1], '"') < 0 &&
		bytes.IndexByte(data, '\\') < 0 && utf8.Valid(data) && !hasControl(data):
		return stringValue(string(data[1 : len(data)-1])), nil
	}
	if !json.Valid(data) {
		return resolved{}, &json.MarshalerError{Type: v.Type(), Err: errors.New("MarshalJSON returned invalid JSON")}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return resolved{}, &json.MarshalerError{Type: v.Type(), Err: err}
	}
	return e.resolve(reflect.ValueOf(g), nil, false)
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// spaces indent up to 64 levels in one write.
const spaces = "                                                                                                                                "

func (e *encoder) indent(n int) {
	for n > len(spaces)/2 {
		e.b.WriteString(spaces)
		n -= len(spaces) / 2
	}
	e.b.WriteString(spaces[:2*n])
}

// keyName is a map key as encoding/json writes it.
func keyName(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return validUTF8(k.String()), nil
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return "", nil
		}
		text, err := tm.MarshalText()
		return validUTF8(string(text)), err
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", &json.UnsupportedTypeError{Type: k.Type()}
}

// object writes an object's entries at depth and returns how many it
// wrote. In a list item the first entry follows the dash. Empty objects
// under the keys of emptyStructKeys, null creation timestamps and, at the
// top, status are left out, as Generic leaves them out.
func (e *encoder) object(v reflect.Value, ti *typeInfo, depth int, item, top bool) (int, error) {
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > maxDepth {
		return 0, fmt.Errorf("json: unsupported value: nesting deeper than %d (a cycle?)", maxDepth)
	}
	if ti.kind == reflect.Map {
		return e.mapEntries(v, ti, depth, item, top)
	}
	n := 0
fields:
	for i := range ti.fields {
		f := &ti.fields[i]
		fv := v
		for _, x := range f.index {
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue fields
				}
				fv = fv.Elem()
			}
			fv = fv.Field(x)
		}
		if f.omitEmpty && IsEmptyValue(fv) || f.omitZero && (f.isZero == nil && fv.IsZero() || f.isZero != nil && f.isZero(fv)) {
			continue
		}
		if top && f.name == "status" {
			continue
		}
		if err := e.entry(&n, f.name, f.key, fv, f.info, f.quoted, depth, item); err != nil {
			return 0, err
		}
	}
	return n, nil
}

func (e *encoder) mapEntries(v reflect.Value, ti *typeInfo, depth int, item, top bool) (int, error) {
	if ti.stringMap && !top {
		if n, ok := e.stringMap(v.Interface().(map[string]string), depth, item); ok {
			return n, nil
		}
	}
	type kv struct {
		name string
		v    reflect.Value
	}
	ents := make([]kv, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		name, err := keyName(it.Key())
		if err != nil {
			return 0, err
		}
		ents = append(ents, kv{name, it.Value()})
	}
	slices.SortFunc(ents, func(a, b kv) int { return strings.Compare(a.name, b.name) })
	n := 0
	for _, en := range ents {
		if top && en.name == "status" {
			continue
		}
		if err := e.entry(&n, en.name, "", en.v, ti.elem, false, depth, item); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// entry writes one key and its value, and counts it in n unless it is
// left out. text is the key as written, "" to format it here.
func (e *encoder) entry(n *int, key, text string, v reflect.Value, ti *typeInfo, quoted bool, depth int, item bool) error {
	r, err := e.resolve(v, ti, quoted)
	if err != nil {
		return err
	}
	mark := e.b.Len()
	writeKey := func() {
		if *n > 0 || !item {
			e.indent(depth)
		}
		if text != "" {
			e.b.WriteString(text)
		} else {
			writeScalarString(e.b, key)
		}
	}
	writeKey()
	e.b.WriteByte(':')
	switch r.shape {
	case shapeNull:
		if key == "creationTimestamp" {
			e.b.Truncate(mark)
			return nil
		}
		e.b.WriteString(" null\n")
	case shapeScalar, shapeString:
		e.b.WriteByte(' ')
		e.writeScalar(r)
		e.b.WriteByte('\n')
	case shapeObject:
		e.b.WriteByte('\n')
		c, err := e.object(r.v, r.ti, depth+1, false, false)
		if err != nil {
			return err
		}
		if c == 0 {
			e.b.Truncate(mark)
			if emptyStructKeys[key] {
				return nil
			}
			writeKey()
			e.b.WriteString(": {}\n")
		}
	case shapeArray:
		if r.v.Len() == 0 {
			e.b.WriteString(" []\n")
			break
		}
		e.b.WriteByte('\n')
		if err := e.list(r.v, r.ti, depth); err != nil {
			return err
		}
	}
	*n++
	return nil
}

// stringMap writes labels, annotations and other string maps without
// reflection per entry. Strings are never null, so every entry is written.
// It declines maps with invalid UTF-8 keys, which sort by their repaired
// form.
func (e *encoder) stringMap(m map[string]string, depth int, item bool) (int, bool) {
	var scratch [16]string
	keys := scratch[:0]
	for k := range m {
		if !utf8.ValidString(k) {
			return 0, false
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 || !item {
			e.indent(depth)
		}
		writeScalarString(e.b, k)
		e.b.WriteString(": ")
		writeScalarString(e.b, m[k])
		e.b.WriteByte('\n')
	}
	return len(keys), true
}

// list writes a sequence with its dashes at depth.
func (e *encoder) list(v reflect.Value, ti *typeInfo, depth int) error {
	for i := range v.Len() {
		r, err := e.resolve(v.Index(i), ti.elem, false)
		if err != nil {
			return err
		}
		e.indent(depth)
		e.b.WriteString("- ")
		switch r.shape {
		case shapeNull:
			e.b.WriteString("null\n")
		case shapeScalar, shapeString:
			e.writeScalar(r)
			e.b.WriteByte('\n')
		case shapeObject:
			c, err := e.object(r.v, r.ti, depth+1, true, false)
			if err != nil {
				return err
			}
			if c == 0 {
				e.b.WriteString("{}\n")
			}
		case shapeArray:
			if r.v.Len() == 0 {
				e.b.WriteString("[]\n")
				continue
			}
			// A list in a list is written in flow style, as JSON, which is
			// rare enough in Kubernetes objects not to deserve speed.
			if !r.v.CanInterface() {
				return fmt.Errorf("json: cannot write a list in a list reached through an unexported field (%s)", r.v.Type())
			}
			g, err := Generic(map[string]any{"v": r.v.Interface()})
			if err != nil {
				return err
			}
			data, _ := json.Marshal(g["v"])
			e.b.Write(data)
			e.b.WriteByte('\n')
		}
	}
	return nil
}
