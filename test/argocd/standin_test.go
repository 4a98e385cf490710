package argocd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// standIn writes the status that the controllers absent from the test
// server would write, so that Argo CD's health checks see what they would
// see in a cluster once the work is done: the persistent volume
// controller binds claims (capacity follows a grown request; no
// provisioner runs here), CDI completes DataVolumes and KubeVirt starts
// VMs (on west only: where KubeVirt runs, virt-controller and
// cdi-controller write that status themselves), OLM installs the Subscription's CSV (the CSV Succeeded, which the
// approver Job waits for), HCO reports Available and Velero enables
// Schedules. It writes status only; specs are Argo CD's. Jobs, their pods'
// owners and garbage collection are kube-controller-manager's (started
// beside each API server), the Jobs' pods are run by jobPods.
type standIn struct {
	cp *conformance.ControlPlane
	// kubevirt: KubeVirt and CDI run on this cluster: virt-controller
	// writes the VMs' status itself, and cdi-controller the DataVolumes'.
	kubevirt bool
	// olm: OLM runs on this cluster (test/internal/olm) and installs the
	// Subscriptions' CSVs itself.
	olm bool
}

type item struct {
	Metadata struct {
		Name              string   `json:"name"`
		Namespace         string   `json:"namespace"`
		Generation        int64    `json:"generation"`
		DeletionTimestamp string   `json:"deletionTimestamp"`
		Finalizers        []string `json:"finalizers"`
	} `json:"metadata"`
	Spec   map[string]any `json:"spec"`
	Status map[string]any `json:"status"`
}

// kinds the stand-in serves: list path prefix and resource path.
type kindPath struct{ base, resource string }

var (
	pvcs          = kindPath{"/api/v1", "persistentvolumeclaims"}
	dataVolumes   = kindPath{"/apis/cdi.kubevirt.io/v1beta1", "datavolumes"}
	vms           = kindPath{"/apis/kubevirt.io/v1", "virtualmachines"}
	subscriptions = kindPath{"/apis/operators.coreos.com/v1alpha1", "subscriptions"}
	hcos          = kindPath{"/apis/hco.kubevirt.io/v1beta1", "hyperconvergeds"}
	schedules     = kindPath{"/apis/velero.io/v1", "schedules"}
)

func (k kindPath) objectPath(it item) string {
	if it.Metadata.Namespace == "" {
		return fmt.Sprintf("%s/%s/%s", k.base, k.resource, it.Metadata.Name)
	}
	return fmt.Sprintf("%s/namespaces/%s/%s/%s", k.base, it.Metadata.Namespace, k.resource, it.Metadata.Name)
}

// run reconciles every interval until ctx ends; errors are retried (an
// object may vanish between list and patch).
func (s *standIn) run(ctx context.Context, errs chan error) { every(ctx, errs, s.once) }

// every runs once every half second until ctx ends, keeping the latest
// error in errs.
func every(ctx context.Context, errs chan error, once func(context.Context) error) {
	for {
		if err := once(ctx); err != nil && ctx.Err() == nil {
			// keep the latest error
			select {
			case <-errs:
			default:
			}
			select {
			case errs <- err:
			default:
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (s *standIn) list(ctx context.Context, k kindPath) ([]item, error) {
	data, err := s.cp.Get(ctx, k.base+"/"+k.resource)
	if err != nil {
		return nil, err
	}
	var l struct{ Items []item }
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, err
	}
	return l.Items, nil
}

func (s *standIn) patchStatus(ctx context.Context, k kindPath, it item, status map[string]any) error {
	body, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	path := k.objectPath(it) + "/status"
	if k == schedules {
		// velero.io's Schedule CRD has no status subresource
		path = k.objectPath(it)
	}
	_, err = s.cp.Do(ctx, "PATCH", path, "application/merge-patch+json", body)
	return err
}

func condition(typ, status, reason, message string) map[string]any {
	return map[string]any{
		"type": typ, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}
}

func (s *standIn) once(ctx context.Context) error {
	now := time.Now().UTC().Format(time.RFC3339)
	var failed []error
	for _, k := range []kindPath{pvcs, dataVolumes, vms, subscriptions, hcos, schedules} {
		if s.kubevirt && (k == vms || k == dataVolumes) || s.olm && k == subscriptions {
			continue
		}
		items, err := s.list(ctx, k)
		if err != nil {
			return err
		}
		for _, it := range items {
			if it.Metadata.DeletionTimestamp != "" {
				continue
			}
			status := s.want(k, it, now)
			if status == nil {
				continue
			}
			if k == subscriptions {
				if err := s.installCSV(ctx, it); err != nil {
					failed = append(failed, err)
					continue
				}
			}
			if err := s.patchStatus(ctx, k, it, status); err != nil {
				failed = append(failed, err)
			}
		}
	}
	return errors.Join(failed...)
}

// csvCRD stands in for OLM's ClusterServiceVersion CRD (the shared schemas
// carry only Subscription and OperatorGroup, test/schemas CatalogSource):
// OLM's group, version, names and scope, any content.
const csvCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterserviceversions.operators.coreos.com
spec:
  group: operators.coreos.com
  names: {kind: ClusterServiceVersion, listKind: ClusterServiceVersionList, plural: clusterserviceversions, singular: clusterserviceversion, shortNames: [csv]}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// installCSV creates the ClusterServiceVersion a Subscription's
// startingCSV names, Succeeded, as OLM's operator does once the install
// strategy is deployed (operator-lifecycle-manager
// pkg/controller/operators/olm/operator.go transitionCSVState); the
// approver Job waits for it.
func (s *standIn) installCSV(ctx context.Context, sub item) error {
	csv, _ := sub.Spec["startingCSV"].(string)
	body, err := json.Marshal(map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": csv, "namespace": sub.Metadata.Namespace},
		"spec":     map[string]any{"displayName": csv},
		"status":   map[string]any{"phase": "Succeeded", "reason": "InstallSucceeded", "message": "install strategy completed with no errors"},
	})
	if err != nil {
		return err
	}
	_, err = s.cp.Do(ctx, "POST", "/apis/operators.coreos.com/v1alpha1/namespaces/"+sub.Metadata.Namespace+"/clusterserviceversions", "application/json", body)
	if err != nil && strings.Contains(err.Error(), "409 Conflict") {
		return nil
	}
	return err
}

// want is the status to write, or nil when the live one is already it.
func (s *standIn) want(k kindPath, it item, now string) map[string]any {
	st := it.Status
	switch k {
	case pvcs:
		resources, _ := it.Spec["resources"].(map[string]any)
		requests, _ := resources["requests"].(map[string]any)
		capacity, _ := st["capacity"].(map[string]any)
		if st["phase"] == "Bound" && capacity != nil && capacity["storage"] == requests["storage"] {
			return nil
		}
		return map[string]any{"phase": "Bound", "accessModes": it.Spec["accessModes"],
			"capacity": map[string]any{"storage": requests["storage"]}}
	case dataVolumes:
		if st["phase"] == "Succeeded" {
			return nil
		}
		return map[string]any{"phase": "Succeeded", "progress": "100.0%",
			"conditions": []any{condition("Ready", "True", "", ""), condition("Bound", "True", "Bound", ""), condition("Running", "False", "Completed", "")}}
	case vms:
		stopped := it.Spec["running"] == false || it.Spec["runStrategy"] == "Halted"
		if stopped {
			if st["printableStatus"] == "Stopped" {
				return nil
			}
			return map[string]any{"created": false, "ready": false, "printableStatus": "Stopped",
				"conditions": []any{condition("Ready", "False", "VMINotExists", "VMI does not exist")}}
		}
		if st["printableStatus"] == "Running" {
			return nil
		}
		return map[string]any{"created": true, "ready": true, "printableStatus": "Running",
			"conditions": []any{condition("Ready", "True", "", "")}}
	case subscriptions:
		csv, _ := it.Spec["startingCSV"].(string)
		if csv == "" || st["installedCSV"] == csv {
			return nil
		}
		return map[string]any{"installedCSV": csv, "currentCSV": csv, "state": "AtLatestKnown", "lastUpdated": now}
	case hcos:
		if conds, _ := st["conditions"].([]any); len(conds) > 0 {
			return nil
		}
		return map[string]any{"conditions": []any{
			condition("Available", "True", "ReconcileCompleted", "Reconcile completed successfully"),
			condition("Progressing", "False", "ReconcileCompleted", "Reconcile completed successfully"),
			condition("Degraded", "False", "ReconcileCompleted", "Reconcile completed successfully"),
		}}
	case schedules:
		if st["phase"] == "Enabled" {
			return nil
		}
		return map[string]any{"phase": "Enabled"}
	}
	return nil
}
