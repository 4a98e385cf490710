package rules

import (
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/model"
)

// Guardrails are the rules of a tenant's boundary, in the order the policy
// lists them. Each reads the policy's variables (policyVariables): the
// object's parts and the tenant's allowances.
var Guardrails = []Guardrail{
	{
		Name:       "workload-kind",
		What:       "VMs only as VirtualMachines: no VirtualMachineInstance, replica set, pool or instance preset of a tenant's own",
		Source:     "000 Authorization and lifecycle boundaries (tenants create and operate approved VirtualMachines); KubeVirt v1.8.4 pkg/virt-api/webhooks/mutating-webhook/mutators/preset.go applies presets to every VMI",
		Resources:  []string{"kubevirt.io/virtualmachineinstances", "kubevirt.io/virtualmachineinstancereplicasets", "kubevirt.io/virtualmachineinstancepresets", "pool.kubevirt.io/virtualmachinepools"},
		Expression: `!(request.resource.resource in ['virtualmachineinstances', 'virtualmachineinstancereplicasets', 'virtualmachinepools', 'virtualmachineinstancepresets'])`,
		Message:    `'virtc guardrail workload-kind: ' + variables.where + ': tenant ' + variables.tenant + ' runs VMs only as VirtualMachines, which its guardrails judge' + (request.resource.resource == 'virtualmachineinstancepresets' ? ' (KubeVirt applies a preset to every VirtualMachineInstance it selects, which the guardrails never see)' : '') + ' (declare the VM in Git: virtc writes its VirtualMachine)'`,
		Output:     refuseKinds("VirtualMachineInstance", "VirtualMachineInstanceReplicaSet", "VirtualMachinePool", "VirtualMachineInstancePreset"),
	},
	{
		Name:       "snapshot-contents",
		What:       "no VirtualMachineSnapshotContent of a tenant's own: KubeVirt's controller writes them from a VM's snapshot, and restores and clones create the VM they hold",
		Source:     "KubeVirt v1.8.4 pkg/storage/snapshot/restore.go (generateRestoredVMSpec: the restored VM is the content's spec.source.virtualMachine, written by virt-controller); pkg/virt-operator/resource/generate/rbac/cluster.go (kubevirt.io:edit may write contents)",
		Resources:  []string{"snapshot.kubevirt.io/virtualmachinesnapshotcontents"},
		Expression: `request.resource.resource != 'virtualmachinesnapshotcontents'`,
		Message:    `'virtc guardrail snapshot-contents: ' + variables.where + ': only KubeVirt\'s controller writes snapshot contents: a restore or clone of an edited one would create a VM that no guardrail of tenant ' + variables.tenant + ' judged (take a VirtualMachineSnapshot of a VM instead)'`,
		Output:     refuseKinds("VirtualMachineSnapshotContent"),
	},
	{
		Name:       "import-source",
		What:       "no import of the tenant's own: no DataImportCron, VolumeImportSource or VolumeUploadSource (CDI's edit role grants them; their imports run as CDI)",
		Source:     "000 Runtime, storage, and network model (images: approved sources, traceable to a provenance record)",
		Resources:  []string{"cdi.kubevirt.io/dataimportcrons", "cdi.kubevirt.io/volumeimportsources", "cdi.kubevirt.io/volumeuploadsources"},
		Expression: `!(request.resource.group == 'cdi.kubevirt.io' && request.resource.resource in ['dataimportcrons', 'volumeimportsources', 'volumeuploadsources'])`,
		Message:    `'virtc guardrail import-source: ' + variables.where + ': tenant ' + variables.tenant + ' imports no image of its own (the platform team adds images to the catalog, whose golden images its VMs clone: ' + variables.dataSources.join(', ') + ')'`,
		Output:     refuseKinds("DataImportCron", "VolumeImportSource", "VolumeUploadSource"),
	},
	{
		Name:       "copies",
		What:       "clones and restores of the tenant's VMs as they are: no patches, and no restore override that adds CDI's annotations or the labels that steer backups (KubeVirt's controller, whose writes the guardrails do not judge, applies them)",
		Source:     "KubeVirt v1.8.4 pkg/storage/snapshot/restore.go (patches and volumeRestoreOverrides applied to the restored VM and claims, after CDI's annotations are stripped) and pkg/virt-controller/watch/clone (a clone's patches)",
		Resources:  []string{"clone.kubevirt.io/virtualmachineclones", "snapshot.kubevirt.io/virtualmachinerestores"},
		Reads:      []Read{{Object: "spec.patches"}, {Object: "spec.volumeRestoreOverrides[*].annotations"}, {Object: "spec.volumeRestoreOverrides[*].labels"}},
		Expression: `!(request.resource.resource in ['virtualmachineclones', 'virtualmachinerestores']) || (!has(object.spec.patches) || size(object.spec.patches) == 0) && (!has(object.spec.volumeRestoreOverrides) || object.spec.volumeRestoreOverrides.all(o, (!has(o.annotations) || o.annotations.all(k, !` + cdiActCEL("k") + `)) && (!has(o.labels) || o.labels.all(k, !(k in variables.backupLabelKeys)))))`,
		Message:    `'virtc guardrail copies: ' + variables.where + ': ' + (has(object.spec.patches) && size(object.spec.patches) > 0 ? 'spec.patches: KubeVirt\'s controller applies them to the VM it creates' : 'spec.volumeRestoreOverrides: an override that adds CDI\'s annotations or the backup labels changes the claims KubeVirt\'s controller restores') + ', which the guardrails of tenant ' + variables.tenant + ' do not see (copy the VM as it is, or declare the change in Git)'`,
		Output:     refuseCopyChanges,
	},
	{
		Name:       "image-source",
		What:       "disks only from the catalog's images: the DataSource of an image the tenant may use, its pinned registry source, a blank disk or a copy of the tenant's own claim or snapshot (a dataVolumeTemplate the VM already has, unchanged, is not judged again)",
		Source:     "000 Runtime, storage, and network model (images: approved, versioned, traceable to a provenance record)",
		Resources:  []string{"kubevirt.io/virtualmachines", "cdi.kubevirt.io/datavolumes"},
		Reads:      []Read{{Object: "spec.dataVolumeTemplates[*].spec.sourceRef", Intent: "spec.image"}, {Object: "spec.dataVolumeTemplates[*].spec.source", Intent: "spec.image"}, {Object: "spec.sourceRef", Intent: "spec.image"}, {Object: "spec.source", Intent: "spec.image"}},
		Expression: `variables.newDiskSpecs.all(s, has(s.sourceRef) ? (has(s.sourceRef.kind) && s.sourceRef.kind == 'DataSource' && has(s.sourceRef.name) && (has(s.sourceRef.namespace) ? s.sourceRef.namespace : request.namespace) + '/' + s.sourceRef.name in variables.allowedSources) : has(s.source) && (has(s.source.blank) || has(s.source.registry) && has(s.source.registry.url) && s.source.registry.url in variables.registries || has(s.source.pvc) && (!has(s.source.pvc.namespace) || s.source.pvc.namespace == request.namespace) || has(s.source.snapshot) && (!has(s.source.snapshot.namespace) || s.source.snapshot.namespace == request.namespace)))`,
		Message:    `'virtc guardrail image-source: ' + variables.where + ': a disk source that is not in the catalog: tenant ' + variables.tenant + ' may clone only the DataSources of the images it may use (' + variables.allowedSources.join(', ') + (variables.vmProduction ? '; a production VM\'s images have a provenance record' : '') + ')' + (size(variables.registries) > 0 ? ' or import their pinned registry sources (' + variables.registries.join(', ') + ')' : '') + ', or use a blank disk or a copy of its own claim or snapshot'`,
		Intent:     func(c *VMCheck) { c.refuse(c.j.image(c.VM)) },
		Output:     checkDiskSources,
	},
	{
		Name:       "preference",
		Changes:    true,
		What:       "only the preferences (cluster preferences) of the images the tenant may use, and no preference revision of its own",
		Source:     "000 Runtime, storage, and network model (curated templates and instance types)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.preference.kind", Intent: "spec.image"}, {Object: "spec.preference.name", Intent: "spec.image"}, {Object: "spec.preference.revisionName"}},
		Expression: `!variables.vm || !has(object.spec.preference) || (!has(object.spec.preference.kind) || object.spec.preference.kind in ['VirtualMachineClusterPreference', 'virtualmachineclusterpreference']) && has(object.spec.preference.name) && object.spec.preference.name in variables.preferences && ` + revisionKeptCEL("preference") + ``,
		Message:    `'virtc guardrail preference: ' + variables.where + ': spec.preference: ' + (has(object.spec.preference.kind) ? object.spec.preference.kind + ' ' : '') + (has(object.spec.preference.name) ? object.spec.preference.name : '(no name)') + (` + revisionKeptCEL("preference") + ` ? ' is not the preference of an image tenant ' + variables.tenant + ' may use (allowed: ' + variables.preferences.join(', ') + ')' : ': its revisionName is KubeVirt\'s to record (remove it)')`,
		Intent:     checkPreference,
		Output:     checkPreferenceOutput,
	},
	{
		Name:       "architecture",
		Changes:    true,
		What:       "VMs for x86 (amd64) only: no other architecture, and no preference of an image for another",
		Source:     "000 Platform boundary (a dedicated x86 worker pool) and the workload eligibility matrix (no row admits another architecture)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.template.spec.architecture", Intent: "spec.image"}, {Object: "spec.preference.name", Intent: "spec.image"}},
		Expression: `!variables.vm || (!has(variables.spec.architecture) || variables.spec.architecture == 'amd64' || ` + keptCEL("spec.template.spec.architecture") + `) && !(has(object.spec.preference) && has(object.spec.preference.name) && object.spec.preference.name in variables.nonX86Preferences)`,
		Message:    `'virtc guardrail architecture: ' + variables.where + ': ' + (has(variables.spec.architecture) && variables.spec.architecture != 'amd64' ? 'architecture ' + variables.spec.architecture : 'preference ' + (has(object.spec.preference.name) ? object.spec.preference.name : '') + ' (an image for another architecture)') + ': the platform baseline is a dedicated x86 (amd64) worker pool, and no class of the eligibility matrix admits another architecture'`,
		Intent:     func(c *VMCheck) { c.refuse(c.j.architecture(c.VM)) },
	},
	{
		Name:       "container-disks",
		Changes:    true,
		What:       "containerDisk volumes (CD-ROMs) only of the catalog's ContainerDisks the tenant may use: approved, digest-pinned images (KubeVirt v1.8.4 pulls a containerDisk into the VM's launcher pod, pkg/container-disk/container-disk.go)",
		Source:     "000 Runtime, storage, and network model (images: approved sources)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.template.spec.volumes[*].containerDisk.image", Intent: "spec.cdroms[*].containerDisk"}, {Object: "spec.template.spec.volumes[*].name", Intent: "spec.cdroms[*].name"}},
		Expression: `!variables.vm || variables.volumes.all(v, !has(v.containerDisk) || has(v.containerDisk.image) && v.containerDisk.image in variables.containerDisks)`,
		Message:    `'virtc guardrail container-disks: ' + variables.where + ': containerDisk ' + variables.volumes.filter(v, has(v.containerDisk) && !(has(v.containerDisk.image) && v.containerDisk.image in variables.containerDisks)).map(v, (has(v.name) ? v.name : '(none)') + ' (' + (has(v.containerDisk.image) ? v.containerDisk.image : 'no image') + ')').join(', ') + ' is not a container disk tenant ' + variables.tenant + ' may use (' + (size(variables.containerDisks) > 0 ? variables.containerDisks.join(', ') : 'none: the platform team approves one as a ContainerDisk of the catalog') + ')'`,
		Intent:     func(c *VMCheck) { c.refuse(c.j.cdroms(c.VM)) },
	},
	{
		Name:       "storage-class",
		What:       "disks and claims only on the storage classes of the storage profiles the tenant may use (what a disk or claim already had, unchanged, is not judged again)",
		Source:     "000 Runtime, storage, and network model (qualified storage profiles); Authorization and lifecycle boundaries (StorageClasses are the platform's)",
		Resources:  []string{"kubevirt.io/virtualmachines", "cdi.kubevirt.io/datavolumes", "/persistentvolumeclaims"},
		Reads:      []Read{{Object: "spec.dataVolumeTemplates[*].spec.storage.storageClassName", Intent: "spec.disks[*].storage"}, {Object: "spec.dataVolumeTemplates[*].spec.pvc.storageClassName", Intent: "spec.disks[*].storage"}, {Object: "spec.storageClassName", Intent: "spec.disks[*].storage"}, {Object: "spec.storage.storageClassName", Intent: "spec.disks[*].storage"}, {Object: "spec.pvc.storageClassName", Intent: "spec.disks[*].storage"}},
		Expression: `variables.newDiskSpecs.all(s, (has(s.storage) && has(s.storage.storageClassName) ? s.storage.storageClassName : has(s.pvc) && has(s.pvc.storageClassName) ? s.pvc.storageClassName : '') in variables.allowedClasses) && (!variables.pvc || has(object.spec.storageClassName) && (object.spec.storageClassName in variables.allowedClasses || oldObject != null && has(oldObject.spec.storageClassName) && oldObject.spec.storageClassName == object.spec.storageClassName))`,
		Message:    `'virtc guardrail storage-class: ' + variables.where + ': storage class ' + (variables.pvc ? (has(object.spec.storageClassName) ? object.spec.storageClassName : '(none)') : variables.newDiskSpecs.map(s, has(s.storage) && has(s.storage.storageClassName) ? s.storage.storageClassName : has(s.pvc) && has(s.pvc.storageClassName) ? s.pvc.storageClassName : '(none)').filter(c, !(c in variables.allowedClasses)).join(', ')) + ' is not one of the storage profiles tenant ' + variables.tenant + ' may use, with the evidence the eligibility gate asks of it (storage classes: ' + variables.allowedClasses.join(', ') + '; a disk names its class explicitly)'`,
		Intent:     func(c *VMCheck) { c.refuse(c.j.storage(c.VM)) },
		Output:     checkStorageClasses,
	},
	{
		Name:       "claim-source",
		What:       "claims created with no data source but the tenant's own claims and snapshots, and bound to no volume of the tenant's choosing (spec.dataSource, dataSourceRef and volumeName cannot change after creation)",
		Source:     "000 Runtime, storage, and network model (images: approved sources); Kubernetes persistentvolumeclaims: spec.volumeName binds a claim to an existing volume and its data",
		Resources:  []string{"/persistentvolumeclaims"},
		Reads:      []Read{{Object: "spec.dataSource"}, {Object: "spec.dataSourceRef"}, {Object: "spec.volumeName"}},
		Expression: `!variables.pvc || oldObject != null || (!has(object.spec.dataSourceRef) || ` + ownData("object.spec.dataSourceRef", true) + `) && (!has(object.spec.dataSource) || ` + ownData("object.spec.dataSource", false) + `) && !has(object.spec.volumeName)`,
		Message:    `'virtc guardrail claim-source: ' + variables.where + ': ' + (has(object.spec.volumeName) ? 'spec.volumeName binds the claim to an existing volume and its data' : 'a claim fills only from the tenant\'s own claims or snapshots, not from a data source of another kind or namespace') + ' (tenant ' + variables.tenant + ' creates disks from the catalog\'s images: declare them in Git)'`,
		Output:     checkClaimSources,
	},
	{
		Name:       "cdi-annotations",
		What:       "no annotation that makes CDI import, upload or clone data into a claim, or changes its importer pods (service account, priority class, networks), added to a claim, a DataVolume or a VM's dataVolumeTemplate (what a claim already carries, unchanged, is not judged again: CDI marks its own claims)",
		Source:     "containerized-data-importer v1.65.0 pkg/controller/common/util.go (AnnEndpoint, AnnSource, AnnUploadRequest, AnnCloneRequest, AnnPodServiceAccount, AnnPriorityClassName; allowedAnnotations passed to worker pods) and pkg/controller/datavolume/controller-base.go (a DataVolume's annotations copied onto its claim)",
		Resources:  []string{"/persistentvolumeclaims", "cdi.kubevirt.io/datavolumes", "kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "metadata.annotations"}, {Object: "spec.dataVolumeTemplates[*].metadata.annotations"}},
		Expression: `(!(variables.pvc || variables.dv) || variables.changedAnnotations.all(k, !` + cdiActCEL("k") + `)) && variables.newDVTemplates.all(t, !has(t.metadata) || !has(t.metadata.annotations) || t.metadata.annotations.all(k, !` + cdiActCEL("k") + `))`,
		Message:    `'virtc guardrail cdi-annotations: ' + variables.where + ': annotation ' + ((variables.pvc || variables.dv) ? variables.changedAnnotations.filter(k, ` + cdiActCEL("k") + `) : variables.newDVTemplates.map(t, has(t.metadata) && has(t.metadata.annotations) ? t.metadata.annotations.filter(k, ` + cdiActCEL("k") + `).join(', ') : '').filter(s, s != '')).join(', ') + ' makes CDI bring data into the claim or changes its importer pods, which run as CDI (tenant ' + variables.tenant + ' creates disks from the catalog\'s images: declare them in Git)'`,
		Output:     checkCDIAnnotations,
	},
	{
		Name:       "instancetype",
		Changes:    true,
		What:       "only the sizes (cluster instance types) the tenant may use, none the platform baseline excludes (dedicated CPUs, huge pages, GPUs) unless the Platform enables and an assessment accepts it, and no instance type revision of the tenant's own",
		Source:     "000 Workload eligibility matrix (hardware passthrough, dedicated CPUs and huge pages excluded from the initial baseline); Runtime, storage, and network model (curated instance types)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.instancetype.kind", Intent: "spec.size"}, {Object: "spec.instancetype.name", Intent: "spec.size"}, {Object: "spec.instancetype.revisionName"}, {Object: "spec.template.spec.domain.cpu.sockets", Intent: "spec.size"}, {Object: "spec.template.spec.domain.cpu.cores", Intent: "spec.size"}, {Object: "spec.template.spec.domain.cpu.threads", Intent: "spec.size"}, {Object: "spec.template.spec.domain.memory.guest", Intent: "spec.size"}, {Object: "spec.preference.name", Intent: "spec.image"}},
		Expression: `!variables.vm || (has(object.spec.instancetype) ? (!has(object.spec.instancetype.kind) || object.spec.instancetype.kind in ['VirtualMachineClusterInstancetype', 'virtualmachineclusterinstancetype']) && has(object.spec.instancetype.name) && (object.spec.instancetype.name in variables.sizes || variables.name in variables.vmSizes && object.spec.instancetype.name in variables.vmSizes[variables.name]) && !variables.belowPreference && ` + revisionKeptCEL("instancetype") + ` : has(variables.domain.memory) && has(variables.domain.memory.guest) && variables.inlineSizes.exists(z, variables.inlineSizes[z] == string(has(variables.cpu.sockets) ? variables.cpu.sockets : 0) + '/' + string(has(variables.cpu.cores) ? variables.cpu.cores : 0) + '/' + string(has(variables.cpu.threads) ? variables.cpu.threads : 0) + '/' + string(variables.domain.memory.guest)))`,
		Message:    `'virtc guardrail instancetype: ' + variables.where + ': spec.instancetype: ' + (variables.belowPreference ? object.spec.instancetype.name + ' is below what preference ' + object.spec.preference.name + ' requires (' + string(variables.preferenceNeeds[object.spec.preference.name][0]) + ' vCPUs, ' + string(variables.preferenceNeeds[object.spec.preference.name][1]) + ' bytes of memory), and KubeVirt refuses the VM' : (has(object.spec.instancetype) ? (has(object.spec.instancetype.kind) ? object.spec.instancetype.kind + ' ' : '') + (has(object.spec.instancetype.name) ? object.spec.instancetype.name : '(no name)') + (has(object.spec.instancetype.name) && variables.sizeRefusals.exists(r, object.spec.instancetype.name in variables.sizeRefusals[r]) ? ': ' + variables.sizeRefusals.filter(r, object.spec.instancetype.name in variables.sizeRefusals[r]).join('; ') : !` + revisionKeptCEL("instancetype") + ` ? ': its revisionName is KubeVirt\'s to record (remove it)' : '') : 'none') + ' is not a size tenant ' + variables.tenant + ' may use (allowed: ' + variables.sizes.join(', ') + (size(variables.inlineSizes) > 0 ? '; inline: ' + variables.inlineSizes.map(z, z + ' (' + variables.inlineSizes[z] + ')').join(', ') : '') + ')')`,
		Intent:     checkSize,
	},
	{
		Name:       "devices",
		Changes:    true,
		What:       "GPUs and host devices only of the resource names the tenant's spec.allow.devices names, the Platform permits and enables, and an assessment accepts",
		Source:     "000 Workload eligibility matrix (GPU/vGPU, PCI passthrough: excluded from the initial baseline; separate architecture and vendor support assessment) and Authorization and lifecycle boundaries (no implied device entitlement)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.template.spec.domain.devices.gpus[*].deviceName", Intent: "spec.gpus[*].deviceName"}, {Object: "spec.template.spec.domain.devices.hostDevices[*].deviceName", Intent: "spec.hostDevices[*].deviceName"}},
		Expression: `!variables.vm || (variables.gpus + variables.hostDevices).all(d, has(d.deviceName) && (d.deviceName in variables.devices || variables.name in variables.vmDevices && d.deviceName in variables.vmDevices[variables.name]))`,
		Message:    `'virtc guardrail devices: ' + variables.where + ': device ' + (variables.gpus + variables.hostDevices).map(d, has(d.deviceName) ? d.deviceName : '(none)').filter(n, !(n in variables.devices)).join(', ') + ': tenant ' + variables.tenant + (size(variables.devices) == 0 ? ' may use no device (a platform team entitles it in the tenant\'s spec.allow.devices, and the Platform permits, enables and assesses it)' : ' may use only ' + variables.devices.join(', ')) + (variables.allowDevices == '' ? '' : ' (spec.allow.devices: ' + variables.allowDevices + ')')`,
		Intent:     func(c *VMCheck) { c.refuse(c.j.devices(c.VM)) },
	},
	{
		Name:       "networks",
		Changes:    true,
		What:       "only the additional networks the tenant's spec.allow.networks lists (the pod network always), and none through a network annotation of the template",
		Source:     "000 Runtime, storage, and network model (additional networks: governed profiles for approved needs only) and Authorization and lifecycle boundaries (no unapproved external network attachments)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.template.spec.networks[*].multus.networkName", Intent: "spec.networks[*]"}},
		Expression: `!variables.vm || variables.networks.all(n, !has(n.multus) || has(n.multus.networkName) && (n.multus.networkName in variables.allowedNetworks && (!variables.vmProduction || n.multus.networkName in variables.productionNetworks) || variables.name in variables.vmNetworks && n.multus.networkName in variables.vmNetworks[variables.name]))`,
		Message:    `'virtc guardrail networks: ' + variables.where + ': network ' + variables.networks.filter(n, has(n.multus) && !(has(n.multus.networkName) && n.multus.networkName in variables.allowedNetworks)).map(n, has(n.multus.networkName) ? n.multus.networkName : '(none)').join(', ') + ' is not an additional network tenant ' + variables.tenant + ' may use, with the evidence the eligibility gate asks of it (' + (size(variables.allowedNetworks) == 0 ? 'it may use none: the pod network only' : 'allowed: ' + variables.allowedNetworks.filter(k, !k.contains('/')).join(', ')) + ')'`,
		Intent:     func(c *VMCheck) { c.refuse(c.j.networks(c.VM)) },
	},
	{
		Name:       "sriov",
		Changes:    true,
		What:       "SR-IOV interfaces only on an SR-IOV network profile the tenant may use, which the Platform enables and an assessment accepts",
		Source:     "000 Workload eligibility matrix (SR-IOV: excluded from the initial baseline; separate architecture and vendor support assessment)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.template.spec.domain.devices.interfaces[*].sriov", Intent: "spec.networks[*]"}, {Object: "spec.template.spec.domain.devices.interfaces[*].name", Intent: "spec.interfaces"}, {Object: "spec.template.spec.networks[*].multus.networkName", Intent: "spec.networks[*]"}, {Object: "spec.template.spec.networks[*].name", Intent: "spec.interfaces"}},
		Expression: `!variables.vm || variables.interfaces.all(i, !has(i.sriov) || variables.networks.exists(n, has(n.name) && has(i.name) && n.name == i.name && has(n.multus) && has(n.multus.networkName) && (n.multus.networkName in variables.allowedNetworks && variables.allowedNetworks[n.multus.networkName] == 'sriov' || variables.name in variables.vmNetworks && n.multus.networkName in variables.vmNetworks[variables.name])))`,
		Message:    `'virtc guardrail sriov: ' + variables.where + ': interface ' + variables.interfaces.filter(i, has(i.sriov)).map(i, has(i.name) ? i.name : '(none)').join(', ') + ' is SR-IOV but not on an SR-IOV network tenant ' + variables.tenant + ' may use (' + (variables.allowedNetworks.exists(k, variables.allowedNetworks[k] == 'sriov') ? 'allowed: ' + variables.allowedNetworks.filter(k, !k.contains('/') && variables.allowedNetworks[k] == 'sriov').join(', ') : 'it may use none: SR-IOV is excluded from the platform baseline unless the Platform enables it and an assessment accepts it') + ')'`,
		Intent:     func(c *VMCheck) { c.refuse(c.j.sriov(c.VM)) },
	},
	{
		Name:       "placement",
		Changes:    true,
		What:       "node selector and tolerations only exactly those of a worker pool the tenant may use, no node affinity or pod affinity of its own",
		Source:     "000 Authorization and lifecycle boundaries (no arbitrary node placement; node-pool placement is the platform's)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.template.spec.nodeSelector", Intent: "spec.pool"}, {Object: "spec.template.spec.tolerations", Intent: "spec.pool"}, {Object: "spec.template.spec.affinity", Intent: "spec.spread"}},
		Expression: `!variables.vm || variables.poolSelectors.exists(p, size(variables.nodeSelector) == size(variables.poolSelectors[p]) && variables.nodeSelector.all(k, k + '=' + variables.nodeSelector[k] in variables.poolSelectors[p]) && variables.tolerationKeys.all(k, k in variables.poolTolerations[p])) && (!has(variables.spec.affinity) || !has(variables.spec.affinity.nodeAffinity) && !has(variables.spec.affinity.podAffinity))`,
		Message:    `'virtc guardrail placement: ' + variables.where + ': spec.template.spec: node selector ' + variables.nodeSelector.map(k, k + '=' + variables.nodeSelector[k]).join(', ') + ', tolerations ' + variables.tolerationKeys.join(', ') + (has(variables.spec.affinity) && (has(variables.spec.affinity.nodeAffinity) || has(variables.spec.affinity.podAffinity)) ? ' and a node or pod affinity' : '') + ' go beyond the worker pools tenant ' + variables.tenant + ' may use (' + variables.poolSelectors.map(p, (p == '' ? 'no pool' : p) + ': node selector ' + variables.poolSelectors[p].join(', ') + ', tolerations ' + variables.poolTolerations[p].join(', ')).join('; ') + ')'`,
		Intent:     func(c *VMCheck) { c.refuse(c.j.pool(c.VM)) },
	},
	{
		Name:       "cloud-init-secrets",
		Changes:    true,
		What:       "no secret material in inline cloud-init data (the patterns virtc's compile refuses); base64 data only as virtc writes it for the tenant's VMs",
		Source:     "000 Authorization and lifecycle boundaries (security by design); 003 secrets stay out of Git",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.template.spec.volumes[*].cloudInitNoCloud", Intent: "spec.cloudInit.userData"}, {Object: "spec.template.spec.volumes[*].cloudInitConfigDrive", Intent: "spec.cloudInit.userData"}},
		Expression: `!variables.vm || variables.cloudInitTexts.all(d, !variables.secretPatterns.exists(p, d.matches(p.re))) && variables.cloudInitBase64Data.all(d, d in variables.cloudInitBase64)`,
		Message:    `'virtc guardrail cloud-init-secrets: ' + variables.where + ': ' + (variables.cloudInitBase64Data.all(d, d in variables.cloudInitBase64) ? 'inline cloud-init holds ' + variables.secretPatterns.filter(p, variables.cloudInitTexts.exists(d, d.matches(p.re))).map(p, p.what).join(', ') + ': secrets must not be in Git or in the VM' : 'inline cloud-init in base64, which the guardrail cannot read: only the base64 data of the tenant\'s VMs as virtc writes them is admitted') + ' (put the user data in a Secret and name it in userDataSecretRef)'`,
		Intent:     func(c *VMCheck) { c.refuse(cloudInitSecrets(c.VM)) },
	},
	{
		Name:       "eviction",
		Changes:    true,
		What:       "an eviction strategy that live-migrates (its own or the cluster's) only for a VM that can: ReadWriteMany disks, migratable networks, no GPU or host device; no External strategy (a write that keeps the eviction strategy is judged on the dataVolumeTemplates it adds or changes)",
		Source:     "000 Runtime, storage, and network model (live migration is conditional); KubeVirt v1.8.4 pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go (a strategy that migrates denies every eviction of a VM that cannot)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.template.spec.evictionStrategy", Intent: "spec.migration"}, {Object: "spec.template.spec.domain.devices.gpus", Intent: "spec.gpus"}, {Object: "spec.template.spec.domain.devices.hostDevices", Intent: "spec.hostDevices"}, {Object: "spec.template.spec.networks[*].multus.networkName", Intent: "spec.networks[*]"}, {Object: "spec.dataVolumeTemplates[*].spec", Intent: "spec.disks[*].storage"}, {Object: "spec.dataVolumeTemplates[*].metadata.name", Intent: "spec.disks"}, {Object: "spec.template.spec.volumes", Intent: "spec.disks"}},
		Expression: `(!variables.vm || variables.evictionStrategy != 'External' || variables.evictionKept || !has(variables.spec.evictionStrategy)) && (!variables.vm || variables.evictionStrategy != 'LiveMigrate' || !has(variables.spec.evictionStrategy) || variables.liveMigration || variables.name in variables.vmLiveMigration) && (!variables.vm || !(variables.evictionStrategy in ['LiveMigrate', 'LiveMigrateIfPossible']) || size(variables.gpus) == 0 && size(variables.hostDevices) == 0 && variables.networks.all(n, !has(n.multus) || !has(n.multus.networkName) || !(n.multus.networkName in variables.nonMigratableNetworks)) && (variables.evictionKept ? variables.newVMDiskSpecs : variables.vmDiskSpecs).all(s, has(s.storage) && has(s.storage.accessModes) ? 'ReadWriteMany' in s.storage.accessModes : has(s.pvc) && has(s.pvc.accessModes) ? 'ReadWriteMany' in s.pvc.accessModes : (has(s.storage) && has(s.storage.storageClassName) ? s.storage.storageClassName : '') in variables.rwxClasses) && variables.claimVolumes.all(c, c in variables.rwxClaims))`,
		Message:    `'virtc guardrail eviction: ' + variables.where + ': ' + (variables.evictionStrategy == 'External' ? 'evictionStrategy External leaves every drain of its node to a controller the platform does not run' : variables.evictionStrategy == 'LiveMigrate' && has(variables.spec.evictionStrategy) && !variables.liveMigration && !(variables.name in variables.vmLiveMigration) ? 'evictionStrategy LiveMigrate (migration Required: the conditional class live-migration) without the migration test the eligibility gate asks for' : 'evictionStrategy ' + variables.evictionStrategy + (has(variables.spec.evictionStrategy) ? '' : ' (the cluster\'s)') + ' but the VM cannot live-migrate (a GPU or host device, a network that does not allow live migration, a disk that is not ReadWriteMany, or a claim ' + variables.claimVolumes.filter(c, !(c in variables.rwxClaims)).join(', ') + ' the platform does not know to be)') + ': use evictionStrategy None, as virtc writes for such a VM'`,
		Intent:     checkEviction,
	},
	{
		Name:       "network-attachment",
		Changes:    true,
		What:       "no NetworkAttachmentDefinition of the tenant's own: only those virtc writes, as it writes them (OVN-Kubernetes writes those of the platform's user-defined networks)",
		Source:     "000 Authorization and lifecycle boundaries (no authority to create unapproved external network attachments)",
		Resources:  []string{"k8s.cni.cncf.io/network-attachment-definitions"},
		Reads:      []Read{{Object: "metadata.name"}, {Object: "spec.config"}},
		Expression: `!variables.nad || object.metadata.name in variables.nads && has(object.spec) && has(object.spec.config) && object.spec.config == variables.nads[object.metadata.name]`,
		Message:    `'virtc guardrail network-attachment: ' + variables.where + ': the platform provides the network attachments of tenant ' + variables.tenant + ' (' + (size(variables.nads) == 0 ? 'none' : variables.nads.map(k, k).join(', ') + ', as virtc writes them from the network profiles the tenant may use') + '); a tenant creates or changes none'`,
		Output:     checkNADs,
	},
	{
		Name:       "user-defined-network",
		Changes:    true,
		What:       "no UserDefinedNetwork of the tenant's own: only the primary network virtc writes, as it writes it (OVN-Kubernetes turns one into a network attachment)",
		Source:     "000 Runtime, storage, and network model (UDN only as governed profiles) and Authorization and lifecycle boundaries",
		Resources:  []string{"k8s.ovn.org/userdefinednetworks"},
		Reads:      []Read{{Object: "metadata.name"}, {Object: "spec"}},
		Expression: `!variables.udn || object.metadata.name in variables.udns && has(object.spec) && object.spec == variables.udns[object.metadata.name]`,
		Message:    `'virtc guardrail user-defined-network: ' + variables.where + ': the platform provides the user-defined networks of tenant ' + variables.tenant + ' (' + (size(variables.udns) == 0 ? 'none' : variables.udns.map(k, k).join(', ') + ', as virtc writes them') + '); a tenant creates or changes none'`,
		Output:     checkUDNs,
	},
	{
		Name:       "backup",
		What:       "the labels that steer backups as the platform sets them: a VM's backup-policy label only one of the policies it may use, and no velero.io/exclude-from-backup on a VM, DataVolume or claim (what an object already carries, unchanged, is not judged again)",
		Source:     "000 Applicable Principles (protection selection is mandatory before production onboarding); Velero v1.18.3 pkg/backup (velero.io/exclude-from-backup leaves the object out)",
		Resources:  []string{"kubevirt.io/virtualmachines", "cdi.kubevirt.io/datavolumes", "/persistentvolumeclaims"},
		Reads:      []Read{{Object: "metadata.labels", Intent: "spec.backup"}, {Object: "spec.dataVolumeTemplates[*].metadata.labels", Intent: "spec.backup"}},
		Expression: `!('velero.io/exclude-from-backup' in variables.changedLabels) && variables.newDVTemplates.all(t, !has(t.metadata) || !has(t.metadata.labels) || !('velero.io/exclude-from-backup' in t.metadata.labels)) && (!variables.vm || !('` + model.LabelBackupPolicy + `' in variables.changedLabels) || (variables.name in variables.vmBackupPolicies ? variables.labels['` + model.LabelBackupPolicy + `'] in variables.vmBackupPolicies[variables.name] : variables.labels['` + model.LabelBackupPolicy + `'] in (variables.vmProduction ? variables.productionBackupPolicies : variables.backupPolicies)))`,
		Message:    `'virtc guardrail backup: ' + variables.where + ': ' + ('velero.io/exclude-from-backup' in variables.changedLabels || !variables.newDVTemplates.all(t, !has(t.metadata) || !has(t.metadata.labels) || !('velero.io/exclude-from-backup' in t.metadata.labels)) ? 'label velero.io/exclude-from-backup would leave it out of every backup' : 'backup policy ' + variables.labels['` + model.LabelBackupPolicy + `'] + ' is not one ' + (variables.name in variables.vmBackupPolicies ? 'the VM may use (' + variables.vmBackupPolicies[variables.name].join(', ') : 'a VM of tenant ' + variables.tenant + ' may use (' + (variables.vmProduction ? variables.productionBackupPolicies : variables.backupPolicies).join(', ')) + ')') + ' (the backups of tenant ' + variables.tenant + ' are declared in Git)'`,
		Intent:     checkBackup,
		Output:     checkBackupLabels,
	},
	{
		Name:       "confidential",
		Changes:    true,
		What:       "no confidential VM (launchSecurity): memory encryption is a Technology Preview and cannot be enabled",
		Source:     "000 Workload eligibility matrix (confidential VMs and Technology Preview features: excluded)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec.template.spec.domain.launchSecurity", Intent: "spec.confidential"}},
		Expression: `!variables.vm || !has(variables.domain.launchSecurity) || ` + keptCEL("spec.template.spec.domain.launchSecurity") + ``,
		Message:    `'virtc guardrail confidential: ' + variables.where + ': spec.template.spec.domain.launchSecurity: confidential VMs are excluded from the platform baseline (memory encryption is a Technology Preview in OpenShift Virtualization)'`,
		Intent:     func(c *VMCheck) { c.refuse(c.j.confidential(c.VM)) },
	},
	{
		Name:       "disk-limits",
		Changes:    true,
		What:       "no more data disks than the Platform allows, and no disk or claim larger than it allows",
		Source:     "the Platform's spec.limits (maxDataDisks, maxDiskSize)",
		Resources:  []string{"kubevirt.io/virtualmachines", "cdi.kubevirt.io/datavolumes", "/persistentvolumeclaims"},
		Reads:      []Read{{Object: "spec.template.spec.volumes", Intent: "spec.disks"}, {Object: "spec.dataVolumeTemplates[*].spec.storage.resources.requests.storage", Intent: "spec.rootDisk"}, {Object: "spec.storage.resources.requests.storage", Intent: "spec.disks[*].size"}, {Object: "spec.resources.requests.storage", Intent: "spec.disks[*].size"}},
		Expression: `(!variables.vm || size(variables.volumes.filter(v, has(v.persistentVolumeClaim) || has(v.dataVolume))) <= variables.maxDataDisks + 1) && variables.newDiskSpecs.all(s, !has(s.storage) || !has(s.storage.resources) || !has(s.storage.resources.requests) || !('storage' in s.storage.resources.requests) || quantity(string(s.storage.resources.requests.storage)).compareTo(quantity(variables.maxDiskSize)) <= 0) && (!variables.pvc || !has(object.spec.resources) || !has(object.spec.resources.requests) || !('storage' in object.spec.resources.requests) || quantity(string(object.spec.resources.requests.storage)).compareTo(quantity(variables.maxDiskSize)) <= 0)`,
		Message:    `'virtc guardrail disk-limits: ' + variables.where + ': ' + (variables.vm && size(variables.volumes.filter(v, has(v.persistentVolumeClaim) || has(v.dataVolume))) > variables.maxDataDisks + 1 ? string(size(variables.volumes.filter(v, has(v.persistentVolumeClaim) || has(v.dataVolume))) - 1) + ' data disks, more than the platform allows (' + string(variables.maxDataDisks) + ')' : 'a disk larger than the platform allows (' + variables.maxDiskSize + ')')`,
		Intent:     checkDiskLimits,
	},
	{
		Name:       "template-fields",
		What:       "a VM's spec only of the fields virtc writes (its allow list, templateFields); a field a VM already has, unchanged, is kept, so an adopted VM keeps what it runs with",
		Source:     "000 Authorization and lifecycle boundaries (tenants operate approved VirtualMachines; no arbitrary node placement, privileged-device access or unapproved attachments); KubeVirt v1.8.4 pkg/instancetype/apply (an instance type conflicts only with the fields it sets itself: priorityClassName, schedulerName, dedicated CPUs, huge pages and the rest stay open)",
		Resources:  []string{"kubevirt.io/virtualmachines"},
		Reads:      []Read{{Object: "spec"}},
		Expression: `size(variables.templateOffenders) == 0`,
		Message:    `'virtc guardrail template-fields: ' + variables.where + ': ' + variables.templateOffenders.join(', ') + ': fields virtc does not write, which tenant ' + variables.tenant + ' may not add or change (declare the VM in Git: virtc explain VM)'`,
		Output:     checkTemplateFields,
	},
}

// refuseKinds is an Output check that the compile writes no object of the
// kinds into a tenant's namespace.
func refuseKinds(kinds ...string) func(c *ObjectCheck) {
	return func(c *ObjectCheck) {
		if slices.Contains(kinds, c.Object.Kind) {
			c.refuse("virtc writes no %s into a tenant's namespace", c.Object.Kind)
		}
	}
}

// cdiActKeys are the annotations that make CDI act on a claim (import,
// upload or clone data into it) or change the importer pods it runs for
// one, as prefixes (ending in .) or whole keys.
var cdiActKeys = []string{
	"cdi.kubevirt.io/storage.import.",
	"cdi.kubevirt.io/storage.upload.target",
	"cdi.kubevirt.io/storage.clone.",
	"cdi.kubevirt.io/storage.pod.",
	"cdi.kubevirt.io/storage.populator.",
	"k8s.io/CloneRequest",
	"k8s.io/CloneOf",
	"k8s.v1.cni.cncf.io/networks",
	"v1.multus-cni.io/default-network",
	"sidecar.istio.io/inject",
	"linkerd.io/inject",
}

// cdiActKey reports whether an annotation key is one of cdiActKeys.
func cdiActKey(k string) bool {
	for _, p := range cdiActKeys {
		if k == p || strings.HasSuffix(p, ".") && strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// backupLabelKeys are the labels that steer backups.
var backupLabelKeys = []string{model.LabelBackupPolicy, "velero.io/exclude-from-backup"}

// isBlock reports a Block storage profile (a helper for messages).
func isBlock(p *api.StorageProfile) bool { return p.Spec.VolumeMode == "Block" }
