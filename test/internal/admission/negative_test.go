package admission

import (
	"strings"
	"testing"
)

// The checker must be able to fail: hand-broken objects, each denied by
// upstream code with the upstream message (the files and messages are
// those of KubeVirt v1.8.4 and CDI v1.65.0 named in each case), and
// references nobody provides.

// negativeBase is a valid tenant: namespace, a claim, a VM on a common
// instancetype and preference cloning a platform boot source.
const negativeBase = `apiVersion: v1
kind: Namespace
metadata:
  name: neg
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: good
  namespace: neg
spec:
  runStrategy: Always
  instancetype:
    kind: VirtualMachineClusterInstancetype
    name: u1.medium
  preference:
    kind: VirtualMachineClusterPreference
    name: rhel.9
  dataVolumeTemplates:
  - metadata:
      name: good-root
    spec:
      sourceRef:
        kind: DataSource
        name: rhel9
        namespace: openshift-virtualization-os-images
      storage:
        resources:
          requests:
            storage: 30Gi
  template:
    spec:
      domain:
        devices: {}
      volumes:
      - name: rootdisk
        dataVolume:
          name: good-root
`

type negativeCase struct {
	name string
	yaml string
	// want: each must be a substring of one finding (object and message).
	want []string
}

var negativeCases = []negativeCase{
	{
		// pkg/instancetype/apply (conflict.Conflicts, "VM field(s) %s
		// conflicts with selected instance type"), through VMsAdmitter.
		name: "instancetype with explicit cpu cores",
		yaml: `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: cores
  namespace: neg
spec:
  runStrategy: Always
  instancetype:
    name: u1.medium
  template:
    spec:
      domain:
        cpu:
          cores: 2
        devices: {}
`,
		want: []string{"VirtualMachine neg/cores", "kubevirt VM validating admitter", "VM field(s) spec.template.spec.domain.cpu.cores conflicts with selected instance type"},
	},
	{
		// pkg/storage/admitters/data-volume-template.go ValidateDataVolumeTemplate
		name: "dataVolumeTemplate no volume uses",
		yaml: `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: orphan
  namespace: neg
spec:
  runStrategy: Always
  instancetype:
    name: u1.medium
  preference:
    name: rhel.9
  dataVolumeTemplates:
  - metadata:
      name: orphan-data
    spec:
      source:
        blank: {}
      storage:
        resources:
          requests:
            storage: 10Gi
  template:
    spec:
      domain:
        devices: {}
`,
		want: []string{"VirtualMachine neg/orphan", "DataVolumeTemplate entry spec.dataVolumeTemplate[0] must be referenced in the VMI template's 'volumes' list"},
	},
	{
		// CDI pkg/apiserver/webhooks/datavolume-validate.go validateDataVolumeSpec
		name: "DataVolume with both source and sourceRef",
		yaml: `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: both
  namespace: neg
spec:
  source:
    blank: {}
  sourceRef:
    kind: DataSource
    name: rhel9
    namespace: openshift-virtualization-os-images
  storage:
    resources:
      requests:
        storage: 10Gi
`,
		want: []string{"DataVolume neg/both", "cdi DataVolume webhook", "Data volume should have either Source or SourceRef, or be externally populated"},
	},
	{
		// pkg/instancetype/preference/requirements, through VMsAdmitter
		// ("failure checking preference requirements")
		name: "size too small for its preference (u1.nano with rhel.9)",
		yaml: `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: tiny
  namespace: neg
spec:
  runStrategy: Always
  instancetype:
    name: u1.nano
  preference:
    name: rhel.9
  template:
    spec:
      domain:
        devices: {}
`,
		want: []string{"VirtualMachine neg/tiny", "failure checking preference requirements: insufficient Memory resources of 512Mi provided by instance type, preference requires 1536Mi"},
	},
	{
		// A dataVolumeTemplate with both source and sourceRef is admitted
		// upstream (the VM controller resolves the sourceRef into source,
		// pkg/storage/types/dv.go GenerateDataVolumeFromTemplate); two
		// sources are not (pkg/storage/admitters/data-volume-template.go
		// validateNumberOfSources).
		name: "dataVolumeTemplate with two sources",
		yaml: `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: tmpl
  namespace: neg
spec:
  runStrategy: Always
  instancetype:
    name: u1.medium
  dataVolumeTemplates:
  - metadata:
      name: tmpl-root
    spec:
      source:
        blank: {}
        http:
          url: https://images.example.com/disk.qcow2
      storage:
        resources:
          requests:
            storage: 10Gi
  template:
    spec:
      domain:
        devices: {}
      volumes:
      - name: rootdisk
        dataVolume:
          name: tmpl-root
`,
		want: []string{"VirtualMachine neg/tmpl", "kubevirt VM validating admitter", "Multiple dataVolume sources"},
	},
	{
		// CDI datavolume-validate.go Admit: a claim of the same name that
		// may not be adopted. Denied only when the claim exists.
		name: "DataVolume refusing claim adoption",
		yaml: `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: noadopt
  namespace: neg
  annotations:
    cdi.kubevirt.io/allowClaimAdoption: "false"
spec:
  source:
    blank: {}
  storage:
    resources:
      requests:
        storage: 10Gi
`,
		want: []string{"DataVolume neg/noadopt", "claim noadopt exists", "Destination PVC neg/noadopt already exists"},
	},
	{
		// CDI pkg/apiserver/webhooks/dataimportcron-validate.go
		name: "dataImportCronTemplate with a bad schedule",
		yaml: `apiVersion: hco.kubevirt.io/v1beta1
kind: HyperConverged
metadata:
  name: kubevirt-hyperconverged
  namespace: openshift-cnv
spec:
  dataImportCronTemplates:
  - metadata:
      name: bad-cron
    spec:
      schedule: "every day"
      managedDataSource: bad
      template:
        spec:
          source:
            registry:
              url: docker://quay.io/containerdisks/fedora:latest
          storage:
            resources:
              requests:
                storage: 10Gi
`,
		want: []string{"HyperConverged openshift-cnv/kubevirt-hyperconverged", "cdi DataImportCron webhook", "Illegal cron schedule"},
	},
	{
		// pkg/instancetype/webhooks ValidateInstanceTypeSpec
		name: "instancetype with overcommit and hugepages",
		yaml: `apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  name: broken
spec:
  cpu:
    guest: 1
  memory:
    guest: 1Gi
    overcommitPercent: 10
    hugepages:
      pageSize: 2Mi
`,
		want: []string{"VirtualMachineClusterInstancetype broken", "kubevirt instancetype admitter", "overcommitPercent"},
	},
	{
		// Admitted as a VM; the VMI create admitter
		// (vmi-create-admitter.go ValidateVirtualMachineInstanceMandatoryFields)
		// denies the VMI of its template.
		name: "no instancetype and no memory",
		yaml: `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: nomem
  namespace: neg
spec:
  runStrategy: Always
  template:
    spec:
      domain:
        devices: {}
`,
		want: []string{"VirtualMachine neg/nomem", "kubevirt VMI create admitter (expanded template)", "no memory requested"},
	},
	{
		name: "migration network nobody provides",
		yaml: `apiVersion: hco.kubevirt.io/v1beta1
kind: HyperConverged
metadata:
  name: kubevirt-hyperconverged
  namespace: openshift-cnv
spec:
  liveMigrationConfig:
    network: migration-net
`,
		want: []string{"HyperConverged openshift-cnv/kubevirt-hyperconverged", "spec.liveMigrationConfig.network: NetworkAttachmentDefinition openshift-cnv/migration-net is not in the stream"},
	},
	{
		name: "instancetype, preference and DataSource nobody provides",
		yaml: `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: ghost
  namespace: neg
spec:
  runStrategy: Always
  instancetype:
    name: x9.enormous
  preference:
    name: plan9
  dataVolumeTemplates:
  - metadata:
      name: ghost-root
    spec:
      sourceRef:
        kind: DataSource
        name: plan9
        namespace: openshift-virtualization-os-images
      storage:
        resources:
          requests:
            storage: 10Gi
  template:
    spec:
      domain:
        devices: {}
      volumes:
      - name: rootdisk
        dataVolume:
          name: ghost-root
      - name: data
        persistentVolumeClaim:
          claimName: ghost-data
`,
		want: []string{
			"VirtualMachineClusterInstancetype x9.enormous is neither in the stream nor in the common-instancetypes bundle",
			"VirtualMachineClusterPreference plan9 is neither in the stream nor in the common-instancetypes bundle",
			"DataSource openshift-virtualization-os-images/plan9 is neither in the stream nor a boot source of the platform",
			"claim neg/ghost-data is neither in the stream nor created by a DataVolume of it",
		},
	},
	{
		// kubevirt v1.8.4 pkg/virt-api/webhooks/validating-webhook/admitters/
		// migrationpolicy-admitter.go: negative bandwidthPerMigration and
		// completionTimeoutPerGiB, "must not be negative".
		name: "MigrationPolicy with negative bandwidth",
		yaml: `apiVersion: migrations.kubevirt.io/v1alpha1
kind: MigrationPolicy
metadata:
  name: slow
spec:
  bandwidthPerMigration: -64Mi
  completionTimeoutPerGiB: -1
  selectors:
    namespaceSelector:
      kubernetes.io/metadata.name: neg
`,
		want: []string{
			"MigrationPolicy slow: kubevirt migration policy admitter: spec.completionTimeoutPerGiB: must not be negative",
			"spec.bandwidthPerMigration: must not be negative",
		},
	},
	{
		// kubevirt v1.8.4 pkg/storage/admitters/vmsnapshot.go: the source
		// must be a kubevirt.io VirtualMachine ("invalid kind",
		// "invalid apiGroup"); the Snapshot gate is on (HCO hardCodeKvFgs).
		name: "VirtualMachineSnapshot of a VMI and of a foreign group",
		yaml: `apiVersion: snapshot.kubevirt.io/v1beta1
kind: VirtualMachineSnapshot
metadata:
  name: snap-vmi
  namespace: neg
spec:
  source:
    apiGroup: kubevirt.io
    kind: VirtualMachineInstance
    name: good
---
apiVersion: snapshot.kubevirt.io/v1beta1
kind: VirtualMachineSnapshot
metadata:
  name: snap-apps
  namespace: neg
spec:
  source:
    apiGroup: apps
    kind: VirtualMachine
    name: good
`,
		want: []string{
			"VirtualMachineSnapshot neg/snap-vmi: kubevirt VM snapshot admitter: spec.source.kind: invalid kind",
			"VirtualMachineSnapshot neg/snap-apps: kubevirt VM snapshot admitter: spec.source.apiGroup: invalid apiGroup",
		},
	},
	{
		// kubevirt v1.8.4 pkg/storage/admitters/vmrestore.go: patches only
		// under /spec/ (validatePatches), volumeRestorePolicy one of
		// InPlace, RandomizeNames, PrefixTargetName; the snapshot and its
		// VM are in the cluster (validateTargetVM reads both).
		name: "VirtualMachineRestore with a metadata patch and an unknown volume policy",
		yaml: `apiVersion: snapshot.kubevirt.io/v1beta1
kind: VirtualMachineSnapshot
metadata:
  name: good-snap
  namespace: neg
spec:
  source:
    apiGroup: kubevirt.io
    kind: VirtualMachine
    name: good
---
apiVersion: snapshot.kubevirt.io/v1beta1
kind: VirtualMachineRestore
metadata:
  name: bad-restore
  namespace: neg
spec:
  target:
    apiGroup: kubevirt.io
    kind: VirtualMachine
    name: good
  virtualMachineSnapshotName: good-snap
  volumeRestorePolicy: Everywhere
  patches:
  - '{"op": "replace", "path": "/metadata/name", "value": "other"}'
`,
		want: []string{
			"VirtualMachineRestore neg/bad-restore: kubevirt VM restore admitter: spec.patches: patching is valid only for elements under /spec/ only",
			`spec.volumeRestorePolicy: volume restore policy "Everywhere" doesn't exist`,
		},
	},
}

func TestNegativeBaseAdmitted(t *testing.T) {
	rep, err := Check("negative/base", []byte(negativeBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("valid base not admitted: %s", f)
	}
	if rep.Reviews < 6 {
		t.Errorf("only %d reviews on the base stream", rep.Reviews)
	}
}

func TestNegative(t *testing.T) {
	for _, tc := range negativeCases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Check("negative/"+tc.name, []byte(negativeBase+"---\n"+tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			all := findingLines(rep)
			t.Logf("findings:\n%s", all)
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("no finding contains %q; findings:\n%s", w, all)
				}
			}
			for _, f := range rep.Findings {
				if strings.Contains(f.Object(), "/good") || strings.Contains(f.Message, "checker error") {
					t.Errorf("unexpected finding: %s", f)
				}
			}
		})
	}
}

// findingLines are the report's findings, one a line.
func findingLines(rep *Report) string {
	var lines []string
	for _, f := range rep.Findings {
		lines = append(lines, f.String())
	}
	return strings.Join(lines, "\n")
}

// TestNegativeUpdate: a DataVolume whose spec changes between two outputs
// (CDI datavolume-validate.go: "Cannot update DataVolume Spec"), and an
// unchanged one, which passes.
func TestNegativeUpdate(t *testing.T) {
	dv := func(size string) string {
		return negativeBase + `---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: data
  namespace: neg
spec:
  source:
    blank: {}
  storage:
    resources:
      requests:
        storage: ` + size + "\n"
	}
	rep, err := CheckUpdate("negative/update", []byte(dv("10Gi")), []byte(dv("20Gi")))
	if err != nil {
		t.Fatal(err)
	}
	all := findingLines(rep)
	t.Logf("findings:\n%s", all)
	if len(rep.Findings) != 1 || !strings.Contains(all, "DataVolume neg/data: cdi DataVolume webhook (update): DataVolume.Spec: Cannot update DataVolume Spec") {
		t.Errorf("want exactly the DataVolume spec update denied, got:\n%s", all)
	}
	rep, err = CheckUpdate("negative/no-change", []byte(dv("10Gi")), []byte(dv("10Gi")))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("unchanged output denied: %s", f)
	}
	if rep.Reviews < 3 {
		t.Errorf("only %d update reviews", rep.Reviews)
	}
}
