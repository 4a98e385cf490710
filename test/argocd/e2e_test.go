// Package argocd runs a real Argo CD v3.6.1 (repo-server, the CMP server
// serving examples/argocd/plugin.yaml with virtc on its PATH, the
// application and ApplicationSet controllers, redis) against three
// conformance control planes (test/conformance: etcd and kube-apiserver,
// each with CDI's DataVolume immutability as a ValidatingAdmissionPolicy
// and an audit log): in-cluster, where Argo CD runs (the 4.22 CRDs), and
// the registered clusters east (4.22) and west (4.20). The source is a
// local git repository holding a copy of examples/. `make e2e-argocd` sets
// VIRTC_E2E_ARGOCD=1; plain `go test ./...` skips it.
package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/examples"
	cmpcache "github.com/virtc/virtc/internal/cmp"
	"github.com/virtc/virtc/test/conform"
	"github.com/virtc/virtc/test/conformance"
	"github.com/virtc/virtc/test/controllers"
	"github.com/virtc/virtc/test/internal/olm"
)

// GateEnv must be 1 for the test to run.
const GateEnv = "VIRTC_E2E_ARGOCD"

const (
	repoRoot        = "../.."
	argocdVersion   = "v3.6.1"
	argocdNamespace = "argocd"
	platformVersion = "4.22"
	appName         = "virtc-in-cluster"
	appDir          = "examples/argocd/clusters/east"
	// syncWaitDuration bounds each wait for Argo CD or a controller. Two
	// minutes was too little on a loaded machine: cold at 2b963c6, beside
	// make conformance, the ApplicationSet's first sync on cluster east
	// (OLM installing the platform) missed it; warm at ee92af0, beside
	// the boot suite, it took 1m48s. A wait that is reached returns at
	// once, so only a failing run is longer.
	syncWaitDuration = 4 * time.Minute
)

// tools are the programs the test runs.
type tools struct {
	cp        conformance.Binaries
	kcm       string // kube-controller-manager
	kubevirt  controllers.Tools
	cdi       controllers.CDITools
	olm       olm.Tools
	argocd    string // the cache directory of tools/build.sh
	redis     string
	git       string
	kustomize string
}

func findTools(t *testing.T) tools {
	t.Helper()
	if os.Getenv(GateEnv) != "1" {
		t.Skipf("the Argo CD end-to-end test starts a control plane and Argo CD; run `make e2e-argocd` (or set %s=1)", GateEnv)
	}
	var tl tools
	var err error
	if tl.cp, err = conformance.FindBinaries(); err != nil {
		conform.Skip(t, err)
	}
	if tl.kcm, err = conformance.FindControllerManager(); err != nil {
		conform.Skip(t, err)
	}
	if tl.kubevirt, err = controllers.FindTools(); err != nil {
		conform.Skip(t, err)
	}
	if tl.cdi, err = controllers.FindCDITools(); err != nil {
		conform.Skip(t, err)
	}
	if tl.olm, err = olm.FindTools(); err != nil {
		conform.Skip(t, err)
	}
	// the Job pod stand-in runs a container's command in a mount namespace
	if _, err := exec.LookPath("unshare"); err != nil {
		conform.Skip(t, fmt.Errorf("unshare (util-linux) not found: %v", err))
	}
	tl.argocd = argocdDir(t, "argocd", "argocd-applicationset-controller", "git-verify-wrapper.sh", "crds/application-crd.yaml")
	if tl.redis, err = exec.LookPath("redis-server"); err != nil {
		conform.Skip(t, fmt.Errorf("redis-server not found (Debian: apt-get install -y redis-server): %v", err))
	}
	if tl.git, err = exec.LookPath("git"); err != nil {
		conform.Skip(t, fmt.Errorf("git not found: %v", err))
	}
	// the repo-server runs kustomize from its PATH for application-kustomize.yaml
	if tl.kustomize, err = exec.LookPath("kustomize"); err != nil {
		conform.Skip(t, fmt.Errorf("kustomize not found on PATH (`make tools`): %v", err))
	}
	return tl
}

// oneBuildPerKey reads the plugin's log of builds (internal/cmp
// BuildsLog, in the sidecar's cache: the CMP server's TMPDIR) and
// requires, for commit rev, one build per cache key: the Applications of
// that commit called the plugin at once (20 status processors), and the
// tenants' calls of a cluster directory share one compile.
func (e *env) oneBuildPerKey(rev string) {
	file := filepath.Join(e.dir, "cmp-tmp", "virtc-cmp-cache", cmpcache.BuildsLog)
	data, err := os.ReadFile(file)
	if err != nil {
		e.t.Fatalf("the plugin's log of builds: %v", err)
	}
	perKey := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.Contains(line, " revision="+rev+" ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if k, ok := strings.CutPrefix(f, "key="); ok {
				perKey[k] = append(perKey[k], line)
			}
		}
	}
	if len(perKey) == 0 {
		e.t.Errorf("no build of commit %s in %s:\n%s", rev, file, data)
	}
	for k, lines := range perKey {
		if len(lines) != 1 {
			e.t.Errorf("commit %s: key %s was compiled %d times:\n%s", rev, k, len(lines), strings.Join(lines, "\n"))
		}
	}
	e.t.Logf("commit %s: %d cache keys, one build each (%s)", rev[:8], len(perKey), file)
}

// argocdDir is the cache directory of tools/build.sh's Argo CD, with the
// files named in it (a skip, or a failure in CI, without them).
func argocdDir(t *testing.T, files ...string) string {
	t.Helper()
	cache, err := conformance.CacheDir()
	if err != nil {
		conform.Skip(t, err)
	}
	version := argocdVersion
	if v := os.Getenv("ARGOCD_VERSION"); v != "" {
		version = v
	}
	dir := filepath.Join(cache, "argocd-"+version)
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			conform.Skip(t, fmt.Errorf("Argo CD %s missing in %s (build it with `make argocd-tools`): %v", version, dir, err))
		}
	}
	return dir
}

// env is one running Argo CD, the cluster it runs in (home, in-cluster)
// and the clusters it deploys to by name.
type env struct {
	t        *testing.T
	ctx      context.Context
	home     *cluster
	clusters map[string]*cluster // by Argo CD's name, in-cluster included
	cp       *conformance.ControlPlane
	repo     string // the git work tree the Applications read
	virtc    string
	dir      string // the work directory: the processes' logs
	binDir   string // virtc, on the PATH of Argo CD's processes
	// server is the address of Argo CD's API server (startSuite's
	// apiServer), "" without one
	server string
}

func TestArgoCD(t *testing.T) {
	tl := findTools(t)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	// Argo CD runs in "in-cluster" (application.yaml and
	// application-kustomize.yaml deploy there); applicationset.yaml deploys
	// clusters/east to "east" and clusters/west to "west", each serving the
	// CRDs of its Platform's version (4.22.3 and 4.20.21).
	e, standErrs := startSuite(t, ctx, tl, "virtc-e2e-argocd-", []clusterSpec{
		{name: "in-cluster", version: platformVersion, crdDirs: []string{filepath.Join(tl.argocd, "crds")}, kubevirt: true},
		{name: "east", version: "4.22", kubevirt: true, olm: true},
		{name: "west", version: "4.20"},
	}, false)
	t.Logf("setup done in %s", time.Since(began).Round(time.Second))

	scenarios := []struct {
		name string
		run  func(e *env)
	}{
		{"first sync", (*env).firstSync},
		{"refresh without change", (*env).noDrift},
		{"data disk growth", (*env).diskGrowth},
		{"size change", (*env).sizeChange},
		{"retire then remove beside an unrelated change", (*env).retireRemove},
		{"broken intent", (*env).brokenIntent},
		{"first sync through kustomize", (*env).kustomizeWiring},
		{"first sync of the ApplicationSet over two clusters", (*env).applicationSet},
		{"a z-stream upgrade lands on the pin through OLM's InstallPlans", (*env).zStreamUpgrade},
		{"a catalog ahead of the build: the minor upgrade to the table's head is refused before its first step", (*env).catalogMovedAfterTheBuild},
		{"a minor upgrade lands on the pin through OLM's InstallPlans", (*env).minorUpgrade},
		{"an unreachable platform pin is refused before any approval and its fix synced by the retry", (*env).platformUpgrade},
		{"a tenant's project refuses cluster-scoped objects and other tenants", (*env).tenantsProjectRefuses},
		{"no VM state holds a multi-wave sync", (*env).vmStatesDoNotHoldSyncs},
		{"snapshotBefore: the snapshot is created before the change it guards", (*env).snapshotBeforeChange},
		{"a VM's guest boots from the sync and halts from Git", (*env).vmBootsAndHalts},
	}
	for _, s := range scenarios {
		start := time.Now()
		ok := t.Run(s.name, func(t *testing.T) {
			sub := *e
			sub.t = t
			s.run(&sub)
		})
		t.Logf("%s: %s", s.name, time.Since(start).Round(time.Millisecond))
		if !ok {
			select {
			case err := <-standErrs:
				t.Logf("stand-in error: %v", err)
			default:
			}
			break
		}
	}
	t.Logf("e2e-argocd total %s", time.Since(began).Round(time.Second))
}

// startSuite starts the clusters of specs (the first is in-cluster, where
// Argo CD runs), the git repository, Argo CD (with its API server when
// apiServer) and the stand-ins; everything stops at the end of the test.
// The stand-ins' latest error is in the channel. With VIRTC_E2E_KEEP=1 the
// work directory (named keepPrefix...) is kept.
func startSuite(t *testing.T, ctx context.Context, tl tools, keepPrefix string, specs []clusterSpec, apiServer bool) (*env, chan error) {
	t.Helper()
	dir := t.TempDir()
	if os.Getenv("VIRTC_E2E_KEEP") == "1" {
		// keep the logs and state of every process for a look afterwards
		var err error
		if dir, err = os.MkdirTemp("", keepPrefix); err != nil {
			t.Fatal(err)
		}
		t.Logf("VIRTC_E2E_KEEP=1: work directory %s is kept", dir)
	}
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// virtc for the CMP server's and the repo-server's PATH, and beside it
	// virtc-cmp, plugin.yaml's generate command
	binDir := mk("bin")
	virtc := filepath.Join(binDir, "virtc")
	for _, name := range []string{"virtc", "virtc-cmp"} {
		build := exec.Command("go", "build", "-o", filepath.Join(binDir, name), "./cmd/"+name)
		build.Dir = repoRoot
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
	}

	schemas := os.Getenv("VIRTC_SCHEMAS")
	if schemas == "" {
		schemas = filepath.Join(repoRoot, "..", "shared", "schemas-upstream")
	}
	for _, sp := range specs {
		if _, err := os.Stat(filepath.Join(schemas, sp.version, "crd-yaml")); err != nil {
			conform.Skip(t, fmt.Errorf("the %s CRDs are missing (VIRTC_SCHEMAS): %v", sp.version, err))
		}
	}
	cs, err := startClusters(ctx, tl.cp, tl, virtc, mk("clusters"), schemas, specs)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, home: cs[0], cp: cs[0].cp, clusters: map[string]*cluster{}, virtc: virtc, dir: dir, binDir: binDir}
	for _, c := range cs {
		t.Cleanup(c.stop)
		e.clusters[c.name] = c
		t.Logf("cluster %s (%s CRDs): control plane ready in %s", c.name, c.version, c.cp.Startup.Round(time.Millisecond))
	}

	e.repo = e.gitRepo(mk("git"))
	e.setupArgoCD()
	classes := e.storageClasses()
	for _, c := range cs {
		if err := c.storageClasses(classes); err != nil {
			t.Fatal(err)
		}
	}
	// the golden images the VMs synced into a cluster with KubeVirt clone
	// from (the DataSources of their templates), as the platform has them
	var vmObjs []conformance.Object
	vmObjs = append(vmObjs, e.built("argocd/clusters/east", "all", "")...)
	vmObjs = append(vmObjs, e.built("argocd/kustomize-app", "all", "")...)
	for _, c := range cs {
		if c.kv == nil {
			continue
		}
		if err := controllers.PrepareGoldenImages(ctx, c.cp, vmObjs); err != nil {
			t.Fatal(err)
		}
	}

	standErrs := make(chan error, len(cs))
	for _, c := range cs {
		go (&standIn{cp: c.cp, kubevirt: c.kv != nil, olm: c.olm != nil}).run(ctx, standErrs)
		go every(ctx, standErrs, c.jobs.sync)
		if c.olm != nil {
			go every(ctx, standErrs, func(ctx context.Context) error {
				return olm.RunPods(ctx, c.cp, "openshift-cnv", c.nodes.Names[0])
			})
		}
		if c.kv != nil {
			go every(ctx, standErrs, c.syncKubeVirt)
		}
	}

	e.startArgoCD(tl, dir, binDir, apiServer)
	return e, standErrs
}

// kubectl runs kubectl and fails the test unless it exits 0.
func (e *env) kubectl(stdin []byte, args ...string) []byte {
	e.t.Helper()
	out, err := e.cp.MustKubectl(e.ctx, stdin, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// git runs git in the repository.
func (e *env) git(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = e.repo
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@virtc.dev",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@virtc.dev", "GIT_CONFIG_NOSYSTEM=1", "HOME="+e.repo)
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitRepo is a git repository on branch main whose first commit is a copy
// of the repository's examples/.
func (e *env) gitRepo(dir string) string {
	e.repo = dir
	cp := exec.Command("cp", "-r", filepath.Join(repoRoot, "examples"), dir)
	if out, err := cp.CombinedOutput(); err != nil {
		e.t.Fatalf("copy examples: %v\n%s", err, out)
	}
	e.git("init", "-q", "-b", "main")
	e.git("add", "-A")
	e.git("commit", "-q", "-m", "examples")
	return dir
}

// commit writes files (path relative to the repository: content; empty
// content removes the file) and commits them; it returns the new revision.
func (e *env) commit(msg string, files map[string]string) string {
	e.t.Helper()
	for p, content := range files {
		if content == "" { // removed
			if err := os.Remove(filepath.Join(e.repo, p)); err != nil {
				e.t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(e.repo, p), []byte(content), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	e.git("add", "-A")
	e.git("commit", "-q", "-m", msg)
	return e.git("rev-parse", "HEAD")
}

func (e *env) read(p string) string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.repo, p))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

// storageClasses names the classes of the claims the Application's
// directory would hold with a data disk on web01 (the catalog's default).
func (e *env) storageClasses() []string {
	e.t.Helper()
	dir := e.t.TempDir()
	cmd := exec.Command("cp", "-r", filepath.Join(e.repo, "examples"), dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("%v\n%s", err, out)
	}
	vm := filepath.Join(dir, appDir, "web01.yaml")
	data, err := os.ReadFile(vm)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(vm, []byte(withDisk(string(data), "10Gi")), 0o644); err != nil {
		e.t.Fatal(err)
	}
	out, err := exec.Command(e.virtc, "build", "--catalog", filepath.Join(dir, "examples/argocd/platform"), filepath.Join(dir, appDir)).Output()
	if err != nil {
		e.t.Fatalf("virtc build: %v", err)
	}
	objs, err := conformance.ParseObjects(out)
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		if o.Kind == "PersistentVolumeClaim" {
			spec, _ := o.Doc["spec"].(map[string]any)
			if n, _ := spec["storageClassName"].(string); n != "" {
				names = append(names, n)
			}
		}
	}
	return names
}

// withDisk adds a data disk "data" of size to a VM intent.
func withDisk(vm, size string) string {
	return strings.Replace(vm, "spec:\n", "spec:\n  disks:\n    - name: data\n      size: "+size+"\n", 1)
}

// setupArgoCD creates the argocd namespace with the ConfigMaps and Secret
// the application controller reads (util/settings of argo-cd v3.6.1:
// argocd-cm, argocd-secret, argocd-rbac-cm, labelled part-of argocd),
// argocd-cm carrying both patches examples/argocd/README.md applies
// (argocd-cm-patch.yaml's health checks and ignore rules,
// argocd-cm-kustomize-patch.yaml's kustomize.buildOptions for the
// kustomize wiring), the default AppProject, and a cluster Secret for each
// cluster besides in-cluster.
func (e *env) setupArgoCD() {
	e.kubectl([]byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: argocd}\n"), "apply", "-f", "-")
	cmData := map[string]any{}
	for _, f := range []string{"argocd-cm-patch.yaml", "argocd-cm-kustomize-patch.yaml"} {
		patch, err := os.ReadFile(filepath.Join(repoRoot, "examples/argocd", f))
		if err != nil {
			e.t.Fatal(err)
		}
		objs, err := conformance.ParseObjects(patch)
		if err != nil || len(objs) != 1 || objs[0].Name != "argocd-cm" {
			e.t.Fatalf("%s: want one ConfigMap argocd-cm: %v", f, err)
		}
		data, _ := objs[0].Doc["data"].(map[string]any)
		if len(data) == 0 {
			e.t.Fatalf("%s has no data", f)
		}
		for k, v := range data {
			if _, dup := cmData[k]; dup {
				e.t.Fatalf("%s: key %s set by both patches", f, k)
			}
			cmData[k] = v
		}
	}
	cmJSON, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "argocd-cm", "namespace": argocdNamespace,
			"labels": map[string]any{"app.kubernetes.io/part-of": "argocd"}},
		"data": cmData,
	})
	e.kubectl(cmJSON, "apply", "-f", "-")
	e.kubectl([]byte(`apiVersion: v1
kind: Secret
metadata: {name: argocd-secret, namespace: argocd, labels: {app.kubernetes.io/part-of: argocd}}
stringData: {server.secretkey: e2e-not-secret}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm, namespace: argocd, labels: {app.kubernetes.io/part-of: argocd}}
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: default, namespace: argocd}
spec:
  sourceRepos: ['*']
  destinations: [{server: '*', namespace: '*'}]
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
`), "apply", "-f", "-")
	for _, c := range e.clusters {
		if c == e.home {
			continue
		}
		secret, err := c.clusterSecret()
		if err != nil {
			e.t.Fatal(err)
		}
		e.kubectl(secret, "apply", "-f", "-")
	}
}

// operatorGrants are what OpenShift GitOps' operator grants the default
// instance's application controller, which does not run here (the
// operator's module is not on the proxy; docs/testing.md lists this
// stand-in): in Argo CD's namespace, everything (argocd-operator v0.18.0
// controllers/argocd/policyrule.go policyRuleForApplicationController, a
// Role there); in the cluster, reading everything and writing OLM,
// OpenShift's configuration, RBAC, storage, namespaces, claims and config
// maps (gitops-operator v1.20.0 controllers/argocd/openshift/openshift.go
// policyRulesForClusterConfig, its ClusterRole for a cluster-scoped
// instance), both bound to the controller's ServiceAccount. The groups of
// OpenShift only (operator, user, config, console, machine,
// machineconfiguration, compliance) are left out: none is served here.
const operatorGrants = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: argocd-application-controller, namespace: argocd}
rules:
- {apiGroups: ['*'], resources: ['*'], verbs: ['*']}
- {apiGroups: [''], resources: [serviceaccounts], verbs: [impersonate]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: argocd-application-controller, namespace: argocd}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: argocd-application-controller}
subjects: [{kind: ServiceAccount, name: argocd-application-controller, namespace: argocd}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: openshift-gitops-cluster-config}
rules:
- {apiGroups: ['*'], resources: ['*'], verbs: [get, list, watch]}
- {nonResourceURLs: ['*'], verbs: [get, list]}
- {apiGroups: [operators.coreos.com], resources: ['*'], verbs: ['*']}
- {apiGroups: [''], resources: [namespaces, persistentvolumeclaims, persistentvolumes, configmaps], verbs: ['*']}
- {apiGroups: [rbac.authorization.k8s.io], resources: ['*'], verbs: ['*']}
- {apiGroups: [storage.k8s.io], resources: ['*'], verbs: ['*']}
- {apiGroups: [''], resources: [serviceaccounts], verbs: [impersonate]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: openshift-gitops-cluster-config}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: openshift-gitops-cluster-config}
subjects: [{kind: ServiceAccount, name: argocd-application-controller, namespace: argocd}]
`

// controllerKubeconfig is a kubeconfig of the application controller's
// ServiceAccount (argocd/argocd-application-controller), bound to
// operatorGrants and to examples/argocd/controller-rbac.yaml as the
// example's README applies it: what the controller of an Argo CD run by
// OpenShift GitOps holds.
func (e *env) controllerKubeconfig(dir string) string {
	e.t.Helper()
	rbac, err := os.ReadFile(filepath.Join(repoRoot, "examples/argocd/controller-rbac.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.kubectl([]byte(operatorGrants), "apply", "-f", "-")
	e.kubectl(rbac, "apply", "-f", "-")
	kc, err := controllers.ServiceAccountKubeconfig(e.ctx, e.cp, dir, argocdNamespace, "argocd-application-controller")
	if err != nil {
		e.t.Fatal(err)
	}
	return kc
}

// waitPort waits until something listens on 127.0.0.1:port.
func waitPort(ctx context.Context, p *conformance.Process, port int) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if p.Exited() || time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("nothing listens on port %d: %v\n%s", port, err, p.Tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startArgoCD starts redis, the CMP server with plugin.yaml and virtc,
// the repo-server (virtc and kustomize on its PATH), the ApplicationSet
// controller and the application controller, and with apiServer the API
// server (plaintext, e.server: what the argocd CLI logs in to), each by
// its PID (stopped at the end of the test).
func (e *env) startArgoCD(tl tools, dir, binDir string, apiServer bool) {
	t := e.t
	port := func() int {
		p, err := conformance.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	start := func(name, bin string, env []string, args ...string) *conformance.Process {
		p, err := conformance.StartProcess(dir, name, bin, env, args...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(p.Tail())
			}
			p.Stop()
		})
		return p
	}
	redisPort := port()
	redis := start("redis", tl.redis, nil, "--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir)
	if err := waitPort(e.ctx, redis, redisPort); err != nil {
		t.Fatal(err)
	}
	redisAddr := "127.0.0.1:" + strconv.Itoa(redisPort)

	// The CMP server: plugin.yaml as Argo CD mounts it, virtc on PATH, its
	// socket in the directory the repo-server scans.
	sockets := filepath.Join(dir, "plugins")
	config := filepath.Join(dir, "cmp-config")
	for _, d := range []string{sockets, config, filepath.Join(dir, "cmp-tmp"), filepath.Join(dir, "repo-tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	plugin, err := os.ReadFile(filepath.Join(repoRoot, "examples/argocd/plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "plugin.yaml"), plugin, 0o644); err != nil {
		t.Fatal(err)
	}
	path := binDir + string(os.PathListSeparator) + tl.argocd + string(os.PathListSeparator) + os.Getenv("PATH")
	cmp := start("argocd-cmp-server", filepath.Join(tl.argocd, "argocd-cmp-server"),
		[]string{"PATH=" + path, "ARGOCD_PLUGINSOCKFILEPATH=" + sockets, "TMPDIR=" + filepath.Join(dir, "cmp-tmp")},
		"--config-dir-path", config, "--loglevel", "info", "--logformat", "text")
	deadline := time.Now().Add(60 * time.Second)
	for {
		socks, _ := filepath.Glob(filepath.Join(sockets, "*.sock"))
		if len(socks) > 0 {
			break
		}
		if cmp.Exited() || time.Now().After(deadline) {
			t.Fatalf("the CMP server made no socket in %s\n%s", sockets, cmp.Tail())
		}
		time.Sleep(200 * time.Millisecond)
	}

	repoPort := port()
	repo := start("argocd-repo-server", filepath.Join(tl.argocd, "argocd-repo-server"),
		[]string{"PATH=" + path, "ARGOCD_PLUGINSOCKFILEPATH=" + sockets, "TMPDIR=" + filepath.Join(dir, "repo-tmp"),
			"ARGOCD_GPG_ENABLED=false", "HOME=" + dir},
		"--port", strconv.Itoa(repoPort), "--address", "127.0.0.1", "--metrics-port", strconv.Itoa(port()),
		"--disable-tls", "--client-ca-path=", "--redis", redisAddr, "--loglevel", "info", "--logformat", "text",
		// new commits are seen at once (the default caches a branch's
		// revision for the reconciliation timeout)
		"--revision-cache-expiration", "1s")
	if err := waitPort(e.ctx, repo, repoPort); err != nil {
		t.Fatal(err)
	}

	// The ApplicationSet controller (applicationset.yaml): its git
	// directory generator asks the repo-server for the directories.
	start("argocd-applicationset-controller", filepath.Join(tl.argocd, "argocd-applicationset-controller"),
		[]string{"KUBECONFIG=" + e.cp.Kubeconfig, "HOME=" + dir, "PATH=" + path},
		"--kubeconfig", e.cp.Kubeconfig, "--namespace", argocdNamespace,
		"--argocd-repo-server", "127.0.0.1:"+strconv.Itoa(repoPort), "--repo-server-plaintext",
		"--metrics-addr", "127.0.0.1:"+strconv.Itoa(port()), "--probe-addr", "127.0.0.1:"+strconv.Itoa(port()),
		"--webhook-addr", "127.0.0.1:"+strconv.Itoa(port()), "--enable-scm-providers=false",
		"--loglevel", "info", "--logformat", "text")

	// The controller runs as its ServiceAccount with OpenShift GitOps'
	// grants and examples/argocd/controller-rbac.yaml: its own
	// Applications, and the in-cluster destination's objects (Argo CD
	// reaches the cluster it runs in as itself).
	controller := e.controllerKubeconfig(dir)
	start("argocd-application-controller", filepath.Join(tl.argocd, "argocd-application-controller"),
		[]string{"KUBECONFIG=" + controller, "ARGOCD_FAKE_IN_CLUSTER=true", "HOME=" + dir, "PATH=" + path},
		"--kubeconfig", controller, "--namespace", argocdNamespace,
		"--repo-server", "127.0.0.1:"+strconv.Itoa(repoPort), "--repo-server-plaintext",
		"--redis", redisAddr, "--metrics-port", strconv.Itoa(port()),
		// The default 20 status processors (argo-cd v3.6.1
		// cmd/argocd-application-controller/commands/
		// argocd_application_controller.go): a commit's Applications call
		// the plugin at once, and the fleet's tenants compile once
		// (applicationSet reads the plugin's builds.log).
		"--operation-processors", "2",
		"--app-resync", "30", "--self-heal-timeout-seconds", "2",
		// resource health in the Application's status, for the messages
		"--persist-resource-health=true",
		"--loglevel", "info", "--logformat", "text")

	if !apiServer {
		return
	}
	// The API server, as the install manifests run it behind a TLS-ending
	// route (--insecure: plaintext gRPC and HTTP), with the repo-server and
	// redis above: the CLI's diff reads the controller's cache of the live
	// state from that redis (argo-cd v3.6.1 server/application/
	// application.go GetManagedResources). No admin password is set, so it
	// creates one in Secret argocd-initial-admin-secret
	// (util/settings/settings.go), which `argocd admin initial-password`
	// prints.
	serverPort := port()
	server := start("argocd-server", filepath.Join(tl.argocd, "argocd-server"),
		[]string{"KUBECONFIG=" + e.cp.Kubeconfig, "ARGOCD_FAKE_IN_CLUSTER=true", "HOME=" + dir, "PATH=" + path},
		"--kubeconfig", e.cp.Kubeconfig, "--namespace", argocdNamespace, "--insecure",
		"--address", "127.0.0.1", "--port", strconv.Itoa(serverPort), "--metrics-port", strconv.Itoa(port()),
		"--repo-server", "127.0.0.1:"+strconv.Itoa(repoPort), "--repo-server-plaintext",
		"--redis", redisAddr, "--staticassets", filepath.Join(dir, "argocd-ui"),
		"--loglevel", "info", "--logformat", "text")
	if err := waitPort(e.ctx, server, serverPort); err != nil {
		t.Fatal(err)
	}
	e.server = "127.0.0.1:" + strconv.Itoa(serverPort)
}

// app is what the test reads of an Application.
type app struct {
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Project string `json:"project"`
	} `json:"spec"`
	Status struct {
		Sync struct {
			Status   string `json:"status"`
			Revision string `json:"revision"`
		} `json:"sync"`
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
		ReconciledAt string `json:"reconciledAt"`
		Conditions   []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"conditions"`
		OperationState *struct {
			Phase      string `json:"phase"`
			Message    string `json:"message"`
			RetryCount int    `json:"retryCount"`
			SyncResult struct {
				Revision  string `json:"revision"`
				Resources []struct {
					Kind      string `json:"kind"`
					Namespace string `json:"namespace"`
					Name      string `json:"name"`
					Status    string `json:"status"`
					Message   string `json:"message"`
					HookPhase string `json:"hookPhase"`
					SyncPhase string `json:"syncPhase"`
				} `json:"resources"`
			} `json:"syncResult"`
			StartedAt  string `json:"startedAt"`
			FinishedAt string `json:"finishedAt"`
		} `json:"operationState"`
		Resources []struct {
			Group     string `json:"group"`
			Kind      string `json:"kind"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
			Status    string `json:"status"`
			Health    *struct {
				Status  string `json:"status"`
				Message string `json:"message"`
			} `json:"health"`
		} `json:"resources"`
		History []struct {
			Revision string `json:"revision"`
		} `json:"history"`
	} `json:"status"`
}

func (a app) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sync %s at %.8s, health %s", a.Status.Sync.Status, a.Status.Sync.Revision, a.Status.Health.Status)
	if op := a.Status.OperationState; op != nil {
		fmt.Fprintf(&b, "; operation %s at %.8s: %s", op.Phase, op.SyncResult.Revision, op.Message)
	}
	for _, c := range a.Status.Conditions {
		fmt.Fprintf(&b, "\n  condition %s: %s", c.Type, c.Message)
	}
	for _, r := range a.Status.Resources {
		if r.Status != "Synced" || (r.Health != nil && r.Health.Status != "Healthy") {
			h := ""
			if r.Health != nil {
				h = r.Health.Status + " " + r.Health.Message
			}
			fmt.Fprintf(&b, "\n  %s %s/%s: %s %s", r.Kind, r.Namespace, r.Name, r.Status, h)
		}
	}
	return b.String()
}

func (e *env) app() app { return e.appNamed(appName) }

func (e *env) appNamed(name string) app {
	e.t.Helper()
	a, err := e.getApp(name)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// getApp reads an Application (an error when there is none yet).
func (e *env) getApp(name string) (app, error) {
	var a app
	data, err := e.cp.Get(e.ctx, "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/"+name)
	if err == nil {
		err = json.Unmarshal(data, &a)
	}
	return a, err
}

// waitApp polls the Application until ok holds, failing after the sync
// wait with its last state.
func (e *env) waitApp(what string, ok func(a app) bool) app {
	e.t.Helper()
	return e.waitAppNamed(appName, what, ok)
}

func (e *env) waitAppNamed(name, what string, ok func(a app) bool) app {
	e.t.Helper()
	deadline := time.Now().Add(syncWaitDuration)
	for {
		if a, err := e.getApp(name); err == nil {
			if ok(a) {
				return a
			}
			if time.Now().After(deadline) {
				e.t.Fatalf("%s: %s: not reached after %s: %s", name, what, syncWaitDuration, a)
			}
		} else if time.Now().After(deadline) {
			e.t.Fatalf("%s: %s: no Application after %s: %v", name, what, syncWaitDuration, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// synced is true when the Application is Synced and Healthy at rev and its
// last sync of rev succeeded.
func synced(rev string) func(a app) bool {
	return func(a app) bool {
		op := a.Status.OperationState
		return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy" &&
			a.Status.Sync.Revision == rev && op != nil && op.Phase == "Succeeded" && op.SyncResult.Revision == rev
	}
}

// refresh asks the controller to compare again (the annotation
// `argocd app get --refresh` sets) and waits until it has: the controller
// removes the annotation once the comparison is done (argo-cd v3.6.1
// controller/appcontroller.go, persistReconciliationStatus).
func (e *env) refresh() app {
	e.t.Helper()
	return e.refreshApp(appName)
}

func (e *env) refreshApp(name string) app {
	e.t.Helper()
	e.kubectl(nil, "-n", argocdNamespace, "annotate", "--overwrite", "application", name, "argocd.argoproj.io/refresh=normal")
	return e.waitAppNamed(name, "refresh", func(a app) bool {
		_, pending := a.Metadata.Annotations["argocd.argoproj.io/refresh"]
		return !pending
	})
}

// liveJSON fetches one object.
func (e *env) liveJSON(path string, v any) {
	e.t.Helper()
	e.liveJSONOn(e.home, path, v)
}

// built is what an Application deploys from a folder of the git
// repository's examples/: `virtc build` with the arguments of the line of
// examples/builds.txt for the folder, scope (all: no --scope) and tenant
// ("": no --tenant) (e2e TestCMPContract and TestKustomizeExamples hold
// the plugin's and kustomize's output to those lines).
func (e *env) built(dir, scope, tenant string) []conformance.Object {
	e.t.Helper()
	builds, err := examples.Builds(e.repo)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, b := range builds {
		if b.Dir != dir || b.Args == nil {
			continue
		}
		if flagValue(b.Args, "scope", "all") == scope && flagValue(b.Args, "tenant", "") == tenant {
			return e.build(dir, b.Args...)
		}
	}
	e.t.Fatalf("examples/builds.txt has no build of %s with scope %s and tenant %q", dir, scope, tenant)
	return nil
}

// flagValue is the value of --name (or --name=) in args, def without it.
func flagValue(args []string, name, def string) string {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return def
}

// build is `virtc build args` in a folder of the git repository's examples/.
func (e *env) build(dir string, args ...string) []conformance.Object {
	e.t.Helper()
	cmd := exec.Command(e.virtc, append([]string{"build"}, args...)...)
	cmd.Dir = filepath.Join(e.repo, "examples", filepath.FromSlash(dir))
	out, err := cmd.Output()
	if err != nil {
		e.t.Fatalf("virtc build %s in examples/%s: %v", strings.Join(args, " "), dir, err)
	}
	objs, err := conformance.ParseObjects(out)
	if err != nil {
		e.t.Fatal(err)
	}
	return objs
}

// checkOrder holds the writes Argo CD made to c since a time to the order
// of the waves of objs, a build (see checkOrder in audit_test.go), and
// returns how many objects were written.
func (e *env) checkOrder(c *cluster, objs []conformance.Object, since time.Time, all bool) int {
	e.t.Helper()
	n, err := checkOrder(c, objs, since, all)
	if err != nil {
		e.t.Error(err)
	}
	e.t.Logf("%s: %d objects written in the order of their waves (audit log)", c.name, n)
	return n
}

// wantResources checks that an Application's resources are exactly a
// build's objects.
func (e *env) wantResources(name string, a app, objs []conformance.Object, build string) {
	e.t.Helper()
	if got, want := resourcesOf(a), namesOf(objs); !slices.Equal(got, want) {
		e.t.Errorf("%s's resources:\n  %s\nwant virtc's build%s:\n  %s", name, strings.Join(got, "\n  "), build, strings.Join(want, "\n  "))
	}
}

// (1) The Application of examples/argocd/application.yaml, pointed at the
// local repository, syncs (automated) to Synced and Healthy, and Argo CD
// writes the objects in the order of their waves (the API server's audit
// log; golden/waves_test.go checks the waves themselves on the goldens).
func (e *env) firstSync() {
	start := time.Now()
	e.applyExample("application.yaml")
	rev := e.git("rev-parse", "HEAD")
	a := e.waitApp("first sync", synced(rev))
	e.t.Logf("first sync Synced and Healthy in %s: %s", time.Since(start).Round(time.Millisecond), a)
	e.checkOrder(e.home, e.built("argocd/clusters/east", "all", ""), start, true)
	e.wantInstancetype("shop", "web01", "u1.medium")
	e.wantCDIDecided(e.home, e.built("argocd/clusters/east", "all", ""))
}

// wantCDIDecided checks, on a cluster where CDI's real cdi-controller runs,
// that every root disk of the VMs of objs (a build) is what CDI decided:
// the DataVolume virt-controller created from the VM's template Succeeded,
// its claim created by CDI, controlled by the DataVolume, of the size the
// template asks, and marked cloned by CDI's host-assisted clone
// (CDI v1.65.0 pkg/controller/clone-controller.go updatePvcFromPod:
// k8s.io/CloneOf), whose pods the HostClones stand-in played.
func (e *env) wantCDIDecided(c *cluster, objs []conformance.Object) {
	e.t.Helper()
	if c.cdi == nil {
		e.t.Fatalf("%s runs no cdi-controller", c.name)
	}
	// the DataVolume's phase follows the upload pod's, the claim's
	// CloneOf comes with the clone controller's next reconcile
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, errs := e.cdiDecided(c, objs)
		if len(errs) == 0 || time.Now().After(deadline) {
			for _, err := range errs {
				e.t.Error(err)
			}
			if n == 0 {
				e.t.Errorf("%s: the build has no VM with a DataVolume template", c.name)
			}
			e.t.Logf("%s: %d root-disk DataVolumes cloned by cdi-controller (host-assisted), Succeeded, claims of the templates' sizes", c.name, n)
			return
		}
		time.Sleep(time.Second)
	}
}

// cdiDecided is one look for wantCDIDecided: the number of root disks and
// what is not as CDI should have left it.
func (e *env) cdiDecided(c *cluster, objs []conformance.Object) (int, []error) {
	e.t.Helper()
	var errs []error
	n := 0
	for _, o := range objs {
		if o.Kind != "VirtualMachine" {
			continue
		}
		spec, _ := o.Doc["spec"].(map[string]any)
		templates, _ := spec["dataVolumeTemplates"].([]any)
		for _, tpl := range templates {
			tm, _ := tpl.(map[string]any)
			md, _ := tm["metadata"].(map[string]any)
			ts, _ := tm["spec"].(map[string]any)
			st, _ := ts["storage"].(map[string]any)
			res, _ := st["resources"].(map[string]any)
			req, _ := res["requests"].(map[string]any)
			want := resource.MustParse(fmt.Sprint(req["storage"]))
			name, _ := md["name"].(string)
			var dv struct {
				Status struct {
					Phase string `json:"phase"`
				} `json:"status"`
			}
			e.liveJSONOn(c, "/apis/cdi.kubevirt.io/v1beta1/namespaces/"+o.Namespace+"/datavolumes/"+name, &dv)
			var claim struct {
				Metadata struct {
					Annotations     map[string]string `json:"annotations"`
					OwnerReferences []struct {
						Kind       string `json:"kind"`
						Name       string `json:"name"`
						Controller bool   `json:"controller"`
					} `json:"ownerReferences"`
				} `json:"metadata"`
				Spec struct {
					Resources struct {
						Requests map[string]resource.Quantity `json:"requests"`
					} `json:"resources"`
				} `json:"spec"`
			}
			e.liveJSONOn(c, "/api/v1/namespaces/"+o.Namespace+"/persistentvolumeclaims/"+name, &claim)
			owner := ""
			for _, r := range claim.Metadata.OwnerReferences {
				if r.Controller {
					owner = r.Kind + "/" + r.Name
				}
			}
			got := claim.Spec.Resources.Requests["storage"]
			if dv.Status.Phase != "Succeeded" || claim.Metadata.Annotations["k8s.io/CloneOf"] != "true" || owner != "DataVolume/"+name || got.Cmp(want) != 0 {
				errs = append(errs, fmt.Errorf("%s: DataVolume %s/%s: phase %q, claim controller %q, CloneOf %q, request %s; want CDI's Succeeded clone into the DataVolume's claim of %s",
					c.name, o.Namespace, name, dv.Status.Phase, owner, claim.Metadata.Annotations["k8s.io/CloneOf"], got.String(), want.String()))
			}
			n++
		}
	}
	return n, errs
}

// wantInstancetype checks the instancetype of a live VM in the cluster
// Argo CD runs in: the one virtc compiled.
func (e *env) wantInstancetype(ns, name, want string) {
	e.t.Helper()
	var vm struct {
		Spec struct {
			Instancetype struct{ Name string } `json:"instancetype"`
		} `json:"spec"`
	}
	e.liveJSON("/apis/kubevirt.io/v1/namespaces/"+ns+"/virtualmachines/"+name, &vm)
	if vm.Spec.Instancetype.Name != want {
		e.t.Errorf("%s/%s's instancetype is %q, want %s", ns, name, vm.Spec.Instancetype.Name, want)
	}
}

// (2) A refresh with nothing changed finds no drift: still Synced, no new
// sync (history unchanged), with the default diff and with server-side
// diff.
func (e *env) noDrift() {
	before := e.app()
	for _, mode := range []string{"default diff", "server-side diff"} {
		if mode == "server-side diff" {
			e.kubectl(nil, "-n", argocdNamespace, "annotate", "--overwrite", "application", appName,
				"argocd.argoproj.io/compare-options=ServerSideDiff=true")
		}
		a := e.refresh()
		if a.Status.Sync.Status != "Synced" || a.Status.Health.Status != "Healthy" {
			e.t.Errorf("%s: after a refresh without change: %s", mode, a)
		}
		if len(a.Status.History) != len(before.Status.History) {
			e.t.Errorf("%s: a refresh without change synced again (history %d -> %d)", mode, len(before.Status.History), len(a.Status.History))
		}
	}
	e.kubectl(nil, "-n", argocdNamespace, "annotate", "application", appName, "argocd.argoproj.io/compare-options-")
}

func (e *env) claimSize(ns, name string) string {
	var pvc struct {
		Spec struct {
			Resources struct {
				Requests map[string]string `json:"requests"`
			} `json:"resources"`
		} `json:"spec"`
	}
	e.liveJSON("/api/v1/namespaces/"+ns+"/persistentvolumeclaims/"+name, &pvc)
	return pvc.Spec.Resources.Requests["storage"]
}

// dataVolumeCount is the number of DataVolumes in a namespace.
func (e *env) dataVolumeCount(ns string) int {
	var l struct{ Items []json.RawMessage }
	e.liveJSON("/apis/cdi.kubevirt.io/v1beta1/namespaces/"+ns+"/datavolumes", &l)
	return len(l.Items)
}

// (3) A data disk is added, then grown: the claim grows, no DataVolume
// spec changes (CDI's immutability policy is enforced), the sync succeeds.
func (e *env) diskGrowth() {
	vmPath := appDir + "/web01.yaml"
	orig := e.read(vmPath)
	since := time.Now()
	rev := e.commit("web01: a data disk", map[string]string{vmPath: withDisk(orig, "10Gi")})
	e.refresh()
	e.waitApp("data disk added", synced(rev))
	// the new claim is written before the VM that mounts it (same wave)
	if n := e.checkOrder(e.home, e.built("argocd/clusters/east", "all", ""), since, false); n < 2 {
		e.t.Errorf("adding a data disk wrote %d objects, want the claim and the VM", n)
	}
	claim := claimName(e)
	if got := e.claimSize("shop", claim); got != "10Gi" {
		e.t.Fatalf("claim %s requests %s, want 10Gi", claim, got)
	}
	dvs := e.dataVolumeCount("shop")
	start := time.Now()
	rev = e.commit("web01: grow the data disk", map[string]string{vmPath: withDisk(orig, "20Gi")})
	e.refresh()
	a := e.waitApp("data disk grown", synced(rev))
	e.t.Logf("growth synced in %s: %s", time.Since(start).Round(time.Millisecond), a)
	if got := e.claimSize("shop", claim); got != "20Gi" {
		e.t.Errorf("claim %s requests %s after the growth, want 20Gi", claim, got)
	}
	if n := e.dataVolumeCount("shop"); n != dvs {
		e.t.Errorf("DataVolumes in shop: %d before the growth, %d after", dvs, n)
	}
}

// claimName is the one claim in namespace shop that virtc wrote: not a
// DataVolume's (on in-cluster, CDI's cdi-controller creates the root
// disks' claims of the DataVolumes virt-controller creates, each controlled
// by its DataVolume).
func claimName(e *env) string {
	e.t.Helper()
	var l struct {
		Items []struct {
			Metadata struct {
				Name            string `json:"name"`
				OwnerReferences []struct {
					Kind string `json:"kind"`
				} `json:"ownerReferences"`
			} `json:"metadata"`
		}
	}
	e.liveJSON("/api/v1/namespaces/shop/persistentvolumeclaims", &l)
	var names []string
	for _, it := range l.Items {
		ofDataVolume := false
		for _, o := range it.Metadata.OwnerReferences {
			ofDataVolume = ofDataVolume || o.Kind == "DataVolume"
		}
		if !ofDataVolume {
			names = append(names, it.Metadata.Name)
		}
	}
	if len(names) != 1 {
		e.t.Fatalf("want one claim of virtc's in shop, have %v", names)
	}
	return names[0]
}

// (4) The VM's size changes: the VM's instancetype follows.
func (e *env) sizeChange() {
	vmPath := appDir + "/web01.yaml"
	cur := e.read(vmPath)
	next := strings.Replace(cur, "size: u1.medium", "size: u1.large", 1)
	if next == cur {
		e.t.Fatal("web01.yaml: no size u1.medium to change")
	}
	rev := e.commit("web01: u1.large", map[string]string{vmPath: next})
	e.refresh()
	e.waitApp("size change", synced(rev))
	e.wantInstancetype("shop", "web01", "u1.large")
}

// app01 is a VM that cannot live-migrate: its scratch disk is on a
// ReadWriteOnce profile the platform team adds beside it (storageRWO), so
// virtc warns (golden migration-not-possible).
const app01 = `apiVersion: virtc.dev/v1alpha1
kind: VM
metadata:
  name: app01
  namespace: shop
  labels: {app: shop}
spec:
  size: u1.medium
  image: ubuntu-24.04
  runStrategy: Always
  migration: IfPossible
  disks:
    - name: scratch
      size: 5Gi
      storage: local-rwo
  cloudInit:
    userDataSecret: app01-cloudinit
`

// storageRWO is that profile as the platform team adds it: with CSI
// snapshots (so the tenant's daily backup captures the disk: golden
// err-backup-not-restorable), not qualified RBD raw-block, so a VM on it is
// in the conditional class unqualified-storage and needs the profile's
// storage-validation Evidence on the platform's exact version before
// onboarding in every tier (design document 000, "Runtime, storage, and
// network model"; golden err-unqualified-storage-arm64): the platform team
// records it in the same commit.
const storageRWO = `apiVersion: virtc.dev/v1alpha1
kind: StorageProfile
metadata:
  name: local-rwo
spec:
  storageClass: local
  volumeMode: Block
  accessMode: ReadWriteOnce
  snapshots: true
---
apiVersion: virtc.dev/v1alpha1
kind: Evidence
metadata:
  name: local-rwo-validation-4.22.3
spec:
  check: storage-validation
  covers: {platformVersion: 4.22.3, storageProfile: local-rwo}
  date: "2026-11-20"
  by: storage-team
  link: https://tickets.example.com/STO-31
`

// warnings is the live warnings ConfigMap of application.yaml's plugin
// parameter warnings-configmap (openshift-cnv/virtc-warnings), checked to
// be among the Application's resources, where Argo CD shows it.
func (e *env) warnings(a app) (count, text string) {
	e.t.Helper()
	listed := false
	for _, r := range a.Status.Resources {
		if r.Kind == "ConfigMap" && r.Namespace == "openshift-cnv" && r.Name == "virtc-warnings" {
			listed = true
		}
	}
	if !listed {
		e.t.Errorf("the warnings ConfigMap openshift-cnv/virtc-warnings is not among the Application's resources: %s", a)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	e.liveJSON("/api/v1/namespaces/openshift-cnv/configmaps/virtc-warnings", &cm)
	return cm.Data["count"], cm.Data["warnings"]
}

// (5) A VM app01 with a data disk is added (its claim written before it;
// its warning, that it cannot live-migrate, in the warnings ConfigMap the
// Application shows), retired, then removed from Git in the same commit as
// an unrelated change (a label on web01): the sync applies the label and
// succeeds without waiting for a prune confirmation, the retired VM and
// its disk stay in the cluster (Prune=false) for a person to delete, and
// the warning is gone.
func (e *env) retireRemove() {
	web := appDir + "/web01.yaml"
	app := appDir + "/app01.yaml"
	webIntent := e.read(web)
	since := time.Now()
	rev := e.commit("app01: a second VM, on ReadWriteOnce storage", map[string]string{
		app: app01, "examples/argocd/platform/storage-rwo.yaml": storageRWO})
	e.refresh()
	a := e.waitApp("app01 added", synced(rev))
	if n := e.checkOrder(e.home, e.built("argocd/clusters/east", "all", ""), since, false); n < 2 {
		e.t.Errorf("adding app01 wrote %d objects, want at least its claim and the VM", n)
	}
	count, text := e.warnings(a)
	want := regexp.MustCompile(`(?m)^examples/argocd/clusters/east/app01\.yaml:\d+:\d+: warning: spec\.migration: the VM cannot live-migrate \(disk "scratch" is on storage profile "local-rwo" \(ReadWriteOnce\)\)`)
	if count != "1" || !want.MatchString(text) {
		e.t.Errorf("warnings ConfigMap after adding app01: count %q, warnings %q; want 1, %s", count, text, want)
	}
	e.t.Logf("warnings ConfigMap: %s", strings.TrimSpace(text))
	claim := "app01-scratch"
	var pvc struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	e.liveJSON("/api/v1/namespaces/shop/persistentvolumeclaims/"+claim, &pvc)

	retired := strings.Replace(app01, "spec:\n", "spec:\n  retired: true\n", 1)
	retired = regexp.MustCompile(`(?m)^  runStrategy: .*\n`).ReplaceAllString(retired, "")
	rev = e.commit("app01: retired", map[string]string{app: retired})
	e.refresh()
	e.waitApp("app01 retired", synced(rev))
	var vm struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
			Labels      map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			RunStrategy string `json:"runStrategy"`
		} `json:"spec"`
	}
	e.liveJSON("/apis/kubevirt.io/v1/namespaces/shop/virtualmachines/app01", &vm)
	if !strings.Contains(vm.Metadata.Annotations["argocd.argoproj.io/sync-options"], "Prune=false") || vm.Spec.RunStrategy != "Halted" {
		e.t.Fatalf("retired app01 live: sync-options %q, runStrategy %q (want Prune=false, Halted)",
			vm.Metadata.Annotations["argocd.argoproj.io/sync-options"], vm.Spec.RunStrategy)
	}
	e.liveJSON("/api/v1/namespaces/shop/persistentvolumeclaims/"+claim, &pvc)
	if !strings.Contains(pvc.Metadata.Annotations["argocd.argoproj.io/sync-options"], "Prune=false") {
		e.t.Fatalf("retired app01's claim %s live: sync-options %q, want Prune=false", claim, pvc.Metadata.Annotations["argocd.argoproj.io/sync-options"])
	}

	labelled := strings.Replace(webIntent, "labels: {app: shop}", "labels: {app: shop, tier: web}", 1)
	if labelled == webIntent {
		e.t.Fatal("web01.yaml: no labels line to change")
	}
	start := time.Now()
	rev = e.commit("app01 removed; web01 labelled", map[string]string{app: "", web: labelled})
	e.refresh()
	a = e.waitApp("removal beside an unrelated change", synced(rev))
	e.t.Logf("removal and label synced in %s: %s", time.Since(start).Round(time.Millisecond), a)
	if strings.Contains(a.Status.OperationState.Message, "pruning confirmation") {
		e.t.Errorf("the sync waited for a prune confirmation: %s", a.Status.OperationState.Message)
	}
	// json.Unmarshal merges into maps it finds: app01's must not count.
	vm.Metadata.Labels, vm.Metadata.Annotations = nil, nil
	e.liveJSON("/apis/kubevirt.io/v1/namespaces/shop/virtualmachines/web01", &vm)
	if vm.Metadata.Labels["tier"] != "web" {
		e.t.Errorf("web01's label tier is %q after the sync, want web", vm.Metadata.Labels["tier"])
	}
	// the retired VM and its disk are still there, for a person to delete
	e.liveJSON("/apis/kubevirt.io/v1/namespaces/shop/virtualmachines/app01", &vm)
	e.liveJSON("/api/v1/namespaces/shop/persistentvolumeclaims/"+claim, &pvc)
	// and the warning went with app01: the ConfigMap is emptied, not stale
	if count, text := e.warnings(a); count != "0" || text != "" {
		e.t.Errorf("warnings ConfigMap after app01's removal: count %q, warnings %q; want 0 and none", count, text)
	}
}

var fileLine = regexp.MustCompile(`web01\.yaml:\d+:\d+: `)

// (6) A broken intent: the Application shows virtc's error, with file and
// line, as a ComparisonError, and nothing is synced; fixing it recovers.
func (e *env) brokenIntent() {
	vmPath := appDir + "/web01.yaml"
	good := e.read(vmPath)
	bad := strings.Replace(good, "runStrategy: Always", "runStrategy: Sometimes", 1)
	if bad == good {
		e.t.Fatal("web01.yaml: no runStrategy to break")
	}
	synced := e.app()
	e.commit("web01: a broken runStrategy", map[string]string{vmPath: bad})
	e.refresh()
	a := e.waitApp("ComparisonError", func(a app) bool {
		for _, c := range a.Status.Conditions {
			if c.Type == "ComparisonError" && fileLine.MatchString(c.Message) && strings.Contains(c.Message, "runStrategy") {
				return true
			}
		}
		return false
	})
	e.t.Logf("broken intent: %s", a)
	if len(a.Status.History) != len(synced.Status.History) {
		e.t.Errorf("a broken intent was synced (history %d -> %d)", len(synced.Status.History), len(a.Status.History))
	}
	rev := e.commit("web01: runStrategy fixed", map[string]string{vmPath: good})
	e.refresh()
	e.waitApp("fixed intent", func(a app) bool {
		return a.Status.Sync.Status == "Synced" && a.Status.Sync.Revision == rev && len(a.Status.Conditions) == 0
	})
}

// applyExample applies a file of examples/argocd (Applications, an
// ApplicationSet, AppProjects) with the repository URL pointed at the
// local repository.
func (e *env) applyExample(file string) {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples/argocd", file))
	if err != nil {
		e.t.Fatal(err)
	}
	const upstream = "https://github.com/virtc/virtc.git"
	if !strings.Contains(string(data), upstream) {
		e.t.Fatalf("%s: no %q to point at the local repository", file, upstream)
	}
	e.kubectl([]byte(strings.ReplaceAll(string(data), upstream, "file://"+e.repo)), "apply", "-f", "-")
}

// resourcesOf are the kind/namespace/name of an Application's resources.
func resourcesOf(a app) []string {
	var out []string
	for _, r := range a.Status.Resources {
		out = append(out, r.Kind+" "+r.Namespace+"/"+r.Name)
	}
	slices.Sort(out)
	return out
}

// namesOf are the kind/namespace/name of a build's objects, its hooks
// included: the approver Job stays after its sync (hook-delete-policy
// BeforeHookCreation) and Argo CD lists it among the resources.
func namesOf(objs []conformance.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Kind+" "+o.Namespace+"/"+o.Name)
	}
	slices.Sort(out)
	return out
}

// (7) The kustomize wiring: application-kustomize.yaml (no plugin: Argo
// CD's repo-server runs kustomize with argocd-cm-kustomize-patch.yaml's
// --enable-alpha-plugins --enable-exec, and kustomize runs virtc from the
// repo-server's PATH as a KRM exec function, kustomize-app/compiler.yaml)
// reaches Synced and Healthy with exactly the objects virtc builds, written
// in the order of their waves.
func (e *env) kustomizeWiring() {
	const name = "virtc-lab"
	start := time.Now()
	e.applyExample("application-kustomize.yaml")
	rev := e.git("rev-parse", "HEAD")
	a := e.waitAppNamed(name, "first sync", synced(rev))
	e.t.Logf("%s Synced and Healthy in %s: %s", name, time.Since(start).Round(time.Millisecond), a)
	objs := e.built("argocd/kustomize-app", "all", "")
	e.wantResources(name, a, objs, "")
	e.checkOrder(e.home, objs, start, true)
	e.wantInstancetype("lab", "vm01", "u1.small")
}

// (8) applicationset.yaml with projects.yaml: for each directory under
// clusters/ the git directory generator makes the platform Application
// (virtc-<dir>-platform, project virtc-platform, --scope platform,tenants)
// and the git files generator one Application per Tenant file
// (virtc-<dir>-tenant-<tenant>, project virtc-tenant-<tenant>, --scope vms
// --tenant <tenant>: east has shop and analytics, west shop), deployed to
// the registered cluster of that name and compiled for that cluster's
// Platform (east on the 4.22 CRDs, west 4.20.21 on the 4.20 CRDs). East's
// Platform is first moved to 4.21.3 in Git, one minor behind its cluster
// (the upgrade scenarios take it to 4.22): a fresh install from the 4.22
// index by its startingCSV. The 4.22 HyperConverged CRD east starts with
// does not hold that back: OLM replaces it with the 4.21 bundle's before
// the CSV (pkg/controller/operators/catalog/step.go NewCRDV1Step; no
// HyperConverged exists yet, and v1beta1, the one stored version, stays).
// All five reach Synced and Healthy with exactly the objects of their
// builds (a cluster's together: the directory's whole build), each written
// in the order of its waves; a tenant's Application, which no wave orders
// after the platform's, retries until its namespace exists; nothing of one
// cluster reaches the other, and no Application carries the resources
// finalizer.
func (e *env) applicationSet() {
	e.pinEast("4.21.3", "east: OpenShift Virtualization 4.21.3, one minor behind the cluster")
	e.applyExample("projects.yaml")
	start := time.Now()
	e.applyExample("applicationset.yaml")
	rev := e.git("rev-parse", "HEAD")
	tenants := map[string][]string{"east": {"analytics", "shop"}, "west": {"shop"}}
	vms := map[string][]string{"east": {"etl01", "web01"}, "west": {"web02"}}
	var want []string
	for _, c := range []string{"east", "west"} {
		cl := e.clusters[c]
		dir := "argocd/clusters/" + c
		type part struct{ name, project, scope, tenant string }
		parts := []part{{"virtc-" + c + "-platform", "virtc-platform", "platform,tenants", ""}}
		for _, tn := range tenants[c] {
			parts = append(parts, part{"virtc-" + c + "-tenant-" + tn, "virtc-tenant-" + tn, "vms", tn})
		}
		var whole []string
		for _, p := range parts {
			want = append(want, p.name)
			a := e.waitAppNamed(p.name, "first sync", synced(rev))
			e.t.Logf("%s (project %s) Synced and Healthy in %s after %d retries: %s", p.name, p.project,
				time.Since(start).Round(time.Millisecond), a.Status.OperationState.RetryCount, a)
			if a.Spec.Project != p.project {
				e.t.Errorf("%s is in project %q, want %q", p.name, a.Spec.Project, p.project)
			}
			objs := e.built(dir, p.scope, p.tenant)
			e.wantResources(p.name, a, objs, fmt.Sprintf(" --scope %s --tenant %q", p.scope, p.tenant))
			e.checkOrder(cl, objs, start, true)
			whole = append(whole, namesOf(objs)...)
		}
		// the Applications hold the directory's whole build between them
		// (the warnings ConfigMap aside, which only the platform
		// Application's parameter asks for)
		whole = slices.DeleteFunc(whole, func(s string) bool { return s == "ConfigMap openshift-cnv/virtc-warnings" })
		slices.Sort(whole)
		all := namesOf(e.build(dir, "--catalog", "../../platform", "."))
		if !slices.Equal(whole, all) {
			e.t.Errorf("%s: the platform and tenants' Applications hold\n  %s\nwant the directory's whole build\n  %s", c, strings.Join(whole, "\n  "), strings.Join(all, "\n  "))
		}
		// the Subscription pins the CSV of this cluster's Platform
		var wantCSV string
		for _, o := range e.built(dir, "platform,tenants", "") {
			if o.Kind == "Subscription" {
				spec, _ := o.Doc["spec"].(map[string]any)
				wantCSV, _ = spec["startingCSV"].(string)
			}
		}
		var sub struct {
			Spec struct {
				StartingCSV string `json:"startingCSV"`
			} `json:"spec"`
		}
		data, err := cl.cp.Get(e.ctx, "/apis/operators.coreos.com/v1alpha1/namespaces/openshift-cnv/subscriptions/hco-operatorhub")
		if err != nil {
			e.t.Fatalf("%s: %v", c, err)
		}
		if err := json.Unmarshal(data, &sub); err != nil {
			e.t.Fatal(err)
		}
		if wantCSV == "" || sub.Spec.StartingCSV != wantCSV {
			e.t.Errorf("%s: the Subscription's startingCSV is %q, want %q", c, sub.Spec.StartingCSV, wantCSV)
		}
		e.t.Logf("%s: Subscription at %s", c, sub.Spec.StartingCSV)
		if cl.olm != nil {
			e.olmInstalled(cl, wantCSV)
		}
		if cl.cdi != nil {
			e.wantCDIDecided(cl, e.build(dir, "--catalog", "../../platform", "."))
		}
		// each cluster has its own VMs and not the other's
		var l struct {
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"items"`
		}
		e.liveJSONOn(cl, "/apis/kubevirt.io/v1/virtualmachines", &l)
		var live []string
		for _, it := range l.Items {
			live = append(live, it.Metadata.Name)
		}
		slices.Sort(live)
		if !slices.Equal(live, vms[c]) {
			e.t.Errorf("%s: VMs %v, want %v", c, live, vms[c])
		}
	}
	e.oneBuildPerKey(rev)
	// the ApplicationSet made those and nothing else
	var l struct {
		Items []struct {
			Metadata struct {
				Name            string   `json:"name"`
				Finalizers      []string `json:"finalizers"`
				OwnerReferences []struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"ownerReferences"`
			} `json:"metadata"`
		} `json:"items"`
	}
	e.liveJSON("/apis/argoproj.io/v1alpha1/namespaces/argocd/applications", &l)
	var owned []string
	for _, it := range l.Items {
		for _, o := range it.Metadata.OwnerReferences {
			if o.Kind == "ApplicationSet" && o.Name == "virtc-clusters" {
				owned = append(owned, it.Metadata.Name)
				// preserveResourcesOnDeletion: deleting the Application
				// (a cluster directory removed) deletes nothing it deployed
				if slices.Contains(it.Metadata.Finalizers, "resources-finalizer.argocd.argoproj.io") {
					e.t.Errorf("%s has the resources finalizer: removing its directory would delete its objects", it.Metadata.Name)
				}
			}
		}
	}
	slices.Sort(owned)
	slices.Sort(want)
	if !slices.Equal(owned, want) {
		e.t.Errorf("the ApplicationSet owns Applications %v, want %v", owned, want)
	}
}

// liveJSONOn fetches one object or list from a cluster.
func (e *env) liveJSONOn(c *cluster, path string, v any) {
	e.t.Helper()
	data, err := c.cp.Get(e.ctx, path)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		e.t.Fatal(err)
	}
}

// (12) A tenant's project is a guardrail: Applications in project
// virtc-tenant-shop that ask for more than shop's VMs fail their sync
// with Argo CD's "not permitted in project" before they write anything
// (gitops-engine v3.6.1 pkg/sync/sync_context.go getSyncTasks runs argo-cd
// controller/sync.go's permission validator on every task first): the
// whole directory (--scope all: the Subscription, HyperConverged,
// Namespaces, ...) and another tenant's VMs (--scope vms --tenant
// analytics: namespace analytics).
func (e *env) tenantsProjectRefuses() {
	for _, tc := range []struct {
		name, scope, tenant string
		refused             []string // in the sync's messages
	}{
		{"virtc-east-escalate", "all", "", []string{
			"resource :Namespace is not permitted in project virtc-tenant-shop",
			"resource operators.coreos.com:Subscription is not permitted in project virtc-tenant-shop",
			"resource hco.kubevirt.io:HyperConverged is not permitted in project virtc-tenant-shop"}},
		{"virtc-east-other-tenant", "vms", "analytics", []string{
			"namespace analytics is not permitted in project 'virtc-tenant-shop'"}},
	} {
		tenantParam := ""
		if tc.tenant != "" {
			tenantParam = "\n        - {name: tenant, string: " + tc.tenant + "}"
		}
		manifest := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %s, namespace: argocd}
spec:
  project: virtc-tenant-shop
  source:
    repoURL: file://%s
    targetRevision: main
    path: examples/argocd/clusters/east
    plugin:
      name: virtc-v1alpha1
      parameters:
        - {name: catalog, array: [../../platform]}
        - {name: scope, string: %s}%s
  destination: {name: east, namespace: shop}
# a sync as argocd app sync asks for one (no retry): it runs whatever the
# Application's sync status
operation:
  initiatedBy: {username: e2e}
  sync: {revision: %s}
`, tc.name, e.repo, tc.scope, tenantParam, e.git("rev-parse", "HEAD"))
		start := time.Now()
		e.kubectl([]byte(manifest), "apply", "-f", "-")
		a := e.waitAppNamed(tc.name, "refused sync", func(a app) bool {
			op := a.Status.OperationState
			return op != nil && (op.Phase == "Failed" || op.Phase == "Error")
		})
		var messages []string
		for _, r := range a.Status.OperationState.SyncResult.Resources {
			messages = append(messages, r.Message)
		}
		messages = append(messages, a.Status.OperationState.Message)
		all := strings.Join(messages, "\n")
		e.t.Logf("%s: %s", tc.name, a.Status.OperationState.Message)
		for _, want := range tc.refused {
			if !strings.Contains(all, want) {
				e.t.Errorf("%s: no %q in the sync's messages: %s", tc.name, want, a)
			}
		}
		// nothing was written on east while it ran (the other Applications
		// there are Synced and have nothing to write)
		writes, err := argoWrites(e.clusters["east"].auditLog, start)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, w := range writes {
			e.t.Errorf("%s: Argo CD wrote %s %s (%s) on east", tc.name, w.Resource, w.Name, w.Verb)
		}
		e.kubectl(nil, "-n", argocdNamespace, "delete", "application", tc.name, "--wait=true")
	}
}

// olmInstalled holds what the real OLM of cluster cl did for the
// Platform's Subscription (hco-operatorhub): it proposed exactly the
// pinned startingCSV in an InstallPlan, which the approver Job approved,
// and installed it (CSV Succeeded); the next CSV OLM proposes from the
// catalog (4.21.8 from east's 4.21.3) stays unapproved, as the pin is not
// it.
func (e *env) olmInstalled(cl *cluster, pin string) {
	e.t.Helper()
	sub := e.installed(cl, pin)
	pending := e.pendingPlans(cl)
	if approved := e.approvedPlansOn(cl); !slices.Equal(approved, []string{pin}) {
		e.t.Errorf("%s: approved InstallPlans %q, want one of %s", cl.name, approved, pin)
	}
	e.t.Logf("%s: OLM installed %s through its InstallPlan; Subscription %s, proposing %s; unapproved plans %q",
		cl.name, pin, sub.State, sub.CurrentCSV, pending)
}

// (11) The east platform Application and the real OLM (test/internal/olm), on
// 4.22.0 after the minor upgrade: a pin OLM cannot land on (4.22.5: from
// the installed 4.22.0 OLM offers the channel head, 4.22.7 since scenario
// 9b, whose olm.skipRange covers 4.22.0), merged although `virtc diff` refuses it
// (golden diff-lifecycle-unreachable): the approver Job refuses before
// approving anything, the sync fails and retries, nothing is installed.
// The fix (the pin back at 4.22.0), committed while that sync retries, is
// synced by the next retry, which takes the latest revision
// (applicationset.yaml retry.refresh: argo-cd v3.6.1
// controller/appcontroller.go processRequestedAppOperation; without it a
// limit -1 retry keeps the refused revision forever); the Application is
// Synced and Healthy with 4.22.0 installed, no InstallPlan approved since,
// and OLM's proposal of 4.22.7 still unapproved. The upgrades that land
// are scenarios (9) and (10) (upgrade_test.go).
func (e *env) platformUpgrade() {
	cl := e.clusters["east"]
	defer e.dumpEast()
	e.wantInstalled(cl, "4.22.0")
	before := e.approvedPlansOn(cl)
	rev := e.pinEast("4.22.5", "east: OpenShift Virtualization 4.22.5")
	e.refreshApp(eastPlatformApp)
	a := e.waitAppNamed(eastPlatformApp, "the approver refuses 4.22.5", func(a app) bool {
		op := a.Status.OperationState
		return op != nil && op.RetryCount >= 1 && a.Status.Sync.Revision == rev
	})
	e.t.Logf("%s at the unreachable pin: %s", eastPlatformApp, a)
	var job struct {
		Status struct {
			Failed int `json:"failed"`
		} `json:"status"`
	}
	e.liveJSONOn(cl, "/apis/batch/v1/namespaces/openshift-cnv/jobs/virtc-installplan-approver", &job)
	if job.Status.Failed == 0 {
		e.t.Errorf("east: the approver Job of the unreachable pin did not fail")
	}
	rev = e.pinEast("4.22.0", "east: back to OpenShift Virtualization 4.22.0")
	e.refreshApp(eastPlatformApp)
	a = e.waitAppNamed(eastPlatformApp, "the fix synced by the retry", synced(rev))
	e.t.Logf("%s after the fix: %s", eastPlatformApp, a)
	if after := e.approvedPlansOn(cl); !slices.Equal(after, before) {
		e.t.Errorf("east: approved InstallPlans %q after the refusal and the fix, want %q as before", after, before)
	}
	e.wantInstalled(cl, "4.22.0")
	if pending := e.pendingPlans(cl); !slices.Contains(pending, hcoCSV("4.22.7")) {
		e.t.Errorf("east: unapproved InstallPlans %q, want OLM's proposal %s among them", pending, hcoCSV("4.22.7"))
	}
}

// approvedPlansOn are the CSVs of the approved InstallPlans of
// openshift-cnv on cl, sorted.
func (e *env) approvedPlansOn(cl *cluster) []string {
	e.t.Helper()
	plans, err := olm.InstallPlans(e.ctx, cl.cp, "openshift-cnv")
	if err != nil {
		e.t.Fatal(err)
	}
	return olm.ApprovedCSVs(plans)
}
