package vap

import (
	"fmt"
	"slices"
	"strings"
)

// Identity is who writes.
type Identity struct {
	User   string
	Groups []string
}

// Who writes in the cases: the tenants' users (with the RoleBindings virtc
// writes), a human cluster-admin and Argo CD (whom the guardrails judge as
// they judge a tenant), a tenant's own service account, and the cluster's
// other writers, each by its upstream identity.
var (
	PlainUser = Identity{User: "alice", Groups: []string{"plain-devs"}}
	LabUser   = Identity{User: "bob", Groups: []string{"lab-devs"}}
	// ClusterAdmin is OpenShift's kubeadmin.
	ClusterAdmin = Identity{User: "kube:admin", Groups: []string{"system:cluster-admins"}}
	ArgoCD       = Identity{User: "system:serviceaccount:openshift-gitops:openshift-gitops-argocd-application-controller", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:openshift-gitops"}}
	TenantSA     = Identity{User: "system:serviceaccount:plain:default", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:plain"}}
	// KubeVirt v1.8.4 pkg/virt-operator/resource/generate/components/
	// serviceaccountnames.go, in the namespace HCO installs it into.
	VirtController = sa("openshift-cnv", "kubevirt-controller")
	VirtHandler    = sa("openshift-cnv", "kubevirt-handler")
	// CDI v1.65.0 pkg/operator/resources/cluster/controller.go.
	CDI = sa("openshift-cnv", "cdi-sa")
	// OADP's Velero (Velero v1.18 restores as its server's account).
	Velero = sa("openshift-adp", "velero")
	// MTV's controller (forklift v2.12.5 operator/config, in the
	// namespace OpenShift's MTV operator installs into).
	Forklift = sa("openshift-mtv", "forklift-controller")
	// OVN-Kubernetes' cluster manager on OpenShift (cluster-network-
	// operator bindata ovnkube-control-plane.yaml), which writes the
	// attachments of ClusterUserDefinedNetworks.
	OVNKubernetes = sa("openshift-ovn-kubernetes", "ovn-kubernetes-control-plane")
	// kube-controller-manager's PV binder (its controllers run with their
	// own service accounts on OpenShift).
	PVBinder = sa("kube-system", "persistent-volume-binder")
)

func sa(ns, name string) Identity {
	return Identity{User: "system:serviceaccount:" + ns + ":" + name, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}}
}

// Case is one write into a tenant's namespace and what the guardrails do
// with it.
type Case struct {
	Name string
	As   Identity
	// Object is written; Old is what it replaces (nil: a create).
	Object, Old map[string]any
	// Refused are guardrails that refuse it, every one of them among the
	// refusals; none: it is admitted.
	Refused []string
	// Invalid, if set, is what the API server's schema says refusing the
	// write before any policy judges it (a sample value outside an enum):
	// the real API server's check only.
	Invalid string
}

// Namespace is the tenant namespace the case writes into.
func (c Case) Namespace() string {
	return get(c.Object, "metadata.namespace").(string)
}

// Base is the output the cases build on: golden/guardrails-platform's,
// where tenant plain has no allowances and tenant lab (in the lab
// environment) may use u1 sizes, the A100 GPU, lab-bridge, lab-sriov and
// both pools.
type Base struct {
	Objects []map[string]any
}

// Find is the object of that kind and name.
func (b Base) Find(kind, namespace, name string) map[string]any {
	for _, o := range b.Objects {
		if o["kind"] == kind && get(o, "metadata.name") == name && (namespace == "" || get(o, "metadata.namespace") == namespace) {
			return deepCopy(o)
		}
	}
	panic(fmt.Sprintf("the base has no %s %s/%s", kind, namespace, name))
}

// Cases are the bypass attempts and the legitimate writes, written from
// KubeVirt's and CDI's API types (kubevirt.io/api v1.8.4,
// containerized-data-importer-api v1.65.0) and the other writers' code
// (the identities above), not from virtc's rules; FieldAttempts adds every
// field of the VirtualMachine type outside virtc's allow list.
func (b Base) Cases() []Case {
	c := &cases{
		web:   b.Find("VirtualMachine", "plain", "web01"),
		build: b.Find("VirtualMachine", "lab", "build01"),
		nad:   b.Find("NetworkAttachmentDefinition", "lab", "lab-bridge"),
		tmpl:  "spec.template.spec",
	}
	c.virtcWrites()
	c.fields()
	c.values()
	c.kinds()
	c.disks()
	c.networks()
	c.writers()
	return c.cs
}

// cases collects Cases, from the base's VMs and attachment.
type cases struct {
	web, build, nad map[string]any
	tmpl            string
	cs              []Case
}

// vm is a copy of web01 under another name, edited.
func (c *cases) vm(name string, edit func(v map[string]any)) map[string]any {
	return renamed(c.web, name, edit)
}

// labVM is a copy of build01 under another name, edited.
func (c *cases) labVM(name string, edit func(v map[string]any)) map[string]any {
	return renamed(c.build, name, edit)
}

func renamed(src map[string]any, name string, edit func(v map[string]any)) map[string]any {
	v := deepCopy(src)
	rename(v, name)
	if edit != nil {
		edit(v)
	}
	return v
}

func (c *cases) refuse(name string, as Identity, obj map[string]any, rules ...string) {
	c.cs = append(c.cs, Case{Name: name, As: as, Object: obj, Refused: rules})
}

func (c *cases) refuseUpdate(name string, as Identity, old, obj map[string]any, rules ...string) {
	c.cs = append(c.cs, Case{Name: name, As: as, Object: obj, Old: old, Refused: rules})
}

func (c *cases) admit(name string, as Identity, obj map[string]any) {
	c.cs = append(c.cs, Case{Name: name, As: as, Object: obj})
}

func (c *cases) admitUpdate(name string, as Identity, old, obj map[string]any) {
	c.cs = append(c.cs, Case{Name: name, As: as, Object: obj, Old: old})
}

// virtcWrites: what virtc writes, and the writes a tenant may make on its
// own.
func (c *cases) virtcWrites() {
	c.admit("the VM virtc writes, as a new VM", PlainUser, c.vm("copy", nil))
	c.admit("the lab VM virtc writes: GPU, bridge and SR-IOV networks, GPU pool", LabUser, c.labVM("copy", nil))
	c.admitUpdate("a tenant starts its VM (runStrategy)", PlainUser, c.web, with(c.web, "spec.runStrategy", "Halted"))
	c.admitUpdate("a tenant adds a label", PlainUser, c.web, with(c.web, "metadata.labels.team", "blue"))
	c.admit("a blank DataVolume on an allowed class", PlainUser, dataVolume("plain", "scratch", map[string]any{"blank": map[string]any{}}, "ocs-external-storagecluster-ceph-rbd"))
	c.admit("a claim on an allowed class", PlainUser, claim("plain", "data", "ocs-external-storagecluster-ceph-rbd", nil, nil))
	c.admit("a copy of its own claim", PlainUser, claim("plain", "copy", "ocs-external-storagecluster-ceph-rbd", nil, map[string]any{"kind": "PersistentVolumeClaim", "name": "data"}))
	c.admitUpdate("the network attachment virtc writes, as it writes it", LabUser, c.nad, with(c.nad, "metadata.labels.team", "blue"))
	c.admit("a VirtualMachineRestore of a snapshot, as it is", PlainUser, restore("plain", "back", nil, nil))
	c.admit("a VirtualMachineClone of its VM, as it is", PlainUser, clone("plain", "twin", nil))
}

// fields: fields of KubeVirt's VirtualMachine that virtc does not write.
func (c *cases) fields() {
	c.refuse("priorityClassName (preempts other tenants' VMs when a pool is full)", PlainUser, with(c.web, c.tmpl+".priorityClassName", "openshift-user-critical"), "template-fields")
	c.refuse("schedulerName", PlainUser, with(c.web, c.tmpl+".schedulerName", "my-scheduler"), "template-fields")
	c.refuse("dedicated CPUs beside an instance type", PlainUser, with(c.web, c.tmpl+".domain.cpu.dedicatedCpuPlacement", true), "template-fields")
	c.refuse("huge pages beside an instance type", PlainUser, with(c.web, c.tmpl+".domain.memory.hugepages", map[string]any{"pageSize": "1Gi"}), "template-fields")
	c.refuse("launchSecurity (a confidential VM)", PlainUser, with(c.web, c.tmpl+".domain.launchSecurity", map[string]any{"sev": map[string]any{}}), "confidential", "template-fields")
	c.refuse("kernel boot from a container image", PlainUser, with(c.web, c.tmpl+".domain.firmware.kernelBoot", map[string]any{"container": map[string]any{"image": "quay.io/evil/kernel:1", "kernelPath": "/vmlinuz"}}), "template-fields")
	c.refuse("hook sidecar with an arbitrary image", PlainUser, with(c.web, "spec.template.metadata.annotations", map[string]any{"hooks.kubevirt.io/hookSidecars": `[{"image": "quay.io/evil/hook:1"}]`}), "template-fields")
	c.refuse("a network through a template annotation", PlainUser, with(c.web, "spec.template.metadata.annotations", map[string]any{"k8s.v1.cni.cncf.io/networks": "default/other-tenant-net"}), "template-fields")
	c.refuse("hostDisk on node storage", PlainUser, appendTo(c.web, c.tmpl+".volumes", map[string]any{"name": "node", "hostDisk": map[string]any{"path": "/var/lib/data.img", "type": "DiskOrCreate", "capacity": "1Ti"}}), "template-fields")
	c.refuse("a large emptyDisk", PlainUser, appendTo(c.web, c.tmpl+".volumes", map[string]any{"name": "scratch", "emptyDisk": map[string]any{"capacity": "2Ti"}}), "template-fields")
	c.refuse("devices requested through domain.resources", PlainUser, with(c.web, c.tmpl+".domain.resources", map[string]any{"limits": map[string]any{"nvidia.com/A100": "1"}}), "template-fields")
	c.refuse("architecture arm64", PlainUser, with(c.web, c.tmpl+".architecture", "arm64"), "architecture")
	c.refuse("a SCSI LUN disk (passthrough)", PlainUser, appendTo(c.web, c.tmpl+".domain.devices.disks", map[string]any{"name": "lun", "lun": map[string]any{}}), "template-fields")
	c.refuse("virtiofs file systems", PlainUser, with(c.web, c.tmpl+".domain.devices.filesystems", []any{map[string]any{"name": "fs", "virtiofs": map[string]any{}}}), "template-fields")
	c.refuse("USB redirection (clientPassthrough)", PlainUser, with(c.web, c.tmpl+".domain.devices.clientPassthrough", map[string]any{}), "template-fields")
	c.refuse("a multus network as the default network", PlainUser, with(c.web, c.tmpl+".networks", []any{map[string]any{"name": "default", "multus": map[string]any{"networkName": "lab/lab-bridge", "default": true}}}), "template-fields")
	c.refuse("a DataVolume template with a priority class", PlainUser, with(c.web, "spec.dataVolumeTemplates", []any{with(get(c.web, "spec.dataVolumeTemplates").([]any)[0].(map[string]any), "spec.priorityClassName", "system-cluster-critical")}), "template-fields")
	c.refuse("hostname and DNS of its own", PlainUser, with(c.web, c.tmpl+".dnsConfig", map[string]any{"nameservers": []any{"10.0.0.1"}}), "template-fields")
	c.refuse("topology spread constraints (placement of its own)", PlainUser, with(c.web, c.tmpl+".topologySpreadConstraints", []any{map[string]any{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}}), "template-fields")
}

// values: values a rule judges.
func (c *cases) values() {
	c.refuse("an excluded size (dedicated CPUs and huge pages)", PlainUser, with(c.web, "spec.instancetype.name", "cx1.large"), "instancetype")
	c.refuse("an excluded size (dedicated CPUs)", PlainUser, with(c.web, "spec.instancetype.name", "d1.medium"), "instancetype")
	c.refuse("a size the tenant's allow list does not name", LabUser, with(c.build, "spec.instancetype.name", "o1.medium"), "instancetype")
	c.refuse("a namespaced instance type of its own", PlainUser, with(c.web, "spec.instancetype", map[string]any{"kind": "VirtualMachineInstancetype", "name": "u1.small"}), "instancetype")
	c.refuse("no instance type (CPU and memory of its own)", PlainUser, without(with(c.web, c.tmpl+".domain.memory", map[string]any{"guest": "256Gi"}), "spec.instancetype"), "instancetype")
	c.refuse("an instance type revision of its own (another VM's revision)", PlainUser, with(c.web, "spec.instancetype.revisionName", "other-vm-u1.2xlarge-v1beta1-1"), "instancetype")
	c.refuse("a preference revision of its own", PlainUser, with(c.web, "spec.preference.revisionName", "other-vm-rhel.9-1"), "preference")
	c.refuse("a preference of an image it may not use", PlainUser, with(c.web, "spec.preference.name", "windows.11"), "preference")
	c.refuse("a GPU without entitlement", PlainUser, with(c.web, c.tmpl+".domain.devices.gpus", []any{map[string]any{"name": "g", "deviceName": "nvidia.com/A100"}}), "devices")
	c.refuse("a host device the lab is not entitled to", LabUser, with(c.build, c.tmpl+".domain.devices.hostDevices", []any{map[string]any{"name": "q", "deviceName": "intel.com/qat"}}), "devices")
	c.refuse("a GPU the cluster does not permit", LabUser, with(c.build, c.tmpl+".domain.devices.gpus", []any{map[string]any{"name": "g", "deviceName": "nvidia.com/H100"}}), "devices")
	c.refuse("another tenant's network", PlainUser, withNetwork(c.web, "lab", map[string]any{"bridge": map[string]any{}}, "lab/lab-bridge"), "networks")
	c.refuse("an SR-IOV interface on a bridge network", LabUser, withNetwork(c.build, "fast", map[string]any{"sriov": map[string]any{}}, "lab-bridge"), "sriov")
	c.refuse("an SR-IOV interface without an SR-IOV network", PlainUser, with(c.web, c.tmpl+".domain.devices.interfaces", []any{map[string]any{"name": "default", "sriov": map[string]any{}}}), "sriov")
	c.refuse("a node selector of its own", PlainUser, with(c.web, c.tmpl+".nodeSelector", map[string]any{"kubernetes.io/hostname": "node-7"}), "placement")
	c.refuse("a pool it may not use", PlainUser, with(c.web, c.tmpl+".nodeSelector", map[string]any{"node-role.kubernetes.io/virt": "", "pool.example.com/gpu": ""}), "placement")
	c.refuse("a toleration of its own", PlainUser, with(c.web, c.tmpl+".tolerations", []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}}), "placement")
	c.refuse("a node affinity of its own", PlainUser, with(c.web, c.tmpl+".affinity", map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "kubernetes.io/hostname", "operator": "In", "values": []any{"node-7"}}}}}}}}), "placement")
	c.refuse("a password in inline cloud-init", PlainUser, appendTo(c.web, c.tmpl+".volumes", map[string]any{"name": "cloudinitdisk", "cloudInitNoCloud": map[string]any{"userData": "#cloud-config\npassword: hunter2\nchpasswd: {expire: false}\n"}}), "cloud-init-secrets")
	c.refuse("a private key in base64 cloud-init", PlainUser, appendTo(c.web, c.tmpl+".volumes", map[string]any{"name": "cloudinitdisk", "cloudInitNoCloud": map[string]any{"userDataBase64": "I2Nsb3VkLWNvbmZpZwp3cml0ZV9maWxlczoKLSBjb250ZW50OiB8CiAgICAtLS0tLUJFR0lOIE9QRU5TU0ggUFJJVkFURSBLRVktLS0tLQo="}}), "cloud-init-secrets")
	c.refuse("a container disk of its own", PlainUser, appendTo(c.web, c.tmpl+".volumes", map[string]any{"name": "tools", "containerDisk": map[string]any{"image": "quay.io/evil/tools:latest"}}), "container-disks")
	c.refuse("a root disk from another DataSource", PlainUser, with(c.web, "spec.dataVolumeTemplates", []any{with(get(c.web, "spec.dataVolumeTemplates").([]any)[0].(map[string]any), "spec.sourceRef", map[string]any{"kind": "DataSource", "namespace": "plain", "name": "my-image"})}), "image-source")
	c.refuse("a root disk from a URL", PlainUser, with(c.web, "spec.dataVolumeTemplates", []any{with(without(get(c.web, "spec.dataVolumeTemplates").([]any)[0].(map[string]any), "spec.sourceRef"), "spec.source", map[string]any{"http": map[string]any{"url": "https://example.com/evil.qcow2"}})}), "image-source")
	c.refuse("a root disk on a class it may not use", PlainUser, with(c.web, "spec.dataVolumeTemplates", []any{with(get(c.web, "spec.dataVolumeTemplates").([]any)[0].(map[string]any), "spec.storage.storageClassName", "lvms-vg1")}), "storage-class")
	c.refuse("a DataVolume template with CDI's import annotation", PlainUser, with(c.web, "spec.dataVolumeTemplates", []any{with(get(c.web, "spec.dataVolumeTemplates").([]any)[0].(map[string]any), "metadata.annotations", map[string]any{"cdi.kubevirt.io/storage.import.endpoint": "https://example.com/evil.qcow2"})}), "cdi-annotations")
	c.refuse("a DataVolume template whose importer runs as another service account", PlainUser, with(c.web, "spec.dataVolumeTemplates", []any{with(get(c.web, "spec.dataVolumeTemplates").([]any)[0].(map[string]any), "metadata.annotations", map[string]any{"cdi.kubevirt.io/storage.pod.serviceAccountName": "builder"})}), "cdi-annotations")
	c.refuse("evictionStrategy External", PlainUser, with(c.web, c.tmpl+".evictionStrategy", "External"), "eviction")
	c.refuse("live migration for a VM with a GPU", LabUser, with(c.build, c.tmpl+".evictionStrategy", "LiveMigrate"), "eviction")
	c.refuse("the cluster's live migration for a VM with a GPU (no strategy of its own)", LabUser, without(c.build, c.tmpl+".evictionStrategy"), "eviction")
	c.refuse("live migration of a disk that is not ReadWriteMany", PlainUser, with(with(c.web, c.tmpl+".evictionStrategy", "LiveMigrate"), "spec.dataVolumeTemplates", []any{with(get(c.web, "spec.dataVolumeTemplates").([]any)[0].(map[string]any), "spec.storage.accessModes", []any{"ReadWriteOnce"})}), "eviction")
	c.refuse("more data disks than the platform allows", PlainUser, withDataDisks(c.web, 17), "disk-limits")
	c.refuse("out of every backup (VM label)", PlainUser, with(c.web, "metadata.labels.velero\\.io/exclude-from-backup", "true"), "backup")
	c.refuse("a root disk out of every backup", PlainUser, with(c.web, "spec.dataVolumeTemplates", []any{with(get(c.web, "spec.dataVolumeTemplates").([]any)[0].(map[string]any), "metadata.labels.velero\\.io/exclude-from-backup", "true")}), "backup")
	c.refuseUpdate("a VM of Git taken out of its backups", PlainUser, c.web, with(c.web, "metadata.labels.velero\\.io/exclude-from-backup", "true"), "backup")
	c.refuseUpdate("a VM of Git given a field virtc does not write", PlainUser, c.web, with(c.web, c.tmpl+".priorityClassName", "openshift-user-critical"), "template-fields")
}

// kinds: kinds a tenant does not write.
func (c *cases) kinds() {
	c.refuse("a VirtualMachineInstance of its own", PlainUser, vmi("plain", "raw"), "workload-kind")
	c.refuse("a VirtualMachineInstanceReplicaSet", PlainUser, kind("kubevirt.io/v1", "VirtualMachineInstanceReplicaSet", "plain", "rs", map[string]any{"replicas": 2, "selector": map[string]any{"matchLabels": map[string]any{"a": "b"}}, "template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}, "spec": map[string]any{"domain": map[string]any{"devices": map[string]any{}}}}}), "workload-kind")
	c.refuse("a VirtualMachinePool", PlainUser, kind("pool.kubevirt.io/v1beta1", "VirtualMachinePool", "plain", "pool", map[string]any{"replicas": 2, "selector": map[string]any{"matchLabels": map[string]any{"a": "b"}}, "virtualMachineTemplate": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}, "spec": get(c.web, "spec")}}), "workload-kind")
	c.refuse("a VirtualMachineInstancePreset that rewrites the tenant's VMIs", PlainUser, kind("kubevirt.io/v1", "VirtualMachineInstancePreset", "plain", "more-cpus", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"virtc.dev/vm": "web01"}}, "domain": map[string]any{"cpu": map[string]any{"dedicatedCpuPlacement": true}, "devices": map[string]any{}}}), "workload-kind")
	content := snapshotContent("plain", "web01-snap-content", c.web)
	c.refuse("a VirtualMachineSnapshotContent of its own (the VM a restore would create)", PlainUser, with(content, "spec.source.virtualMachine.spec.template.spec.nodeSelector", map[string]any{"kubernetes.io/hostname": "node-7"}), "snapshot-contents")
	c.refuseUpdate("a snapshot content edited (the VM a restore would create)", PlainUser, content, with(content, "spec.source.virtualMachine.spec.template.spec.priorityClassName", "openshift-user-critical"), "snapshot-contents")
	c.refuse("a DataImportCron of its own", PlainUser, kind("cdi.kubevirt.io/v1beta1", "DataImportCron", "plain", "evil", map[string]any{"schedule": "0 * * * *", "managedDataSource": "evil", "template": map[string]any{"spec": map[string]any{"source": map[string]any{"registry": map[string]any{"url": "docker://quay.io/evil/disk:latest"}}}}}), "import-source")
	c.refuse("a VolumeImportSource", PlainUser, kind("cdi.kubevirt.io/v1beta1", "VolumeImportSource", "plain", "evil", map[string]any{"source": map[string]any{"http": map[string]any{"url": "https://example.com/evil.qcow2"}}}), "import-source")
	c.refuse("a VolumeUploadSource", PlainUser, kind("cdi.kubevirt.io/v1beta1", "VolumeUploadSource", "plain", "evil", map[string]any{"contentType": "kubevirt"}), "import-source")
	c.refuse("a restore with patches", PlainUser, restore("plain", "patched", []any{`{"op": "add", "path": "/spec/template/spec/nodeSelector", "value": {"kubernetes.io/hostname": "node-7"}}`}, nil), "copies")
	c.refuse("a restore that adds CDI's import annotation to the claims", PlainUser, restore("plain", "import", nil, []any{map[string]any{"volumeName": "rootdisk", "annotations": map[string]any{"cdi.kubevirt.io/storage.import.endpoint": "https://example.com/evil.qcow2"}}}), "copies")
	c.refuse("a restore that takes the claims out of backups", PlainUser, restore("plain", "nobackup", nil, []any{map[string]any{"volumeName": "rootdisk", "labels": map[string]any{"velero.io/exclude-from-backup": "true"}}}), "copies")
	c.refuse("a clone with patches", PlainUser, clone("plain", "patched", []any{`{"op": "replace", "path": "/spec/template/spec/domain/cpu", "value": {"dedicatedCpuPlacement": true}}`}), "copies")
}

// disks: disks and claims.
func (c *cases) disks() {
	c.refuse("a DataVolume from a URL", PlainUser, dataVolume("plain", "url", map[string]any{"http": map[string]any{"url": "https://example.com/evil.qcow2"}}, "ocs-external-storagecluster-ceph-rbd"), "image-source")
	c.refuse("a DataVolume from a registry image the catalog does not pin", PlainUser, dataVolume("plain", "reg", map[string]any{"registry": map[string]any{"url": "docker://quay.io/evil/disk:latest"}}, "ocs-external-storagecluster-ceph-rbd"), "image-source")
	c.refuse("a DataVolume cloning another tenant's claim", PlainUser, dataVolume("plain", "steal", map[string]any{"pvc": map[string]any{"namespace": "lab", "name": "build01-root"}}, "ocs-external-storagecluster-ceph-rbd"), "image-source")
	c.refuse("a DataVolume on a class it may not use", PlainUser, dataVolume("plain", "sc", map[string]any{"blank": map[string]any{}}, "lvms-vg1"), "storage-class")
	c.refuse("a DataVolume with CDI's import annotation", PlainUser, with(dataVolume("plain", "ann", map[string]any{"blank": map[string]any{}}, "ocs-external-storagecluster-ceph-rbd"), "metadata.annotations", map[string]any{"cdi.kubevirt.io/storage.import.endpoint": "https://example.com/evil.qcow2"}), "cdi-annotations")
	c.refuse("a claim on a class it may not use", PlainUser, claim("plain", "sc", "lvms-vg1", nil, nil), "storage-class")
	c.refuse("a claim CDI fills from a URL (annotation)", PlainUser, claim("plain", "imp", "ocs-external-storagecluster-ceph-rbd", map[string]any{"cdi.kubevirt.io/storage.import.endpoint": "https://example.com/evil.qcow2"}, nil), "cdi-annotations")
	c.refuse("a claim filled by a VolumeImportSource", PlainUser, claim("plain", "pop", "ocs-external-storagecluster-ceph-rbd", nil, map[string]any{"apiGroup": "cdi.kubevirt.io", "kind": "VolumeImportSource", "name": "evil"}), "claim-source")
	c.refuse("a claim cloning another tenant's claim", PlainUser, claim("plain", "steal", "ocs-external-storagecluster-ceph-rbd", nil, map[string]any{"kind": "PersistentVolumeClaim", "name": "build01-root", "namespace": "lab"}), "claim-source")
	c.refuse("a claim bound to an existing volume and its data", PlainUser, with(claim("plain", "bind", "ocs-external-storagecluster-ceph-rbd", nil, nil), "spec.volumeName", "pvc-3f1e-other-tenant"), "claim-source")
	c.refuse("a claim larger than the platform allows", PlainUser, with(claim("plain", "big", "ocs-external-storagecluster-ceph-rbd", nil, nil), "spec.resources.requests.storage", "32Ti"), "disk-limits")
	cloned := cdiClonedClaim("plain", "web01-root")
	c.refuseUpdate("a claim grown beyond what the platform allows", PlainUser, cloned, with(cloned, "spec.resources.requests.storage", "17Ti"), "disk-limits")
	c.refuseUpdate("a claim given CDI's import annotation", PlainUser, cloned, with(cloned, "metadata.annotations.cdi\\.kubevirt\\.io/storage\\.import\\.endpoint", "https://example.com/evil.qcow2"), "cdi-annotations")
	c.refuseUpdate("a claim taken out of backups", PlainUser, cloned, with(cloned, "metadata.labels.velero\\.io/exclude-from-backup", "true"), "backup")
	c.admitUpdate("the tenant grows its root disk, a claim CDI cloned (virtc diff's advice)", PlainUser, cloned, with(cloned, "spec.resources.requests.storage", "60Gi"))
	c.admitUpdate("a cluster-admin grows the same claim", ClusterAdmin, cloned, with(cloned, "spec.resources.requests.storage", "60Gi"))
	c.admitUpdate("the tenant labels a claim CDI cloned", PlainUser, cloned, with(cloned, "metadata.labels.team", "blue"))
}

// networks: network attachments and user-defined networks.
func (c *cases) networks() {
	c.refuse("a network attachment of its own", PlainUser, with(without(c.nad, "metadata.resourceVersion"), "metadata.namespace", "plain"), "network-attachment")
	c.refuseUpdate("the network attachment virtc writes, changed", LabUser, c.nad, with(c.nad, "spec.config", strings.Replace(get(c.nad, "spec.config").(string), `"vlan":120`, `"vlan":1`, 1)), "network-attachment")
	c.refuse("a UserDefinedNetwork of its own", PlainUser, kind("k8s.ovn.org/v1", "UserDefinedNetwork", "plain", "mine", map[string]any{"topology": "Layer2", "layer2": map[string]any{"role": "Secondary", "subnets": []any{"10.200.0.0/16"}}}), "user-defined-network")
}

// writers: who writes. The guardrails judge everyone but the controllers
// that write for the tenant from what was judged.
func (c *cases) writers() {
	content := snapshotContent("plain", "web01-snap-content", c.web)
	cloned := cdiClonedClaim("plain", "web01-root")
	c.refuse("a cluster-admin's priorityClassName", ClusterAdmin, with(c.web, c.tmpl+".priorityClassName", "openshift-user-critical"), "template-fields")
	c.refuse("Argo CD writing a VM with a GPU (a repository outside virtc)", ArgoCD, with(c.web, c.tmpl+".domain.devices.gpus", []any{map[string]any{"name": "g", "deviceName": "nvidia.com/A100"}}), "devices")
	c.refuse("the tenant's own service account", TenantSA, vmi("plain", "bot"), "workload-kind")
	c.admit("KubeVirt's controller creates the DataVolume of a template", VirtController, dataVolume("plain", "web01-root", map[string]any{"pvc": map[string]any{"namespace": "openshift-virtualization-os-images", "name": "rhel9-a1b2c3"}}, "ocs-external-storagecluster-ceph-rbd"))
	c.admit("KubeVirt's controller writes a snapshot content", VirtController, content)
	c.admit("KubeVirt's controller restores the VM a content holds", VirtController, c.vm("restored", nil))
	c.admit("virt-handler updates a VMI", VirtHandler, vmi("plain", "web01"))
	c.admit("CDI's controller creates a clone's claim (populator and annotations)", CDI, cloned)
	c.admit("kube-controller-manager binds a claim (volumeName)", PVBinder, with(claim("plain", "bound", "ocs-external-storagecluster-ceph-rbd", nil, nil), "spec.volumeName", "pvc-0a1b"))
	c.admit("Velero restores a VM as it was backed up", Velero, with(c.vm("restored", nil), "metadata.labels.velero\\.io/restore-name", "web01-restore"))
	mtvVM, mtvDV, mtvClaim := mtvMigration("plain", "legacy01")
	c.admit("MTV's controller creates a migrated VM (no instance type)", Forklift, mtvVM)
	c.admit("MTV's controller creates a VDDK DataVolume", Forklift, mtvDV)
	c.admit("MTV's controller creates a populator claim", Forklift, mtvClaim)
	c.admitUpdate("a tenant starts a VM MTV migrated (its fields kept)", PlainUser, mtvVM, with(mtvVM, "spec.runStrategy", "Always"))
	c.refuseUpdate("a tenant adds a field to a VM MTV migrated", PlainUser, mtvVM, with(mtvVM, c.tmpl+".priorityClassName", "openshift-user-critical"), "template-fields")
	c.admit("OVN-Kubernetes creates the attachment of a ClusterUserDefinedNetwork", OVNKubernetes, cudnAttachment("plain", "tenant-l2"))
}

// The objects the cases write.

func kind(apiVersion, kind, namespace, name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": namespace}, "spec": spec}
}

func vmi(namespace, name string) map[string]any {
	return kind("kubevirt.io/v1", "VirtualMachineInstance", namespace, name, map[string]any{"domain": map[string]any{"devices": map[string]any{}, "memory": map[string]any{"guest": "1Gi"}}})
}

func dataVolume(namespace, name string, source map[string]any, class string) map[string]any {
	return kind("cdi.kubevirt.io/v1beta1", "DataVolume", namespace, name, map[string]any{
		"source":  source,
		"storage": map[string]any{"storageClassName": class, "resources": map[string]any{"requests": map[string]any{"storage": "10Gi"}}},
	})
}

func claim(namespace, name, class string, annotations, dataSourceRef map[string]any) map[string]any {
	c := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"accessModes": []any{"ReadWriteMany"}, "storageClassName": class,
			"resources": map[string]any{"requests": map[string]any{"storage": "10Gi"}},
		}}
	if annotations != nil {
		c["metadata"].(map[string]any)["annotations"] = annotations
	}
	if dataSourceRef != nil {
		c["spec"].(map[string]any)["dataSourceRef"] = dataSourceRef
	}
	return c
}

// cdiClonedClaim is the claim of a VM's root disk as CDI v1.65.0 writes it
// for a DataVolume that clones a DataSource with the CSI or smart clone
// populator (pkg/controller/datavolume/pvc-clone-controller.go and
// clone-controller-base.go: dataSourceRef to a VolumeCloneSource, the
// DataVolume's labels and annotations copied, CDI's own annotations).
func cdiClonedClaim(namespace, name string) map[string]any {
	c := claim(namespace, name, "ocs-external-storagecluster-ceph-rbd", map[string]any{
		"cdi.kubevirt.io/createdForDataVolume":            "7c0f5f4e-1111-4b6a-9c1e-0d2f2b7f9a01",
		"cdi.kubevirt.io/storage.contentType":             "kubevirt",
		"cdi.kubevirt.io/storage.pod.phase":               "Succeeded",
		"cdi.kubevirt.io/storage.populator.progress":      "100.0%",
		"cdi.kubevirt.io/storage.preallocation.requested": "false",
		"cdi.kubevirt.io/storage.usePopulator":            "true",
		"cdi.kubevirt.io/cloneType":                       "csi-clone",
	}, map[string]any{"apiGroup": "cdi.kubevirt.io", "kind": "VolumeCloneSource", "name": "volume-clone-source-7c0f5f4e-1111-4b6a-9c1e-0d2f2b7f9a01"})
	c["metadata"].(map[string]any)["labels"] = map[string]any{"app": "containerized-data-importer", "app.kubernetes.io/managed-by": "virtc", "virtc.dev/vm": "web01", "virtc.dev/backup-policy": "daily"}
	c["spec"].(map[string]any)["dataSource"] = map[string]any{"apiGroup": "cdi.kubevirt.io", "kind": "VolumeCloneSource", "name": "volume-clone-source-7c0f5f4e-1111-4b6a-9c1e-0d2f2b7f9a01"}
	c["spec"].(map[string]any)["volumeMode"] = "Block"
	c["spec"].(map[string]any)["volumeName"] = "pvc-7c0f5f4e-1111-4b6a-9c1e-0d2f2b7f9a01"
	c["spec"].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"storage": "30Gi"}}
	return c
}

func restore(namespace, name string, patches, overrides []any) map[string]any {
	spec := map[string]any{
		"target":                     map[string]any{"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": "web01"},
		"virtualMachineSnapshotName": "web01-snap",
	}
	if patches != nil {
		spec["patches"] = patches
	}
	if overrides != nil {
		spec["volumeRestoreOverrides"] = overrides
	}
	return kind("snapshot.kubevirt.io/v1beta1", "VirtualMachineRestore", namespace, name, spec)
}

func clone(namespace, name string, patches []any) map[string]any {
	spec := map[string]any{
		"source": map[string]any{"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": "web01"},
		"target": map[string]any{"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": name + "-vm"},
	}
	if patches != nil {
		spec["patches"] = patches
	}
	return kind("clone.kubevirt.io/v1beta1", "VirtualMachineClone", namespace, name, spec)
}

// snapshotContent is a VirtualMachineSnapshotContent as KubeVirt v1.8.4's
// snapshot controller writes it (pkg/storage/snapshot/snapshot.go): the VM
// whole in spec.source.virtualMachine.
func snapshotContent(namespace, name string, vm map[string]any) map[string]any {
	return kind("snapshot.kubevirt.io/v1beta1", "VirtualMachineSnapshotContent", namespace, name, map[string]any{
		"virtualMachineSnapshotName": "web01-snap",
		"source": map[string]any{"virtualMachine": map[string]any{
			"metadata": get(vm, "metadata"), "spec": get(vm, "spec"),
		}},
		"volumeBackups": []any{map[string]any{"volumeName": "rootdisk", "volumeSnapshotName": "vmsnapshot-web01-rootdisk",
			"persistentVolumeClaim": map[string]any{"metadata": map[string]any{"name": "web01-root"}, "spec": map[string]any{"accessModes": []any{"ReadWriteMany"}, "resources": map[string]any{"requests": map[string]any{"storage": "30Gi"}}, "storageClassName": "ocs-external-storagecluster-ceph-rbd"}}}},
	})
}

// mtvMigration are a VM, its VDDK DataVolume and a populator claim as
// forklift v2.12.5's plan controller writes them into the target namespace
// (pkg/controller/plan/kubevirt.go: the VM with the source's CPU and
// memory and no instance type, DataVolumes with a vddk source and the
// importer's service account, claims whose dataSourceRef names a
// populator CR).
func mtvMigration(namespace, name string) (vm, dv, pvc map[string]any) {
	vm = kind("kubevirt.io/v1", "VirtualMachine", namespace, name, map[string]any{
		"runStrategy": "Halted",
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name}},
			"spec": map[string]any{
				"domain": map[string]any{
					"cpu":      map[string]any{"sockets": 2, "cores": 1, "threads": 1},
					"memory":   map[string]any{"guest": "8Gi"},
					"firmware": map[string]any{"bootloader": map[string]any{"bios": map[string]any{}}, "serial": "4c4c4544-0052-3510-8039-b3c04f565231"},
					"features": map[string]any{"acpi": map[string]any{}},
					"devices": map[string]any{
						"disks":                  []any{map[string]any{"name": "vol-0", "disk": map[string]any{"bus": "virtio"}}},
						"interfaces":             []any{map[string]any{"name": "net-0", "masquerade": map[string]any{}, "macAddress": "00:50:56:a1:b2:c3", "model": "virtio"}},
						"autoattachPodInterface": false,
					},
					"machine": map[string]any{"type": "q35"},
				},
				"networks": []any{map[string]any{"name": "net-0", "pod": map[string]any{}}},
				"volumes":  []any{map[string]any{"name": "vol-0", "persistentVolumeClaim": map[string]any{"claimName": name + "-disk-0"}}},
			},
		},
	})
	dv = kind("cdi.kubevirt.io/v1beta1", "DataVolume", namespace, name+"-disk-0", map[string]any{
		"source":  map[string]any{"vddk": map[string]any{"backingFile": "[datastore1] legacy01/legacy01.vmdk", "url": "https://vcenter.example.com/sdk", "uuid": "4210a1b2", "thumbprint": "AA:BB", "secretRef": "legacy01-vddk", "initImageURL": "quay.io/example/vddk:8"}},
		"storage": map[string]any{"storageClassName": "ocs-external-storagecluster-ceph-rbd", "resources": map[string]any{"requests": map[string]any{"storage": "40Gi"}}},
	})
	dv["metadata"].(map[string]any)["annotations"] = map[string]any{"cdi.kubevirt.io/storage.pod.serviceAccountName": "forklift-importer", "cdi.kubevirt.io/storage.bind.immediate.requested": "true"}
	pvc = claim(namespace, name+"-disk-1", "ocs-external-storagecluster-ceph-rbd", nil, map[string]any{"apiGroup": "forklift.konveyor.io", "kind": "OvirtVolumePopulator", "name": name + "-disk-1"})
	return vm, dv, pvc
}

// cudnAttachment is the NetworkAttachmentDefinition OVN-Kubernetes writes
// for a ClusterUserDefinedNetwork in each namespace it selects
// (go-controller/pkg/clustermanager/userdefinednetwork/template,
// RenderNetAttachDefManifest).
func cudnAttachment(namespace, name string) map[string]any {
	n := kind("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", namespace, name, map[string]any{
		"config": fmt.Sprintf(`{"cniVersion":"1.0.0","name":"cluster_udn_%s","type":"ovn-k8s-cni-overlay","netAttachDefName":"%s/%s","role":"secondary","topology":"localnet","physicalNetworkName":"physnet-dc"}`, name, namespace, name),
	})
	n["metadata"].(map[string]any)["labels"] = map[string]any{"k8s.ovn.org/user-defined-network": ""}
	n["metadata"].(map[string]any)["finalizers"] = []any{"k8s.ovn.org/user-defined-network-protection"}
	n["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "k8s.ovn.org/v1", "kind": "ClusterUserDefinedNetwork", "name": name, "uid": "0d5c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "controller": true, "blockOwnerDeletion": true}}
	return n
}

// Editing objects: dotted paths, with \. for a dot inside a key.

func splitPath(path string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '\\' && i+1 < len(path):
			i++
			cur.WriteByte(path[i])
		case path[i] == '.':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(path[i])
		}
	}
	return append(out, cur.String())
}

func get(obj map[string]any, path string) any {
	var cur any = obj
	for _, p := range splitPath(path) {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// with is a copy of obj with value at path (maps made as needed).
func with(obj map[string]any, path string, value any) map[string]any {
	out := deepCopy(obj)
	parts := splitPath(path)
	m := out
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	if v, ok := value.(map[string]any); ok {
		value = deepCopy(v)
	}
	m[parts[len(parts)-1]] = value
	return out
}

// without is a copy of obj without the field at path.
func without(obj map[string]any, path string) map[string]any {
	out := deepCopy(obj)
	parts := splitPath(path)
	m := out
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return out
		}
		m = next
	}
	delete(m, parts[len(parts)-1])
	return out
}

// appendTo is a copy of obj with entry appended to the list at path.
func appendTo(obj map[string]any, path string, entry any) map[string]any {
	l, _ := get(obj, path).([]any)
	return with(obj, path, append(slices.Clone(l), entry))
}

// rename gives a copy of a VM another name (and its root disk's).
func rename(v map[string]any, name string) {
	v["metadata"] = map[string]any{"name": name, "namespace": get(v, "metadata.namespace"), "labels": get(v, "metadata.labels")}
}

// withNetwork adds an interface and its multus network to a VM.
func withNetwork(v map[string]any, name string, binding map[string]any, networkName string) map[string]any {
	iface := map[string]any{"name": name}
	for k, x := range binding {
		iface[k] = x
	}
	out := appendTo(v, "spec.template.spec.domain.devices.interfaces", iface)
	return appendTo(out, "spec.template.spec.networks", map[string]any{"name": name, "multus": map[string]any{"networkName": networkName}})
}

// withDataDisks is a VM with n data disks (claims) beside its root disk.
func withDataDisks(v map[string]any, n int) map[string]any {
	out := v
	for i := range n {
		name := fmt.Sprintf("data%d", i)
		out = appendTo(out, "spec.template.spec.domain.devices.disks", map[string]any{"name": name, "disk": map[string]any{}})
		out = appendTo(out, "spec.template.spec.volumes", map[string]any{"name": name, "persistentVolumeClaim": map[string]any{"claimName": name}})
	}
	return out
}
