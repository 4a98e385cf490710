package decode

import (
	"math"
	"reflect"
)

// Field is a field of a virtc type as the decoder reads it. The schema
// generator builds on this list, so that schema and decoder cannot disagree
// on names, required fields or enums.
type Field struct {
	// Name is the field's key in YAML and JSON.
	Name string
	// Struct is the struct type that declares the field (TypeMeta for the
	// inlined apiVersion and kind), and GoName the field's name there: the
	// key of its doc comment.
	Struct reflect.Type
	GoName string
	// Type is the field's Go type.
	Type reflect.Type
	// Required fields have no omitempty; a null value counts as missing.
	Required bool
	// Enum lists the accepted values of a closed set (the enum tag), of a
	// string or of each string of a list.
	Enum []string
	// Pattern is the regular expression a string must match (the pattern
	// tag), and Hint says in words what it wants.
	Pattern string
	Hint    string
}

// Fields lists the fields of a struct type in declaration order, inline
// embeds flattened, as the decoder reads them.
func Fields(t reflect.Type) []Field {
	var out []Field
	for _, f := range fields(t) {
		st := t
		for _, i := range f.index[:len(f.index)-1] {
			st = st.Field(i).Type
		}
		sf := st.Field(f.index[len(f.index)-1])
		field := Field{Name: f.name, Struct: st, GoName: sf.Name, Type: sf.Type, Required: f.required, Enum: f.enum, Hint: f.hint}
		if f.pattern != nil {
			field.Pattern = f.pattern.String()
		}
		out = append(out, field)
	}
	return out
}

// Whole numbers the decoder accepts: the range of int32, as Kubernetes
// integer fields.
const (
	MinInt = math.MinInt32
	MaxInt = math.MaxInt32
)

// QuantityType is the Go type the decoder reads as a Kubernetes quantity:
// a string such as 40Gi, or a whole number, never negative and at most
// MaxQuantity.
var QuantityType = quantityType

// MaxQuantity is the largest quantity the decoder accepts (1Pi).
const MaxQuantity = maxQuantity
