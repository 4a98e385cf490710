package controllers

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// AnnCloneToken is where cdi-apiserver's DataVolume mutating webhook
// writes the clone token of a cross-namespace clone
// (pkg/controller/common/util.go).
const AnnCloneToken = "cdi.kubevirt.io/storage.clone.token"

// CloneToken is a stand-in for cdi-apiserver's DataVolume mutating
// webhook, which cannot run here (an admission webhook needs a Service
// the API server reaches): it writes on DataVolume namespace/name the
// clone token the webhook adds when the DataVolume is created
// (pkg/apiserver/webhooks/datavolume-mutate.go Admit, after authorizing
// the creator: virt-controller, whose own SubjectAccessReview for the
// VM's namespace is in pkg/virt-controller/watch/vm/vm.go
// authorizeDataVolume). The token is what pkg/token/token.go Generate
// makes: a JWT signed PS256 with the key pair of Secret
// cdi-api-signing-key (here the one StartCDI wrote, whose public half
// cdi-controller validates with), issuer "cdi-apiserver", five minutes
// long (pkg/apiserver/webhooks/handler.go newCloneTokenGenerator), payload
// the clone of the source claim the DataVolume's DataSource names into the
// DataVolume (pkg/apis/core/v1beta1/authorize_utils.go of the API module:
// spec.source.pvc, or a DataSource's; resource persistentvolumeclaims).
// With it CDI's clone controller goes on where it stops without one
// ("token missing"): pkg/controller/datavolume/clone-controller-base.go
// ensureExtendedTokenDV.
//
// It writes as CDI's own ServiceAccount (cdi.Kubeconfig), as the webhook's
// mutation is part of the creator's request: virtc's guardrail policy
// exempts both virt-controller and CDI (internal/render/
// validatingadmissionpolicy.go), and judges an admin's later write of a
// DataVolume whose spec.source names the image namespace.
func CloneToken(ctx context.Context, cp *conformance.ControlPlane, cdi *CDIController, namespace, name string) error {
	keys := cdi.TokenKeys
	data, err := cp.Get(ctx, "/apis/cdi.kubevirt.io/v1beta1/namespaces/"+namespace+"/datavolumes/"+name)
	if err != nil {
		return err
	}
	var dv dataVolume
	if err := json.Unmarshal(data, &dv); err != nil {
		return err
	}
	// the source claim: spec.source.pvc (virt-controller resolves a
	// template's sourceRef into it: kubevirt pkg/storage/types/dv.go
	// GenerateDataVolumeFromTemplate), else the DataSource's
	src := dv.Spec.Source
	var pvc *struct{ Name, Namespace string }
	switch {
	case src != nil && src.PVC != nil:
		pvc = src.PVC
	case dv.Spec.SourceRef != nil && dv.Spec.SourceRef.Kind == "DataSource":
		ref := dv.Spec.SourceRef
		dsNamespace := ref.Namespace
		if dsNamespace == "" {
			dsNamespace = namespace
		}
		data, err = cp.Get(ctx, "/apis/cdi.kubevirt.io/v1beta1/namespaces/"+dsNamespace+"/datasources/"+ref.Name)
		if err != nil {
			return err
		}
		var ds struct {
			Spec struct {
				Source struct {
					PVC *struct{ Name, Namespace string } `json:"pvc"`
				} `json:"source"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(data, &ds); err != nil {
			return err
		}
		pvc = ds.Spec.Source.PVC
	}
	if pvc == nil {
		return fmt.Errorf("DataVolume %s/%s: the clone token stand-in handles clones of a claim or of a DataSource naming one only", namespace, name)
	}
	if pvc.Namespace == "" {
		pvc.Namespace = namespace
	}
	key, err := readPrivateKey(filepath.Join(keys, "id_rsa"))
	if err != nil {
		return err
	}
	now := time.Now().Unix()
	claims := map[string]any{
		"operation": "Clone",
		"name":      pvc.Name,
		"namespace": pvc.Namespace,
		"resource":  map[string]any{"group": "", "version": "v1", "resource": "persistentvolumeclaims"},
		"params":    map[string]any{"targetNamespace": namespace, "targetName": name},
		"iss":       "cdi-apiserver",
		"iat":       now, "nbf": now, "exp": now + 5*60,
	}
	tok, err := signPS256(key, claims)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnCloneToken: tok}}})
	if err != nil {
		return err
	}
	// The last --kubeconfig wins: cdi-sa's.
	_, err = cp.MustKubectl(ctx, nil, "--kubeconfig="+cdi.Kubeconfig, "patch", "datavolume.cdi.kubevirt.io", name, "-n", namespace, "--type=merge", "-p", string(patch))
	return err
}

// signPS256 is a JWS compact serialization of claims signed RSA-PSS with
// SHA-256, salt as long as the hash, as go-jose v3 signs PS256
// (asymmetric.go signPayload), with the header go-jose writes without
// options.
func signPS256(key *rsa.PrivateKey, claims map[string]any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": "PS256"})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPSS(rand.Reader, key, crypto.SHA256, sum[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	if err != nil {
		return "", err
	}
	return input + "." + enc.EncodeToString(sig), nil
}

func readPrivateKey(path string) (*rsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New(path + ": no PEM block")
	}
	return x509.ParsePKCS1PrivateKey(block.Bytes)
}
