package resolve

import (
	"fmt"
	"path"
	"strings"

	"github.com/virtc/virtc/fn/decode"
	"github.com/virtc/virtc/fn/diag"
)

func (t *Tenant) allowSizes() []string {
	if a := t.Spec.Allow; a != nil {
		return a.Sizes
	}
	return nil
}

func (t *Tenant) allowImages() []string {
	if a := t.Spec.Allow; a != nil {
		return a.Images
	}
	return nil
}

func (t *Tenant) allowNetworks() []string {
	if a := t.Spec.Allow; a != nil {
		return a.Networks
	}
	return nil
}

func (t *Tenant) allowStorage() []string {
	if a := t.Spec.Allow; a != nil {
		return a.Storage
	}
	return nil
}

func (t *Tenant) allowPools() []string {
	if a := t.Spec.Allow; a != nil {
		return a.Pools
	}
	return nil
}

// Allows reports whether a tenant may use a catalog entry: one its allow
// list matches (names or glob patterns) or, without a list, any entry that
// is not restricted.
func Allows(list []string, name string, restricted bool) bool {
	if len(list) == 0 {
		return !restricted
	}
	for _, p := range list {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// AllowsSize reports whether the tenant may use a size.
func (t *Tenant) AllowsSize(name string, restricted bool) bool {
	return Allows(t.allowSizes(), name, restricted)
}

// AllowsNetwork reports whether the tenant may use a network profile.
func (t *Tenant) AllowsNetwork(name string, restricted bool) bool {
	return Allows(t.allowNetworks(), name, restricted)
}

func (t *Tenant) allow(diags *diag.List, v decode.VM, field, what, name string, list []string, restricted bool) {
	if Allows(list, name, restricted) {
		return
	}
	why := fmt.Sprintf("tenant %q does not allow it", t.Name)
	if len(list) == 0 {
		why = fmt.Sprintf("it is restricted and tenant %q does not list it in spec.allow", t.Name)
	} else {
		why += fmt.Sprintf(" (allowed: %s)", strings.Join(list, ", "))
	}
	diags.Errorf(v.Doc.Pos(field), field, "%s %q: %s", what, name, why)
}
