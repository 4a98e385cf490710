package catalog

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/resource"
)

var quantityType = reflect.TypeFor[resource.Quantity]()

// warm formats every resource.Quantity of the catalog's entries once.
// Quantity.String caches its text inside the value the first time it is
// called, which is a write (k8s.io/apimachinery pkg/api/resource
// quantity.go String); the renderers read the same entries from many
// goroutines (render.Groups renders tenants in parallel), so the text is
// cached here, while one goroutine owns the catalog, and every later
// String is a read. `go test -race` found two tenants formatting one
// size's memory at once (rules.TenantGuardrails).
func (c *Catalog) warm() {
	warmTable(c.Sizes)
	warmTable(c.Images)
	warmTable(c.ContainerDisks)
	warmTable(c.NetworkProfiles)
	warmTable(c.StorageProfiles)
	warmTable(c.BackupPolicies)
	warmTable(c.Preferences)
	warmTable(c.WorkerPools)
	warmTable(c.MigrationPolicies)
	if c.Platform != nil && c.Platform.Obj != nil {
		warmValue(reflect.ValueOf(c.Platform.Obj))
	}
}

func warmTable[T any](t *Table[T]) {
	for _, name := range t.names {
		if e := t.entries[name]; e.Obj != nil {
			warmValue(reflect.ValueOf(e.Obj))
		}
	}
}

// warmValue calls String on every Quantity reachable from v through
// pointers, structs, slices, arrays, maps and interfaces.
func warmValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			warmValue(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == quantityType {
			if v.CanAddr() {
				_ = v.Addr().Interface().(*resource.Quantity).String()
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				warmValue(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			warmValue(v.Index(i))
		}
	case reflect.Map:
		// map values are not addressable: warm a copy and store it back
		// (the key exists, so the map does not grow while it is ranged)
		for it := v.MapRange(); it.Next(); {
			cp := reflect.New(v.Type().Elem()).Elem()
			cp.Set(it.Value())
			if hasQuantity(cp.Type(), map[reflect.Type]bool{}) {
				warmValue(cp)
				v.SetMapIndex(it.Key(), cp)
			}
		}
	}
}

// hasQuantity reports whether values of t hold a Quantity by value (not
// behind a pointer, which warmValue reaches in place).
func hasQuantity(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == quantityType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() && hasQuantity(t.Field(i).Type, seen) {
				return true
			}
		}
	case reflect.Array:
		return hasQuantity(t.Elem(), seen)
	}
	return false
}
