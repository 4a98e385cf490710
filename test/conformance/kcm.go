package conformance

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FindControllerManager locates kube-controller-manager of the pinned
// Kubernetes version, which tools/build.sh caches in a directory of its
// own ($VIRTC_TOOLS_CACHE/kcm-$KUBE_VERSION; KUBE_CONTROLLER_MANAGER_BIN
// overrides the path).
func FindControllerManager() (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	bin := EnvOr("KUBE_CONTROLLER_MANAGER_BIN",
		filepath.Join(cache, "kcm-"+EnvOr("KUBE_VERSION", DefaultKubeVersion), "kube-controller-manager"))
	if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return bin, fmt.Errorf("kube-controller-manager missing at %s (build it with `make kcm-tools`)", bin)
	}
	return bin, nil
}

// ControllersWithoutNode are the controllers kube-controller-manager runs
// beside a control plane that has no kubelet, no storage provisioner and no
// cloud: all of them (the garbage collector, the job, deployment, replica
// set, namespace, resource quota, service account and token controllers,
// ...) except
//
//   - node-lifecycle-controller and taint-eviction-controller: the nodes
//     here are stand-ins that send no heartbeat, so the node lifecycle
//     controller would mark them Unknown after the grace period and the
//     taint manager evict every pod on them (pkg/controller/nodelifecycle/
//     node_lifecycle_controller.go monitorNodeHealth);
//   - persistentvolume-binder-controller: no provisioner creates volumes,
//     and a claim the status stand-in marks Bound has no volume, which the
//     binder turns into Lost (pkg/controller/volume/persistentvolume/
//     pv_controller.go syncBoundClaim);
//   - node-ipam-controller: no pod network to allocate.
//
// The cloud controllers stay off by themselves (no --cloud-provider).
var ControllersWithoutNode = []string{"*",
	"-node-lifecycle-controller", "-taint-eviction-controller",
	"-persistentvolume-binder-controller", "-node-ipam-controller"}

// ControllerManager is a running kube-controller-manager.
type ControllerManager struct {
	*Process
}

// StartControllerManager starts kube-controller-manager bin against cp, as
// a cluster runs it: the admin kubeconfig to start with, each controller
// with its own ServiceAccount's credentials (--use-service-account-
// credentials, the system:controller:* roles the API server's RBAC
// bootstrap creates), the service-account signing key the API server
// verifies tokens with (for the token controller), the cluster CA as the
// root CA it publishes in every namespace's kube-root-ca.crt, no leader
// election (one instance), and controllers the list given (see
// ControllersWithoutNode). It waits until the controller manager answers
// /healthz.
func StartControllerManager(ctx context.Context, cp *ControlPlane, bin, dir string, controllers []string) (*ControllerManager, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p, err := StartProcess(dir, "kube-controller-manager", bin, nil,
		"--kubeconfig="+cp.Kubeconfig,
		"--authentication-kubeconfig="+cp.Kubeconfig,
		"--authorization-kubeconfig="+cp.Kubeconfig,
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+cp.creds.saKey,
		"--root-ca-file="+cp.creds.caCert,
		"--controllers="+strings.Join(controllers, ","),
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(dir, "cert-dir"),
		// resync quotas and collect garbage without the production pauses
		"--concurrent-gc-syncs=5",
		"--resource-quota-sync-period=30s",
		"--profiling=false",
	)
	if err != nil {
		return nil, err
	}
	// Its serving certificate is self-signed (in --cert-dir): the check
	// is of readiness, not of identity.
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // readiness probe of a local process
	}}
	if err := waitReady(ctx, p, probe, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz", "ok"); err != nil {
		p.Stop()
		return nil, err
	}
	return &ControllerManager{Process: p}, nil
}

// WaitServiceAccount waits until the service account controller of
// kube-controller-manager has made the default ServiceAccount of
// namespace (pkg/controller/serviceaccount/serviceaccounts_controller.go),
// the sign that it runs.
func (cp *ControlPlane) WaitServiceAccount(ctx context.Context, namespace string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := cp.Get(ctx, "/api/v1/namespaces/"+namespace+"/serviceaccounts/default")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no ServiceAccount default in %s: %v", namespace, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
