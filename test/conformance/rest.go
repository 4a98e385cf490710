package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The reads and housekeeping writes of the tests (fetching live objects,
// deleting, releasing finalizers, binding claims, creating the namespaces
// and storage classes an output needs) go to the API directly, as the
// requests kubectl would send for them; kubectl runs where what it does is
// the point (apply, diff, can-i, client-side apply). Each kubectl run
// starts a process that reads its discovery cache: a few hundred per
// platform were most of the suite's time.

// apiResource is what discovery says of a kind.
type apiResource struct {
	name       string // plural resource name
	namespaced bool
}

// resource finds o's kind in the discovery of its API version, read once
// per version and again when a kind is missing (a CRD installed since).
func (c *Cluster) resource(ctx context.Context, o Object) (apiResource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.resources[o.APIVersion][o.Kind]; ok {
		return r, nil
	}
	data, err := c.CP.Get(ctx, versionPath(o))
	if err != nil {
		return apiResource{}, fmt.Errorf("%s: API version not served: %w", o, err)
	}
	var list struct {
		Resources []struct {
			Name       string `json:"name"`
			Kind       string `json:"kind"`
			Namespaced bool   `json:"namespaced"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return apiResource{}, err
	}
	kinds := map[string]apiResource{}
	for _, r := range list.Resources {
		if !strings.Contains(r.Name, "/") {
			kinds[r.Kind] = apiResource{name: r.Name, namespaced: r.Namespaced}
		}
	}
	c.resources[o.APIVersion] = kinds
	r, ok := kinds[o.Kind]
	if !ok {
		return apiResource{}, fmt.Errorf("%s: kind not served by the API server", o)
	}
	return r, nil
}

func versionPath(o Object) string {
	if o.Group() == "" {
		return "/api/" + o.APIVersion
	}
	return "/apis/" + o.APIVersion
}

// collectionPath is the API path of o's kind in o's namespace (where it is
// created).
func (c *Cluster) collectionPath(ctx context.Context, o Object) (string, error) {
	r, err := c.resource(ctx, o)
	if err != nil {
		return "", err
	}
	if r.namespaced {
		if o.Namespace == "" {
			return "", fmt.Errorf("%s: namespaced kind without metadata.namespace", o)
		}
		return versionPath(o) + "/namespaces/" + url.PathEscape(o.Namespace) + "/" + r.name, nil
	}
	return versionPath(o) + "/" + r.name, nil
}

// objectPath is the API path of o.
func (c *Cluster) objectPath(ctx context.Context, o Object) (string, error) {
	p, err := c.collectionPath(ctx, o)
	if err != nil {
		return "", err
	}
	return p + "/" + url.PathEscape(o.Name), nil
}

// APIError is an answer of the API server that is not a success.
type APIError struct {
	Method, Path string
	Code         int
	// Message is the message of the server's Status.
	Message string
	Body    []byte
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Code, http.StatusText(e.Code), e.Message)
}

// send sends one request for o (at path, with the query) and returns the
// body of a 2xx answer, else an *APIError.
func (c *Cluster) send(ctx context.Context, method, path string, query url.Values, contentType string, body []byte, header http.Header) ([]byte, error) {
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	code, data, err := c.CP.Request(ctx, method, path, contentType, body, header)
	if err != nil {
		return nil, err
	}
	if code/100 == 2 {
		return data, nil
	}
	e := &APIError{Method: method, Path: path, Code: code, Body: data}
	var status struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &status) == nil && status.Message != "" {
		e.Message = status.Message
	} else {
		e.Message = strings.TrimSpace(string(data))
	}
	return nil, e
}

// notFound reports an APIError 404.
func notFound(err error) bool {
	e, ok := err.(*APIError)
	return ok && e.Code == http.StatusNotFound
}

// get fetches o from the server; ok is false when it does not exist. As
// `kubectl get -o json` prints it (--show-managed-fields=false, kubectl
// v1.37.2 pkg/cmd/get/get.go), metadata.managedFields is left out and
// returned apart: its entries without their time (who owns which fields,
// by which operation).
func (c *Cluster) get(ctx context.Context, o Object) (live Object, owners []any, ok bool, err error) {
	path, err := c.objectPath(ctx, o)
	if err != nil {
		return Object{}, nil, false, err
	}
	data, err := c.send(ctx, http.MethodGet, path, nil, "", nil, nil)
	if notFound(err) {
		return Object{}, nil, false, nil
	}
	if err != nil {
		return Object{}, nil, false, err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return Object{}, nil, false, err
	}
	owners = []any{}
	if meta, ok := doc["metadata"].(map[string]any); ok {
		entries, _ := meta["managedFields"].([]any)
		for _, e := range entries {
			if em, ok := e.(map[string]any); ok {
				delete(em, "time")
			}
			owners = append(owners, e)
		}
		delete(meta, "managedFields")
	}
	live, err = objectOf(doc)
	return live, owners, err == nil, err
}

// create creates o as `kubectl create -f` does: field manager
// kubectl-create, strict field validation.
func (c *Cluster) create(ctx context.Context, o Object, dryRun bool, header http.Header) error {
	path, err := c.collectionPath(ctx, o)
	if err != nil {
		return err
	}
	q := url.Values{"fieldManager": {"kubectl-create"}, "fieldValidation": {"Strict"}}
	return c.sendObject(ctx, http.MethodPost, path, q, "application/json", o, dryRun, header)
}

// serverSideApply applies o as one request of `kubectl apply --server-side
// --field-manager=virtc --validate=strict` (kubectl v1.37.2 pkg/cmd/apply):
// an apply PATCH, fieldValidation=Strict, force=false.
func (c *Cluster) serverSideApply(ctx context.Context, o Object, dryRun bool, header http.Header) error {
	path, err := c.objectPath(ctx, o)
	if err != nil {
		return err
	}
	q := url.Values{"fieldManager": {FieldManager}, "fieldValidation": {"Strict"}, "force": {"false"}}
	return c.sendObject(ctx, http.MethodPatch, path, q, "application/apply-patch+yaml", o, dryRun, header)
}

// DeleteDryRunAs asks the server to delete o as user, as a dry run
// (dryRun=All: authorised and admitted, nothing deleted), with the
// background propagation of Argo CD's prune (argo-cd v3.6.1
// controller/sync.go: PrunePropagationPolicy, background by default).
func (c *Cluster) DeleteDryRunAs(ctx context.Context, user string, o Object) error {
	path, err := c.objectPath(ctx, o)
	if err != nil {
		return err
	}
	_, err = c.send(ctx, http.MethodDelete, path, url.Values{"dryRun": {"All"}}, "application/json", []byte(`{"propagationPolicy":"Background"}`), impersonate(user))
	return err
}

// sendObject sends o's document as the body of a write request to path
// with query q, as a server-side dry run (dryRun=All) with dryRun.
func (c *Cluster) sendObject(ctx context.Context, method, path string, q url.Values, contentType string, o Object, dryRun bool, header http.Header) error {
	body, err := json.Marshal(o.Doc)
	if err != nil {
		return err
	}
	if dryRun {
		q.Set("dryRun", "All")
	}
	_, err = c.send(ctx, method, path, q, contentType, body, header)
	return err
}

// remove deletes o as `kubectl delete --wait=false` does (background
// propagation); with ignoreMissing, as with --ignore-not-found, an absent
// object is no error.
func (c *Cluster) remove(ctx context.Context, o Object, ignoreMissing bool) error {
	path, err := c.objectPath(ctx, o)
	if err != nil {
		return err
	}
	_, err = c.send(ctx, http.MethodDelete, path, nil, "application/json", []byte(`{"propagationPolicy":"Background"}`), nil)
	if ignoreMissing && notFound(err) {
		return nil
	}
	return err
}

// mergePatch patches o (or its subresource, when not "") with a JSON
// merge patch, as `kubectl patch --type=merge` does (field manager
// kubectl-patch).
func (c *Cluster) mergePatch(ctx context.Context, o Object, subresource string, patch []byte) error {
	path, err := c.objectPath(ctx, o)
	if err != nil {
		return err
	}
	if subresource != "" {
		path += "/" + subresource
	}
	_, err = c.send(ctx, http.MethodPatch, path, url.Values{"fieldManager": {"kubectl-patch"}}, "application/merge-patch+json", patch, nil)
	return err
}
