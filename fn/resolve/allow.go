package resolve

import (
	"fmt"
	"path"
	"strings"

	"github.com/virtc/virtc/fn/api"
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

// AllowsNetwork reports whether the tenant may use a network profile: the
// pod network always, an additional network only when the tenant lists it
// in spec.allow.networks (AllowsNetworkIn).
func (t *Tenant) AllowsNetwork(name string, p *api.NetworkProfile) bool {
	return AllowsNetworkIn(t.allowNetworks(), name, p)
}

// AllowsNetworkIn reports whether an allow list of network profiles admits
// a profile: the pod network is open to every tenant; an additional network
// (doc 000: "available only for approved workload needs", "not enabled by
// default") only to a list that names it or a pattern matching it.
func AllowsNetworkIn(list []string, name string, p *api.NetworkProfile) bool {
	if !p.Spec.Additional() {
		return true
	}
	return len(list) > 0 && Allows(list, name, true)
}

// network refuses a VM's additional network its tenant does not allow,
// naming the ones it does.
func (t *Tenant) network(diags *diag.List, v decode.VM, field, name string, p *api.NetworkProfile) {
	if t.AllowsNetwork(name, p) {
		return
	}
	list := t.allowNetworks()
	allowed := "it allows no additional network"
	if len(list) > 0 {
		allowed = "allowed: " + strings.Join(list, ", ")
	}
	diags.Errorf(v.Doc.Pos(field), field, "network profile %q is an additional network (%s), available only to tenants that list it: tenant %q does not (%s; the platform team adds it to the Tenant's spec.allow.networks for an approved need, or use the pod network)", name, p.Spec.Type, t.Name, allowed)
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
