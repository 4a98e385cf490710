package rules

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/secret"
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
//     as they were backed up, with Velero's restore annotations;
//   - forklift-controller and forklift-populator-controller in
//     openshift-mtv: MTV's migration plans (Plan and Migration objects in
//     MTV's namespace, which only the platform team may write; forklift
//     v2.12.5's plan webhook also checks that the requester may create
//     VirtualMachines in the target namespace) create the migrated VMs,
//     their VDDK DataVolumes and populator claims
//     (pkg/controller/plan/kubevirt.go) with the source's CPU and memory
//     and no instance type: virtc import then adopts them;
//   - ovn-kubernetes-control-plane in openshift-ovn-kubernetes:
//     OVN-Kubernetes' cluster manager writes the NetworkAttachment-
//     Definition of a ClusterUserDefinedNetwork (cluster-scoped: the
//     platform's) into each namespace it selects (go-controller/pkg/
//     clustermanager/userdefinednetwork), virtc's localnet profiles
//     among them; a tenant's own UserDefinedNetwork, from which it would
//     write one too, is refused (rule user-defined-network).
var Exempt = []string{
	"system:serviceaccount:" + model.CNVNamespace + ":kubevirt-controller",
	"system:serviceaccount:" + model.CNVNamespace + ":kubevirt-apiserver",
	"system:serviceaccount:" + model.CNVNamespace + ":cdi-sa",
	"system:serviceaccount:" + model.OADPNamespace + ":velero",
	"system:serviceaccount:" + MTVNamespace + ":forklift-controller",
	"system:serviceaccount:" + MTVNamespace + ":forklift-populator-controller",
	"system:serviceaccount:openshift-ovn-kubernetes:ovn-kubernetes-control-plane",
}

// MTVNamespace is where OpenShift's Migration Toolkit for Virtualization
// runs.
const MTVNamespace = "openshift-mtv"

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
	{"k8s.ovn.org", []string{"userdefinednetworks"}},
	{"kubevirt.io", []string{"virtualmachineinstancepresets", "virtualmachineinstancereplicasets", "virtualmachineinstances", "virtualmachines"}},
	{"pool.kubevirt.io", []string{"virtualmachinepools"}},
	{"snapshot.kubevirt.io", []string{"virtualmachinerestores", "virtualmachinesnapshotcontents"}},
}

// policyVariables are the policy's variables: the tenant's allowances
// (from a), the rules' data, then the parts of the object the rules read.
func policyVariables(a Allowances) []admissionv1.Variable {
	var patterns []string
	for _, p := range secret.Patterns {
		patterns = append(patterns, fmt.Sprintf("{'re': %s, 'what': %s}", celString(p.Pattern), celString(p.What)))
	}
	udns := make(map[string]any, len(a.UDNs))
	for k, v := range a.UDNs {
		udns[k] = v
	}
	v := func(name, expr string) admissionv1.Variable {
		return admissionv1.Variable{Name: name, Expression: expr}
	}
	vars := []admissionv1.Variable{
		// The tenant's allowances.
		v("tenant", celString(a.Tenant)),
		v("dataSources", celList(a.DataSources)),
		v("registries", celList(a.Registries)),
		v("containerDisks", celList(a.ContainerDisks)),
		v("sizes", celList(a.Sizes)),
		v("sizeRefusals", celMapOfLists(a.SizeRefusals)),
		v("vmSizes", celMapOfLists(a.VMSizes)),
		v("inlineSizes", celShapes(a.InlineSizes)),
		v("sizeShapes", celMapOfInts(a.SizeShapes)),
		v("preferenceNeeds", celMapOfInts(a.PreferenceNeeds)),
		v("preferences", celList(a.Preferences)),
		v("nonX86Preferences", celList(a.NonX86Preferences)),
		v("tenantProduction", fmt.Sprint(a.Production)),
		v("productionVMs", celList(a.ProductionVMs)),
		v("storageClasses", celList(a.StorageClasses)),
		v("productionStorageClasses", celList(a.ProductionStorageClasses)),
		v("vmStorageClasses", celMapOfLists(a.VMStorageClasses)),
		v("rwxClasses", celList(a.RWXClasses)),
		v("rwxClaims", celList(a.RWXClaims)),
		v("devices", celList(a.Devices)),
		v("vmDevices", celMapOfLists(a.VMDevices)),
		v("allowDevices", celString(strings.Join(a.AllowDevices, ", "))),
		v("allowedNetworks", celMap(a.Networks)),
		v("productionNetworks", celList(a.ProductionNetworks)),
		v("vmNetworks", celMapOfLists(a.VMNetworks)),
		v("nonMigratableNetworks", celList(a.NonMigratableNetworks)),
		v("nads", celMap(a.NADs)),
		v("udns", celValue(udns)),
		v("poolSelectors", celPoolLists(a.Pools, func(p PoolPlacement) []string { return p.NodeSelector })),
		v("poolTolerations", celPoolLists(a.Pools, func(p PoolPlacement) []string { return p.Tolerations })),
		v("cloudInitBase64", celList(a.CloudInitBase64)),
		v("backupPolicies", celList(a.BackupPolicies)),
		v("productionBackupPolicies", celList(a.ProductionBackupPolicies)),
		v("vmBackupPolicies", celMapOfLists(a.VMBackupPolicies)),
		v("productionDataSources", celList(a.ProductionDataSources)),
		v("liveMigration", fmt.Sprint(a.LiveMigration)),
		v("vmLiveMigration", celList(a.VMLiveMigration)),
		v("maxDataDisks", fmt.Sprint(a.MaxDataDisks)),
		v("maxDiskSize", celString(a.MaxDiskSize)),
		v("clusterEviction", celString(a.ClusterEviction)),
		// The rules' data.
		v("secretPatterns", "["+strings.Join(patterns, ", ")+"]"),
		v("cdiImportAnnotations", celList(cdiImportAnnotations)),
		v("backupLabelKeys", celList(backupLabelKeys)),
		// The object.
		v("vm", `request.resource.group == 'kubevirt.io' && request.resource.resource == 'virtualmachines'`),
		v("dv", `request.resource.group == 'cdi.kubevirt.io' && request.resource.resource == 'datavolumes'`),
		v("pvc", `request.resource.group == '' && request.resource.resource == 'persistentvolumeclaims'`),
		v("nad", `request.resource.group == 'k8s.cni.cncf.io'`),
		v("udn", `request.resource.group == 'k8s.ovn.org' && request.resource.resource == 'userdefinednetworks'`),
		v("name", `has(object.metadata.name) ? object.metadata.name : request.name`),
		v("where", `request.kind.kind + ' ' + request.namespace + '/' + variables.name`),
		// vm: the VM of Git the object is or belongs to (its
		// virtc.dev/vm label), for the verdicts on one VM.
		v("vmName", `variables.vm ? variables.name : (has(object.metadata.labels) && 'virtc.dev/vm' in object.metadata.labels ? object.metadata.labels['virtc.dev/vm'] : '')`),
		// vmProduction: a VM of a standard tenant that Git makes
		// production tier, or one of its disks: production's lists.
		v("vmProduction", `variables.vmName in variables.productionVMs`),
		v("allowedClasses", `(variables.vmProduction ? variables.productionStorageClasses : variables.storageClasses) + (variables.vmName in variables.vmStorageClasses ? variables.vmStorageClasses[variables.vmName] : [])`),
		v("allowedSources", `variables.vmProduction ? variables.productionDataSources : variables.dataSources`),
		// belowPreference: the VM's size is below what its preference
		// requires.
		v("belowPreference", `variables.vm && has(object.spec.instancetype) && has(object.spec.instancetype.name) && object.spec.instancetype.name in variables.sizeShapes && has(object.spec.preference) && has(object.spec.preference.name) && object.spec.preference.name in variables.preferenceNeeds && (variables.sizeShapes[object.spec.instancetype.name][0] < variables.preferenceNeeds[object.spec.preference.name][0] || variables.sizeShapes[object.spec.instancetype.name][1] < variables.preferenceNeeds[object.spec.preference.name][1])`),
		v("labels", `has(object.metadata.labels) ? object.metadata.labels : {}`),
		v("oldLabels", `oldObject != null && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}`),
		// changedLabels and changedAnnotations are the keys a write adds
		// or changes: what an object already carries is not judged again
		// (CDI marks its own claims, an adopted object keeps its creator's).
		v("changedLabels", `variables.labels.filter(k, !(k in variables.oldLabels) || variables.oldLabels[k] != variables.labels[k])`),
		v("annotations", `has(object.metadata.annotations) ? object.metadata.annotations : {}`),
		v("oldAnnotations", `oldObject != null && has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}`),
		v("changedAnnotations", `variables.annotations.filter(k, !(k in variables.oldAnnotations) || variables.oldAnnotations[k] != variables.annotations[k])`),
		v("oldSpec", `variables.vm && oldObject != null && has(oldObject.spec) ? oldObject.spec : {}`),
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
		// evictionStrategy is the VM's, else the cluster's.
		v("evictionStrategy", `has(variables.spec.evictionStrategy) ? variables.spec.evictionStrategy : variables.clusterEviction`),
		// vmDiskSpecs are the specs of a VM's dataVolumeTemplates.
		v("vmDiskSpecs", `variables.vm && has(object.spec.dataVolumeTemplates) ? object.spec.dataVolumeTemplates.map(t, has(t.spec) ? t.spec : {}) : []`),
		// newDVTemplates are the dataVolumeTemplates a write adds or
		// changes: a VM's dataVolumeTemplate it already has, unchanged,
		// is no new disk (KubeVirt created its DataVolume when it first
		// saw it, and CDI never lets a DataVolume's spec change), so where
		// its data came from and its storage class are not judged again.
		// An adopted VM keeps the template its creator wrote (the
		// console's names no storage class), and Argo CD's client-side
		// apply keeps it on the VM: judging it again would refuse the
		// adoption itself.
		v("newDVTemplates", `variables.vm && has(object.spec.dataVolumeTemplates) ? object.spec.dataVolumeTemplates.filter(t, !(oldObject != null && has(oldObject.spec) && has(oldObject.spec.dataVolumeTemplates) && oldObject.spec.dataVolumeTemplates.exists(o, o == t))) : []`),
		// newVMDiskSpecs are the specs of newDVTemplates; newDiskSpecs
		// those, or a DataVolume's own: the disks a write adds or changes.
		v("newVMDiskSpecs", `variables.newDVTemplates.map(t, has(t.spec) ? t.spec : {})`),
		v("newDiskSpecs", `variables.vm ? variables.newVMDiskSpecs : variables.dv && has(object.spec) ? [object.spec] : []`),
		// claimVolumes are the claims and DataVolumes a VM's volumes name
		// that are not its own dataVolumeTemplates': its data disks.
		v("claimVolumes", `variables.volumes.filter(v, has(v.persistentVolumeClaim) && has(v.persistentVolumeClaim.claimName)).map(v, v.persistentVolumeClaim.claimName) + variables.volumes.filter(v, has(v.dataVolume) && has(v.dataVolume.name) && !(variables.vm && has(object.spec.dataVolumeTemplates) && object.spec.dataVolumeTemplates.exists(t, has(t.metadata) && has(t.metadata.name) && t.metadata.name == v.dataVolume.name))).map(v, v.dataVolume.name)`),
		// evictionKept: the write keeps the VM's eviction strategy, so the
		// eviction rule judges only the disks it adds or changes (an
		// adopted VM's template names no access mode; its claim has the
		// one its StorageProfile gave it, which virtc's compile judged).
		v("evictionKept", `variables.vm && oldObject != null && has(oldObject.spec) && has(oldObject.spec.template) && has(oldObject.spec.template.spec) && (has(oldObject.spec.template.spec.evictionStrategy) ? oldObject.spec.template.spec.evictionStrategy : '') == (has(variables.spec.evictionStrategy) ? variables.spec.evictionStrategy : '')`),
	}
	// templateOffenders are the fields of a VM's spec a write adds or
	// changes outside the allow list of rule template-fields.
	vars = append(vars, templateOffenderVariables()...)
	return append(vars,
		v("cloudInit", `variables.volumes.filter(v, has(v.cloudInitNoCloud)).map(v, v.cloudInitNoCloud) + variables.volumes.filter(v, has(v.cloudInitConfigDrive)).map(v, v.cloudInitConfigDrive)`),
		v("cloudInitBase64Data", `variables.cloudInit.filter(c, has(c.userDataBase64)).map(c, c.userDataBase64) + variables.cloudInit.filter(c, has(c.networkDataBase64)).map(c, c.networkDataBase64)`),
		v("cloudInitTexts", `variables.cloudInit.filter(c, has(c.userData)).map(c, c.userData) + variables.cloudInit.filter(c, has(c.networkData)).map(c, c.networkData)`),
	)
}

// ownData is a CEL expression true when the data source r of a claim is
// the tenant's own claim or snapshot (in its namespace).
func ownData(r string, namespaced bool) string {
	// The API server's CEL sees a built-in kind as its Go type converted
	// to unstructured: a claim's data source without apiGroup (a pointer
	// without omitempty) has apiGroup: null.
	e := fmt.Sprintf("((!has(%[1]s.apiGroup) || %[1]s.apiGroup == null || %[1]s.apiGroup == '') && %[1]s.kind == 'PersistentVolumeClaim' || has(%[1]s.apiGroup) && %[1]s.apiGroup == 'snapshot.storage.k8s.io' && %[1]s.kind == 'VolumeSnapshot')", r)
	if namespaced {
		e += fmt.Sprintf(" && (!has(%[1]s.namespace) || %[1]s.namespace == request.namespace)", r)
	}
	return e
}

// PolicySpec is the spec of the tenant's guardrails policy: Guardrails over
// the tenant's Allowances, in its namespace only (the namespace label virtc
// sets), for every writer but the controllers of Exempt.
func PolicySpec(m *resolve.Model, t *resolve.Tenant) admissionv1.ValidatingAdmissionPolicySpec {
	a := TenantAllowances(m, t)
	var match []admissionv1.NamedRuleWithOperations
	for _, r := range guardedResources {
		match = append(match, admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
			Rule:       admissionv1.Rule{APIGroups: []string{r.group}, APIVersions: []string{"*"}, Resources: r.resources},
		}})
	}
	var validations []admissionv1.Validation
	for _, g := range Guardrails {
		validations = append(validations, admissionv1.Validation{Expression: g.CEL(), MessageExpression: g.Message, Message: "virtc guardrail " + g.Name + ": " + g.What, Reason: ptr(metav1.StatusReasonForbidden)})
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
		Variables:   policyVariables(a),
		Validations: validations,
	}
}

func ptr[T any](v T) *T { return &v }
