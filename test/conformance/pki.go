package conformance

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// credentials are the files of a throw-away PKI: one CA signs the serving
// certificate and the admin client certificate (the API server trusts it
// as client CA), plus the service-account signing key.
type credentials struct {
	caCert, serverCert, serverKey, adminCert, adminKey, saKey, saPub string
}

type keyPair struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

func newKeyPair(tmpl *x509.Certificate, parent *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	signerCert, signerKey := tmpl, key
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signerKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, der: der, key: key}, nil
}

func (kp *keyPair) certPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kp.der})
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// writePKI creates the CA, certificates and keys as files in dir.
func writePKI(dir string) (*credentials, error) {
	ca, err := newKeyPair(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "virtc-conformance-ca"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil)
	if err != nil {
		return nil, err
	}
	server, err := newKeyPair(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca)
	if err != nil {
		return nil, err
	}
	admin, err := newKeyPair(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "virtc-admin", Organization: []string{"system:masters"}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca)
	if err != nil {
		return nil, err
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}

	c := &credentials{
		caCert:     filepath.Join(dir, "ca.crt"),
		serverCert: filepath.Join(dir, "apiserver.crt"),
		serverKey:  filepath.Join(dir, "apiserver.key"),
		adminCert:  filepath.Join(dir, "admin.crt"),
		adminKey:   filepath.Join(dir, "admin.key"),
		saKey:      filepath.Join(dir, "sa.key"),
		saPub:      filepath.Join(dir, "sa.pub"),
	}
	files := map[string][]byte{
		c.caCert:     ca.certPEM(),
		c.serverCert: server.certPEM(),
		c.adminCert:  admin.certPEM(),
		c.saPub:      pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
	}
	for path, key := range map[string]*ecdsa.PrivateKey{c.serverKey: server.key, c.adminKey: admin.key, c.saKey: sa} {
		data, err := keyPEM(key)
		if err != nil {
			return nil, err
		}
		files[path] = data
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *credentials) httpClient() (*http.Client, error) {
	caPEM, err := os.ReadFile(c.caCert)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(c.adminCert, c.adminKey)
	if err != nil {
		return nil, err
	}
	return tlsClient(caPEM, cert)
}

// writeKubeconfig writes an admin kubeconfig for the server at url.
func (c *credentials) writeKubeconfig(path, url string) error {
	read := func(p string) (string, error) {
		data, err := os.ReadFile(p)
		return base64.StdEncoding.EncodeToString(data), err
	}
	ca, err := read(c.caCert)
	if err != nil {
		return err
	}
	cert, err := read(c.adminCert)
	if err != nil {
		return err
	}
	key, err := read(c.adminKey)
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: virtc-conformance
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: virtc-admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: virtc-conformance
  context:
    cluster: virtc-conformance
    user: virtc-admin
current-context: virtc-conformance
`, url, ca, cert, key)
	return os.WriteFile(path, []byte(cfg), 0o600)
}

// ServingPKI is a throw-away CA and a serving certificate it signs for
// 127.0.0.1 and localhost, as files, for programs started beside the
// control plane that the API server calls or that call each other over TLS
// (test/controllers: KubeVirt's virt-api webhooks and virt-controller's
// metrics endpoint).
type ServingPKI struct {
	// CA, Cert and Key are the paths of the CA certificate and of the
	// serving certificate and its key (PEM).
	CA, Cert, Key string
	// CAPEM is the CA certificate itself, for a webhook's caBundle.
	CAPEM []byte
}

// WriteServingPKI creates a ServingPKI in dir, naming its CA commonName.
func WriteServingPKI(dir, commonName string) (ServingPKI, error) {
	ca, err := newKeyPair(&x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil)
	if err != nil {
		return ServingPKI{}, err
	}
	server, err := newKeyPair(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}, ca)
	if err != nil {
		return ServingPKI{}, err
	}
	key, err := keyPEM(server.key)
	if err != nil {
		return ServingPKI{}, err
	}
	p := ServingPKI{CA: filepath.Join(dir, "ca.crt"), Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key"), CAPEM: ca.certPEM()}
	for path, data := range map[string][]byte{p.CA: p.CAPEM, p.Cert: server.certPEM(), p.Key: key} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return ServingPKI{}, err
		}
	}
	return p, nil
}
