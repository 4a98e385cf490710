package resolve

import (
	"cmp"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/diag"
)

// resolvePlacement binds the VM to its worker pool and applies the
// defaults of its spread group. Without pools in the catalog a VM has no
// pool, as before pools existed.
func resolvePlacement(rv *VM, cat *catalog.Catalog, diags *diag.List) {
	spec := rv.Spec
	if s := spec.Spread; s != nil {
		rv.Spread = &api.Spread{Group: s.Group, Across: cmp.Or(s.Across, api.DomainHost), Mode: cmp.Or(s.Mode, api.SpreadRequired)}
	}
	errorf := func(field, format string, args ...any) {
		diags.Errorf(rv.Doc.Pos(field), field, format, args...)
	}
	if len(cat.WorkerPools.Names()) == 0 {
		if spec.Pool != "" {
			errorf("spec.pool", "%s", cat.WorkerPools.Unknown("worker pool", spec.Pool))
		}
		return
	}
	name := cmp.Or(spec.Pool, cat.DefaultPool)
	if name == "" {
		errorf("spec", "no worker pool: name one in spec.pool, or mark a catalog WorkerPool default: true")
		return
	}
	p, ok := cat.WorkerPools.Get(name)
	if !ok {
		errorf("spec.pool", "%s", cat.WorkerPools.Unknown("worker pool", name))
		return
	}
	rv.Pool = &Pool{Name: name, WorkerPool: p}
}

// Reaches reports whether the pool's nodes reach a network profile.
func (p *Pool) Reaches(network string) bool {
	return len(p.Spec.Networks) == 0 || contains(p.Spec.Networks, network)
}

// Stores reports whether the pool's nodes reach a storage profile.
func (p *Pool) Stores(storage string) bool {
	return len(p.Spec.Storage) == 0 || contains(p.Spec.Storage, storage)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Domains is the number of failure domains of a level in the pool: its
// nodes for host, its racks or zones for the level of its failureDomain,
// and 0 for a level the pool does not have.
func (p *Pool) Domains(level string) int64 {
	if level == api.DomainHost {
		return p.Spec.Nodes
	}
	if fd := p.Spec.FailureDomain; fd != nil && fd.Level == level {
		return fd.Domains
	}
	return 0
}

// TopologyKey is the node label of a level's domains.
func (p *Pool) TopologyKey(level string) string {
	if level == api.DomainHost {
		return api.HostTopologyKey
	}
	if fd := p.Spec.FailureDomain; fd != nil && fd.Level == level {
		return cmp.Or(fd.TopologyKey, api.ZoneTopologyKey)
	}
	return ""
}

// LargestDomain is the number of nodes of the pool's largest rack or zone
// (nodes spread evenly: the first domains get one node more), 1 without
// failure domains.
func (p *Pool) LargestDomain() int64 {
	fd := p.Spec.FailureDomain
	if fd == nil || fd.Domains < 1 {
		return 1
	}
	return (p.Spec.Nodes + fd.Domains - 1) / fd.Domains
}
