// Package controllers runs KubeVirt's real virt-api and virt-controller
// (v1.8.4, built by tools/build.sh) beside a conformance control plane
// (test/conformance: etcd and kube-apiserver), so that virtc's output is
// handled by the controllers that handle it on the platform: VMs become
// VMIs and virt-launcher pods rendered by virt-controller, admitted or
// refused by the API server under virtc's ResourceQuota. The test runs only
// when asked for (VIRTC_E2E_CONTROLLERS=1, set by `make e2e-controllers`).
package controllers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// DefaultKubeVirtVersion is the KubeVirt of the 4.22 platform; tools/build.sh
// builds the same one.
const DefaultKubeVirtVersion = "v1.8.4"

// InstallPlatformCRDs installs the CRDs of a platform version: the shared
// set (schemas is conform.Schemas of version), the ones this repository
// keeps beside it (test/schemas/<version>) and prometheus-operator's;
// root is the repository's root.
func InstallPlatformCRDs(ctx context.Context, cp *conformance.ControlPlane, root, schemas, version string) error {
	for _, crds := range []string{filepath.Join(schemas, "crd-yaml"), filepath.Join(root, "test", "schemas", version, "crd-yaml"),
		filepath.Join(root, "test", "schemas", "prometheus-operator", "crd-yaml")} {
		if _, err := cp.InstallCRDs(ctx, crds); err != nil {
			return fmt.Errorf("install CRDs from %s: %v", crds, err)
		}
	}
	return nil
}

// InstallMissingCRDs installs the CRDs of the YAML files in dirs, in
// order, that are not installed yet (by name): the platform's CRD set comes
// first, and the CRDs of tools/build.sh fill in what virt-controller
// watches beyond it (migrations, pools, exports, clones, backups, the
// KubeVirt CR, CDI's configuration and storage profiles). It returns the
// names it installed.
func InstallMissingCRDs(ctx context.Context, cp *conformance.ControlPlane, tmp string, dirs ...string) ([]string, error) {
	var added []string
	for i, d := range dirs {
		data, err := cp.Get(ctx, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
		if err != nil {
			return added, err
		}
		var list struct {
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return added, err
		}
		have := map[string]bool{}
		for _, c := range list.Items {
			have[c.Metadata.Name] = true
		}
		files, err := filepath.Glob(filepath.Join(d, "*.yaml"))
		if err != nil {
			return added, err
		}
		sub := filepath.Join(tmp, strconv.Itoa(i))
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return added, err
		}
		n := 0
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return added, err
			}
			objs, err := conformance.ParseObjects(raw)
			if err != nil {
				return added, fmt.Errorf("%s: %w", f, err)
			}
			if len(objs) != 1 || objs[0].Kind != "CustomResourceDefinition" {
				return added, fmt.Errorf("%s: want one CustomResourceDefinition", f)
			}
			if have[objs[0].Name] {
				continue
			}
			if err := os.WriteFile(filepath.Join(sub, filepath.Base(f)), raw, 0o600); err != nil {
				return added, err
			}
			added = append(added, objs[0].Name)
			n++
		}
		if n > 0 {
			if _, err := cp.InstallCRDs(ctx, sub); err != nil {
				return added, err
			}
		}
	}
	return added, nil
}

// Namespace is KubeVirt's install namespace: openshift-cnv, where
// OpenShift Virtualization runs it (HCO v1.18.1 into the namespace of
// virtc's Subscription). virt-controller and virt-api take it from their
// service account's namespace file (kubevirt.io/client-go util.GetNamespace;
// without the file they would fall back to "kubevirt"), which namespaced
// mounts for them: there virt-controller takes its leader lease and looks
// for the KubeVirt CR, and virt-api accepts VMI status only from
// kubevirt-handler of that namespace (webhooks/serviceaccounts.go). Their
// ServiceAccounts live there too, so they write with the identity virtc's
// tenant guardrails exempt (rules.Exempt, rules.ExemptNamespaces).
const Namespace = "openshift-cnv"

// IdentityNamespace is where the controllers' ServiceAccounts live.
const IdentityNamespace = Namespace

// namespaced starts bin in a mount namespace of its own (unshare: a tmpfs
// over /run, so nothing of the host is touched) whose service account
// namespace file, where the kubelet mounts it, says Namespace.
func namespaced(dir, name, bin string, args ...string) (*conformance.Process, error) {
	sa := filepath.Join(dir, name+"-serviceaccount")
	if err := os.MkdirAll(sa, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(sa, "namespace"), []byte(Namespace), 0o644); err != nil {
		return nil, err
	}
	const script = `set -e
mount -t tmpfs -o mode=0755 tmpfs /var/run
mkdir -p /var/run/secrets/kubernetes.io/serviceaccount
cp "$0"/namespace /var/run/secrets/kubernetes.io/serviceaccount/
exec "$@"`
	return conformance.StartProcess(dir, name, "unshare", nil, append([]string{"--mount", "--propagation", "private", "sh", "-c", script, sa, bin}, args...)...)
}

// Tools are the cached KubeVirt programs and data of tools/build.sh.
type Tools struct {
	Dir, Controller, API string
	// Instancetypes holds the common-instancetypes bundles virt-operator
	// installs (VirtualMachineClusterInstancetypes and -Preferences).
	Instancetypes string
	// KubeVirtCRDs are KubeVirt's CRDs as virt-operator generates them;
	// CDICRDs the CDI CRDs virt-controller watches that the platform's
	// CRD set lacks (CDI, CDIConfig, StorageProfile).
	KubeVirtCRDs, CDICRDs string
}

// FindTools locates the cache of tools/build.sh for KUBEVIRT_VERSION
// (default DefaultKubeVirtVersion).
func FindTools() (Tools, error) {
	cache, err := conformance.CacheDir()
	if err != nil {
		return Tools{}, err
	}
	version := conformance.EnvOr("KUBEVIRT_VERSION", DefaultKubeVirtVersion)
	dir := filepath.Join(cache, "kubevirt-"+version)
	t := Tools{Dir: dir, Controller: filepath.Join(dir, "virt-controller"), API: filepath.Join(dir, "virt-api"),
		Instancetypes: filepath.Join(dir, "common-instancetypes"),
		KubeVirtCRDs:  filepath.Join(dir, "crds", "kubevirt"), CDICRDs: filepath.Join(dir, "crds", "cdi")}
	return t, conformance.CheckCache("KubeVirt "+version, dir, "build it with `make controllers-tools`",
		t.Controller, t.API, t.Instancetypes, t.KubeVirtCRDs, t.CDICRDs)
}

// APIServerArgs are the kube-apiserver flags virt-api needs: it reads the
// request-header settings from the extension-apiserver-authentication
// ConfigMap at startup and refuses to start without them
// (pkg/virt-api/api.go readRequestHeader), as an aggregated API server does.
func APIServerArgs(pki conformance.ServingPKI) []string {
	return []string{
		"--requestheader-client-ca-file=" + pki.CA,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
	}
}

// KubeVirt is a running virt-api and virt-controller.
type KubeVirt struct {
	API, Controller *conformance.Process
	// APIURL is virt-api's address (its webhooks are registered there).
	APIURL string
	// HandlerKubeconfig authenticates as virt-handler's ServiceAccount
	// (kubevirt-handler), for the node stand-in: virt-api's VMI mutator
	// resets a VMI status change by any other user
	// (mutators/vmi-mutator.go, webhooks/serviceaccounts.go).
	HandlerKubeconfig string
	// MetricsURL is virt-controller's metrics endpoint (HTTPS, served with
	// the certificate of MetricsCA), which virt-operator's ServiceMonitor
	// has the platform Prometheus scrape.
	MetricsURL, MetricsCA string
}

// serviceAccountKubeconfig creates ServiceAccount name in Namespace, bound
// to cluster-admin (a stand-in for the narrower ClusterRoles virt-operator
// binds, pkg/virt-operator/resource/generate/rbac/controller.go and
// handler.go), and writes a kubeconfig with a token for it.
//
// The ServiceAccount lives in IdentityNamespace, where OpenShift
// Virtualization runs KubeVirt (HCO v1.18.1 into openshift-cnv, virtc's
// Subscription), so that the controllers write with the identity virtc's
// tenant guardrails exempt (rules.Exempt, rules.ExemptNamespaces); the
// programs themselves keep Namespace for their leases and the KubeVirt CR.
func serviceAccountKubeconfig(ctx context.Context, cp *conformance.ControlPlane, dir, name string) (string, error) {
	return AdminServiceAccountKubeconfig(ctx, cp, dir, IdentityNamespace, name)
}

// AdminServiceAccountKubeconfig creates namespace (if missing) and
// ServiceAccount name in it, bound to cluster-admin, and writes a
// kubeconfig with a token for it into dir: a controller then writes with
// the identity it has in a cluster (the one virtc's tenant guardrails
// judge by).
func AdminServiceAccountKubeconfig(ctx context.Context, cp *conformance.ControlPlane, dir, namespace, name string) (string, error) {
	ns, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}})
	if err != nil {
		return "", err
	}
	if _, err := cp.MustKubectl(ctx, ns, "apply", "-f", "-"); err != nil {
		return "", err
	}
	items := []any{
		map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": name, "namespace": namespace}},
		map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
			"metadata": map[string]any{"name": name},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": name, "namespace": namespace}}},
	}
	if err := create(ctx, cp, items); err != nil {
		return "", err
	}
	return tokenKubeconfig(ctx, cp, dir, namespace, name)
}

// ServiceAccountKubeconfig creates ServiceAccount namespace/name (in an
// existing namespace), bound to nothing, and writes a kubeconfig with a
// token for it into dir: a process run with it holds only what the caller
// binds to the account.
func ServiceAccountKubeconfig(ctx context.Context, cp *conformance.ControlPlane, dir, namespace, name string) (string, error) {
	items := []any{map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": name, "namespace": namespace}}}
	if err := create(ctx, cp, items); err != nil {
		return "", err
	}
	return tokenKubeconfig(ctx, cp, dir, namespace, name)
}

// tokenKubeconfig writes a kubeconfig with a token for ServiceAccount
// namespace/name.
func tokenKubeconfig(ctx context.Context, cp *conformance.ControlPlane, dir, namespace, name string) (string, error) {
	token, err := cp.MustKubectl(ctx, nil, "create", "token", name, "-n", namespace, "--duration=6h")
	if err != nil {
		return "", err
	}
	ca, _, _, err := cp.ClientTLS()
	if err != nil {
		return "", err
	}
	kc, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": name,
		"clusters": []any{map[string]any{"name": "virtc", "cluster": map[string]any{"server": cp.URL, "certificate-authority-data": ca}}},
		"users":    []any{map[string]any{"name": name, "user": map[string]any{"token": strings.TrimSpace(string(token))}}},
		"contexts": []any{map[string]any{"name": name, "context": map[string]any{"cluster": "virtc", "user": name}}},
	})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	return path, os.WriteFile(path, kc, 0o600)
}

// Stop stops virt-controller, then virt-api, each by its PID.
func (k *KubeVirt) Stop() {
	if k == nil {
		return
	}
	if k.Controller != nil {
		k.Controller.Stop()
	}
	if k.API != nil {
		k.API.Stop()
	}
}

// Start installs what virt-operator would install for virt-api and
// virt-controller, then starts them against cp with state in dir:
//
//   - the KubeVirt Namespace (openshift-cnv) and the kubevirt-ca ConfigMap (virt-operator's
//     pkg/virt-operator/resource/generate/components/secrets.go
//     NewKubeVirtCAConfigMap; virt-api's TLS server waits for it);
//   - the common-instancetypes bundles (virt-operator's
//     pkg/virt-operator/resource/apply/instancetypes.go);
//   - virt-api, serving pki's certificate, and its mutating webhooks
//     (VirtualMachines, VirtualMachineInstances, migrations) as
//     virt-operator registers them (pkg/virt-operator/resource/generate/
//     components/webhooks.go NewVirtAPIMutatingWebhookConfiguration), with
//     a URL on 127.0.0.1 instead of the virt-api Service: the VMI mutator
//     sets the defaults (resource requests from the guest memory, CPU
//     topology) that virt-controller renders launcher pods from;
//   - virt-controller, until it holds its leader lease.
//
// No KubeVirt CR is created: both then run KubeVirt's default
// configuration (pkg/virt-config/configuration.go GetConfig), which is what
// sizing.KubeVirt models for HCO's defaults (CPU allocation ratio 10, the
// serial console log container).
func Start(ctx context.Context, cp *conformance.ControlPlane, tools Tools, pki conformance.ServingPKI, dir string) (k *KubeVirt, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	k = &KubeVirt{}
	defer func() {
		if err != nil {
			k.Stop()
		}
	}()
	caBundle := string(pki.CAPEM)
	setup, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "List",
		"items": []any{
			map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": Namespace}},
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "kubevirt-ca", "namespace": Namespace},
				"data":     map[string]any{"ca-bundle": caBundle}},
		},
	})
	if err != nil {
		return nil, err
	}
	if _, err := cp.MustKubectl(ctx, setup, "create", "-f", "-"); err != nil {
		return nil, err
	}
	bundles, err := filepath.Glob(filepath.Join(tools.Instancetypes, "*.yaml"))
	if err != nil || len(bundles) == 0 {
		return nil, fmt.Errorf("no common-instancetypes bundles in %s (%v)", tools.Instancetypes, err)
	}
	args := []string{"create", "-o", "name"}
	for _, b := range bundles {
		args = append(args, "-f", b)
	}
	if _, err := cp.MustKubectl(ctx, nil, args...); err != nil {
		return nil, err
	}

	// virt-controller and virt-handler write VMI status as their
	// ServiceAccounts, the only users virt-api lets change it.
	controllerKubeconfig, err := serviceAccountKubeconfig(ctx, cp, dir, "kubevirt-controller")
	if err != nil {
		return nil, err
	}
	if k.HandlerKubeconfig, err = serviceAccountKubeconfig(ctx, cp, dir, "kubevirt-handler"); err != nil {
		return nil, err
	}

	apiPort, err := conformance.FreePort()
	if err != nil {
		return nil, err
	}
	consolePort, err := conformance.FreePort()
	if err != nil {
		return nil, err
	}
	k.APIURL = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	k.API, err = namespaced(dir, "virt-api", tools.API,
		"--kubeconfig="+cp.Kubeconfig,
		"--listen=127.0.0.1",
		"--port="+strconv.Itoa(apiPort),
		"--console-server-port="+strconv.Itoa(consolePort),
		"--tls-cert-file="+pki.Cert,
		"--tls-key-file="+pki.Key,
		"--handler-cert-file="+pki.Cert,
		"--handler-key-file="+pki.Key,
	)
	if err != nil {
		return nil, err
	}
	if err := waitTLS(ctx, k.API, pki, k.APIURL+"/healthz"); err != nil {
		return nil, err
	}
	if _, err := cp.MustKubectl(ctx, mutatingWebhooks(k.APIURL, pki.CAPEM), "create", "-f", "-"); err != nil {
		return nil, err
	}

	ctlPort, err := conformance.FreePort()
	if err != nil {
		return nil, err
	}
	k.MetricsURL, k.MetricsCA = "https://127.0.0.1:"+strconv.Itoa(ctlPort)+"/metrics", pki.CA
	k.Controller, err = namespaced(dir, "virt-controller", tools.Controller,
		"--kubeconfig="+controllerKubeconfig,
		"--listen=127.0.0.1",
		"--port="+strconv.Itoa(ctlPort),
		"--prom-cert-file="+pki.Cert,
		"--prom-key-file="+pki.Key,
		// No image is pulled here; the name is what launcher pods carry.
		"--launcher-image=registry.redhat.io/container-native-virtualization/virt-launcher-rhel9:v4.22",
		// One replica and no kubelet to restart it: virt-controller exits
		// when a lease renewal misses its deadline (v1.8.4
		// pkg/virt-controller/watch/application.go OnStoppedLeading:
		// golog.Fatal; 10 s by default, leaderelectionconfig/config.go),
		// which a CI machine running three lanes can miss, and every
		// controller of the cluster would then stop for the rest of the
		// suite. On OpenShift a second replica takes over and the pod
		// restarts; here the deadline is longer instead.
		"--leader-elect-lease-duration=2m",
		"--leader-elect-renew-deadline=90s",
	)
	if err != nil {
		return nil, err
	}
	if err := waitLeader(ctx, cp, k.Controller); err != nil {
		return nil, err
	}
	return k, nil
}

// mutatingWebhooks is virt-operator's NewVirtAPIMutatingWebhookConfiguration
// (webhooks.go) with virt-api's URL on 127.0.0.1 for its Service.
func mutatingWebhooks(url string, ca []byte) []byte {
	hook := func(name, path, resource string, ops ...string) map[string]any {
		return map[string]any{
			"name":                    name,
			"admissionReviewVersions": []string{"v1"},
			"sideEffects":             "None",
			"failurePolicy":           "Fail",
			"timeoutSeconds":          10,
			"rules": []any{map[string]any{
				"operations":  ops,
				"apiGroups":   []string{"kubevirt.io"},
				"apiVersions": []string{"v1", "v1alpha3"},
				"resources":   []string{resource},
			}},
			"clientConfig": map[string]any{"url": url + path, "caBundle": ca},
		}
	}
	data, _ := json.Marshal(map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
		"metadata": map[string]any{"name": "virt-api-mutator"},
		"webhooks": []any{
			hook("virtualmachines-mutator.kubevirt.io", "/virtualmachines-mutate", "virtualmachines", "CREATE", "UPDATE"),
			hook("virtualmachineinstances-mutator.kubevirt.io", "/virtualmachineinstances-mutate", "virtualmachineinstances", "CREATE", "UPDATE"),
			hook("migrations-mutator.kubevirt.io", "/migration-mutate-create", "virtualmachineinstancemigrations", "CREATE"),
		},
	})
	return data
}

// waitTLS polls url until virt-api answers over TLS (any HTTP status: its
// server accepts connections only once it has its certificate and
// configuration).
func waitTLS(ctx context.Context, p *conformance.Process, pki conformance.ServingPKI, url string) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pki.CAPEM)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var last error
	for {
		if p.Exited() {
			return fmt.Errorf("virt-api exited before it was ready\n%s", p.Tail())
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("virt-api not ready at %s: %v\n%s", url, last, p.Tail())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitLeader waits until virt-controller holds its leader lease
// (leaderelectionconfig.DefaultLeaseName in its namespace): it starts its
// controllers only then (application.go onStartedLeading).
func waitLeader(ctx context.Context, cp *conformance.ControlPlane, p *conformance.Process) error {
	return waitLease(ctx, cp, p, "virt-controller", "virt-controller")
}

func tailLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
