package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// FieldManager is the server-side apply field manager of every apply.
const FieldManager = "virtc"

// EditRoles is, relative to this package, the file of KubeVirt's and CDI's
// edit roles as virt-operator and cdi-operator install them: the rights a
// tenant's RoleBindings grant (testdata/upstream-edit-roles.yaml).
const EditRoles = "testdata/upstream-edit-roles.yaml"

// InstallEditRoles installs the upstream edit roles of file and
// aggregates every ClusterRole labelled aggregate-to-edit into edit, as
// kube-controller-manager's clusterrole-aggregation controller does (a
// test server runs no controller manager, or not that controller).
func (c *Cluster) InstallEditRoles(ctx context.Context, file string) error {
	roles, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if _, err := c.Apply(ctx, roles); err != nil {
		return err
	}
	out, err := c.CP.Get(ctx, "/apis/rbac.authorization.k8s.io/v1/clusterroles?labelSelector="+url.QueryEscape("rbac.authorization.k8s.io/aggregate-to-edit=true"))
	if err != nil {
		return err
	}
	var list struct {
		Items []struct {
			Rules []any `json:"rules"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return err
	}
	var rules []any
	for _, r := range list.Items {
		rules = append(rules, r.Rules...)
	}
	patch, err := json.Marshal(map[string]any{"rules": rules})
	if err != nil {
		return err
	}
	edit := Object{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "edit"}
	return c.mergePatch(ctx, edit, "", patch)
}

// Cluster applies manifests to a control plane the way a GitOps tool
// does (server-side apply, one field manager), and inspects the result.
type Cluster struct {
	CP  *ControlPlane
	dir string
	mu  sync.Mutex
	// resources caches, per apiVersion, the discovery of each served kind.
	resources map[string]map[string]apiResource
	seq       int
}

// NewCluster wraps a running control plane; dir holds the manifest files
// handed to kubectl.
func NewCluster(cp *ControlPlane, dir string) *Cluster {
	return &Cluster{CP: cp, dir: dir, resources: map[string]map[string]apiResource{}}
}

// file writes data to a new file for kubectl -f.
func (c *Cluster) file(data []byte) (string, error) {
	c.seq++
	path := filepath.Join(c.dir, fmt.Sprintf("manifest-%04d.yaml", c.seq))
	return path, os.WriteFile(path, data, 0o600)
}

// Namespaced reports whether the server serves o's kind as a namespaced
// resource.
func (c *Cluster) Namespaced(ctx context.Context, o Object) (bool, error) {
	r, err := c.resource(ctx, o)
	return r.namespaced, err
}

// ApplyArgs are kubectl's arguments for a server-side apply of file.
func ApplyArgs(file string, dryRun bool) []string {
	args := []string{"apply", "--server-side", "--field-manager=" + FieldManager, "--validate=strict", "-f", file}
	if dryRun {
		args = append(args, "--dry-run=server")
	}
	return args
}

// Apply applies a stream of manifests in their order, first as a
// server-side dry run, then for real. Cluster-scoped objects
// (Namespaces) are dry-run and created before the stream, since a
// dry run of a namespaced object in a namespace that does not exist yet
// is refused (when they all exist, as on a re-apply, the stream's own dry
// run and apply cover them). It returns the objects applied.
func (c *Cluster) Apply(ctx context.Context, stream []byte) ([]Object, error) {
	return c.ApplyAs(ctx, "", stream)
}

// ApplyAs is Apply as user (kubectl --as: the admin impersonates it), or
// as the admin when user is "".
func (c *Cluster) ApplyAs(ctx context.Context, user string, stream []byte) ([]Object, error) {
	objs, err := ParseObjects(stream)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("no objects in the stream")
	}
	var clusterScoped []Object
	var problems []string
	for _, o := range objs {
		namespaced, err := c.Namespaced(ctx, o)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		switch {
		case namespaced && o.Namespace == "":
			problems = append(problems, fmt.Sprintf("%s: namespaced kind without metadata.namespace (it would land in the GitOps tool's default namespace)", o))
		case !namespaced && o.Namespace != "":
			problems = append(problems, fmt.Sprintf("%s: cluster-scoped kind with metadata.namespace", o))
		case !namespaced:
			clusterScoped = append(clusterScoped, o)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	file, err := c.file(stream)
	if err != nil {
		return nil, err
	}
	live, err := c.Live(ctx, clusterScoped)
	if err != nil {
		return nil, err
	}
	if len(live) < len(clusterScoped) {
		data, err := Stream(clusterScoped)
		if err != nil {
			return nil, err
		}
		first, err := c.file(data)
		if err != nil {
			return nil, err
		}
		if err := c.run(ctx, "server rejected the cluster-scoped objects (dry run)", asUser(user, ApplyArgs(first, true)...)...); err != nil {
			return nil, err
		}
		if err := c.run(ctx, "server rejected the cluster-scoped objects", asUser(user, ApplyArgs(first, false)...)...); err != nil {
			return nil, err
		}
	}
	if err := c.run(ctx, "server rejected the manifests (dry run)", asUser(user, ApplyArgs(file, true)...)...); err != nil {
		return nil, err
	}
	if err := c.run(ctx, "server rejected the manifests", asUser(user, ApplyArgs(file, false)...)...); err != nil {
		return nil, err
	}
	return objs, nil
}

// Reapply applies objs again as `kubectl apply --server-side
// --field-manager=virtc --validate=strict` does, without the kubectl
// process: per object in order, kubectl's server-side apply request
// (serverSideApply), every object as a dry run first, then for real. The first apply of an output stays kubectl's
// (Apply): this serves the re-applies, which check that the same output
// changes nothing, and saves their kubectl start-up (its discovery and
// OpenAPI parse) on every output of every version.
func (c *Cluster) Reapply(ctx context.Context, objs []Object) error {
	return c.ReapplyAs(ctx, "", objs)
}

// ReapplyAs is Reapply as user (impersonated), or as the admin when user
// is "".
func (c *Cluster) ReapplyAs(ctx context.Context, user string, objs []Object) error {
	for _, dryRun := range []bool{true, false} {
		for _, o := range objs {
			if err := c.serverSideApply(ctx, o, dryRun, impersonate(user)); err != nil {
				return fmt.Errorf("re-apply %s: %w", o, err)
			}
		}
	}
	return nil
}

// asUser is a kubectl command line run as user (--as), or as is when user
// is "".
func asUser(user string, args ...string) []string {
	if user == "" {
		return args
	}
	return append([]string{"--as=" + user}, args...)
}

// impersonate is the request header that makes a request user's (what
// kubectl --as sends), or nil when user is "".
func impersonate(user string) http.Header {
	if user == "" {
		return nil
	}
	return http.Header{"Impersonate-User": {user}}
}

func (c *Cluster) run(ctx context.Context, what string, args ...string) error {
	res, err := c.CP.Kubectl(ctx, nil, args...)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("%s:\n%s", what, res)
	}
	return nil
}

// Diff runs `kubectl diff --server-side` for objs: it returns "" when
// applying them would change nothing, else the diff.
func (c *Cluster) Diff(ctx context.Context, objs []Object) (string, error) {
	return c.DiffAs(ctx, "", objs)
}

// DiffAs is Diff as user (impersonated), or as the admin when user is "".
func (c *Cluster) DiffAs(ctx context.Context, user string, objs []Object) (string, error) {
	file, err := c.objectsFile(objs)
	if err != nil {
		return "", err
	}
	res, err := c.CP.Kubectl(ctx, nil, asUser(user, "diff", "--server-side", "--field-manager="+FieldManager, "-f", file)...)
	if err != nil {
		return "", err
	}
	switch res.ExitCode {
	case 0:
		return "", nil
	case 1:
		return string(res.Stdout), nil
	default:
		return "", fmt.Errorf("kubectl diff failed:\n%s", res)
	}
}

func (c *Cluster) objectsFile(objs []Object) (string, error) {
	data, err := Stream(objs)
	if err != nil {
		return "", err
	}
	return c.file(data)
}

// Live fetches the objects from the server, by Key, as `kubectl get
// --ignore-not-found -o json -f` prints them (without managedFields).
// Objects that do not exist are absent from the result.
func (c *Cluster) Live(ctx context.Context, objs []Object) (map[string]Object, error) {
	live, _, err := c.LiveOwned(ctx, objs)
	return live, err
}

// LiveOwned is Live with each object's field ownership (its
// managedFields, without each entry's time), by Key.
func (c *Cluster) LiveOwned(ctx context.Context, objs []Object) (map[string]Object, map[string][]any, error) {
	out, owned := map[string]Object{}, map[string][]any{}
	for _, o := range objs {
		live, owners, ok, err := c.get(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			out[live.Key()], owned[live.Key()] = live, owners
		}
	}
	return out, owned, nil
}

// Delete removes objs and waits until they are gone. With no controller
// manager running, the namespace controller's last step is done here:
// a deleted Namespace's finalizers are cleared through its finalize
// subresource, after its content is gone.
func (c *Cluster) Delete(ctx context.Context, objs []Object) error {
	if len(objs) == 0 {
		return nil
	}
	for _, o := range objs {
		if err := c.remove(ctx, o, true); err != nil {
			return err
		}
	}
	var namespaces []Object
	for _, o := range objs {
		if o.APIVersion == "v1" && o.Kind == "Namespace" {
			namespaces = append(namespaces, o)
		}
	}
	if err := c.releaseFinalizers(ctx, objs); err != nil {
		return err
	}
	if err := c.waitGone(ctx, objs, namespaces); err != nil {
		return err
	}
	for _, ns := range namespaces {
		if err := c.finalizeNamespace(ctx, ns.Name); err != nil {
			return err
		}
	}
	return c.waitGone(ctx, objs, nil)
}

// waitGone waits until every object of objs except those in keep is gone.
func (c *Cluster) waitGone(ctx context.Context, objs, keep []Object) error {
	skip := map[string]bool{}
	for _, o := range keep {
		skip[o.Key()] = true
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		live, err := c.Live(ctx, objs)
		if err != nil {
			return err
		}
		var left []string
		for _, o := range objs {
			if _, ok := live[o.Key()]; ok && !skip[o.Key()] {
				left = append(left, o.String())
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("objects not deleted after 60s: %s", strings.Join(left, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) finalizeNamespace(ctx context.Context, name string) error {
	ns := Object{APIVersion: "v1", Kind: "Namespace", Name: name}
	live, _, ok, err := c.get(ctx, ns)
	if err != nil || !ok {
		return err
	}
	if spec, ok := live.Doc["spec"].(map[string]any); ok {
		spec["finalizers"] = []any{}
	}
	body, err := json.Marshal(live.Doc)
	if err != nil {
		return err
	}
	if _, err := c.send(ctx, http.MethodPut, "/api/v1/namespaces/"+url.PathEscape(name)+"/finalize", nil, "application/json", body, nil); err != nil {
		return err
	}
	// The second delete of a terminating namespace without finalizers
	// removes it.
	return c.remove(ctx, ns, true)
}

// releaseFinalizers clears the finalizers of deleted objects that are not
// Namespaces (for example kubernetes.io/pvc-protection, which an admission
// plugin adds to every PersistentVolumeClaim): the controllers that would
// remove them do not run here.
func (c *Cluster) releaseFinalizers(ctx context.Context, objs []Object) error {
	live, err := c.Live(ctx, objs)
	if err != nil {
		return err
	}
	var stuck []Object
	for _, o := range objs {
		l, ok := live[o.Key()]
		if !ok || (o.APIVersion == "v1" && o.Kind == "Namespace") {
			continue
		}
		meta, _ := l.Doc["metadata"].(map[string]any)
		if finalizers, _ := meta["finalizers"].([]any); len(finalizers) > 0 && meta["deletionTimestamp"] != nil {
			stuck = append(stuck, o)
		}
	}
	for _, o := range stuck {
		if err := c.mergePatch(ctx, o, "", []byte(`{"metadata":{"finalizers":null}}`)); err != nil {
			return err
		}
	}
	return nil
}

// EnvironmentLabel marks the Namespaces the tests create because an output
// uses them without creating them.
const EnvironmentLabel = "virtc.dev/conformance-environment"

// EnsureNamespaces creates the Namespaces that objs use but do not create
// themselves: those of the platform (openshift-adp for Velero Schedules,
// openshift-virtualization-os-images for golden images) and those another
// output creates (a build with --scope vms uses the tenants' namespaces).
// It returns the Namespaces it created, to be deleted after the check.
func (c *Cluster) EnsureNamespaces(ctx context.Context, objs []Object) ([]Object, error) {
	created := map[string]bool{}
	for _, o := range objs {
		if o.APIVersion == "v1" && o.Kind == "Namespace" {
			created[o.Name] = true
		}
	}
	var missing []string
	for _, o := range objs {
		if o.Namespace != "" && !created[o.Namespace] && !slices.Contains(missing, o.Namespace) {
			missing = append(missing, o.Namespace)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	var namespaces []Object
	for _, name := range missing {
		namespaces = append(namespaces, Object{APIVersion: "v1", Kind: "Namespace", Name: name, Doc: map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": name, "labels": map[string]any{EnvironmentLabel: "true"}},
		}})
	}
	live, err := c.Live(ctx, namespaces)
	if err != nil {
		return nil, err
	}
	var toCreate []Object
	for _, ns := range namespaces {
		if _, ok := live[ns.Key()]; !ok {
			toCreate = append(toCreate, ns)
		}
	}
	for _, ns := range toCreate {
		if err := c.create(ctx, ns, false, nil); err != nil {
			return nil, err
		}
	}
	return toCreate, nil
}

// EnsureStorageClasses creates the StorageClasses that the claims among
// objs name, if absent, with volume expansion allowed as on the platform's
// storage (ODF's Ceph RBD classes allow it): the API server's
// PersistentVolumeClaimResize admission refuses to grow a claim whose class
// does not exist or does not allow it. They stay for the control plane's
// lifetime. It returns the names it created.
func (c *Cluster) EnsureStorageClasses(ctx context.Context, objs []Object) ([]string, error) {
	var classes []Object
	for _, o := range objs {
		if o.APIVersion != "v1" || o.Kind != "PersistentVolumeClaim" {
			continue
		}
		spec, _ := o.Doc["spec"].(map[string]any)
		name, _ := spec["storageClassName"].(string)
		if name == "" || slices.ContainsFunc(classes, func(sc Object) bool { return sc.Name == name }) {
			continue
		}
		classes = append(classes, Object{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: name, Doc: map[string]any{
			"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
			"metadata":             map[string]any{"name": name, "labels": map[string]any{EnvironmentLabel: "true"}},
			"provisioner":          "conformance.virtc.dev/no-provisioner",
			"allowVolumeExpansion": true,
		}})
	}
	if len(classes) == 0 {
		return nil, nil
	}
	live, err := c.Live(ctx, classes)
	if err != nil {
		return nil, err
	}
	var missing []Object
	var names []string
	for _, sc := range classes {
		if _, ok := live[sc.Key()]; !ok {
			missing = append(missing, sc)
			names = append(names, sc.Name)
		}
	}
	for _, sc := range missing {
		if err := c.create(ctx, sc, false, nil); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// BindClaims marks the claims among objs Bound, with the capacity they
// request, as the persistent volume controller would once their volume is
// provisioned: only a bound claim may grow.
func (c *Cluster) BindClaims(ctx context.Context, objs []Object) error {
	var claims []Object
	for _, o := range objs {
		if o.APIVersion == "v1" && o.Kind == "PersistentVolumeClaim" {
			claims = append(claims, o)
		}
	}
	if len(claims) == 0 {
		return nil
	}
	live, err := c.Live(ctx, claims)
	if err != nil {
		return err
	}
	for _, o := range claims {
		l, ok := live[o.Key()]
		if !ok {
			return fmt.Errorf("%s: not found", o)
		}
		status, _ := l.Doc["status"].(map[string]any)
		if status["phase"] == "Bound" {
			continue
		}
		patch, err := BoundPatch(l.Doc)
		if err != nil {
			return err
		}
		if err := c.mergePatch(ctx, o, "status", patch); err != nil {
			return err
		}
	}
	return nil
}

// BoundPatch is the merge patch of a claim's status (claim is its
// document) that marks it Bound with the capacity it requests, as the
// persistent volume controller writes it once the claim's volume is
// provisioned (kubernetes pkg/controller/volume/persistentvolume/
// pv_controller.go).
func BoundPatch(claim map[string]any) ([]byte, error) {
	spec, _ := claim["spec"].(map[string]any)
	resources, _ := spec["resources"].(map[string]any)
	requests, _ := resources["requests"].(map[string]any)
	return json.Marshal(map[string]any{"status": map[string]any{
		"phase":       "Bound",
		"accessModes": spec["accessModes"],
		"capacity":    map[string]any{"storage": requests["storage"]},
	}})
}
