package controllers

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
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
	version := conformance.EnvOr("CDI_VERSION", DefaultCDIVersion)
	dir := filepath.Join(cache, "cdi-"+version)
	t := CDITools{Dir: dir, Controller: filepath.Join(dir, "cdi-controller"), CRDs: filepath.Join(dir, "crds"),
		Install: filepath.Join(dir, "install", "controller.yaml")}
	return t, conformance.CheckCache("CDI "+version, dir, "build it with `make cdi-tools`", t.Controller, t.CRDs, t.Install)
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
	// TokenKeys is the directory of the clone token key pair (id_rsa,
	// id_rsa.pub), and Kubeconfig authenticates as cdi-controller's
	// ServiceAccount cdi-sa: for the CloneToken stand-in.
	TokenKeys, Kubeconfig string
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
//   - the upload server's and upload client's signer CAs, which cdi-operator
//     keeps in Secrets cdi-uploadserver-signer and
//     cdi-uploadserver-client-signer, mounts under /var/run/certs
//     (namespaced/controller.go) and publishes in ConfigMaps
//     cdi-uploadserver-signer-bundle and
//     cdi-uploadserver-client-signer-bundle (pkg/operator/resources/cert/
//     factory.go): the upload controller signs each upload server's
//     certificate with the first and reads the second before it creates
//     the pod (pkg/controller/upload-controller.go createUploadPodForPvc;
//     cmd/cdi-controller/controller.go ControllerEnvs);
//   - its metrics listener on a port of its own: cmd/cdi-controller/
//     controller.go binds ":8443", a literal (on a cluster each pod has
//     its own network namespace), and here every cdi-controller, of this
//     suite's clusters and of other suites running beside it, shares the
//     host's; so each runs a copy of the program whose literal names a free
//     port of the same length (metricsPort), nothing else changed;
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
	certs := filepath.Join(dir, "certs")
	var bundles []any
	for _, signer := range []string{"cdi-uploadserver-signer", "cdi-uploadserver-client-signer"} {
		ca, err := writeSignerCA(filepath.Join(certs, signer), signer)
		if err != nil {
			return nil, err
		}
		bundles = append(bundles, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": signer + "-bundle", "namespace": Namespace},
			"data":     map[string]any{"ca-bundle.crt": string(ca)}})
	}
	if err := create(ctx, cp, bundles); err != nil {
		return nil, err
	}
	sadir := filepath.Join(dir, "serviceaccount")
	if err := os.MkdirAll(sadir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(sadir, "namespace"), []byte(Namespace), 0o644); err != nil {
		return nil, err
	}
	// The kubeconfig and the program are copied under /var/run before
	// /tmp, where the suite's files live, is replaced by a private
	// directory.
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
cp -r "$3" /var/run/certs
cp "$4" /var/run/cdi/cdi-controller
mount --bind "$5" /tmp
shift 5
exec /var/run/cdi/cdi-controller "$@"`
	prog, err := metricsPort(tools.Controller, filepath.Join(dir, "cdi-controller"))
	if err != nil {
		return nil, err
	}
	c = &CDIController{Log: filepath.Join(dir, "cdi-controller.log"), TokenKeys: keys, Kubeconfig: kubeconfig}
	c.Process, err = conformance.StartProcess(dir, "cdi-controller", "unshare", env,
		"--mount", "--propagation", "private", "sh", "-c", script,
		sadir, keys, kubeconfig, certs, prog, private, "-kubeconfig=/var/run/cdi/kubeconfig", "-v=1")
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

// metricsAddr is the metrics listener's address cmd/cdi-controller/
// controller.go gives controller-runtime (ctrl.Options Metrics
// BindAddress).
const metricsAddr = ":8443"

// metricsPort copies the cdi-controller program to path with its
// metricsAddr literal, the only standalone one (the other ":8443" of the
// program ends the upload proxy's "https://%s.%s.svc:8443%s"), changed to
// a port between 8444 and 8999 that nothing listens on now.
func metricsPort(prog, path string) (string, error) {
	path, _, err := conformance.CopyWithPort(prog, path, metricsAddr, 8444, 8999, func(before []byte) bool {
		return bytes.HasSuffix(before, []byte(".svc"))
	})
	return path, err
}

// writeSignerCA writes a self-signed CA as cdi-operator's signer Secret
// holds it (tls.crt, tls.key: pkg/operator/resources/cert/factory.go) in
// dir and returns its certificate.
func writeSignerCA(dir, name string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), cert, 0o600); err != nil {
		return nil, err
	}
	return cert, os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
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
