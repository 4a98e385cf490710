package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/sizing"
)

// ResourceQuota bounds the tenant in pod terms (see package sizing): its
// VMs' virt-launcher and hot-plug attachment pods, and the headroom of the
// live migrations KubeVirt may run at once in the namespace
// (resolve.Model.ParallelMigrations: a workload update or a drain of
// several nodes may migrate that many of the tenant's VMs at once).
// CDI's pods need no room of their own: the only one that runs in a
// tenant's namespace, the upload server of a host-assisted clone of a VM's
// root disk (CDI v1.65.0 pkg/controller/upload-controller.go; with volume
// populators every clone pod runs in the image namespace,
// pkg/controller/clone/planner.go), runs before that VM's launcher pod
// exists, within the room held for it (sizing
// TestSmallestLauncherHoldsCDIUploadPod; the API server's decision in
// test/controllers TestQuotaAdmitsCDIClonePods).
func ResourceQuota(m *resolve.Model, t *resolve.Tenant) emit.Object {
	h := sizing.KubeVirt.Quota(t, sizing.KubeVirt.Tenant(t), m.ParallelMigrations())
	hard := corev1.ResourceList{
		"requests.cpu":                      sizing.Milli(h.MilliCPU),
		"requests.memory":                   sizing.Bytes(h.Memory),
		"requests.storage":                  sizing.Bytes(h.Storage),
		"count/virtualmachines.kubevirt.io": *resourceCount(h.VMs),
	}
	if h.Hugepages2Mi > 0 {
		hard["requests.hugepages-2Mi"] = sizing.Bytes(h.Hugepages2Mi)
	}
	if h.Hugepages1Gi > 0 {
		hard["requests.hugepages-1Gi"] = sizing.Bytes(h.Hugepages1Gi)
	}
	for _, class := range h.Classes() {
		hard[corev1.ResourceName(class+".storageclass.storage.k8s.io/requests.storage")] = sizing.Bytes(h.ByClass[class])
	}
	for name, n := range deviceQuota(m, t) {
		hard[corev1.ResourceName("requests."+name)] = *resourceCount(n)
	}
	q := &corev1.ResourceQuota{
		TypeMeta:   typeMeta("v1", "ResourceQuota"),
		ObjectMeta: objectMeta("ResourceQuota", t.Name, model.QuotaName, t.Doc.Rel, map[string]string{model.LabelTenant: t.Name}, nil),
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	}
	return emit.Object{APIVersion: "v1", Kind: "ResourceQuota", Namespace: t.Name, Name: model.QuotaName, Scope: emit.TenantScope, Body: q}
}

func resourceCount(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }

// deviceQuota is the number of each passed-through device the tenant's VMs
// hold: KubeVirt v1.8.4 requests one of a device's resource name on the
// virt-launcher pod for each GPU or host device
// (pkg/virt-controller/services/renderresources.go, WithGPUsDevicePlugins,
// WithHostDevicesDevicePlugins), and such a VM never live-migrates, so no
// second launcher holds one. Every other device the Platform permits gets
// 0: a VM created outside Git cannot take a device the tenant is not
// entitled to (target architecture, doc 000: "No implied device
// entitlement"; no "unrestricted privileged-device access").
func deviceQuota(m *resolve.Model, t *resolve.Tenant) map[string]int64 {
	out := map[string]int64{}
	if m.Platform != nil {
		for _, name := range m.Platform.PermittedDevices() {
			out[name] = 0
		}
	}
	for _, vm := range t.VMs {
		for _, d := range vm.Devices() {
			if d.ResourceName != "" {
				out[d.ResourceName]++
			}
		}
	}
	return out
}
