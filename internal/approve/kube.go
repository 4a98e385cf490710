package approve

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// API is a Cluster over the Kubernetes REST API with the pod's service
// account: a plain HTTP client (four requests, no client-go), authenticated
// with the projected token, which it re-reads on every request as kubelet
// rotates it.
type API struct {
	Server    string // https://host:port
	TokenFile string
	Client    *http.Client
}

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InCluster is the API of the pod the approver runs in.
func InCluster() (*API, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, fmt.Errorf("not in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
	}
	ca, err := os.ReadFile(filepath.Join(saDir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s/ca.crt holds no certificate", saDir)
	}
	return &API{
		Server:    "https://" + net.JoinHostPort(host, port),
		TokenFile: filepath.Join(saDir, "token"),
		Client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		}},
	}, nil
}

// APIError is an answer of the API server other than 2xx and 404.
type APIError struct {
	Method, Path string
	Code         int
	Status       string
	Body         string
	// RetryAfter is the Retry-After header of a 429 or 503 (0: none).
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %s: %s", e.Method, e.Path, e.Status, e.Body)
}

func olmPath(namespace, resource, name string) string {
	p := "/apis/operators.coreos.com/v1alpha1/namespaces/" + namespace + "/" + resource
	if name != "" {
		p += "/" + name
	}
	return p
}

func (a *API) do(ctx context.Context, method, path, contentType string, body []byte, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.Server+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	if a.TokenFile != "" {
		tok, err := os.ReadFile(a.TokenFile)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := a.Client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return resp.StatusCode, nil
	}
	if resp.StatusCode/100 != 2 {
		e := &APIError{Method: method, Path: path, Code: resp.StatusCode, Status: resp.Status, Body: string(bytes.TrimSpace(data))}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
		return resp.StatusCode, e
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(data, out)
	}
	return resp.StatusCode, nil
}

// InstallPlans lists the namespace's InstallPlans.
func (a *API) InstallPlans(ctx context.Context, namespace string) ([]Plan, error) {
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				CSVs     []string `json:"clusterServiceVersionNames"`
				Approved bool     `json:"approved"`
			} `json:"spec"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		} `json:"items"`
	}
	if _, err := a.do(ctx, http.MethodGet, olmPath(namespace, "installplans", ""), "", nil, &list); err != nil {
		return nil, err
	}
	var out []Plan
	for _, it := range list.Items {
		out = append(out, Plan{Name: it.Metadata.Name, CSVs: it.Spec.CSVs, Approved: it.Spec.Approved, Phase: it.Status.Phase})
	}
	return out, nil
}

// Approve sets spec.approved: true (a JSON merge patch).
func (a *API) Approve(ctx context.Context, namespace, name string) error {
	code, err := a.do(ctx, http.MethodPatch, olmPath(namespace, "installplans", name), "application/merge-patch+json", []byte(`{"spec":{"approved":true}}`), nil)
	if err == nil && code == http.StatusNotFound {
		return fmt.Errorf("InstallPlan %s/%s not found", namespace, name)
	}
	return err
}

// Subscription reads a Subscription's status.
func (a *API) Subscription(ctx context.Context, namespace, name string) (Subscription, error) {
	var s struct {
		Spec struct {
			Name            string `json:"name"`
			Channel         string `json:"channel"`
			Source          string `json:"source"`
			SourceNamespace string `json:"sourceNamespace"`
		} `json:"spec"`
		Status struct {
			InstalledCSV   string `json:"installedCSV"`
			CurrentCSV     string `json:"currentCSV"`
			State          string `json:"state"`
			InstallPlanRef *struct {
				Name string `json:"name"`
			} `json:"installPlanRef"`
		} `json:"status"`
	}
	code, err := a.do(ctx, http.MethodGet, olmPath(namespace, "subscriptions", name), "", nil, &s)
	if err != nil {
		return Subscription{}, err
	}
	if code == http.StatusNotFound {
		return Subscription{Missing: true}, nil
	}
	out := Subscription{InstalledCSV: s.Status.InstalledCSV, CurrentCSV: s.Status.CurrentCSV, State: s.Status.State,
		Package: s.Spec.Name, Channel: s.Spec.Channel, Source: s.Spec.Source, SourceNamespace: s.Spec.SourceNamespace}
	if r := s.Status.InstallPlanRef; r != nil {
		out.InstallPlan = r.Name
	}
	return out, nil
}

// CSV reads a ClusterServiceVersion's status.phase, reason and message.
func (a *API) CSV(ctx context.Context, namespace, name string) (CSVStatus, error) {
	var c struct {
		Status struct {
			Phase   string `json:"phase"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"status"`
	}
	code, err := a.do(ctx, http.MethodGet, olmPath(namespace, "clusterserviceversions", name), "", nil, &c)
	if err != nil || code == http.StatusNotFound {
		return CSVStatus{}, err
	}
	return CSVStatus{Phase: c.Status.Phase, Reason: c.Status.Reason, Message: c.Status.Message}, nil
}

// CatalogAddress reads a CatalogSource's registry address: spec.address,
// else the Service OLM runs its registry behind (status.registryService,
// name.namespace.svc:port), as OLM dials it (operator-framework/api
// v0.42.0 pkg/operators/v1alpha1/catalogsource_types.go
// CatalogSource.Address, RegistryServiceStatus.Address).
func (a *API) CatalogAddress(ctx context.Context, namespace, name string) (string, error) {
	var c struct {
		Spec struct {
			Address string `json:"address"`
		} `json:"spec"`
		Status struct {
			RegistryService *struct {
				ServiceName      string `json:"serviceName"`
				ServiceNamespace string `json:"serviceNamespace"`
				Port             string `json:"port"`
			} `json:"registryService"`
		} `json:"status"`
	}
	code, err := a.do(ctx, http.MethodGet, olmPath(namespace, "catalogsources", name), "", nil, &c)
	if err != nil || code == http.StatusNotFound {
		return "", err
	}
	if c.Spec.Address != "" {
		return c.Spec.Address, nil
	}
	if r := c.Status.RegistryService; r != nil && r.ServiceName != "" && r.Port != "" {
		return fmt.Sprintf("%s.%s.svc:%s", r.ServiceName, r.ServiceNamespace, r.Port), nil
	}
	return "", nil
}
