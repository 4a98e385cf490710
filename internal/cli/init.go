package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/initrepo"
)

// dnsLabel is a Kubernetes namespace name (RFC 1123 label): what a tenant
// and, as Argo CD cluster and Platform name, a cluster may be called.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// digestImage and digestHint are spec.approver.image's rule, read from its
// field in the Platform's type: --approver-image is refused as the build
// would refuse the line init writes.
var digestImage, digestHint = func() (*regexp.Regexp, string) {
	f, _ := reflect.TypeFor[api.Approver]().FieldByName("Image")
	return regexp.MustCompile(f.Tag.Get("pattern")), f.Tag.Get("hint")
}()

func runInit(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("init", "DIR", stderr)
	cluster := fs.String("cluster", "cluster1", "the cluster's name: its directory clusters/NAME, its Platform and its Argo CD cluster")
	var tenants stringList
	fs.Var(&tenants, "tenant", "a tenant to onboard, with one VM and an AppProject (repeatable; default team-a)")
	approver := fs.String("approver-image", "", "the virtc image, pinned by digest (host/path@sha256:<64 hex digits>), that the InstallPlan approver Job runs (default: none yet; the Platform says how to add it, and InstallPlans wait for a person until then)")
	argocdNS := fs.String("argocd-namespace", "argocd", "the namespace Argo CD runs in, where the AppProjects and the ApplicationSet go (openshift-gitops for OpenShift GitOps)")
	repoURL := fs.String("repo-url", "https://git.example.com/platform/virtual-machines.git", "the Git repository Argo CD reads this one from (the Applications' repoURL)")
	paths, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "virtc init: "+format+"\n", a...)
		fs.Usage()
		return ExitUsage
	}
	if len(paths) != 1 {
		return usage("name one directory to write the repository into (DIR)")
	}
	if len(tenants) == 0 {
		tenants = stringList{"team-a"}
	}
	if !dnsLabel.MatchString(*cluster) {
		return usage("--cluster %q: not a valid name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)", *cluster)
	}
	seen := map[string]bool{}
	for _, t := range tenants {
		if !dnsLabel.MatchString(t) {
			return usage("--tenant %q: not a valid namespace name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)", t)
		}
		if seen[t] {
			return usage("--tenant %q given twice", t)
		}
		seen[t] = true
	}
	if !dnsLabel.MatchString(*argocdNS) {
		return usage("--argocd-namespace %q: not a valid namespace name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)", *argocdNS)
	}
	if *approver != "" && !digestImage.MatchString(*approver) {
		return usage("--approver-image %q: not %s", *approver, digestHint)
	}
	// The URL goes into the AppProjects and the ApplicationSet, which
	// Argo CD applies with its own rights (initrepo.CheckRepoURL).
	if err := initrepo.CheckRepoURL(*repoURL); err != nil {
		return usage("--repo-url %q: %v", *repoURL, err)
	}
	dir := paths[0]
	if existing, err := firstFile(dir); err != nil {
		fmt.Fprintf(stderr, "virtc init: %v\n", err)
		return ExitUsage
	} else if existing != "" {
		fmt.Fprintf(stderr, "virtc init: %s: already exists; init writes only into a new or empty directory and never overwrites\n", existing)
		return ExitUsage
	}
	files, err := initrepo.Files(initrepo.Options{Cluster: *cluster, Tenants: tenants, RepoURL: *repoURL, ApproverImage: *approver, VirtcVersion: readBuildInfo().pin(), ArgoCDNamespace: *argocdNS})
	if err != nil {
		fmt.Fprintf(stderr, "virtc init: %v\n", err)
		return ExitUsage
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintf(stderr, "virtc init: %v\n", err)
			return ExitUsage
		}
		// O_EXCL: a file that appeared since the check is never overwritten.
		w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = w.Write(f.Data)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "virtc init: %v\n", err)
			return ExitUsage
		}
		fmt.Fprintln(stdout, p)
	}
	fmt.Fprintf(stderr, "virtc init: wrote %d files; build with: virtc build %s\n", len(files), filepath.Join(dir, "clusters", *cluster))
	if *approver == "" {
		fmt.Fprintf(stderr, "virtc init: no --approver-image: InstallPlans wait for a person until spec.approver is set in %s (its README.md, \"First steps\")\n", filepath.Join(dir, "clusters", *cluster, "platform.yaml"))
	}
	return ExitOK
}

// firstFile is the first entry (in lexical order, depth first) under dir,
// or "" when dir does not exist or is empty; an error when dir is a file.
func firstFile(dir string) (string, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return dir, nil
	}
	first := ""
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if !e.IsDir() {
			first = p
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if first == "" {
		// only empty directories: name the first of them
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", err
		}
		if len(entries) > 0 {
			first = filepath.Join(dir, entries[0].Name())
		}
	}
	return first, nil
}
