package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/virtc/virtc/fn/api"
	"github.com/virtc/virtc/fn/model"
	"github.com/virtc/virtc/fn/resolve"
)

// Guardrails are what a tenant may use, computed from the same catalog
// and allow lists the compile checks read (resolve.Allows,
// resolve.AllowsNetworkIn, Tenant.AllowsDevice): the values the tenant's
// ValidatingAdmissionPolicy holds (validatingadmissionpolicy.go). Every
// list is sorted, so the policy is the same for the same inputs.
type Guardrails struct {
	Tenant string
	// DataSources are the DataSources ("namespace/name") the root disks
	// of the images the tenant may use clone (resolve.ImageDataSource).
	DataSources []string
	// Registries are the pinned registry URLs (docker://…@sha256:…) of
	// the images the tenant may use that come from a registry.
	Registries []string
	// ContainerDisks are the images of the catalog's ContainerDisks the
	// tenant may use: the only containerDisk volumes (CD-ROMs) its VMs
	// may have.
	ContainerDisks []string
	// Sizes are the instance types (sizes written as references) the
	// tenant may use.
	Sizes []string
	// InlineSizes are the shapes of the inline sizes the tenant may use
	// (adopted VMs: CPU topology and guest memory written into the VM).
	InlineSizes []InlineShape
	// Preferences are the preferences of the images the tenant may use.
	Preferences []string
	// StorageClasses are the classes of the storage profiles the tenant
	// may use, with the catalog's default (root disks) and the VM-state
	// profile (persistent EFI/TPM), which no allow list restricts.
	StorageClasses []string
	// RWXClasses are those of StorageClasses whose profile is
	// ReadWriteMany: a disk on another class blocks live migration
	// (resolve.VM.MigrationBlockers).
	RWXClasses []string
	// AllowDevices are the tenant's spec.allow.devices (globs), Devices
	// the same as RE2 patterns (GlobRegexp).
	AllowDevices, Devices []string
	// Networks maps each multus network name the tenant's VMs may attach
	// (the profile's name, and namespace/name) to the profile's type.
	Networks map[string]string
	// NonMigratableNetworks are the names of Networks whose profile does
	// not allow live migration.
	NonMigratableNetworks []string
	// NADs maps the name of each NetworkAttachmentDefinition virtc writes
	// into the tenant's namespace to its spec.config (TenantNetworks).
	NADs map[string]string
	// Pools are the node selectors and tolerations of the worker pools the
	// tenant may use (one with neither when the catalog has no pools).
	Pools []PoolPlacement
	// CloudInitBase64 are the base64 cloud-init data of the tenant's VMs
	// as virtc writes them (checked at compile time): CEL in admission
	// policies has no base64 decoding, so the policy admits base64 data
	// only when it is one of these.
	CloudInitBase64 []string
}

// InlineShape is an inline size's CPU topology and guest memory.
type InlineShape struct {
	Name                    string
	Sockets, Cores, Threads int64
	Guest                   string
}

// PoolPlacement is what a worker pool writes into a VM's template: its
// node selector ("key=value") and tolerations ("key|operator|value|effect").
type PoolPlacement struct {
	Name         string
	NodeSelector []string
	Tolerations  []string
}

// TenantGuardrails computes a tenant's Guardrails from the model.
func TenantGuardrails(m *resolve.Model, t *resolve.Tenant) Guardrails {
	cat := m.Catalog
	g := Guardrails{Tenant: t.Name, Networks: map[string]string{}, NADs: map[string]string{}}
	var allow api.TenantAllow
	if t.Spec.Allow != nil {
		allow = *t.Spec.Allow
	}
	for _, name := range cat.Images.Names() {
		img, _ := cat.Images.Get(name)
		if !resolve.Allows(allow.Images, name, img.Spec.Restricted) {
			continue
		}
		ds := resolve.ImageDataSource(name, img, cat)
		g.DataSources = append(g.DataSources, ds.Namespace+"/"+ds.Name)
		if r := img.Spec.Registry; r != nil {
			g.Registries = append(g.Registries, r.URL)
		}
		if img.Spec.Preference != "" {
			g.Preferences = append(g.Preferences, img.Spec.Preference)
		}
	}
	for _, name := range cat.ContainerDisks.Names() {
		cd, _ := cat.ContainerDisks.Get(name)
		if resolve.Allows(allow.Images, name, cd.Spec.Restricted) {
			g.ContainerDisks = append(g.ContainerDisks, cd.Spec.Image)
		}
	}
	for _, name := range cat.Sizes.Names() {
		s, _ := cat.Sizes.Get(name)
		if !resolve.Allows(allow.Sizes, name, s.Spec.Restricted) || slices.ContainsFunc(s.Spec.GPUs, func(d api.Device) bool { return !t.AllowsDevice(d.DeviceName) }) {
			continue
		}
		if in := s.Spec.Inline; in != nil {
			g.InlineSizes = append(g.InlineSizes, InlineShape{Name: name, Sockets: int64(in.Sockets), Cores: int64(in.Cores), Threads: int64(in.Threads), Guest: s.Spec.Memory.String()})
			continue
		}
		g.Sizes = append(g.Sizes, name)
	}
	storage := func(name string, always bool) {
		p, ok := cat.StorageProfiles.Get(name)
		if !ok || !always && !resolve.Allows(allow.Storage, name, p.Spec.Restricted) {
			return
		}
		g.StorageClasses = append(g.StorageClasses, p.Spec.StorageClass)
		if p.Spec.AccessMode == api.AccessRWX {
			g.RWXClasses = append(g.RWXClasses, p.Spec.StorageClass)
		}
	}
	for _, name := range cat.StorageProfiles.Names() {
		storage(name, false)
	}
	storage(cat.DefaultStorage, true)
	if st, ok := resolve.StateStorage(cat); ok {
		storage(st.Name, true)
	}
	g.AllowDevices = allow.Devices
	for _, d := range allow.Devices {
		g.Devices = append(g.Devices, GlobRegexp(d))
	}
	for _, name := range cat.NetworkProfiles.Names() {
		p, _ := cat.NetworkProfiles.Get(name)
		if !p.Spec.Additional() || p.Spec.Type == api.NetworkUDNPrimary || !t.AllowsNetwork(name, p) {
			continue
		}
		if br := p.Spec.Bridge; br != nil && br.IPRange != "" {
			continue // the live-migration network: VMs never attach to it
		}
		for _, n := range []string{name, t.Name + "/" + name} {
			g.Networks[n] = p.Spec.Type
			if !p.Spec.Migratable {
				g.NonMigratableNetworks = append(g.NonMigratableNetworks, n)
			}
		}
	}
	for _, n := range model.TenantNADs(m, t) {
		g.NADs[n.Name] = n.Config
	}
	pools := cat.WorkerPools.Names()
	if len(pools) == 0 {
		g.Pools = []PoolPlacement{{}}
	}
	for _, name := range pools {
		p, _ := cat.WorkerPools.Get(name)
		if !resolve.Allows(allow.Pools, name, p.Spec.Restricted) {
			continue
		}
		pp := PoolPlacement{Name: name}
		for k, v := range p.Spec.NodeSelector {
			pp.NodeSelector = append(pp.NodeSelector, k+"="+v)
		}
		for _, tol := range model.Tolerations(p.Spec.Taints) {
			pp.Tolerations = append(pp.Tolerations, strings.Join([]string{tol.Key, string(tol.Operator), tol.Value, string(tol.Effect)}, "|"))
		}
		slices.Sort(pp.NodeSelector)
		slices.Sort(pp.Tolerations)
		g.Pools = append(g.Pools, pp)
	}
	for _, vm := range t.VMs {
		if ci := model.CloudInit(vm); ci != nil && ci.UserDataBase64 != "" {
			g.CloudInitBase64 = append(g.CloudInitBase64, ci.UserDataBase64)
		}
	}
	for _, l := range []*[]string{&g.CloudInitBase64, &g.DataSources, &g.Registries, &g.Sizes, &g.Preferences, &g.StorageClasses, &g.RWXClasses, &g.NonMigratableNetworks} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return g
}

// GlobRegexp is the RE2 pattern (anchored) that matches what path.Match
// matches for a glob: * and ? never cross a slash, classes are kept.
func GlobRegexp(glob string) string {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := strings.IndexByte(glob[i:], ']')
			if j < 0 {
				b.WriteString(regexp.QuoteMeta(glob[i:]))
				i = len(glob)
				continue
			}
			// path.Match's classes ([a-z], [^a-z]) read the same in RE2.
			b.WriteString(glob[i : i+j+1])
			i += j
		case '\\':
			if i+1 < len(glob) {
				i++
				b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return b.String()
}

// celString quotes s as a CEL string literal, in single quotes (the JSON
// of a network attachment's config keeps its double quotes unescaped).
func celString(s string) string {
	return "'" + celEscaper.Replace(s) + "'"
}

// celEscaper escapes a CEL single-quoted string literal (built once, on
// first use: strings.Replacer builds its tables lazily).
var celEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`)

// celList writes a list of strings as a CEL list literal.
func celList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = celString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// celMap writes a map of strings as a CEL map literal, keys sorted.
func celMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = celString(k) + ": " + celString(m[k])
	}
	return "{" + strings.Join(q, ", ") + "}"
}

// celShapes writes inline sizes as a CEL map from the size's name to
// "sockets/cores/threads/guest" (a CEL map literal's values share a type).
func celShapes(shapes []InlineShape) string {
	m := map[string]string{}
	for _, s := range shapes {
		m[s.Name] = fmt.Sprintf("%d/%d/%d/%s", s.Sockets, s.Cores, s.Threads, s.Guest)
	}
	return celMap(m)
}

// celPoolLists writes, per pool (by name), one of its lists as a CEL map.
func celPoolLists(pools []PoolPlacement, list func(PoolPlacement) []string) string {
	q := make([]string, len(pools))
	for i, p := range pools {
		q[i] = celString(p.Name) + ": " + celList(list(p))
	}
	return "{" + strings.Join(q, ", ") + "}"
}
