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
	"github.com/virtc/virtc/test/controllers"
	"github.com/virtc/virtc/test/internal/olm"
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
	// kcm is kube-controller-manager beside the API server.
	kcm *conformance.ControllerManager
	// nodes are the node stand-ins; jobs runs the pods of Jobs on them.
	nodes *controllers.Node
	jobs  *jobPods
	// kv is KubeVirt's virt-api and virt-controller (clusterSpec.kubevirt),
	// pki the certificates virt-api serves and the API server trusts for
	// its request headers; cdi is CDI's real cdi-controller beside them,
	// clones and volumes the stand-ins for what it needs that cannot run
	// here (test/controllers/standin.go: cdi-apiserver's clone token, the
	// upload server and cloner pods of its host-assisted clones, and the
	// provisioner).
	kv      *controllers.KubeVirt
	pki     conformance.ServingPKI
	cdi     *controllers.CDIController
	clones  *controllers.HostClones
	volumes *controllers.Volumes
	// olm is OLM's olm-operator and catalog-operator with `opm serve` of
	// a catalog generated from virtc's version table (clusterSpec.olm).
	olm *olm.OLM
}

// stop stops OLM, CDI, KubeVirt and kube-controller-manager, then the
// control plane.
func (c *cluster) stop() {
	if c.olm != nil {
		c.olm.Stop()
	}
	c.cdi.Stop()
	c.kv.Stop()
	if c.kcm != nil {
		c.kcm.Stop()
	}
	c.cp.Stop()
}

// clusterSpec says what a cluster serves.
type clusterSpec struct {
	name, version string
	crdDirs       []string // besides the version's CRDs
	// kubevirt runs KubeVirt's real virt-api and virt-controller and
	// CDI's real cdi-controller beside the API server (test/controllers),
	// the node stand-in playing the kubelet and virt-handler for their pods
	// and VMIs, and the HostClones and Volumes stand-ins what CDI needs
	// that cannot run here.
	kubevirt bool
	// olm runs OLM (test/internal/olm) with the redhat-operators catalog of the
	// version's OpenShift minor, generated from virtc's version table:
	// OLM's resolver proposes the InstallPlans the approver Job approves,
	// and installs the CSVs, instead of the status stand-in.
	olm bool
}

// startClusters starts one control plane per spec, in parallel (each is
// mostly waiting for its API server), each with the version's CRDs, CDI's
// DataVolume immutability policy and an audit log; the caller stops them.
func startClusters(ctx context.Context, bins conformance.Binaries, tl tools, virtc, dir, schemas string, specs []clusterSpec) ([]*cluster, error) {
	out := make([]*cluster, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Go(func() {
			out[i], errs[i] = startCluster(ctx, bins, tl, virtc, filepath.Join(dir, s.name), schemas, s)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("cluster %s: %w", s.name, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range out {
			if c != nil {
				c.stop()
			}
		}
		return nil, err
	}
	return out, nil
}

func startCluster(ctx context.Context, bins conformance.Binaries, tl tools, virtc, dir, schemas string, s clusterSpec) (*cluster, error) {
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		return nil, err
	}
	args, log, err := auditArgs(dir)
	if err != nil {
		return nil, err
	}
	var pki conformance.ServingPKI
	if s.kubevirt {
		if pki, err = conformance.WriteServingPKI(dir, "virtc-kubevirt-ca"); err != nil {
			return nil, err
		}
		args = append(args, controllers.APIServerArgs(pki)...)
	}
	cp, err := conformance.Start(ctx, bins, filepath.Join(dir, "controlplane"), args...)
	if err != nil {
		return nil, err
	}
	c := &cluster{name: s.name, version: s.version, ctx: ctx, cp: cp,
		cluster: conformance.NewCluster(cp, filepath.Join(dir, "manifests")), auditLog: log, resources: map[string]string{}}
	fail := func(err error) (*cluster, error) {
		c.stop()
		return nil, err
	}
	// kube-controller-manager of the same Kubernetes build: Jobs (the
	// approver hook), garbage collection (Argo CD's foreground deletes),
	// namespaces, service accounts, quotas' status.
	if c.kcm, err = conformance.StartControllerManager(ctx, cp, tl.kcm, filepath.Join(dir, "kcm"), conformance.ControllersWithoutNode); err != nil {
		return fail(err)
	}
	if err := cp.WaitServiceAccount(ctx, "default"); err != nil {
		return fail(fmt.Errorf("%w\n%s", err, c.kcm.Tail()))
	}
	crdDir := filepath.Join(schemas, s.version, "crd-yaml")
	if _, err := os.Stat(crdDir); err != nil {
		return fail(fmt.Errorf("the %s CRDs are missing (VIRTC_SCHEMAS): %w", s.version, err))
	}
	// prometheus-operator's CRDs (virtc's PrometheusRules and
	// AlertmanagerConfigs), which OpenShift's monitoring stack installs on
	// every cluster: test/schemas/README.md.
	monitoring := filepath.Join(repoRoot, "test", "schemas", "prometheus-operator", "crd-yaml")
	for _, d := range append([]string{crdDir, monitoring}, s.crdDirs...) {
		if _, err := cp.InstallCRDs(ctx, d); err != nil {
			return fail(err)
		}
	}
	if err := c.cluster.InstallDataVolumeImmutability(ctx); err != nil {
		return fail(err)
	}
	if s.olm {
		// OLM's own CRDs (over the shared schemas' Subscription and
		// OperatorGroup), its catalog and its two operators.
		if _, err := cp.ReplaceCRDs(ctx, tl.olm.CRDs); err != nil {
			return fail(err)
		}
		catalog := filepath.Join(dir, "catalog")
		if err := olm.WriteMinorCatalog(catalog, s.version, schemas); err != nil {
			return fail(err)
		}
		if c.olm, err = olm.Start(ctx, cp, tl.olm, catalog, filepath.Join(dir, "olm")); err != nil {
			return fail(err)
		}
	} else {
		if _, err := cp.MustKubectl(ctx, []byte(csvCRD), "apply", "-f", "-"); err != nil {
			return fail(err)
		}
		// The namespace of OpenShift's operator catalogs, which every
		// cluster with the marketplace capability has (operator-marketplace
		// manifests/01_namespace.yaml) and the OLM
		// clusters get from olm.Start: the approver's Role to read its
		// CatalogSource lives there (render.Approver).
		if _, err := cp.MustKubectl(ctx, []byte(marketplaceNamespace), "apply", "-f", "-"); err != nil {
			return fail(err)
		}
	}
	handler := ""
	if s.kubevirt {
		if _, err := controllers.InstallMissingCRDs(ctx, cp, filepath.Join(dir, "crds"), tl.kubevirt.KubeVirtCRDs, tl.cdi.CRDs); err != nil {
			return fail(err)
		}
		if c.kv, err = controllers.Start(ctx, cp, tl.kubevirt, pki, filepath.Join(dir, "kubevirt")); err != nil {
			return fail(err)
		}
		// the catalog's class as ODF creates it, before cdi-controller, so
		// that its StorageProfile controller finds the provisioner it
		// knows (controllers.CreateStorageClasses)
		if err := controllers.CreateStorageClasses(ctx, cp); err != nil {
			return fail(err)
		}
		if c.cdi, err = controllers.StartCDI(ctx, cp, tl.cdi, filepath.Join(dir, "cdi")); err != nil {
			return fail(err)
		}
		c.pki, handler = pki, c.kv.HandlerKubeconfig
		c.clones, c.volumes = controllers.NewHostClones(cp, c.cdi), controllers.NewVolumes(cp)
	}
	if c.nodes, err = controllers.RegisterNodes(ctx, cp, handler, 2); err != nil {
		return fail(err)
	}
	podDir := filepath.Join(dir, "pods")
	if err := os.MkdirAll(podDir, 0o700); err != nil {
		return fail(err)
	}
	c.jobs = newJobPods(cp, c.nodes.Names[0], virtc, podDir)
	// examples/argocd/clusters/*/platform.yaml: OADP is installed with the
	// cluster, outside the repository (dataProtection.external), so its
	// namespace exists before Argo CD syncs the tenants' Schedules into it.
	if _, err := cp.MustKubectl(ctx, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: openshift-adp}\n"), "apply", "-f", "-"); err != nil {
		return fail(err)
	}
	return c, nil
}

// storageClasses creates the classes claims name, volume expansion
// allowed, as on ODF's Ceph RBD classes (on a cluster with CDI, the
// catalog's default class is there already, as ODF makes it:
// controllers.CreateStorageClasses).
func (c *cluster) storageClasses(names []string) error {
	for _, name := range names {
		if c.cdi != nil && name == controllers.DefaultStorageClass {
			continue
		}
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

const marketplaceNamespace = `apiVersion: v1
kind: Namespace
metadata:
  name: openshift-marketplace
`
