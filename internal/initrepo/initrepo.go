// Package initrepo writes a new GitOps repository for a platform (virtc
// init): the templates under templates/ (kept as data) and the editable
// part of the embedded catalog. The Argo CD wiring it writes is
// examples/argocd's, which golden/init_test.go holds byte for byte to
// what init writes.
package initrepo

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"text/template"

	defaults "github.com/virtc/virtc/catalog"
	"github.com/virtc/virtc/internal/versions"
)

// templates are the repository's files. A path segment CLUSTER is the
// cluster's name; a path with a segment TENANT is written once per tenant.
// Their delimiters are [[ ]], because the ApplicationSet holds Argo CD's
// own {{ }} templates.
//
//go:embed all:templates
var templates embed.FS

// catalogFiles are the embedded catalog's files a repository starts from,
// in platform/: the ones the platform team edits. The sizes
// (common-instancetypes.yaml, generated from KubeVirt's bundle) stay
// virtc's.
var catalogFiles = []string{"backup.yaml", "images.yaml", "networks.yaml", "storage.yaml"}

// Options are what the repository is for.
type Options struct {
	// Cluster is the name of the cluster directory, the Platform and the
	// Argo CD cluster.
	Cluster string
	// Tenants each get a Tenant file, a VM and an AppProject.
	Tenants []string
	// RepoURL is the Git repository Argo CD reads.
	RepoURL string
	// ApproverImage is the virtc image, pinned by digest, the InstallPlan
	// approver runs. Empty: the Platform has no approver, commented lines
	// say how to add it, and the repository compiles as written (every
	// InstallPlan then waits for a person).
	ApproverImage string
	// ArgoCDNamespace is the namespace of Argo CD, where the AppProjects
	// and the ApplicationSet go: argocd upstream, openshift-gitops for
	// OpenShift GitOps. Empty: argocd.
	ArgoCDNamespace string
	// VirtcVersion is what the pull-request workflow installs (go install
	// …@VERSION): the virtc that writes the repository, a release tag or a
	// commit. Empty: "latest", with a comment asking for a tag.
	VirtcVersion string
}

// data is what the templates see.
type data struct {
	Cluster string
	Tenants []string
	Tenant  string
	Version string
	RepoURL string
	// ApproverImage is spec.approver.image, or "" for none yet.
	ApproverImage string
	// VirtcVersion is Options.VirtcVersion.
	VirtcVersion string
	// ArgoCDNamespace is Options.ArgoCDNamespace, or argocd.
	ArgoCDNamespace string
}

// File is one file of the repository.
type File struct {
	Path string // slash-separated, relative to the repository's top
	Data []byte
}

// Files renders the repository, sorted by path.
func Files(o Options) ([]File, error) {
	release, ok := versions.BaselineRelease()
	if !ok {
		return nil, fmt.Errorf("the version table has no baseline release")
	}
	d := data{
		Cluster: o.Cluster,
		Tenants: o.Tenants,
		Version: fmt.Sprintf("%s.%d", release.Minor, release.Patches[1]),
		RepoURL: o.RepoURL,

		ApproverImage: o.ApproverImage,
		VirtcVersion:  o.VirtcVersion,

		ArgoCDNamespace: cmp.Or(o.ArgoCDNamespace, "argocd"),
	}
	var out []File
	err := fs.WalkDir(templates, "templates", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		text, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.Replace(strings.TrimPrefix(p, "templates/"), "CLUSTER", o.Cluster, 1)
		tmpl, err := template.New(rel).Delims("[[", "]]").Option("missingkey=error").Parse(string(text))
		if err != nil {
			return err
		}
		tenants := []string{""}
		if strings.Contains(rel, "TENANT") {
			tenants = o.Tenants
		}
		for _, tenant := range tenants {
			d.Tenant = tenant
			var buf bytes.Buffer
			if err := tmpl.Execute(&buf, d); err != nil {
				return err
			}
			out = append(out, File{Path: strings.ReplaceAll(rel, "TENANT", tenant), Data: buf.Bytes()})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The same wiring as an ArgoCD resource, for OpenShift GitOps.
	var patch, cm []byte
	for _, f := range out {
		switch f.Path {
		case "argocd/repo-server-patch.yaml":
			patch = f.Data
		case "argocd/argocd-cm-patch.yaml":
			cm = f.Data
		}
	}
	gitops, err := OpenShiftGitOps(patch, cm)
	if err != nil {
		return nil, err
	}
	out = append(out, File{Path: "argocd/openshift-gitops.yaml", Data: gitops})
	rbac, err := ControllerRBAC(d.ArgoCDNamespace)
	if err != nil {
		return nil, err
	}
	out = append(out, File{Path: "argocd/controller-rbac.yaml", Data: rbac})
	for _, name := range catalogFiles {
		b, err := defaults.Files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: path.Join("platform", name), Data: b})
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
