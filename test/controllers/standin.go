package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// The stand-ins below do, for what the suite asserts, what a component that
// cannot run here does on the platform. Each names the component and the
// upstream file its behaviour follows; docs/testing.md ("Real controllers")
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
//     DataImportCron import, pkg/controller/dataimportcron-controller.go,
//     of HyperConverged's common boot sources, which need a registry);
//     where CDI's real cdi-controller runs, its DataSource controller
//     marks the DataSource Ready from that claim
//     (pkg/controller/datasource-controller.go);
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
		// applied, not created: the golden-image namespace may be there
		// already (virtc's own golden images live in it)
		ns, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": s.namespace}})
		if err != nil {
			return err
		}
		if _, err := cp.MustKubectl(ctx, ns, "apply", "-f", "-"); err != nil {
			return err
		}
		items = append(items,
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
		patch, err := conformance.BoundPatch(o.Doc)
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
	hard, err := quotaHard(ctx, cp, namespace, name)
	if err != nil {
		return err
	}
	used := map[string]string{}
	for k := range hard {
		used[k] = "0"
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"hard": hard, "used": used}})
	if err != nil {
		return err
	}
	_, err = cp.MustKubectl(ctx, nil, "patch", "resourcequota", name, "-n", namespace,
		"--subresource=status", "--type=merge", "-p", string(patch))
	return err
}

// SyncQuotaHard does what kube-controller-manager's resource quota
// controller does when a ResourceQuota's spec changes (kubernetes
// pkg/controller/resourcequota/resource_quota_controller.go
// syncResourceQuota: status.hard = spec.hard), for the suites that run no
// controller manager: the API server's ResourceQuota admission judges a
// request against status.hard, and keeps status.used itself.
func SyncQuotaHard(ctx context.Context, cp *conformance.ControlPlane, namespace, name string) error {
	hard, err := quotaHard(ctx, cp, namespace, name)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"hard": hard}})
	if err != nil {
		return err
	}
	_, err = cp.Do(ctx, "PATCH", "/api/v1/namespaces/"+namespace+"/resourcequotas/"+name+"/status", "application/merge-patch+json", patch)
	return err
}

// quotaHard is a ResourceQuota's spec.hard.
func quotaHard(ctx context.Context, cp *conformance.ControlPlane, namespace, name string) (map[string]string, error) {
	data, err := cp.Get(ctx, "/api/v1/namespaces/"+namespace+"/resourcequotas/"+name)
	if err != nil {
		return nil, err
	}
	var q struct {
		Spec struct {
			Hard map[string]string `json:"hard"`
		} `json:"spec"`
	}
	err = json.Unmarshal(data, &q)
	return q.Spec.Hard, err
}

// dataVolume is what the stand-ins read of a DataVolume.
type dataVolume struct {
	Metadata struct {
		Name, UID string
		Labels    map[string]string
	} `json:"metadata"`
	Spec struct {
		SourceRef *struct {
			Kind, Name, Namespace string
		} `json:"sourceRef"`
		Source *struct {
			PVC *struct{ Name, Namespace string } `json:"pvc"`
		} `json:"source"`
		Storage struct {
			AccessModes      []string       `json:"accessModes"`
			VolumeMode       string         `json:"volumeMode"`
			StorageClassName string         `json:"storageClassName"`
			Resources        map[string]any `json:"resources"`
		} `json:"storage"`
	} `json:"spec"`
}

// Volumes is a stand-in for what provisions volumes and runs CDI's
// importer pods, neither of which can run here (no CSI driver, no
// kubelet); CDI's real cdi-controller decides everything else:
//
//   - it binds each Pending claim of a namespace, as the persistent volume
//     controller does once the class's provisioner has made the volume
//     (bind; the suite's classes bind Immediately);
//   - it ends each importer pod CDI's import controller created
//     (pkg/controller/import-controller.go createImporterPod, labelled
//     cdi.kubevirt.io=importer) once every claim it mounts is Bound, the
//     way cdi-importer ends a completed import: exit code 0 with the
//     termination message it writes (cmd/cdi-importer/importer.go: a
//     common.TerminationMessage with scratchSpaceRequired and
//     preallocationApplied false, message "Import Complete"), which the
//     import controller reads into the claim's annotations
//     (updatePvcFromPod, parseTerminationMessage in
//     pkg/controller/util.go) and the DataVolume controller into the
//     DataVolume's phase.
type Volumes struct{ cp *conformance.ControlPlane }

// NewVolumes is a Volumes stand-in for cp.
func NewVolumes(cp *conformance.ControlPlane) *Volumes { return &Volumes{cp: cp} }

// ImportComplete is the termination message of a completed import
// (cmd/cdi-importer/importer.go, pkg/common/common.go TerminationMessage).
const ImportComplete = `{"scratchSpaceRequired":false,"preallocationApplied":false,"message":"Import Complete"}`

// Sync runs one round over namespace.
func (v *Volumes) Sync(ctx context.Context, namespace string) error {
	claims, err := conformance.List[map[string]any](ctx, v.cp, "/api/v1/namespaces/"+namespace+"/persistentvolumeclaims")
	if err != nil {
		return err
	}
	bound := map[string]bool{}
	var pending []conformance.Object
	for _, c := range claims {
		st, _ := c["status"].(map[string]any)
		md, _ := c["metadata"].(map[string]any)
		n, _ := md["name"].(string)
		if st["phase"] == "Bound" {
			bound[n] = true
			continue
		}
		pending = append(pending, conformance.Object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: namespace, Name: n, Doc: c})
	}
	if err := bind(ctx, v.cp, pending); err != nil {
		return err
	}
	pods, err := conformance.List[cdiPod](ctx, v.cp, "/api/v1/namespaces/"+namespace+"/pods?labelSelector=cdi.kubevirt.io%3Dimporter")
	if err != nil {
		return err
	}
	for _, p := range pods {
		if p.Status.Phase == "Succeeded" || len(p.Spec.Containers) == 0 {
			continue
		}
		ready := true
		for _, vol := range p.Spec.Volumes {
			// claims bound in this round count on the next one, as
			// the kubelet mounts only bound claims
			if vol.PersistentVolumeClaim != nil && !bound[vol.PersistentVolumeClaim.ClaimName] {
				ready = false
			}
		}
		if !ready {
			continue
		}
		if err := endPod(ctx, v.cp, p, ImportComplete); err != nil {
			return err
		}
	}
	return nil
}

// Clones is a stand-in for the clone of a DataVolume from a DataSource or
// claim in another namespace, which needs two components that do not run
// here: cdi-apiserver, whose DataVolume mutating webhook authorizes a
// cross-namespace clone and writes the clone token without which CDI's
// clone controller does not start (pkg/apiserver/webhooks/
// datavolume-mutate.go; pkg/controller/datavolume/
// clone-controller-base.go ensureExtendedTokenDV: "token missing"), and
// the cloner and upload-server pods that copy the data. Once the real
// DataSource controller says the source is Ready
// (pkg/controller/datasource-controller.go), it leaves what a finished
// clone leaves: the DataVolume's claim, populated and bound, marked
// cdi.kubevirt.io/storage.populatedFor with the DataVolume's name, spec
// from the DataVolume's spec.storage (Block claims only: a Filesystem
// claim's size includes CDI's file system overhead, which the stand-in
// does not compute; it fails instead). CDI's real DataVolume controller
// then adopts the claim and writes the DataVolume's phase and conditions
// (pkg/controller/datavolume/controller-base.go: pvcIsPopulatedForDataVolume,
// handlePrePopulation adds cdi.kubevirt.io/storage.prePopulated, the
// claim gets the DataVolume as controller).
type Clones struct{ cp *conformance.ControlPlane }

// NewClones is a Clones stand-in for cp.
func NewClones(cp *conformance.ControlPlane) *Clones { return &Clones{cp: cp} }

// AnnPopulatedFor tells CDI's DataVolume controller that a claim holds the
// DataVolume's data already (pkg/controller/common/util.go).
const AnnPopulatedFor = "cdi.kubevirt.io/storage.populatedFor"

// Sync clones, in namespace, the DataVolumes whose source is ready and
// that have no claim yet.
func (c *Clones) Sync(ctx context.Context, namespace string) error {
	dvs, err := conformance.List[dataVolume](ctx, c.cp, "/apis/cdi.kubevirt.io/v1beta1/namespaces/"+namespace+"/datavolumes")
	if err != nil {
		return err
	}
	for _, dv := range dvs {
		key := namespace + "/" + dv.Metadata.Name
		var ready bool
		switch {
		case dv.Spec.SourceRef != nil && dv.Spec.SourceRef.Kind == "DataSource":
			ns := dv.Spec.SourceRef.Namespace
			if ns == "" {
				ns = namespace
			}
			if ready, err = dataSourceReady(ctx, c.cp, ns, dv.Spec.SourceRef.Name); err != nil {
				return err
			}
		case dv.Spec.Source != nil && dv.Spec.Source.PVC != nil:
			ns := dv.Spec.Source.PVC.Namespace
			if ns == "" {
				ns = namespace
			}
			ready = claimBound(ctx, c.cp, ns, dv.Spec.Source.PVC.Name)
		default:
			continue // not a clone
		}
		if !ready {
			continue
		}
		if _, err := c.cp.Get(ctx, "/api/v1/namespaces/"+namespace+"/persistentvolumeclaims/"+dv.Metadata.Name); err == nil {
			continue
		}
		st := dv.Spec.Storage
		if st.VolumeMode != "Block" {
			return fmt.Errorf("DataVolume %s: volumeMode %q: the clone stand-in renders Block claims only", key, st.VolumeMode)
		}
		claim := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
			"metadata": map[string]any{"name": dv.Metadata.Name, "namespace": namespace, "labels": dv.Metadata.Labels,
				"annotations": map[string]any{AnnPopulatedFor: dv.Metadata.Name}},
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
	}
	return nil
}

// dataSourceReady reports CDI's DataSource controller's Ready condition.
func dataSourceReady(ctx context.Context, cp *conformance.ControlPlane, namespace, name string) (bool, error) {
	data, err := cp.Get(ctx, "/apis/cdi.kubevirt.io/v1beta1/namespaces/"+namespace+"/datasources/"+name)
	if err != nil {
		return false, nil // not there (yet)
	}
	var ds struct {
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &ds); err != nil {
		return false, err
	}
	for _, c := range ds.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True", nil
		}
	}
	return false, nil
}

func claimBound(ctx context.Context, cp *conformance.ControlPlane, namespace, name string) bool {
	data, err := cp.Get(ctx, "/api/v1/namespaces/"+namespace+"/persistentvolumeclaims/"+name)
	if err != nil {
		return false
	}
	var pvc struct {
		Status struct{ Phase string } `json:"status"`
	}
	return json.Unmarshal(data, &pvc) == nil && pvc.Status.Phase == "Bound"
}

// DefaultStorageClass is the builtin catalog's storage class (catalog/
// storage.yaml, ceph-rbd), the cluster's default.
const DefaultStorageClass = "ocs-external-storagecluster-ceph-rbd"

// CreateStorageClasses creates the StorageClass the builtin catalog names,
// as ODF's external mode creates it (a stand-in for ocs-operator): its
// Ceph RBD CSI provisioner, openshift-storage.rbd.csi.ceph.com, from whose
// name CDI's StorageProfile controller takes the claim properties
// (pkg/storagecapabilities/storagecapabilities.go: ReadWriteMany Block
// first), binding Immediately, marked the cluster's default (the class a
// DataVolume without one gets: pkg/controller/common/util.go
// GetStorageClassByNameWithVirtFallback). No CSIDriver object is created:
// CDI then takes its path without volume populators
// (pkg/controller/datavolume/controller-base.go shouldUseCDIPopulator,
// storageClassCSIDriverExists), whose importer pod the Volumes stand-in
// can end; the populator path would need the CSI provisioner to make and
// rebind persistent volumes.
func CreateStorageClasses(ctx context.Context, cp *conformance.ControlPlane) error {
	return create(ctx, cp, []any{map[string]any{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
		"metadata": map[string]any{"name": DefaultStorageClass,
			"annotations": map[string]any{"storageclass.kubernetes.io/is-default-class": "true"}},
		"provisioner":          "openshift-storage.rbd.csi.ceph.com",
		"parameters":           map[string]any{"clusterID": "openshift-storage", "imageFeatures": "layering,deep-flatten,exclusive-lock,object-map,fast-diff", "pool": "ocs-storagecluster-cephblockpool"},
		"reclaimPolicy":        "Delete",
		"allowVolumeExpansion": true,
		"volumeBindingMode":    "Immediate",
	}})
}

// AnnSourceDesiredDigest is where CDI's source update poller writes the
// digest a DataImportCron's registry URL resolves to
// (pkg/controller/dataimportcron-controller.go).
const AnnSourceDesiredDigest = "cdi.kubevirt.io/storage.import.sourceDesiredDigest"

// PollDigest is a stand-in for the poller job CDI's DataImportCron
// controller creates for a registry URL (newCronJob, newInitialJob: the
// cdi-source-update-poller container, which needs a pod and the
// registry): it writes, as the poller does, the time of the poll and the
// digest the registry answers for the URL on the DataImportCron
// (tools/cdi-source-update-poller/main.go: AnnLastCronTime,
// AnnSourceDesiredDigest).
func PollDigest(ctx context.Context, cp *conformance.ControlPlane, namespace, cron, digest string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		"cdi.kubevirt.io/storage.import.lastCronTime": time.Now().UTC().Format(time.RFC3339),
		AnnSourceDesiredDigest:                        digest,
	}}})
	if err != nil {
		return err
	}
	_, err = cp.MustKubectl(ctx, nil, "patch", "dataimportcron.cdi.kubevirt.io", cron, "-n", namespace, "--type=merge", "-p", string(patch))
	return err
}

// HostClones is a stand-in for what CDI's host-assisted clone of a
// DataVolume needs and cannot have here, so that CDI's real cdi-controller
// decides the rest itself: it creates the clone's claim, the upload server
// pod in the claim's namespace and the cloner pod in the source's, marks
// the claim cloned and the DataVolume Succeeded (CDI v1.65.0
// pkg/controller/datavolume/clone-controller-base.go
// fallbackToHostAssisted: the path without volume populators, which CDI
// takes for a class without a CSIDriver object). Each round, cluster-wide:
//
//   - cdi-apiserver's DataVolume mutating webhook: the clone token on each
//     cross-namespace clone DataVolume without one (CloneToken);
//   - the kubelet and cdi-uploadserver: an upload server pod (label
//     cdi.kubevirt.io=cdi-upload-server) Running and Ready, which the
//     upload controller reads into the claim (AnnPodReady) and the clone
//     controller waits for before it creates the cloner pod
//     (pkg/controller/clone-controller.go waitTargetPodRunningOrSucceeded);
//     once its cloner pod has ended, the upload server pod ends, exit code
//     0, with cdi-uploadserver's termination message for a clone target
//     (cmd/cdi-uploadserver/uploadserver.go: "Clone Complete",
//     preallocationApplied false);
//   - the kubelet and cdi-cloner: a cloner pod (label
//     cdi.kubevirt.io=cdi-clone-source) ends, exit code 0, with
//     cdi-cloner's message "Clone Complete"
//     (cmd/cdi-cloner/clone-source.go), once its upload server pod is
//     Ready; the clone controller then marks the claim cloned
//     (updatePvcFromPod: AnnCloneOf).
//
// No data is copied: the claims are bound by Volumes (or the test's
// binder) with the capacity they request.
type HostClones struct {
	cp  *conformance.ControlPlane
	cdi *CDIController
}

// NewHostClones is a HostClones stand-in for cp, whose cdi-controller is
// cdi (for the clone token's key and identity).
func NewHostClones(cp *conformance.ControlPlane, cdi *CDIController) *HostClones {
	return &HostClones{cp: cp, cdi: cdi}
}

// cdiPod is what HostClones reads of a CDI pod.
type cdiPod struct {
	Metadata struct {
		Name, Namespace string
		Labels          map[string]string
	} `json:"metadata"`
	Spec struct {
		Containers []struct {
			Name string `json:"name"`
		} `json:"containers"`
		Volumes []struct {
			PersistentVolumeClaim *struct {
				ClaimName string `json:"claimName"`
			} `json:"persistentVolumeClaim"`
		} `json:"volumes"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		Conditions []struct {
			Type, Status string
		} `json:"conditions"`
	} `json:"status"`
}

func (p cdiPod) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// UploadComplete is cdi-uploadserver's termination message for a clone
// target (cmd/cdi-uploadserver/uploadserver.go, pkg/common/common.go
// TerminationMessage).
const UploadComplete = `{"preallocationApplied":false,"message":"Clone Complete"}`

// Sync runs one round over the cluster.
func (h *HostClones) Sync(ctx context.Context) error {
	data, err := h.cp.Get(ctx, "/apis/cdi.kubevirt.io/v1beta1/datavolumes")
	if err != nil {
		return err
	}
	var dvs struct {
		Items []struct {
			Metadata struct {
				Name, Namespace string
				Annotations     map[string]string
			} `json:"metadata"`
			Spec struct {
				Source *struct {
					PVC *struct{ Name, Namespace string } `json:"pvc"`
				} `json:"source"`
			} `json:"spec"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		}
	}
	if err := json.Unmarshal(data, &dvs); err != nil {
		return err
	}
	for _, dv := range dvs.Items {
		md := dv.Metadata
		src := dv.Spec.Source
		if src == nil || src.PVC == nil || src.PVC.Namespace == "" || src.PVC.Namespace == md.Namespace || dv.Status.Phase == "Succeeded" {
			continue
		}
		if md.Annotations[AnnCloneToken] != "" || md.Annotations["cdi.kubevirt.io/storage.extended.clone.token"] != "" {
			continue
		}
		if err := CloneToken(ctx, h.cp, h.cdi, md.Namespace, md.Name); err != nil {
			return err
		}
	}
	list := func(component string) ([]cdiPod, error) {
		return conformance.List[cdiPod](ctx, h.cp, "/api/v1/pods?labelSelector=cdi.kubevirt.io%3D"+component)
	}
	uploads, err := list("cdi-upload-server")
	if err != nil {
		return err
	}
	sources, err := list("cdi-clone-source")
	if err != nil {
		return err
	}
	// the cloner pod of a target claim carries the claim's UID with
	// "-source-pod" (pkg/controller/common/util.go CreateCloneSourcePodName,
	// label CloneUniqueID); the upload pod the claim's UID (uploadTarget)
	const cloneUID = "cdi.kubevirt.io/storage.clone.cloneUniqeId"
	sourceDone := map[string]bool{}
	uploadReady := map[string]bool{}
	for _, p := range uploads {
		uploadReady[p.Metadata.Labels["cdi.kubevirt.io/uploadTarget"]] = p.ready() || p.Status.Phase == "Succeeded"
	}
	for _, p := range sources {
		target := strings.TrimSuffix(p.Metadata.Labels[cloneUID], "-source-pod")
		if p.Status.Phase == "Succeeded" {
			sourceDone[target] = true
			continue
		}
		if !uploadReady[target] {
			continue
		}
		if err := endPod(ctx, h.cp, p, "Clone Complete"); err != nil {
			return err
		}
	}
	for _, p := range uploads {
		switch {
		case p.Status.Phase == "Succeeded":
		case p.Status.Phase == "Running" && sourceDone[p.Metadata.Labels["cdi.kubevirt.io/uploadTarget"]]:
			if err := endPod(ctx, h.cp, p, UploadComplete); err != nil {
				return err
			}
		case p.Status.Phase != "Running":
			if err := runPod(ctx, h.cp, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// runPod marks a pod Running with its containers started and ready, as the
// kubelet does (pkg/kubelet/status/status_manager.go).
func runPod(ctx context.Context, cp *conformance.ControlPlane, p cdiPod) error {
	now := time.Now().UTC().Format(time.RFC3339)
	var statuses []any
	for _, c := range p.Spec.Containers {
		statuses = append(statuses, map[string]any{"name": c.Name, "ready": true, "started": true, "restartCount": 0,
			"image": "stand-in", "imageID": "", "state": map[string]any{"running": map[string]any{"startedAt": now}}})
	}
	return patchPodStatus(ctx, cp, p, map[string]any{
		"phase": "Running", "startTime": now,
		"conditions": []any{
			map[string]any{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "Initialized", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": now},
		},
		"containerStatuses": statuses,
	})
}

// endPod marks a pod Succeeded, its first container ended with exit code 0
// and message as its termination message.
func endPod(ctx context.Context, cp *conformance.ControlPlane, p cdiPod, message string) error {
	now := time.Now().UTC().Format(time.RFC3339)
	var statuses []any
	for i, c := range p.Spec.Containers {
		term := map[string]any{"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}
		if i == 0 {
			term["message"] = message
		}
		statuses = append(statuses, map[string]any{"name": c.Name, "ready": false, "started": false, "restartCount": 0,
			"image": "stand-in", "imageID": "", "state": map[string]any{"terminated": term}})
	}
	return patchPodStatus(ctx, cp, p, map[string]any{
		"phase": "Succeeded", "startTime": now,
		"conditions": []any{
			map[string]any{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "Initialized", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "ContainersReady", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now},
			map[string]any{"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now},
		},
		"containerStatuses": statuses,
	})
}

func patchPodStatus(ctx context.Context, cp *conformance.ControlPlane, p cdiPod, status map[string]any) error {
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	_, err = cp.MustKubectl(ctx, nil, "patch", "pod", p.Metadata.Name, "-n", p.Metadata.Namespace,
		"--subresource=status", "--type=merge", "-p", string(patch))
	if err != nil && strings.Contains(err.Error(), "NotFound") {
		return nil // CDI deleted it since the list
	}
	return err
}
