// Package appproject checks the Argo CD AppProjects a repository keeps
// against the Tenants it compiles (CompilerSpec.AppProjects): a tenant's
// Application runs in project virtc-tenant-NAME (the ApplicationSet
// `virtc init` writes), and Argo CD refuses to sync any object its
// project does not permit. Without this check a new Tenant builds green
// and its Application is refused on the cluster; with it the build (and
// the pull request's preview) names the Tenant and the fix.
//
// What Argo CD permits is decided as argo-cd v3.6.1 decides it:
// AppProject.IsGroupKindNamePermitted (pkg/apis/application/v1alpha1/
// app_project_types.go) with isResourceInList (types.go): a namespaced
// kind is permitted when namespaceResourceWhitelist is absent, or names
// it (filepath.Match on kind and group; present but empty permits
// nothing), and namespaceResourceBlacklist does not.
// testdata/permits.json records Argo CD's own answers for a table of
// projects and kinds: test/argocd TestArgoCDPermits runs argo-cd's
// function on it (argocd-permits, built beside Argo CD).
package appproject

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/source"
)

// TenantPrefix names a tenant's project: virtc-tenant-NAME.
const TenantPrefix = "virtc-tenant-"

// GroupKind is an entry of a project's resource lists.
type GroupKind struct {
	Group string `json:"group" yaml:"group"`
	Kind  string `json:"kind" yaml:"kind"`
}

// Project is the part of an AppProject (argoproj.io/v1alpha1) the check
// reads. A nil whitelist is an absent one.
type Project struct {
	Name                       string        `json:"name" yaml:"name"`
	Destinations               []Destination `json:"destinations,omitempty" yaml:"destinations,omitempty"`
	NamespaceResourceWhitelist []GroupKind   `json:"namespaceResourceWhitelist" yaml:"namespaceResourceWhitelist"`
	NamespaceResourceBlacklist []GroupKind   `json:"namespaceResourceBlacklist,omitempty" yaml:"namespaceResourceBlacklist,omitempty"`
	ClusterResourceWhitelist   []GroupKind   `json:"clusterResourceWhitelist,omitempty" yaml:"clusterResourceWhitelist,omitempty"`

	doc *source.Doc
}

// Destination is one of a project's destinations.
type Destination struct {
	Server    string `json:"server,omitempty" yaml:"server,omitempty"`
	Name      string `json:"name,omitempty" yaml:"name,omitempty"`
	Namespace string `json:"namespace" yaml:"namespace"`
}

// PermitsNamespaced says whether Argo CD syncs a namespaced object of
// group and kind in an Application of the project.
func (p *Project) PermitsNamespaced(group, kind string) bool {
	white := p.NamespaceResourceWhitelist == nil || len(p.NamespaceResourceWhitelist) != 0 && inList(group, kind, p.NamespaceResourceWhitelist)
	black := len(p.NamespaceResourceBlacklist) != 0 && inList(group, kind, p.NamespaceResourceBlacklist)
	return white && !black
}

func inList(group, kind string, list []GroupKind) bool {
	for _, e := range list {
		if ok, err := filepath.Match(e.Kind, kind); ok && err == nil {
			if ok, err := filepath.Match(e.Group, group); ok && err == nil {
				return true
			}
		}
	}
	return false
}

// Read decodes the AppProjects among docs (other kinds are skipped: a file
// of the Argo CD wiring may hold them), each by its name.
func Read(docs []*source.Doc, diags *diag.List) map[string]*Project {
	out := map[string]*Project{}
	for _, d := range docs {
		av, kind := decode.Header(d.Node)
		if kind != "AppProject" || !strings.HasPrefix(av, "argoproj.io/") {
			continue
		}
		var obj struct {
			Metadata struct {
				Name string `json:"name" yaml:"name"`
			} `json:"metadata" yaml:"metadata"`
			Spec Project `json:"spec" yaml:"spec"`
		}
		if err := d.Node.Decode(&obj); err != nil {
			diags.Errorf(d.Pos(""), "", "not an AppProject Argo CD reads: %v", err)
			continue
		}
		p := obj.Spec
		p.Name, p.doc = obj.Metadata.Name, d
		if prev, dup := out[p.Name]; dup {
			at := prev.doc.Pos("metadata.name")
			diags.Errorf(d.Pos("metadata.name"), "metadata.name", "AppProject %q is defined twice (also at %s:%d)", p.Name, at.File, at.Line)
			continue
		}
		out[p.Name] = &p
	}
	return out
}

// Checker checks a build's Tenants and their objects against the
// projects.
type Checker struct {
	projects map[string]*Project
	files    string
}

// New checks that every Tenant of m has its project, naming its own
// namespace only and no cluster-scoped kind; Check then checks the kinds
// each tenant's build prints. files names where the projects were read,
// for the messages.
func New(projects map[string]*Project, files []string, m *resolve.Model, diags *diag.List) *Checker {
	c := &Checker{projects: projects, files: strings.Join(files, ", ")}
	for _, t := range m.Tenants {
		name := TenantPrefix + t.Name
		p, ok := projects[name]
		if !ok {
			diags.Errorf(t.Doc.Pos("metadata.name"), "metadata.name", "tenant %q has no Argo CD AppProject %q in %s: Argo CD refuses its Application, which runs in that project (add one as virtc init writes them: destinations the namespace %s only, no cluster-scoped kind, the kinds of a --scope vms build)", t.Name, name, c.files, t.Name)
			continue
		}
		for i, d := range p.Destinations {
			if d.Namespace != t.Name {
				field := fmt.Sprintf("spec.destinations[%d].namespace", i)
				diags.Errorf(p.doc.Pos(field), field, "project %s of tenant %q lets its Applications write into namespace %q (a tenant's project names its own namespace, %q, only)", name, t.Name, d.Namespace, t.Name)
			}
		}
		if len(p.Destinations) == 0 {
			diags.Errorf(p.doc.Pos("spec"), "spec.destinations", "project %s of tenant %q has no destination: Argo CD refuses every Application in it (destinations: [{name: '*', namespace: %s}])", name, t.Name, t.Name)
		}
		if len(p.ClusterResourceWhitelist) > 0 {
			diags.Errorf(p.doc.Pos("spec.clusterResourceWhitelist"), "spec.clusterResourceWhitelist", "project %s of tenant %q permits cluster-scoped kinds (a tenant's Applications write none: clusterResourceWhitelist: [])", name, t.Name)
		}
	}
	return c
}

// Check refuses each kind of a tenant's --scope vms objects among objs
// that its project does not permit, once per project and kind.
func (c *Checker) Check(objs []emit.Object, diags *diag.List) {
	if c == nil {
		return
	}
	type gk struct{ project, group, kind string }
	seen := map[gk]bool{}
	for _, o := range objs {
		if o.Scope != emit.VMScope || o.Namespace == "" {
			continue
		}
		p, ok := c.projects[TenantPrefix+o.Namespace]
		if !ok {
			continue // New has refused the Tenant
		}
		group := o.APIVersion
		if i := strings.LastIndex(group, "/"); i >= 0 {
			group = group[:i]
		} else {
			group = ""
		}
		k := gk{p.Name, group, o.Kind}
		if seen[k] || p.PermitsNamespaced(group, o.Kind) {
			continue
		}
		seen[k] = true
		field := "spec.namespaceResourceWhitelist"
		fix := fmt.Sprintf("add {group: '%s', kind: %s} to spec.namespaceResourceWhitelist", group, o.Kind)
		if inList(group, o.Kind, p.NamespaceResourceBlacklist) {
			field, fix = "spec.namespaceResourceBlacklist", "take it off spec.namespaceResourceBlacklist"
		}
		diags.Errorf(p.doc.Pos(field), field, "project %s does not permit %s (group %q), which tenant %q's build prints (%s %s/%s): Argo CD refuses to sync it (%s)", p.Name, o.Kind, group, o.Namespace, o.Kind, o.Namespace, o.Name, fix)
	}
}
