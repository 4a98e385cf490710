package controllers

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// DefaultCDIVersion is the CDI of the 4.22 platform; tools/build-cdi.sh
// builds the same one.
const DefaultCDIVersion = "v1.65.0"

// CDITools are the cached CDI program and data of tools/build-cdi.sh.
type CDITools struct {
	Dir, Controller string
	// CRDs are every CRD CDI's operator installs.
	CRDs string
	// Install is what cdi-operator creates for cdi-controller in
	// Namespace, from its own factories: ClusterRole "cdi" and its
	// binding to ServiceAccount cdi-sa, the ServiceAccount, Role and
	// RoleBinding, and the Deployment the environment comes from.
	Install string
}

// FindCDITools locates the cache of tools/build-cdi.sh for CDI_VERSION
// (default DefaultCDIVersion).
func FindCDITools() (CDITools, error) {
	cache, err := conformance.CacheDir()
	if err != nil {
		return CDITools{}, err
	}
	version := DefaultCDIVersion
	if v := os.Getenv("CDI_VERSION"); v != "" {
		version = v
	}
	dir := filepath.Join(cache, "cdi-"+version)
	t := CDITools{Dir: dir, Controller: filepath.Join(dir, "cdi-controller"), CRDs: filepath.Join(dir, "crds"),
		Install: filepath.Join(dir, "install", "controller.yaml")}
	for _, p := range []string{t.Controller, t.CRDs, t.Install} {
		if _, err := os.Stat(p); err != nil {
			return t, fmt.Errorf("CDI %s missing in %s (build it with `make cdi-tools`): %v", version, dir, err)
		}
	}
	return t, nil
}

// CDIName is the CDI CR HCO v1.18.1 creates (controllers/handlers/cdi.go
// NewCDIWithNameOnly: "cdi-" + the HyperConverged's name).
const CDIName = "cdi-kubevirt-hyperconverged"

// CDIFeatureGates are the feature gates HCO v1.18.1 sets in the CDI CR's
// spec.config (controllers/handlers/cdi.go getDefaultFeatureGates), which
// cdi-controller's config controller copies into CDIConfig "config" since
// the CR carries cdi.kubevirt.io/configAuthority
// (pkg/controller/config-controller.go setOperatorParams).
var CDIFeatureGates = []string{"HonorWaitForFirstConsumer", "DataVolumeClaimAdoption", "WebhookPvcRendering"}

// CDIController is a running cdi-controller.
type CDIController struct {
	Process *conformance.Process
	// Log is cdi-controller's log file.
	Log string
}

// Stop stops cdi-controller by its PID.
func (c *CDIController) Stop() {
	if c != nil && c.Process != nil {
		c.Process.Stop()
	}
}

// StartCDI installs what cdi-operator installs for cdi-controller and
// starts it against cp with state in dir, in Namespace (where HCO v1.18.1
// runs CDI, beside KubeVirt; Start creates it):
//
//   - the CDI CR as HCO writes it (CDIName, CDIFeatureGates);
//   - cdi-controller's ServiceAccount cdi-sa with the ClusterRole and Role
//     CDI's operator binds it to (tools.Install: pkg/operator/resources/
//     cluster/controller.go, namespaced/controller.go), so that it writes
//     with exactly the rights it has on the platform;
//   - the clone token key pair the operator keeps in Secret
//     cdi-api-signing-key and mounts at /var/run/cdi/token/keys
//     (pkg/controller/clone-controller.go TokenKeyDir): cdi-controller
//     refuses to start without it (cmd/cdi-controller/controller.go
//     getTokenPublicKey);
//   - cdi-controller with the Deployment's environment (IMPORTER_IMAGE,
//     CLONER_IMAGE, ...: namespaced/controller.go), in a mount namespace
//     of its own whose service account namespace file says Namespace
//     (pkg/util/util.go GetNamespace) and whose /tmp is private (it
//     writes /tmp/ready), until it holds its leader lease.
func StartCDI(ctx context.Context, cp *conformance.ControlPlane, tools CDITools, dir string) (c *CDIController, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(tools.Install)
	if err != nil {
		return nil, err
	}
	objs, err := conformance.ParseObjects(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tools.Install, err)
	}
	var env []string
	var sa string
	items := []any{map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "CDI",
		"metadata": map[string]any{"name": CDIName, "annotations": map[string]any{"cdi.kubevirt.io/configAuthority": ""}},
		"spec": map[string]any{
			"uninstallStrategy": "BlockUninstallIfWorkloadsExist",
			"config":            map[string]any{"featureGates": CDIFeatureGates},
		}}}
	for _, o := range objs {
		switch o.Kind {
		case "ServiceAccount":
			sa = o.Name
			items = append(items, o.Doc)
		case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			items = append(items, o.Doc)
		case "Deployment":
			if env, err = deploymentEnv(o); err != nil {
				return nil, fmt.Errorf("%s: %w", tools.Install, err)
			}
		}
	}
	if sa == "" || env == nil {
		return nil, fmt.Errorf("%s: no ServiceAccount or Deployment of cdi-controller", tools.Install)
	}
	if err := create(ctx, cp, items); err != nil {
		return nil, err
	}
	kubeconfig, err := tokenKubeconfig(ctx, cp, dir, Namespace, sa)
	if err != nil {
		return nil, err
	}
	keys := filepath.Join(dir, "token-keys")
	if err := writeTokenKeys(keys); err != nil {
		return nil, err
	}
	sadir := filepath.Join(dir, "serviceaccount")
	if err := os.MkdirAll(sadir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(sadir, "namespace"), []byte(Namespace), 0o644); err != nil {
		return nil, err
	}
	// The kubeconfig is copied under /var/run before /tmp, where the
	// suite's files live, is replaced by a private directory.
	private := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(private, 0o700); err != nil {
		return nil, err
	}
	const script = `set -e
mount -t tmpfs -o mode=0755 tmpfs /var/run
mkdir -p /var/run/secrets/kubernetes.io/serviceaccount /var/run/cdi/token/keys
cp "$0"/namespace /var/run/secrets/kubernetes.io/serviceaccount/
cp "$1"/id_rsa "$1"/id_rsa.pub /var/run/cdi/token/keys/
cp "$2" /var/run/cdi/kubeconfig
mount --bind "$3" /tmp
shift 3
exec "$@"`
	c = &CDIController{Log: filepath.Join(dir, "cdi-controller.log")}
	c.Process, err = conformance.StartProcess(dir, "cdi-controller", "unshare", env,
		"--mount", "--propagation", "private", "sh", "-c", script,
		sadir, keys, kubeconfig, private, tools.Controller, "-kubeconfig=/var/run/cdi/kubeconfig", "-v=1")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if err := waitLease(ctx, cp, c.Process, "cdi-controller", "cdi-controller-leader-election-helper"); err != nil {
		return nil, err
	}
	return c, nil
}

// deploymentEnv is the literal environment of the Deployment's first
// container (the ones read from the pod's labels, the installer's part-of
// and version, are left out: cmd/cdi-controller reads them only to label
// what it creates).
func deploymentEnv(o conformance.Object) ([]string, error) {
	spec, _ := o.Doc["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pspec, _ := tmpl["spec"].(map[string]any)
	containers, _ := pspec["containers"].([]any)
	if len(containers) == 0 {
		return nil, errors.New("Deployment without containers")
	}
	c, _ := containers[0].(map[string]any)
	vars, _ := c["env"].([]any)
	var env []string
	for _, v := range vars {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if value, ok := m["value"].(string); ok {
			env = append(env, name+"="+value)
		}
	}
	return env, nil
}

// writeTokenKeys writes an RSA key pair as the operator's Secret
// cdi-api-signing-key holds it (id_rsa PKCS#1, id_rsa.pub PKIX: read by
// cmd/cdi-controller/controller.go getTokenPrivateKey, getTokenPublicKey).
func writeTokenKeys(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "id_rsa"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "id_rsa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

// waitLease waits until the lease name of Namespace has a holder: a
// controller-runtime manager starts its controllers only then.
func waitLease(ctx context.Context, cp *conformance.ControlPlane, p *conformance.Process, who, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var last error
	for {
		if p.Exited() {
			return fmt.Errorf("%s exited before it led\n%s", who, tailLines(p.Tail(), 40))
		}
		data, err := cp.Get(ctx, "/apis/coordination.k8s.io/v1/namespaces/"+Namespace+"/leases/"+name)
		if err == nil {
			var lease struct {
				Spec struct {
					HolderIdentity string `json:"holderIdentity"`
				} `json:"spec"`
			}
			if err = json.Unmarshal(data, &lease); err == nil && lease.Spec.HolderIdentity != "" {
				return nil
			}
			if err == nil {
				err = errors.New("lease has no holder")
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not take its lease %s: %v\n%s", who, name, last, tailLines(p.Tail(), 40))
		case <-time.After(500 * time.Millisecond):
		}
	}
}
