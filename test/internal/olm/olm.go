package olm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// Default versions: those of OpenShift 4.22 (tools/build-olm.sh).
const (
	DefaultOLMVersion = "v0.42.0"
	DefaultOPMVersion = "v1.65.0"
)

// Tools are the binaries and CRDs of tools/build-olm.sh.
type Tools struct {
	Dir, OLM, Catalog, OPM, CRDs string
}

// FindTools locates the cache of tools/build-olm.sh for OLM_VERSION and
// OPM_VERSION.
func FindTools() (Tools, error) {
	cache, err := conformance.CacheDir()
	if err != nil {
		return Tools{}, err
	}
	olm, opm := conformance.EnvOr("OLM_VERSION", DefaultOLMVersion), conformance.EnvOr("OPM_VERSION", DefaultOPMVersion)
	dir := filepath.Join(cache, "olm-"+olm+"-opm-"+opm)
	t := Tools{Dir: dir, OLM: filepath.Join(dir, "olm"), Catalog: filepath.Join(dir, "catalog"),
		OPM: filepath.Join(dir, "opm"), CRDs: filepath.Join(dir, "crds")}
	return t, conformance.CheckCache("OLM "+olm+" / opm "+opm, dir, "build them with `make olm-tools`", t.OLM, t.Catalog, t.OPM, t.CRDs)
}

// Namespaces of OLM on OpenShift: olm-operator and catalog-operator run in
// openshift-operator-lifecycle-manager, and the cluster's global catalogs
// (redhat-operators, the CatalogSource virtc's Subscriptions name by
// default) live in openshift-marketplace, the catalog-operator's global
// catalog namespace (openshift/operator-framework-olm manifests
// 0000_50_olm_08-catalog-operator.deployment.yaml: --namespace
// openshift-marketplace).
const (
	Namespace        = "openshift-operator-lifecycle-manager"
	CatalogNamespace = "openshift-marketplace"
	// DefaultCatalog is the CatalogSource virtc's Subscriptions install from
	// without a Platform spec.catalogSource.
	DefaultCatalog = "redhat-operators"
)

// OLM is a running opm serve, catalog-operator and olm-operator.
type OLM struct {
	Registry, Catalog, Operator *conformance.Process
	// MetricsURL is olm-operator's metrics endpoint (csv_succeeded,
	// csv_abnormal: pkg/metrics/metrics.go), over HTTP.
	MetricsURL string
}

// olmMetricsAddr is where operator-lifecycle-manager v0.42.0 serves its
// metrics without TLS (pkg/lib/server/server.go getAddress), a literal;
// catalog-operator binds the same one. On OpenShift each runs in its own
// pod, over TLS on 8443 with the service CA's certificate; here they share
// the host's network, so olm-operator gets a port of its own
// (conformance.CopyWithPort; the program's other ":8080" ends
// "http://localhost:8080").
const olmMetricsAddr = ":8080"

// Stop stops the three.
func (o *OLM) Stop() {
	for _, p := range []*conformance.Process{o.Operator, o.Catalog, o.Registry} {
		if p != nil {
			p.Stop()
		}
	}
}

// Logs is the end of each one's log, for a failed test.
func (o *OLM) Logs(n int) string {
	var b strings.Builder
	for _, p := range []struct {
		name string
		p    *conformance.Process
	}{{"olm-operator", o.Operator}, {"catalog-operator", o.Catalog}, {"opm serve", o.Registry}} {
		if p.p == nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(p.p.Tail(), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "--- %s:\n%s\n", p.name, strings.Join(lines, "\n"))
	}
	return b.String()
}

// Start serves the file-based catalog in catalogDir with `opm serve` on a
// loopback port, registers it as the CatalogSource DefaultCatalog (an
// address-based grpc CatalogSource: catalog-operator connects to
// spec.address instead of starting a registry pod, pkg/controller/registry/
// reconciler/grpc.go; the real redhat-operators runs `opm serve` of the
// index image in such a pod), and starts catalog-operator and olm-operator
// with the admin kubeconfig (on OpenShift their ServiceAccounts are bound
// to cluster-admin: operator-framework-olm manifests
// 0000_50_olm_01-olm-operator.serviceaccount.yaml). It waits until the
// CatalogSource's connection is READY.
func Start(ctx context.Context, cp *conformance.ControlPlane, tools Tools, catalogDir, dir string) (o *OLM, err error) {
	o = &OLM{}
	defer func() {
		if err != nil {
			if o.Registry != nil || o.Catalog != nil || o.Operator != nil {
				err = fmt.Errorf("%w\n%s", err, o.Logs(30))
			}
			o.Stop()
		}
	}()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	for _, ns := range []string{Namespace, CatalogNamespace} {
		doc, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
		if _, err := cp.MustKubectl(ctx, doc, "apply", "-f", "-"); err != nil {
			return nil, err
		}
	}
	if err := o.serve(ctx, cp, tools, catalogDir, dir); err != nil {
		return nil, err
	}
	env := []string{"KUBECONFIG=" + cp.Kubeconfig}
	o.Catalog, err = conformance.StartProcess(dir, "catalog-operator", tools.Catalog, env,
		"--namespace="+CatalogNamespace, "--kubeconfig="+cp.Kubeconfig,
		"--util-image=quay.io/operator-framework/olm:"+DefaultOLMVersion, "--set-workload-user-id=false",
		"--interval=1m", "--install-plan-retry-timeout=1m")
	if err != nil {
		return nil, err
	}
	prog, port, err := conformance.CopyWithPort(tools.OLM, filepath.Join(dir, "olm-operator"), olmMetricsAddr, 8081, 8999, func(before []byte) bool {
		return bytes.HasSuffix(before, []byte("localhost"))
	})
	if err != nil {
		return nil, err
	}
	o.MetricsURL = "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics"
	o.Operator, err = conformance.StartProcess(dir, "olm-operator", prog, append(env, "OPERATOR_NAMESPACE="+Namespace, "OPERATOR_NAME=olm-operator"),
		"--namespace="+Namespace, "--interval=1m")
	if err != nil {
		return nil, err
	}
	return o, waitCatalogReady(ctx, cp, o)
}

// serve starts `opm serve` of catalogDir on a free loopback port and points
// the CatalogSource DefaultCatalog at it.
func (o *OLM) serve(ctx context.Context, cp *conformance.ControlPlane, tools Tools, catalogDir, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	port, err := conformance.FreePort()
	if err != nil {
		return err
	}
	pprof, err := conformance.FreePort()
	if err != nil {
		return err
	}
	o.Registry, err = conformance.StartProcess(dir, "opm", tools.OPM, nil, "serve", catalogDir,
		"--port="+strconv.Itoa(port), "--pprof-addr=127.0.0.1:"+strconv.Itoa(pprof),
		"--termination-log="+filepath.Join(dir, "opm-termination-log"))
	if err != nil {
		return err
	}
	source, _ := json.Marshal(map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
		"metadata": map[string]any{"name": DefaultCatalog, "namespace": CatalogNamespace},
		"spec": map[string]any{"sourceType": "grpc", "address": "127.0.0.1:" + strconv.Itoa(port),
			"displayName": "Red Hat Operators (virtc e2e: generated from catalog/versions/versions.yaml)", "publisher": "Red Hat"},
	})
	_, err = cp.MustKubectl(ctx, source, "apply", "-f", "-")
	return err
}

// ServeCatalog replaces the catalog DefaultCatalog serves with the one in
// catalogDir, as a cluster's upgrade to the next OpenShift minor moves
// redhat-operators to that minor's index image: a new `opm serve`, the
// CatalogSource's address moved to it (catalog-operator reconnects,
// pkg/controller/registry/reconciler/grpc.go), the old server stopped once
// the new connection is READY.
func (o *OLM) ServeCatalog(ctx context.Context, cp *conformance.ControlPlane, tools Tools, catalogDir, dir string) error {
	old := o.Registry
	if err := o.serve(ctx, cp, tools, catalogDir, dir); err != nil {
		return err
	}
	if err := waitCatalogReady(ctx, cp, o); err != nil {
		return err
	}
	old.Stop()
	return nil
}

// waitCatalogReady waits until catalog-operator reports the CatalogSource's
// gRPC connection to its spec.address READY (status.connectionState).
func waitCatalogReady(ctx context.Context, cp *conformance.ControlPlane, o *OLM) error {
	deadline := time.Now().Add(2 * time.Minute)
	last := ""
	for {
		for _, p := range []*conformance.Process{o.Registry, o.Catalog, o.Operator} {
			if p.Exited() {
				return fmt.Errorf("an OLM process exited before the catalog was ready")
			}
		}
		data, err := cp.Get(ctx, "/apis/operators.coreos.com/v1alpha1/namespaces/"+CatalogNamespace+"/catalogsources/"+DefaultCatalog)
		if err == nil {
			var cs struct {
				Spec struct {
					Address string `json:"address"`
				} `json:"spec"`
				Status struct {
					ConnectionState struct {
						Address           string `json:"address"`
						LastObservedState string `json:"lastObservedState"`
					} `json:"connectionState"`
				} `json:"status"`
			}
			if json.Unmarshal(data, &cs) == nil {
				last = cs.Status.ConnectionState.LastObservedState + " at " + cs.Status.ConnectionState.Address
				if cs.Status.ConnectionState.LastObservedState == "READY" && cs.Status.ConnectionState.Address == cs.Spec.Address {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CatalogSource %s/%s not READY after 2m (last state %q)", CatalogNamespace, DefaultCatalog, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

type podCondition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

// RunPods plays kube-scheduler and the kubelet for the pods of the
// Deployments OLM installs in namespace (pods owned by a ReplicaSet; a
// Job's pod is left to whoever runs Jobs) (the ReplicaSets of
// kube-controller-manager's deployment and replica set controllers create
// them): it binds each unbound pod to node (pods/binding, as
// pkg/scheduler/schedule_one.go bind) and marks it Running with its
// containers started, and ready (pkg/kubelet/status/status_manager.go)
// once their readiness probes' initialDelaySeconds have passed, so that
// the ReplicaSet counts it available, the Deployment reports
// Available (pkg/controller/deployment/sync.go), and olm-operator's install
// strategy check passes (operator-lifecycle-manager v0.42.0
// pkg/controller/install/deployment.go checkForDeployments and
// status_viewer.go DeploymentStatus: no outdated replica left and the
// Available condition True). A pod being
// deleted is ended as the kubelet ends it. There is no container runtime:
// nothing of the image runs.
func RunPods(ctx context.Context, cp *conformance.ControlPlane, namespace, node string) error {
	data, err := cp.Get(ctx, "/api/v1/namespaces/"+namespace+"/pods")
	if err != nil {
		return err
	}
	var pods struct {
		Items []struct {
			Metadata struct {
				Name              string     `json:"name"`
				DeletionTimestamp string     `json:"deletionTimestamp"`
				OwnerReferences   []ownerRef `json:"ownerReferences"`
			} `json:"metadata"`
			Spec struct {
				NodeName   string `json:"nodeName"`
				Containers []struct {
					Name           string `json:"name"`
					Image          string `json:"image"`
					ReadinessProbe *struct {
						InitialDelaySeconds int `json:"initialDelaySeconds"`
					} `json:"readinessProbe"`
				} `json:"containers"`
			} `json:"spec"`
			Status struct {
				Phase     string         `json:"phase"`
				StartTime time.Time      `json:"startTime"`
				Conds     []podCondition `json:"conditions"`
			} `json:"status"`
		}
	}
	if err := json.Unmarshal(data, &pods); err != nil {
		return err
	}
	for _, p := range pods.Items {
		if !ownedBy(p.Metadata.OwnerReferences, "ReplicaSet") {
			continue
		}
		if p.Metadata.DeletionTimestamp != "" {
			if _, err := cp.MustKubectl(ctx, nil, "delete", "pod", p.Metadata.Name, "-n", namespace, "--grace-period=0", "--force", "--wait=false"); err != nil {
				return err
			}
			continue
		}
		if p.Spec.NodeName == "" {
			binding, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Binding",
				"metadata": map[string]any{"name": p.Metadata.Name, "namespace": namespace},
				"target":   map[string]any{"apiVersion": "v1", "kind": "Node", "name": node}})
			if _, err := cp.Do(ctx, "POST", "/api/v1/namespaces/"+namespace+"/pods/"+p.Metadata.Name+"/binding", "application/json", binding); err != nil {
				return err
			}
		}
		// The kubelet runs a readiness probe no sooner than its
		// initialDelaySeconds after the container started
		// (pkg/kubelet/prober/worker.go); until then the pod runs, not
		// Ready, and a Deployment is not Available.
		started := time.Now().UTC()
		if p.Status.Phase == "Running" {
			if slices.Contains(p.Status.Conds, podCondition{"Ready", "True"}) {
				continue
			}
			started = p.Status.StartTime
		}
		delay := 0
		for _, c := range p.Spec.Containers {
			if c.ReadinessProbe != nil {
				delay = max(delay, c.ReadinessProbe.InitialDelaySeconds)
			}
		}
		ready := !time.Now().Before(started.Add(time.Duration(delay) * time.Second))
		if p.Status.Phase == "Running" && !ready {
			continue
		}
		now, since := time.Now().UTC().Format(time.RFC3339), started.Format(time.RFC3339)
		var statuses []any
		for _, c := range p.Spec.Containers {
			statuses = append(statuses, map[string]any{"name": c.Name, "ready": ready, "started": true, "restartCount": 0,
				"image": c.Image, "imageID": "", "state": map[string]any{"running": map[string]any{"startedAt": since}}})
		}
		readyStatus := map[bool]string{true: "True", false: "False"}[ready]
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{
			"phase": "Running", "qosClass": "BestEffort", "podIP": "10.128.0.20", "hostIP": "192.168.0.1", "startTime": since,
			"conditions": []any{
				map[string]any{"type": "PodScheduled", "status": "True", "lastTransitionTime": since},
				map[string]any{"type": "Initialized", "status": "True", "lastTransitionTime": since},
				map[string]any{"type": "ContainersReady", "status": readyStatus, "lastTransitionTime": now},
				map[string]any{"type": "Ready", "status": readyStatus, "lastTransitionTime": now},
			},
			"containerStatuses": statuses,
		}})
		if _, err := cp.MustKubectl(ctx, nil, "patch", "pod", p.Metadata.Name, "-n", namespace, "--subresource=status", "--type=merge", "-p", string(patch)); err != nil {
			return err
		}
	}
	return nil
}

type ownerRef struct {
	Kind string `json:"kind"`
}

func ownedBy(refs []ownerRef, kind string) bool {
	for _, r := range refs {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// RegisterNode creates a Ready node for the operator pods.
func RegisterNode(ctx context.Context, cp *conformance.ControlPlane, name string) error {
	doc, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"kubernetes.io/hostname": name, "node-role.kubernetes.io/infra": ""}}})
	if _, err := cp.MustKubectl(ctx, doc, "apply", "-f", "-"); err != nil {
		return err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{
		"conditions":  []any{map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": now, "lastTransitionTime": now}},
		"allocatable": map[string]any{"cpu": "16", "memory": "64Gi", "pods": "110"},
		"capacity":    map[string]any{"cpu": "16", "memory": "64Gi", "pods": "110"},
	}})
	_, err := cp.MustKubectl(ctx, nil, "patch", "node", name, "--subresource=status", "--type=merge", "-p", string(patch))
	return err
}

// InstallPlan is what the suites read of an InstallPlan.
type InstallPlan struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Approved bool     `json:"approved"`
		CSVs     []string `json:"clusterServiceVersionNames"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// InstallPlans lists the InstallPlans of namespace.
func InstallPlans(ctx context.Context, cp *conformance.ControlPlane, namespace string) ([]InstallPlan, error) {
	return conformance.List[InstallPlan](ctx, cp, "/apis/operators.coreos.com/v1alpha1/namespaces/"+namespace+"/installplans")
}

// ApprovedCSVs are the CSVs of the approved InstallPlans of namespace, one
// entry per plan (its CSVs joined by commas), sorted.
func ApprovedCSVs(plans []InstallPlan) []string {
	var out []string
	for _, p := range plans {
		if p.Spec.Approved {
			out = append(out, strings.Join(p.Spec.CSVs, ","))
		}
	}
	slices.Sort(out)
	return out
}

// CSV is what the suites read of a ClusterServiceVersion.
type CSV struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// CSVs lists the ClusterServiceVersions of namespace.
func CSVs(ctx context.Context, cp *conformance.ControlPlane, namespace string) ([]CSV, error) {
	return conformance.List[CSV](ctx, cp, "/apis/operators.coreos.com/v1alpha1/namespaces/"+namespace+"/clusterserviceversions")
}
