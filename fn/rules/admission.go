package rules

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtc/virtc/fn/model"
	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/rules/secret"
)

// A tenant's guardrails hold in the cluster too: one
// ValidatingAdmissionPolicy per tenant (and its binding,
// validatingadmissionpolicybinding.go) refuses, in the tenant's namespace,
// what a compile refuses in Git, so a tenant who goes around Git (the
// console, kubectl, with the edit and kubevirt.io:edit roles virtc grants)
// meets the same rule with the same message. The API server evaluates it
// (CEL): no webhook to run or keep available.
//
// One policy per tenant, its allowances inlined as variables at the top:
// a tenant's allowance change is a diff of one line of that tenant's
// policy, and the objects are two per tenant. Per-tenant parameters
// (paramKind) were not chosen: parameters in the tenant's namespace (a
// ConfigMap) are writable by the tenant's edit role, so they would guard
// nothing, and parameters elsewhere need a binding per tenant anyway.

// Exempt are the users whose writes the guardrails do not judge: the
// controllers that create and update objects in a tenant's namespace on
// its behalf, from objects that the guardrails already judged or that
// only the platform team can create. HCO v1.18.1 deploys KubeVirt and CDI
// into its own namespace (virtc installs it into openshift-cnv, see
// platform.go), where their service accounts are:
//   - kubevirt-controller: virt-controller creates DataVolumes from a VM's
//     dataVolumeTemplates, VirtualMachineInstances from VMs, the VM-state
//     PVCs of persistent EFI/TPM, snapshot contents and restores, and
//     writes VMs' spec.instancetype.revisionName (KubeVirt v1.8.4
//     pkg/virt-operator/resource/generate/components/serviceaccountnames.go,
//     ControllerServiceAccountName);
//   - kubevirt-apiserver: virt-api's subresources (start, stop, addvolume,
//     removevolume) patch the VM (ApiServiceAccountName, same file);
//   - cdi-sa: CDI's controller creates the PVCs of DataVolumes and their
//     clone and import scratch/temp claims (containerized-data-importer
//     v1.65.0 pkg/operator/resources/cluster/controller.go,
//     controllerServiceAccountName);
//   - velero in openshift-adp: OADP restores (virtc's Restores, which only
//     the platform team may create) re-create VMs, DataVolumes and claims
//     as they were backed up, with Velero's restore annotations.
var Exempt = []string{
	"system:serviceaccount:" + model.CNVNamespace + ":kubevirt-controller",
	"system:serviceaccount:" + model.CNVNamespace + ":kubevirt-apiserver",
	"system:serviceaccount:" + model.CNVNamespace + ":cdi-sa",
	"system:serviceaccount:" + model.OADPNamespace + ":velero",
}

// ExemptNamespaces are namespaces whose every service account is exempt,
// besides Exempt: no tenant can create one there, and the components that
// run there update objects in a tenant's namespace as part of their work,
// with whole-object updates the rules would judge again: virt-handler
// (kubevirt-handler in openshift-cnv) updates VMIs
// (KubeVirt v1.8.4 pkg/virt-handler/vm.go: VirtualMachineInstance.Update;
// the VMI CRD has no status subresource), and kube-controller-manager's
// controllers in kube-system (with --use-service-account-credentials, as
// OpenShift runs it) bind claims (persistent-volume-binder sets
// spec.volumeName: pkg/controller/volume/persistentvolume/pv_controller.go),
// remove finalizers (pvc-protection-controller) and owner references
// (generic-garbage-collector).
var ExemptNamespaces = []string{"kube-system", model.CNVNamespace}

// exemptCondition is the policy's matchCondition: the writer is none of
// the exempt, and not a control-plane component or node authenticated as
// a system: user that is not a service account (system:kube-scheduler
// writes a claim's selected-node annotation, system:kube-controller-manager,
// system:node:<name>); system:anonymous stays judged.
func exemptCondition() string {
	u := "request.userInfo.username"
	var or []string
	or = append(or, u+" in "+celList(Exempt))
	for _, ns := range ExemptNamespaces {
		or = append(or, u+".startsWith("+celString("system:serviceaccount:"+ns+":")+")")
	}
	or = append(or, "("+u+".startsWith('system:') && !"+u+".startsWith('system:serviceaccount:') && "+u+" != 'system:anonymous')")
	return "!(" + strings.Join(or, " || ") + ")"
}

// Rule is one guardrail: a CEL validation of the tenant's policy.
type Rule struct {
	// Name names the rule in its message and in virtc report.
	Name string
	// What says what it refuses, for people (virtc report).
	What string
	// Expression is true for an object the rule admits.
	Expression string
	// Message is the message's CEL expression (the values that matter).
	Message string
}

// cdiImportAnnotations are the PersistentVolumeClaim annotations that make
// CDI import, upload or clone data into a claim that carries them, with no
// DataVolume (containerized-data-importer v1.65.0
// pkg/controller/common/util.go, AnnEndpoint, AnnSource, AnnUploadRequest,
// AnnCloneRequest; pkg/controller/import-controller.go reconciles every
// claim with AnnEndpoint or AnnSource): a tenant's claim with them would
// bring in any image.
var cdiImportAnnotations = []string{
	"cdi.kubevirt.io/storage.import.endpoint",
	"cdi.kubevirt.io/storage.import.source",
	"cdi.kubevirt.io/storage.upload.target",
	"k8s.io/CloneRequest",
}

// guardedResources are what the policy matches: the kinds a tenant could
// write around Git.
var guardedResources = []struct {
	group     string
	resources []string
}{
	{"", []string{"persistentvolumeclaims"}},
	{"cdi.kubevirt.io", []string{"dataimportcrons", "datavolumes", "volumeimportsources", "volumeuploadsources"}},
	{"clone.kubevirt.io", []string{"virtualmachineclones"}},
	{"k8s.cni.cncf.io", []string{"network-attachment-definitions"}},
	{"kubevirt.io", []string{"virtualmachineinstancereplicasets", "virtualmachineinstances", "virtualmachines"}},
	{"pool.kubevirt.io", []string{"virtualmachinepools"}},
	{"snapshot.kubevirt.io", []string{"virtualmachinerestores"}},
}

// Rules are the guardrails, in the order the policy lists them. Each reads
// the policy's variables (guardrailVariables): the object's parts and the
// tenant's allowances.
var Rules = []Rule{
	{
		Name:       "workload-kind",
		What:       "VMs only as VirtualMachines (no VirtualMachineInstance, replica set or pool of a tenant's own)",
		Expression: `!(request.resource.resource in ['virtualmachineinstances', 'virtualmachineinstancereplicasets', 'virtualmachinepools'])`,
		Message:    `'virtc guardrail workload-kind: ' + variables.where + ': tenant ' + variables.tenant + ' runs VMs only as VirtualMachines, which its guardrails judge (declare the VM in Git: virtc writes its VirtualMachine)'`,
	},
	{
		Name:       "import-source",
		What:       "no import of the tenant's own: no DataImportCron, VolumeImportSource or VolumeUploadSource (CDI's edit role grants them; their imports run as CDI)",
		Expression: `!(request.resource.group == 'cdi.kubevirt.io' && request.resource.resource in ['dataimportcrons', 'volumeimportsources', 'volumeuploadsources'])`,
		Message:    `'virtc guardrail import-source: ' + variables.where + ': tenant ' + variables.tenant + ' imports no image of its own (the platform team adds images to the catalog, whose golden images its VMs clone: ' + variables.dataSources.join(', ') + ')'`,
	},
	{
		Name:       "image-source",
		What:       "disks only from the catalog's images: the DataSource of an image the tenant may use, its pinned registry source, a blank disk or a copy of the tenant's own claim or snapshot (a dataVolumeTemplate the VM already has, unchanged, is not judged again)",
		Expression: `variables.newDiskSpecs.all(s, has(s.sourceRef) ? (has(s.sourceRef.kind) && s.sourceRef.kind == 'DataSource' && (has(s.sourceRef.namespace) ? s.sourceRef.namespace : request.namespace) + '/' + s.sourceRef.name in variables.dataSources) : has(s.source) && (has(s.source.blank) || has(s.source.registry) && has(s.source.registry.url) && s.source.registry.url in variables.registries || has(s.source.pvc) && (!has(s.source.pvc.namespace) || s.source.pvc.namespace == request.namespace) || has(s.source.snapshot) && (!has(s.source.snapshot.namespace) || s.source.snapshot.namespace == request.namespace)))`,
		Message:    `'virtc guardrail image-source: ' + variables.where + ': a disk source that is not in the catalog: tenant ' + variables.tenant + ' may clone only the DataSources of the images it may use (' + variables.dataSources.join(', ') + ')' + (size(variables.registries) > 0 ? ' or import their pinned registry sources (' + variables.registries.join(', ') + ')' : '') + ', or use a blank disk or a copy of its own claim or snapshot'`,
	},
	{
		Name:       "container-disks",
		What:       "containerDisk volumes (CD-ROMs) only of the catalog's ContainerDisks the tenant may use: approved, digest-pinned images (KubeVirt v1.8.4 pulls a containerDisk into the VM's launcher pod, pkg/container-disk/container-disk.go)",
		Expression: `!variables.vm || variables.volumes.all(v, !has(v.containerDisk) || has(v.containerDisk.image) && v.containerDisk.image in variables.containerDisks)`,
		Message:    `'virtc guardrail container-disks: ' + variables.where + ': containerDisk ' + variables.volumes.filter(v, has(v.containerDisk) && !(has(v.containerDisk.image) && v.containerDisk.image in variables.containerDisks)).map(v, v.name + ' (' + (has(v.containerDisk.image) ? v.containerDisk.image : 'no image') + ')').join(', ') + ' is not a container disk tenant ' + variables.tenant + ' may use (' + (size(variables.containerDisks) > 0 ? variables.containerDisks.join(', ') : 'none: the platform team approves one as a ContainerDisk of the catalog') + ')'`,
	},
	{
		Name:       "storage-class",
		What:       "disks and claims only on the storage classes of the storage profiles the tenant may use (a dataVolumeTemplate the VM already has, unchanged, is not judged again)",
		Expression: `variables.newDiskSpecs.all(s, (has(s.storage) && has(s.storage.storageClassName) ? s.storage.storageClassName : has(s.pvc) && has(s.pvc.storageClassName) ? s.pvc.storageClassName : '') in variables.storageClasses) && (!variables.pvc || has(object.spec.storageClassName) && object.spec.storageClassName in variables.storageClasses)`,
		Message:    `'virtc guardrail storage-class: ' + variables.where + ': storage class ' + (variables.pvc ? (has(object.spec.storageClassName) ? object.spec.storageClassName : '(none)') : variables.newDiskSpecs.map(s, has(s.storage) && has(s.storage.storageClassName) ? s.storage.storageClassName : has(s.pvc) && has(s.pvc.storageClassName) ? s.pvc.storageClassName : '(none)').filter(c, !(c in variables.storageClasses)).join(', ')) + ' is not one of the storage profiles tenant ' + variables.tenant + ' may use (storage classes: ' + variables.storageClasses.join(', ') + '; a disk names its class explicitly)'`,
	},
	{
		Name:       "claim-source",
		What:       "claims with no data source but the tenant's own claims and snapshots, and no CDI import, upload or clone annotation",
		Expression: `!variables.pvc || (!has(object.spec.dataSourceRef) || ` + ownData("object.spec.dataSourceRef", true) + `) && (!has(object.spec.dataSource) || ` + ownData("object.spec.dataSource", false) + `) && (!has(object.metadata.annotations) || !object.metadata.annotations.exists(k, k in variables.cdiImportAnnotations))`,
		Message:    `'virtc guardrail claim-source: ' + variables.where + ': a claim fills only from the tenant\'s own claims or snapshots: not from a data source of another kind or namespace, nor through CDI\'s annotations ' + variables.cdiImportAnnotations.join(', ') + ' (tenant ' + variables.tenant + ' creates disks from the catalog\'s images: declare them in Git)'`,
	},
	{
		Name:       "instancetype",
		What:       "only the sizes (cluster instance types) the tenant may use",
		Expression: `!variables.vm || (has(object.spec.instancetype) ? (!has(object.spec.instancetype.kind) || object.spec.instancetype.kind in ['VirtualMachineClusterInstancetype', 'virtualmachineclusterinstancetype']) && object.spec.instancetype.name in variables.sizes : has(variables.domain.memory) && has(variables.domain.memory.guest) && variables.inlineSizes.exists(z, variables.inlineSizes[z] == string(has(variables.cpu.sockets) ? variables.cpu.sockets : 0) + '/' + string(has(variables.cpu.cores) ? variables.cpu.cores : 0) + '/' + string(has(variables.cpu.threads) ? variables.cpu.threads : 0) + '/' + string(variables.domain.memory.guest)))`,
		Message:    `'virtc guardrail instancetype: ' + variables.where + ': spec.instancetype: ' + (has(object.spec.instancetype) ? (has(object.spec.instancetype.kind) ? object.spec.instancetype.kind + ' ' : '') + object.spec.instancetype.name : 'none') + ' is not a size tenant ' + variables.tenant + ' may use (allowed: ' + variables.sizes.join(', ') + (size(variables.inlineSizes) > 0 ? '; inline: ' + variables.inlineSizes.map(z, z + ' (' + variables.inlineSizes[z] + ')').join(', ') : '') + ')'`,
	},
	{
		Name:       "preference",
		What:       "only the preferences (cluster preferences) of the images the tenant may use",
		Expression: `!variables.vm || !has(object.spec.preference) || (!has(object.spec.preference.kind) || object.spec.preference.kind in ['VirtualMachineClusterPreference', 'virtualmachineclusterpreference']) && object.spec.preference.name in variables.preferences`,
		Message:    `'virtc guardrail preference: ' + variables.where + ': spec.preference: ' + (has(object.spec.preference.kind) ? object.spec.preference.kind + ' ' : '') + object.spec.preference.name + ' is not the preference of an image tenant ' + variables.tenant + ' may use (allowed: ' + variables.preferences.join(', ') + ')'`,
	},
	{
		Name:       "devices",
		What:       "GPUs and host devices only of the resource names the tenant's spec.allow.devices names",
		Expression: `!variables.vm || variables.gpus.all(d, variables.devices.exists(r, d.deviceName.matches(r))) && variables.hostDevices.all(d, variables.devices.exists(r, d.deviceName.matches(r)))`,
		Message:    `'virtc guardrail devices: ' + variables.where + ': device ' + (variables.gpus + variables.hostDevices).map(d, d.deviceName).filter(n, !variables.devices.exists(r, n.matches(r))).join(', ') + ': tenant ' + variables.tenant + (size(variables.devices) == 0 ? ' allows no devices (a platform team entitles it in the tenant\'s spec.allow.devices)' : ' does not allow it (spec.allow.devices: ' + variables.allowDevices + ')')`,
	},
	{
		Name:       "networks",
		What:       "only the additional networks the tenant's spec.allow.networks lists (the pod network always)",
		Expression: `!variables.vm || variables.networks.all(n, !has(n.multus) || n.multus.networkName in variables.allowedNetworks)`,
		Message:    `'virtc guardrail networks: ' + variables.where + ': network ' + variables.networks.filter(n, has(n.multus) && !(n.multus.networkName in variables.allowedNetworks)).map(n, n.multus.networkName).join(', ') + ' is not an additional network tenant ' + variables.tenant + ' may use (' + (size(variables.allowedNetworks) == 0 ? 'it allows none: the pod network only' : 'allowed: ' + variables.allowedNetworks.filter(k, !k.contains('/')).join(', ')) + ')'`,
	},
	{
		Name:       "sriov",
		What:       "SR-IOV interfaces only on an SR-IOV network profile the tenant may use",
		Expression: `!variables.vm || variables.interfaces.all(i, !has(i.sriov) || variables.networks.exists(n, n.name == i.name && has(n.multus) && n.multus.networkName in variables.allowedNetworks && variables.allowedNetworks[n.multus.networkName] == 'sriov'))`,
		Message:    `'virtc guardrail sriov: ' + variables.where + ': interface ' + variables.interfaces.filter(i, has(i.sriov)).map(i, i.name).join(', ') + ' is SR-IOV but not on an SR-IOV network tenant ' + variables.tenant + ' may use (' + (variables.allowedNetworks.exists(k, variables.allowedNetworks[k] == 'sriov') ? 'allowed: ' + variables.allowedNetworks.filter(k, !k.contains('/') && variables.allowedNetworks[k] == 'sriov').join(', ') : 'it allows none') + ')'`,
	},
	{
		Name:       "placement",
		What:       "node selector and tolerations only exactly those of a worker pool the tenant may use, no node affinity or pod affinity of its own",
		Expression: `!variables.vm || variables.poolSelectors.exists(p, size(variables.nodeSelector) == size(variables.poolSelectors[p]) && variables.nodeSelector.all(k, k + '=' + variables.nodeSelector[k] in variables.poolSelectors[p]) && variables.tolerationKeys.all(k, k in variables.poolTolerations[p])) && (!has(variables.spec.affinity) || !has(variables.spec.affinity.nodeAffinity) && !has(variables.spec.affinity.podAffinity))`,
		Message:    `'virtc guardrail placement: ' + variables.where + ': spec.template.spec: node selector ' + variables.nodeSelector.map(k, k + '=' + variables.nodeSelector[k]).join(', ') + ', tolerations ' + variables.tolerationKeys.join(', ') + (has(variables.spec.affinity) && (has(variables.spec.affinity.nodeAffinity) || has(variables.spec.affinity.podAffinity)) ? ' and a node or pod affinity' : '') + ' go beyond the worker pools tenant ' + variables.tenant + ' may use (' + variables.poolSelectors.map(p, (p == '' ? 'no pool' : p) + ': node selector ' + variables.poolSelectors[p].join(', ') + ', tolerations ' + variables.poolTolerations[p].join(', ')).join('; ') + ')'`,
	},
	{
		Name:       "cloud-init-secrets",
		What:       "no secret material in inline cloud-init data (the patterns virtc's compile refuses); base64 data only as virtc writes it for the tenant's VMs",
		Expression: `!variables.vm || variables.cloudInitTexts.all(d, !variables.secretPatterns.exists(p, d.matches(p.re))) && variables.cloudInitBase64Data.all(d, d in variables.cloudInitBase64)`,
		Message:    `'virtc guardrail cloud-init-secrets: ' + variables.where + ': ' + (variables.cloudInitBase64Data.all(d, d in variables.cloudInitBase64) ? 'inline cloud-init holds ' + variables.secretPatterns.filter(p, variables.cloudInitTexts.exists(d, d.matches(p.re))).map(p, p.what).join(', ') + ': secrets must not be in Git or in the VM' : 'inline cloud-init in base64, which the guardrail cannot read: only the base64 data of the tenant\'s VMs as virtc writes them is admitted') + ' (put the user data in a Secret and name it in userDataSecretRef)'`,
	},
	{
		Name:       "eviction",
		What:       "an eviction strategy that live-migrates only for a VM that can: ReadWriteMany disks, migratable networks, no GPU or host device (a write that keeps the eviction strategy is judged on the dataVolumeTemplates it adds or changes)",
		Expression: `!variables.vm || !(has(variables.spec.evictionStrategy) && variables.spec.evictionStrategy in ['LiveMigrate', 'LiveMigrateIfPossible']) || size(variables.gpus) == 0 && size(variables.hostDevices) == 0 && variables.networks.all(n, !has(n.multus) || !(n.multus.networkName in variables.nonMigratableNetworks)) && (variables.evictionKept ? variables.newDiskSpecs : variables.diskSpecs).all(s, has(s.storage) && has(s.storage.accessModes) ? 'ReadWriteMany' in s.storage.accessModes : has(s.pvc) && has(s.pvc.accessModes) ? 'ReadWriteMany' in s.pvc.accessModes : (has(s.storage) && has(s.storage.storageClassName) ? s.storage.storageClassName : '') in variables.rwxClasses)`,
		Message:    `'virtc guardrail eviction: ' + variables.where + ': evictionStrategy ' + variables.spec.evictionStrategy + ' but the VM cannot live-migrate (a GPU or host device, a network that does not allow live migration, or a disk that is not ReadWriteMany): use evictionStrategy None, as virtc writes for such a VM'`,
	},
	{
		Name:       "copy-patches",
		What:       "clones and restores of the tenant's VMs without patches (KubeVirt's controller, whose writes the guardrails do not judge, would apply them to the VM it creates)",
		Expression: `!(request.resource.resource in ['virtualmachineclones', 'virtualmachinerestores']) || !has(object.spec.patches) || size(object.spec.patches) == 0`,
		Message:    `'virtc guardrail copy-patches: ' + variables.where + ': spec.patches: KubeVirt\'s controller applies them to the VM it creates, which the guardrails of tenant ' + variables.tenant + ' do not see (copy the VM as it is, or declare the change in Git)'`,
	},
	{
		Name:       "network-attachment",
		What:       "no NetworkAttachmentDefinition of the tenant's own: only those virtc writes, as it writes them",
		Expression: `!variables.nad || object.metadata.name in variables.nads && has(object.spec) && has(object.spec.config) && object.spec.config == variables.nads[object.metadata.name]`,
		Message:    `'virtc guardrail network-attachment: ' + variables.where + ': the platform provides the network attachments of tenant ' + variables.tenant + ' (' + (size(variables.nads) == 0 ? 'none' : variables.nads.map(k, k).join(', ')) + ', as virtc writes them from the network profiles the tenant may use); a tenant creates or changes none'`,
	},
}

// guardrailVariables are the policy's variables: the tenant's allowances
// (from g), then the parts of the object the rules read.
func guardrailVariables(g Guardrails) []admissionv1.Variable {
	var patterns []string
	for _, p := range secret.Patterns {
		patterns = append(patterns, fmt.Sprintf("{'re': %s, 'what': %s}", celString(p.Pattern), celString(p.What)))
	}
	v := func(name, expr string) admissionv1.Variable {
		return admissionv1.Variable{Name: name, Expression: expr}
	}
	return []admissionv1.Variable{
		// The tenant's allowances.
		v("tenant", celString(g.Tenant)),
		v("dataSources", celList(g.DataSources)),
		v("registries", celList(g.Registries)),
		v("containerDisks", celList(g.ContainerDisks)),
		v("sizes", celList(g.Sizes)),
		v("inlineSizes", celShapes(g.InlineSizes)),
		v("preferences", celList(g.Preferences)),
		v("storageClasses", celList(g.StorageClasses)),
		v("rwxClasses", celList(g.RWXClasses)),
		v("devices", celList(g.Devices)),
		v("allowDevices", celString(strings.Join(g.AllowDevices, ", "))),
		v("allowedNetworks", celMap(g.Networks)),
		v("nonMigratableNetworks", celList(g.NonMigratableNetworks)),
		v("nads", celMap(g.NADs)),
		v("poolSelectors", celPoolLists(g.Pools, func(p PoolPlacement) []string { return p.NodeSelector })),
		v("poolTolerations", celPoolLists(g.Pools, func(p PoolPlacement) []string { return p.Tolerations })),
		v("cloudInitBase64", celList(g.CloudInitBase64)),
		// The rules' data.
		v("secretPatterns", "["+strings.Join(patterns, ", ")+"]"),
		v("cdiImportAnnotations", celList(cdiImportAnnotations)),
		// The object.
		v("vm", `request.resource.group == 'kubevirt.io' && request.resource.resource == 'virtualmachines'`),
		v("dv", `request.resource.group == 'cdi.kubevirt.io' && request.resource.resource == 'datavolumes'`),
		v("pvc", `request.resource.group == '' && request.resource.resource == 'persistentvolumeclaims'`),
		v("nad", `request.resource.group == 'k8s.cni.cncf.io'`),
		v("where", `request.kind.kind + ' ' + request.namespace + '/' + (has(object.metadata.name) ? object.metadata.name : request.name)`),
		v("spec", `variables.vm && has(object.spec.template) && has(object.spec.template.spec) ? object.spec.template.spec : {}`),
		v("domain", `has(variables.spec.domain) ? variables.spec.domain : {}`),
		v("cpu", `has(variables.domain.cpu) ? variables.domain.cpu : {}`),
		v("deviceList", `has(variables.domain.devices) ? variables.domain.devices : {}`),
		v("gpus", `has(variables.deviceList.gpus) ? variables.deviceList.gpus : []`),
		v("hostDevices", `has(variables.deviceList.hostDevices) ? variables.deviceList.hostDevices : []`),
		v("interfaces", `has(variables.deviceList.interfaces) ? variables.deviceList.interfaces : []`),
		v("networks", `has(variables.spec.networks) ? variables.spec.networks : []`),
		v("volumes", `has(variables.spec.volumes) ? variables.spec.volumes : []`),
		v("nodeSelector", `has(variables.spec.nodeSelector) ? variables.spec.nodeSelector : {}`),
		v("tolerations", `has(variables.spec.tolerations) ? variables.spec.tolerations : []`),
		v("tolerationKeys", `variables.tolerations.map(t, (has(t.key) ? t.key : '') + '|' + (has(t.operator) ? t.operator : '') + '|' + (has(t.value) ? t.value : '') + '|' + (has(t.effect) ? t.effect : ''))`),
		// diskSpecs are the DataVolume specs the rules judge: a VM's
		// dataVolumeTemplates, a DataVolume's own.
		v("diskSpecs", `variables.vm ? (has(object.spec.dataVolumeTemplates) ? object.spec.dataVolumeTemplates.map(t, t.spec) : []) : variables.dv ? [object.spec] : []`),
		// newDiskSpecs are those a write adds or changes: a VM's
		// dataVolumeTemplate it already has, unchanged, is no new disk
		// (KubeVirt created its DataVolume when it first saw it, and CDI
		// never lets a DataVolume's spec change), so where its data came
		// from and its storage class are not judged again. An adopted
		// VM keeps the template its creator wrote (the console's names no
		// storage class), and Argo CD's client-side apply keeps it on the
		// VM: judging it again would refuse the adoption itself.
		v("newDiskSpecs", `variables.vm ? (has(object.spec.dataVolumeTemplates) ? object.spec.dataVolumeTemplates.filter(t, !(oldObject != null && has(oldObject.spec) && has(oldObject.spec.dataVolumeTemplates) && oldObject.spec.dataVolumeTemplates.exists(o, o == t))).map(t, t.spec) : []) : variables.dv ? [object.spec] : []`),
		// evictionKept: the write keeps the VM's eviction strategy, so the
		// eviction rule judges only the disks it adds or changes (an
		// adopted VM's template names no access mode; its claim has the
		// one its StorageProfile gave it, which virtc's compile judged).
		v("evictionKept", `variables.vm && oldObject != null && has(oldObject.spec) && has(oldObject.spec.template) && has(oldObject.spec.template.spec) && (has(oldObject.spec.template.spec.evictionStrategy) ? oldObject.spec.template.spec.evictionStrategy : '') == (has(variables.spec.evictionStrategy) ? variables.spec.evictionStrategy : '')`),
		v("cloudInit", `variables.volumes.filter(v, has(v.cloudInitNoCloud)).map(v, v.cloudInitNoCloud) + variables.volumes.filter(v, has(v.cloudInitConfigDrive)).map(v, v.cloudInitConfigDrive)`),
		v("cloudInitBase64Data", `variables.cloudInit.filter(c, has(c.userDataBase64)).map(c, c.userDataBase64) + variables.cloudInit.filter(c, has(c.networkDataBase64)).map(c, c.networkDataBase64)`),
		v("cloudInitTexts", `variables.cloudInit.filter(c, has(c.userData)).map(c, c.userData) + variables.cloudInit.filter(c, has(c.networkData)).map(c, c.networkData)`),
	}
}

// ownData is a CEL expression true when the data source r of a claim is
// the tenant's own claim or snapshot (in its namespace).
func ownData(r string, namespaced bool) string {
	e := fmt.Sprintf("((!has(%[1]s.apiGroup) || %[1]s.apiGroup == '') && %[1]s.kind == 'PersistentVolumeClaim' || has(%[1]s.apiGroup) && %[1]s.apiGroup == 'snapshot.storage.k8s.io' && %[1]s.kind == 'VolumeSnapshot')", r)
	if namespaced {
		e += fmt.Sprintf(" && (!has(%[1]s.namespace) || %[1]s.namespace == request.namespace)", r)
	}
	return e
}

// PolicySpec is the spec of the tenant's guardrails policy: Rules over the
// tenant's Guardrails, in its namespace only (the namespace label virtc
// sets), for every writer but the controllers of Exempt.
func PolicySpec(m *resolve.Model, t *resolve.Tenant) admissionv1.ValidatingAdmissionPolicySpec {
	g := TenantGuardrails(m, t)
	var match []admissionv1.NamedRuleWithOperations
	for _, r := range guardedResources {
		match = append(match, admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
			Rule:       admissionv1.Rule{APIGroups: []string{r.group}, APIVersions: []string{"*"}, Resources: r.resources},
		}})
	}
	var validations []admissionv1.Validation
	for _, r := range Rules {
		validations = append(validations, admissionv1.Validation{Expression: r.Expression, MessageExpression: r.Message, Message: "virtc guardrail " + r.Name + ": " + r.What, Reason: ptr(metav1.StatusReasonForbidden)})
	}
	fail := admissionv1.Fail
	equivalent := admissionv1.Equivalent
	return admissionv1.ValidatingAdmissionPolicySpec{
		FailurePolicy: &fail,
		MatchConstraints: &admissionv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{model.LabelTenant: t.Name}},
			ResourceRules:     match,
			MatchPolicy:       &equivalent,
		},
		MatchConditions: []admissionv1.MatchCondition{{
			Name:       "not-a-controller-acting-for-the-tenant",
			Expression: exemptCondition(),
		}},
		Variables:   guardrailVariables(g),
		Validations: validations,
	}
}

func ptr[T any](v T) *T { return &v }
