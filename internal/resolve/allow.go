package resolve

import (
	"path"

	"github.com/virtc/virtc/api"
)

func (t *Tenant) allowSizes() []string {
	if a := t.Spec.Allow; a != nil {
		return a.Sizes
	}
	return nil
}

func (t *Tenant) allowNetworks() []string {
	if a := t.Spec.Allow; a != nil {
		return a.Networks
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
