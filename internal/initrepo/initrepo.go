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
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"

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
	if err := CheckRepoURL(o.RepoURL); err != nil {
		return nil, fmt.Errorf("repository URL %q: %v", o.RepoURL, err)
	}
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
		tmpl, err := template.New(rel).Delims("[[", "]]").Option("missingkey=error").Funcs(template.FuncMap{"yaml": yamlString}).Parse(string(text))
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

// The repository URL comes from the command line and lands in the
// AppProjects and the ApplicationSet, which Argo CD applies with its own
// rights: a line break in it would add fields of the caller's choosing
// (a second source, a destination, a sync policy). So it must be a URL
// Argo CD clones from, and the templates write it as a YAML scalar
// (yamlString), never as raw text.

// scpLikeURL is git's scp-like form, user@host:path (git@github.com:org/repo.git),
// which Argo CD treats as an SSH URL.
var scpLikeURL = regexp.MustCompile(`^[A-Za-z0-9._~-]+@[A-Za-z0-9.-]+:[^:]`)

// uriScheme is RFC 3986's scheme.
var uriScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// CheckRepoURL says why s is not a Git repository URL Argo CD accepts:
// scheme://host/path (https, ssh, git, http) or the scp-like
// user@host:path, with only the characters RFC 3986 allows in a URL
// (percent-encode the others): no space, no control character.
func CheckRepoURL(s string) error {
	if s == "" {
		return errors.New("empty: want the Git repository Argo CD clones, such as https://git.example.com/platform/virtual-machines.git or git@git.example.com:platform/virtual-machines.git")
	}
	for _, r := range s {
		if !uriChar(r) {
			return fmt.Errorf("%q is not allowed in a URL (percent-encode it, or leave it out): want https://host/path or git@host:path", r)
		}
	}
	if scheme, rest, found := strings.Cut(s, "://"); found {
		if !uriScheme.MatchString(scheme) {
			return fmt.Errorf("%q is not a URL scheme: want https://host/path, ssh://git@host/path or git@host:path", scheme)
		}
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Errorf("not a URL (%v): want https://host/path or git@host:path", err)
		}
		if u.Host == "" || strings.HasPrefix(rest, "/") {
			return fmt.Errorf("no host: want %s://host/path", scheme)
		}
		return nil
	}
	if scpLikeURL.MatchString(s) {
		return nil
	}
	return errors.New("neither scheme://host/path nor user@host:path: want a URL such as https://git.example.com/platform/virtual-machines.git or git@git.example.com:platform/virtual-machines.git")
}

// uriChar reports a character RFC 3986 allows in a URL: unreserved,
// reserved, or the % of a percent-encoding.
func uriChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return r < 0x80 && strings.ContainsRune("-._~:/?#[]@!$&'()*+,;=%", r)
}

// plainYAML is what yamlString writes unquoted: characters no YAML
// indicator begins with, and no ": " or " #" (which need a space).
var plainYAML = regexp.MustCompile(`^[A-Za-z0-9._/~-][A-Za-z0-9._/~:@+%=-]*$`)

// yamlString is s as a YAML scalar that reads back as the string s,
// whatever it holds: plain where YAML reads it so (the plans of ordinary
// URLs stay as they were), else double-quoted (JSON's escapes, which YAML
// reads).
func yamlString(s string) string {
	if plainYAML.MatchString(s) {
		var v map[string]any
		if yaml.Unmarshal([]byte("v: "+s), &v) == nil && v["v"] == s {
			return s
		}
	}
	b, _ := json.Marshal(s)
	return string(b)
}
