package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// The stand-ins below do, for what the suite asserts, what a component that
// cannot run here does on the platform. Each names the component and the
// upstream file its behaviour follows; README.md ("Real controllers")
// lists them.

// ImageNamespace is where the platform's golden images live
// (openshift-virtualization-os-images): the DataSources VMs of the builtin
// catalog clone from.
const ImageNamespace = "openshift-virtualization-os-images"

// PrepareGoldenImages creates, for every DataSource the VMs' DataVolume
// templates name (sourceRef), what the platform has in place before any VM
// is applied, so that virt-controller's real DataVolume rendering
// (pkg/storage/types/dv.go GenerateDataVolumeFromTemplate: the sourceRef
// resolved to the DataSource's source PVC) and clone authorization
// (pkg/virt-controller/watch/vm/vm.go authorizeDataVolume: a
// SubjectAccessReview for the VM namespace's default ServiceAccount to
// create datavolumes/source in the image namespace) run:
//
//   - the DataSource with a bound source PVC (stand-in for CDI's
//     DataImportCron import, pkg/controller/dataimportcron-controller.go);
//   - a ClusterRole allowing datavolumes/source and a RoleBinding of it to
//     all service accounts in the image namespace (stand-in for SSP's
//     os-images.kubevirt.io:view, internal/operands/data-sources).
func PrepareGoldenImages(ctx context.Context, cp *conformance.ControlPlane, objs []conformance.Object) error {
	type source struct{ namespace, name, class, mode string }
	var sources []source
	for _, o := range objs {
		if o.Kind != "VirtualMachine" {
			continue
		}
		spec, _ := o.Doc["spec"].(map[string]any)
		templates, _ := spec["dataVolumeTemplates"].([]any)
		for _, t := range templates {
			ts, _ := t.(map[string]any)
			dvSpec, _ := ts["spec"].(map[string]any)
			ref, _ := dvSpec["sourceRef"].(map[string]any)
			if ref == nil {
				continue
			}
			name, _ := ref["name"].(string)
			ns, _ := ref["namespace"].(string)
			if ns == "" {
				ns = o.Namespace
			}
			storage, _ := dvSpec["storage"].(map[string]any)
			class, _ := storage["storageClassName"].(string)
			mode, _ := storage["volumeMode"].(string)
			if !slices.ContainsFunc(sources, func(s source) bool { return s.namespace == ns && s.name == name }) {
				sources = append(sources, source{ns, name, class, mode})
			}
		}
	}
	items := []any{
		map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
			"metadata": map[string]any{"name": "os-images.kubevirt.io:view"},
			"rules": []any{map[string]any{
				"apiGroups": []string{"cdi.kubevirt.io"},
				"resources": []string{"datavolumes/source", "datasources"},
				"verbs":     []string{"get", "list", "watch", "create"},
			}}},
	}
	// the namespaces the sourceRefs name: ImageNamespace for the builtin
	// catalog, os-images for examples/argocd/platform
	var namespaces []string
	for _, s := range sources {
		if slices.Contains(namespaces, s.namespace) {
			continue
		}
		namespaces = append(namespaces, s.namespace)
		items = append(items,
			map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": s.namespace}},
			map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
				"metadata": map[string]any{"name": "os-images.kubevirt.io:view", "namespace": s.namespace},
				"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "os-images.kubevirt.io:view"},
				"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:serviceaccounts"}}})
	}
	var claims []conformance.Object
	for _, s := range sources {
		claim := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
			"metadata": map[string]any{"name": s.name, "namespace": s.namespace},
			"spec": map[string]any{
				"accessModes":      []string{"ReadWriteMany"},
				"volumeMode":       s.mode,
				"storageClassName": s.class,
				"resources":        map[string]any{"requests": map[string]any{"storage": "10Gi"}},
			}}
		items = append(items, claim,
			map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataSource",
				"metadata": map[string]any{"name": s.name, "namespace": s.namespace},
				"spec":     map[string]any{"source": map[string]any{"pvc": map[string]any{"name": s.name, "namespace": s.namespace}}}})
		claims = append(claims, conformance.Object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: s.namespace, Name: s.name, Doc: claim})
	}
	if err := create(ctx, cp, items); err != nil {
		return err
	}
	return bind(ctx, cp, claims)
}

func create(ctx context.Context, cp *conformance.ControlPlane, items []any) error {
	data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return err
	}
	_, err = cp.MustKubectl(ctx, data, "create", "-f", "-")
	return err
}

// bind marks claims Bound with the capacity they request, as the
// persistent volume controller does once their volume is provisioned
// (kubernetes pkg/controller/volume/persistentvolume/pv_controller.go).
func bind(ctx context.Context, cp *conformance.ControlPlane, claims []conformance.Object) error {
	for _, o := range claims {
		spec, _ := o.Doc["spec"].(map[string]any)
		resources, _ := spec["resources"].(map[string]any)
		requests, _ := resources["requests"].(map[string]any)
		patch, err := json.Marshal(map[string]any{"status": map[string]any{
			"phase":       "Bound",
			"accessModes": spec["accessModes"],
			"capacity":    map[string]any{"storage": requests["storage"]},
		}})
		if err != nil {
			return err
		}
		if _, err := cp.MustKubectl(ctx, nil, "patch", "persistentvolumeclaim", o.Name, "-n", o.Namespace,
			"--subresource=status", "--type=merge", "-p", string(patch)); err != nil {
			return err
		}
	}
	return nil
}

// InitQuotaStatus gives a new ResourceQuota the status kube-controller-
// manager's resource quota controller gives it before anything is counted
// against it (kubernetes pkg/controller/resourcequota/
// resource_quota_controller.go syncResourceQuota: status.hard = spec.hard,
// status.used = the namespace's usage, nothing in a namespace this suite
// has just created). The API server's ResourceQuota admission refuses
// every object a quota without status covers ("status unknown for
// quota"); from here on it keeps status.used itself as it admits objects.
func InitQuotaStatus(ctx context.Context, cp *conformance.ControlPlane, namespace, name string) error {
	data, err := cp.Get(ctx, "/api/v1/namespaces/"+namespace+"/resourcequotas/"+name)
	if err != nil {
		return err
	}
	var q struct {
		Spec struct {
			Hard map[string]string `json:"hard"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &q); err != nil {
		return err
	}
	used := map[string]string{}
	for k := range q.Spec.Hard {
		used[k] = "0"
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"hard": q.Spec.Hard, "used": used}})
	if err != nil {
		return err
	}
	_, err = cp.MustKubectl(ctx, nil, "patch", "resourcequota", name, "-n", namespace,
		"--subresource=status", "--type=merge", "-p", string(patch))
	return err
}

// CDI is a stand-in for CDI's DataVolume controller: it renders each
// DataVolume virt-controller creates into its PersistentVolumeClaim (same
// name and namespace, owned by the DataVolume, spec from spec.storage:
// pkg/controller/datavolume/controller-base.go and
// pkg/controller/common/util.go RenderPvc) and marks both done, the claim
// Bound and the DataVolume Succeeded (the clone from the golden image
// finished). Block claims only: a Filesystem claim's size includes CDI's
// file system overhead, which this stand-in does not compute (it fails
// instead).
type CDI struct {
	cp   *conformance.ControlPlane
	done map[string]bool
}

// NewCDI is a CDI stand-in for cp.
func NewCDI(cp *conformance.ControlPlane) *CDI { return &CDI{cp: cp, done: map[string]bool{}} }

// Sync renders the DataVolumes of namespace not rendered yet.
func (c *CDI) Sync(ctx context.Context, namespace string) error {
	data, err := c.cp.Get(ctx, "/apis/cdi.kubevirt.io/v1beta1/namespaces/"+namespace+"/datavolumes")
	if err != nil {
		return err
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name, UID string
				Labels    map[string]string
			} `json:"metadata"`
			Spec struct {
				Storage struct {
					AccessModes      []string       `json:"accessModes"`
					VolumeMode       string         `json:"volumeMode"`
					StorageClassName string         `json:"storageClassName"`
					Resources        map[string]any `json:"resources"`
				} `json:"storage"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	for _, dv := range list.Items {
		key := namespace + "/" + dv.Metadata.Name
		if c.done[key] {
			continue
		}
		st := dv.Spec.Storage
		if st.VolumeMode != "Block" {
			return fmt.Errorf("DataVolume %s: volumeMode %q: the CDI stand-in renders Block claims only", key, st.VolumeMode)
		}
		claim := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
			"metadata": map[string]any{"name": dv.Metadata.Name, "namespace": namespace, "labels": dv.Metadata.Labels,
				"ownerReferences": []any{map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
					"name": dv.Metadata.Name, "uid": dv.Metadata.UID, "controller": true, "blockOwnerDeletion": true}}},
			"spec": map[string]any{
				"accessModes":      st.AccessModes,
				"volumeMode":       st.VolumeMode,
				"storageClassName": st.StorageClassName,
				"resources":        st.Resources,
			}}
		if err := create(ctx, c.cp, []any{claim}); err != nil {
			return err
		}
		if err := bind(ctx, c.cp, []conformance.Object{{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: namespace, Name: dv.Metadata.Name, Doc: claim}}); err != nil {
			return err
		}
		now := time.Now().UTC().Format(time.RFC3339)
		cond := func(typ, status, reason string) map[string]any {
			return map[string]any{"type": typ, "status": status, "reason": reason, "lastTransitionTime": now, "lastHeartbeatTime": now}
		}
		patch, err := json.Marshal(map[string]any{"status": map[string]any{
			"phase": "Succeeded", "progress": "100.0%", "claimName": dv.Metadata.Name,
			"conditions": []any{cond("Bound", "True", "Bound"), cond("Running", "False", "Completed"), cond("Ready", "True", "")},
		}})
		if err != nil {
			return err
		}
		if _, err := c.cp.MustKubectl(ctx, nil, "patch", "datavolume.cdi.kubevirt.io", dv.Metadata.Name, "-n", namespace,
			"--subresource=status", "--type=merge", "-p", string(patch)); err != nil {
			return err
		}
		c.done[key] = true
	}
	return nil
}
