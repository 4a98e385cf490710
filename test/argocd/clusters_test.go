package argocd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/virtc/virtc/test/conformance"
)

// cluster is one control plane Argo CD deploys to: the one it runs in
// ("in-cluster", https://kubernetes.default.svc) or one registered by a
// cluster Secret (examples/argocd/applicationset.yaml's east and west).
type cluster struct {
	name     string // Argo CD's name of the cluster
	version  string // the platform version whose CRDs it serves
	ctx      context.Context
	cp       *conformance.ControlPlane
	cluster  *conformance.Cluster
	auditLog string
	// resources caches discovery: apiVersion/kind to group/resource.
	resources map[string]string
}

// clusterSpec says what a cluster serves.
type clusterSpec struct {
	name, version string
	crdDirs       []string // besides the version's CRDs
}

// startClusters starts one control plane per spec, in parallel (each is
// mostly waiting for its API server), each with the version's CRDs, CDI's
// DataVolume immutability policy and an audit log; the caller stops them.
func startClusters(ctx context.Context, bins conformance.Binaries, dir, schemas string, specs []clusterSpec) ([]*cluster, error) {
	out := make([]*cluster, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Go(func() {
			out[i], errs[i] = startCluster(ctx, bins, filepath.Join(dir, s.name), schemas, s)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("cluster %s: %w", s.name, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range out {
			if c != nil {
				c.cp.Stop()
			}
		}
		return nil, err
	}
	return out, nil
}

func startCluster(ctx context.Context, bins conformance.Binaries, dir, schemas string, s clusterSpec) (*cluster, error) {
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		return nil, err
	}
	args, log, err := auditArgs(dir)
	if err != nil {
		return nil, err
	}
	cp, err := conformance.Start(ctx, bins, filepath.Join(dir, "controlplane"), args...)
	if err != nil {
		return nil, err
	}
	c := &cluster{name: s.name, version: s.version, ctx: ctx, cp: cp,
		cluster: conformance.NewCluster(cp, filepath.Join(dir, "manifests")), auditLog: log, resources: map[string]string{}}
	fail := func(err error) (*cluster, error) {
		cp.Stop()
		return nil, err
	}
	crdDir := filepath.Join(schemas, s.version, "crd-yaml")
	if _, err := os.Stat(crdDir); err != nil {
		return fail(fmt.Errorf("the %s CRDs are missing (VIRTC_SCHEMAS): %w", s.version, err))
	}
	for _, d := range append([]string{crdDir}, s.crdDirs...) {
		if _, err := cp.InstallCRDs(ctx, d); err != nil {
			return fail(err)
		}
	}
	if err := c.cluster.InstallDataVolumeImmutability(ctx); err != nil {
		return fail(err)
	}
	// examples/argocd/clusters/*/platform.yaml: OADP is installed with the
	// cluster, outside the repository (dataProtection.external), so its
	// namespace exists before Argo CD syncs the tenants' Schedules into it.
	if _, err := cp.MustKubectl(ctx, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: openshift-adp}\n"), "apply", "-f", "-"); err != nil {
		return fail(err)
	}
	return c, nil
}

// storageClasses creates the classes claims name, volume expansion
// allowed, as on ODF's Ceph RBD classes.
func (c *cluster) storageClasses(names []string) error {
	for _, name := range names {
		sc := fmt.Sprintf("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: %s}\nprovisioner: e2e.virtc.dev/none\nallowVolumeExpansion: true\n", name)
		if _, err := c.cp.MustKubectl(c.ctx, []byte(sc), "apply", "-f", "-"); err != nil {
			return err
		}
	}
	return nil
}

// clusterSecret registers c with Argo CD under its name: a Secret labelled
// argocd.argoproj.io/secret-type=cluster with name, server and config
// (argo-cd v3.6.1 util/db/cluster.go SecretToCluster; config is
// v1alpha1.ClusterConfig, whose tlsClientConfig byte fields are base64 in
// JSON).
func (c *cluster) clusterSecret() ([]byte, error) {
	ca, cert, key, err := c.cp.ClientTLS()
	if err != nil {
		return nil, err
	}
	config, err := json.Marshal(map[string]any{"tlsClientConfig": map[string]any{"caData": ca, "certData": cert, "keyData": key}})
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "cluster-" + c.name, "namespace": argocdNamespace,
			"labels": map[string]any{"argocd.argoproj.io/secret-type": "cluster"}},
		"stringData": map[string]any{"name": c.name, "server": c.cp.URL, "config": string(config)},
	})
}
