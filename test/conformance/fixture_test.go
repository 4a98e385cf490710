package conformance

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"
)

// TestChangeFixtureBuilds compiles the change fixture without a control
// plane, so that a renderer change breaking it shows in `go test ./...`.
func TestChangeFixtureBuilds(t *testing.T) {
	steps := changeSteps(t)
	if len(steps) != 5 {
		t.Fatalf("%d steps, want 5", len(steps))
	}
	for _, s := range steps {
		if _, err := ParseObjects(s.yaml); err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
	}
}

func TestPKI(t *testing.T) {
	c, err := writePKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	load := func(path string) *x509.Certificate {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(data)
		if block == nil {
			t.Fatalf("%s: no PEM", path)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	pool := x509.NewCertPool()
	pool.AddCert(load(c.caCert))
	if _, err := load(c.serverCert).Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
	admin := load(c.adminCert)
	if _, err := admin.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate: %v", err)
	}
	if got := admin.Subject.Organization; len(got) != 1 || got[0] != "system:masters" {
		t.Errorf("admin groups = %v, want [system:masters]", got)
	}
	if _, err := c.httpClient(); err != nil {
		t.Errorf("client: %v", err)
	}
}
