package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/fn/model"
	"github.com/virtc/virtc/fn/rules"
	"sigs.k8s.io/yaml"
)

// TestGuardrailPolicies applies the tenants' guardrails policies
// (ValidatingAdmissionPolicies, fn/rules/admission.go) to
// a real API server and checks what issue 24 asks of them:
//
//   - a tenant's user, holding exactly the RoleBindings virtc emits (and
//     the upstream roles they name, testdata/upstream-edit-roles.yaml),
//     who writes around Git is refused each direct bypass with the
//     rule's message;
//   - what KubeVirt and CDI create for the tenant, as their service
//     accounts, is admitted, and so is a tenant's write that keeps to its
//     allowances;
//   - every object of every golden and example output is admitted under
//     its own policies (as the admin identity Argo CD would use).
//
// The server runs with --authorization-mode=RBAC (controlplane.go).
func TestGuardrailPolicies(t *testing.T) {
	bins := binaries(t)
	outputs := append(goldenOutputs(t), exampleOutputs(t)...)
	// Beside the other tests, once the outputs are built (exampleOutputs
	// changes the working directory), and each version on a server of its
	// own, in parallel.
	t.Parallel()
	for _, version := range platformVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			c := startControlPlane(t, bins, version)
			installEditRoles(t, c)
			if version == platformVersions[0] {
				t.Run("bypasses", func(t *testing.T) { checkBypasses(t, c) })
			}
			admitted := 0
			for _, o := range forVersion(t, outputs, version) {
				t.Run(o.name, func(t *testing.T) { admitted += checkAdmitted(t, c, o) })
			}
			t.Logf("platform %s: %d objects admitted under their tenants' guardrails", version, admitted)
		})
	}
}

// installEditRoles installs KubeVirt's and CDI's edit roles and
// aggregates every ClusterRole labelled aggregate-to-edit into edit, as
// kube-controller-manager's clusterrole-aggregation controller does
// (the test server runs no controller manager).
func installEditRoles(t *testing.T, c *Cluster) {
	t.Helper()
	ctx := t.Context()
	roles, err := os.ReadFile(filepath.Join("testdata", "upstream-edit-roles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(ctx, roles); err != nil {
		t.Fatal(err)
	}
	out, err := c.CP.Get(ctx, "/apis/rbac.authorization.k8s.io/v1/clusterroles?labelSelector="+url.QueryEscape("rbac.authorization.k8s.io/aggregate-to-edit=true"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []struct {
			Rules []any `json:"rules"`
		} `json:"items"`
	}
	if err := yaml.Unmarshal(out, &list); err != nil {
		t.Fatal(err)
	}
	var rules []any
	for _, r := range list.Items {
		rules = append(rules, r.Rules...)
	}
	edit := Object{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "edit"}
	if err := c.mergePatch(ctx, edit, "", mustJSON(t, map[string]any{"rules": rules})); err != nil {
		t.Fatal(err)
	}
}

// waitEnforced waits until the tenant's policy refuses a probe (a dry
// run): the API server enforces a new policy once its informers see it.
func waitEnforced(t *testing.T, c *Cluster, tenant string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := probeCreate(t.Context(), c, tenant)
		var refused *APIError
		if err != nil && !errors.As(err, &refused) {
			t.Fatal(err)
		}
		if refused != nil && strings.Contains(refused.Message, "virtc guardrail instancetype") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the guardrails of tenant %s are not enforced after 60s: %v", tenant, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// probeCreate dry-runs the creation of the tenant's probe VM as the admin,
// as `kubectl create --dry-run=server` does: nil when it is admitted, an
// *APIError when the server refuses it.
func probeCreate(ctx context.Context, c *Cluster, tenant string) error {
	objs, err := ParseObjects([]byte(probeVM(tenant)))
	if err != nil {
		return err
	}
	return c.create(ctx, objs[0], true, nil)
}

// probeVM is a VM of a size no catalog has, in the tenant's namespace.
func probeVM(tenant string) string {
	return fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: virtc-guardrail-probe, namespace: %s}
spec:
  runStrategy: Halted
  instancetype: {name: virtc-guardrail-probe}
  template: {spec: {domain: {devices: {}}}}
`, tenant)
}

// checkAdmitted puts an output's namespaces and its tenants' policies in
// force, then dry-runs the whole output on the server: every object must
// pass its tenant's guardrails. It returns the number of objects
// admitted. The policies are deleted again (and the test waits until the
// server no longer enforces them, since the next output may hold other
// policies of the same names); the namespaces stay, for the next outputs.
func checkAdmitted(t *testing.T, c *Cluster, o output) int {
	ctx := t.Context()
	objs, err := ParseObjects(o.yaml)
	if err != nil {
		t.Fatal(err)
	}
	var inForce []Object
	var tenants []string
	for _, obj := range objs {
		switch obj.Kind {
		case "Namespace":
			inForce = append(inForce, obj)
		case "ValidatingAdmissionPolicy":
			labels, _ := obj.Doc["metadata"].(map[string]any)["labels"].(map[string]any)
			tenants = append(tenants, labels[model.LabelTenant].(string))
			inForce = append(inForce, obj)
		case "ValidatingAdmissionPolicyBinding":
			inForce = append(inForce, obj)
		}
	}
	if len(tenants) == 0 {
		t.Skip("no tenant, so no guardrails: nothing to judge")
	}
	prepare(t, c, objs)
	stream, err := Stream(inForce)
	if err != nil {
		t.Fatal(err)
	}
	inForceFile, err := c.file(stream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CP.MustKubectl(ctx, nil, ApplyArgs(inForceFile, false)...); err != nil {
		t.Fatal(err)
	}
	policies := slices.DeleteFunc(slices.Clone(inForce), func(o Object) bool { return o.Kind == "Namespace" })
	t.Cleanup(func() {
		ctx := context.WithoutCancel(ctx)
		for _, p := range policies {
			if err := c.remove(ctx, p, false); err != nil {
				t.Errorf("clean up: %v", err)
			}
		}
		for _, tenant := range tenants {
			if err := waitLifted(ctx, c, tenant); err != nil {
				t.Error(err)
			}
		}
	})
	for _, tenant := range tenants {
		waitEnforced(t, c, tenant)
	}
	file, err := c.file(o.yaml)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.CP.Kubectl(ctx, nil, ApplyArgs(file, true)...)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("the output is refused under its tenants' guardrails (%s): %s", strings.Join(tenants, ", "), res)
	}
	return len(objs)
}

// waitLifted waits until the probe of waitEnforced is admitted again:
// the server no longer enforces the tenant's deleted policy.
func waitLifted(ctx context.Context, c *Cluster, tenant string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := probeCreate(ctx, c, tenant)
		if err == nil {
			return nil
		}
		var refused *APIError
		if !errors.As(err, &refused) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the deleted guardrails of tenant %s are still enforced after 60s: %v", tenant, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bypass is one write a tenant's user tries around Git.
type bypass struct {
	name string
	// as is the user: a tenant's edit group member ("tenant" plus its
	// group) or a controller's service account.
	as     []string
	object string
	// update: the object exists; the user changes it (a server-side
	// apply) rather than creating it.
	update bool
	// refused: the rule's message must contain every one of these; none:
	// the write is admitted.
	refused []string
}

func checkBypasses(t *testing.T, c *Cluster) {
	ctx := t.Context()
	// The golden's output (go test ./golden checks it is the build's).
	out, err := os.ReadFile(filepath.Join(repoRoot, "golden", "guardrails", "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ParseObjects(out)
	if err != nil {
		t.Fatal(err)
	}
	env := prepare(t, c, objs)
	t.Cleanup(func() {
		ctx := context.WithoutCancel(ctx)
		if err := c.Delete(ctx, objs); err != nil {
			t.Errorf("clean up: %v", err)
		}
		if err := c.Delete(ctx, env); err != nil {
			t.Errorf("clean up: %v", err)
		}
	})
	apply(t, c, "apply", out)
	waitEnforced(t, c, "plain")
	waitEnforced(t, c, "lab")

	// The controllers' service accounts hold broad roles in a cluster
	// (virt-operator's and cdi-operator's); cluster-admin stands in for
	// them here, so that only the policy decides. Tenants are granted
	// NetworkAttachmentDefinitions here too: OpenShift may aggregate them
	// into edit; the policy must refuse them either way.
	grants := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: virtc-test-controllers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
`
	for _, sa := range rules.Exempt {
		parts := strings.Split(sa, ":")
		grants += fmt.Sprintf("- {kind: ServiceAccount, namespace: %s, name: %s}\n", parts[2], parts[3])
	}
	// Components of the exempt namespaces and control-plane users
	// (rules.ExemptNamespaces, exemptCondition), and a tenant's own
	// service account, which stays judged.
	grants += `- {kind: ServiceAccount, namespace: openshift-cnv, name: kubevirt-handler}
- {kind: ServiceAccount, namespace: kube-system, name: persistent-volume-binder}
- {kind: ServiceAccount, namespace: plain, name: default}
- {kind: User, apiGroup: rbac.authorization.k8s.io, name: "system:kube-scheduler"}
`
	grants += `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: virtc-test-nad-edit}
rules:
- apiGroups: [k8s.cni.cncf.io]
  resources: [network-attachment-definitions]
  verbs: [create, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: virtc-test-nad-edit}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: virtc-test-nad-edit}
subjects:
- {kind: Group, apiGroup: rbac.authorization.k8s.io, name: plain-devs}
- {kind: Group, apiGroup: rbac.authorization.k8s.io, name: lab-devs}
`
	grantObjs, err := ParseObjects([]byte(grants))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(ctx, []byte(grants)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.WithoutCancel(ctx), grantObjs); err != nil {
			t.Errorf("clean up: %v", err)
		}
	})

	plain := []string{"--as=alice", "--as-group=plain-devs"}
	lab := []string{"--as=bob", "--as-group=lab-devs"}
	sa := func(name string) []string {
		for _, e := range rules.Exempt {
			if strings.HasSuffix(e, ":"+name) {
				return []string{"--as=" + e}
			}
		}
		t.Fatalf("no exempt service account %s", name)
		return nil
	}
	cases := []bypass{
		// Admitted: the tenant keeps to its allowances.
		{name: "allowed VM", as: plain, object: vm("plain", "ok", nil)},
		{name: "allowed GPU, network and pool", as: lab, object: vm("lab", "ok", func(v map[string]any) {
			spec := vmiSpec(v)
			spec["domain"].(map[string]any)["devices"].(map[string]any)["gpus"] = []any{map[string]any{"name": "g1", "deviceName": "nvidia.com/A100"}}
			spec["domain"].(map[string]any)["devices"].(map[string]any)["interfaces"] = []any{
				map[string]any{"name": "default", "masquerade": map[string]any{}},
				map[string]any{"name": "lab", "bridge": map[string]any{}},
				map[string]any{"name": "vf", "sriov": map[string]any{}},
			}
			spec["networks"] = []any{
				map[string]any{"name": "default", "pod": map[string]any{}},
				map[string]any{"name": "lab", "multus": map[string]any{"networkName": "lab-bridge"}},
				map[string]any{"name": "vf", "multus": map[string]any{"networkName": "lab/lab-sriov"}},
			}
			spec["nodeSelector"] = map[string]any{"node-role.kubernetes.io/virt": "", "pool.example.com/gpu": ""}
			spec["tolerations"] = []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}}
			spec["evictionStrategy"] = "None"
		})},
		{name: "allowed blank DataVolume", as: plain, object: dataVolume("plain", "scratch", map[string]any{"blank": map[string]any{}}, "ocs-external-storagecluster-ceph-rbd")},
		{name: "allowed claim", as: plain, object: claim("plain", "data", "ocs-external-storagecluster-ceph-rbd", nil, nil)},
		{name: "the NAD virtc writes, as it writes it", as: lab, update: true, object: nadFrom(t, objs, "lab", "lab-bridge", "")},

		// Refused: each direct bypass, with its rule's message.
		{name: "unapproved image (DataSource elsewhere)", as: plain, object: vm("plain", "img", func(v map[string]any) {
			dvt(v)["sourceRef"] = map[string]any{"kind": "DataSource", "namespace": "plain", "name": "my-image"}
		}), refused: []string{"virtc guardrail image-source: VirtualMachine plain/img: a disk source that is not in the catalog", "openshift-virtualization-os-images/rhel9"}},
		{name: "root disk from an arbitrary URL", as: plain, object: vm("plain", "url", func(v map[string]any) {
			delete(dvt(v), "sourceRef")
			dvt(v)["source"] = map[string]any{"http": map[string]any{"url": "https://example.com/evil.qcow2"}}
		}), refused: []string{"virtc guardrail image-source"}},
		{name: "DataVolume from an arbitrary URL", as: plain, object: dataVolume("plain", "url", map[string]any{"http": map[string]any{"url": "https://example.com/evil.qcow2"}}, "ocs-external-storagecluster-ceph-rbd"),
			refused: []string{"virtc guardrail image-source: DataVolume plain/url"}},
		{name: "registry image not pinned in the catalog", as: plain, object: dataVolume("plain", "reg", map[string]any{"registry": map[string]any{"url": "docker://quay.io/evil/disk:latest"}}, "ocs-external-storagecluster-ceph-rbd"),
			refused: []string{"virtc guardrail image-source"}},
		{name: "other size", as: lab, object: vm("lab", "size", func(v map[string]any) {
			v["spec"].(map[string]any)["instancetype"] = map[string]any{"kind": "VirtualMachineClusterInstancetype", "name": "cx1.8xlarge"}
		}), refused: []string{"virtc guardrail instancetype: VirtualMachine lab/size: spec.instancetype: VirtualMachineClusterInstancetype cx1.8xlarge is not a size tenant lab may use (allowed: u1.2xlarge"}},
		{name: "a namespaced instance type of its own", as: plain, object: vm("plain", "own-size", func(v map[string]any) {
			v["spec"].(map[string]any)["instancetype"] = map[string]any{"kind": "VirtualMachineInstancetype", "name": "u1.small"}
		}), refused: []string{"virtc guardrail instancetype"}},
		{name: "no instance type (CPU and memory of its own)", as: plain, object: vm("plain", "no-size", func(v map[string]any) {
			delete(v["spec"].(map[string]any), "instancetype")
			vmiSpec(v)["domain"].(map[string]any)["memory"] = map[string]any{"guest": "256Gi"}
		}), refused: []string{"virtc guardrail instancetype: VirtualMachine plain/no-size: spec.instancetype: none"}},
		{name: "preference not allowed", as: plain, object: vm("plain", "pref", func(v map[string]any) {
			v["spec"].(map[string]any)["preference"] = map[string]any{"kind": "VirtualMachineClusterPreference", "name": "windows.11"}
		}), refused: []string{"virtc guardrail preference: VirtualMachine plain/pref: spec.preference: VirtualMachineClusterPreference windows.11 is not the preference of an image tenant plain may use"}},
		{name: "host device", as: plain, object: vm("plain", "hostdev", func(v map[string]any) {
			vmiSpec(v)["domain"].(map[string]any)["devices"].(map[string]any)["hostDevices"] = []any{map[string]any{"name": "h1", "deviceName": "intel.com/qat"}}
		}), refused: []string{"virtc guardrail devices: VirtualMachine plain/hostdev: device intel.com/qat: tenant plain allows no devices"}},
		{name: "GPU", as: plain, object: vm("plain", "gpu", func(v map[string]any) {
			vmiSpec(v)["domain"].(map[string]any)["devices"].(map[string]any)["gpus"] = []any{map[string]any{"name": "g1", "deviceName": "nvidia.com/A100"}}
		}), refused: []string{"virtc guardrail devices: VirtualMachine plain/gpu: device nvidia.com/A100"}},
		{name: "GPU of another vendor", as: lab, object: vm("lab", "gpu", func(v map[string]any) {
			vmiSpec(v)["domain"].(map[string]any)["devices"].(map[string]any)["gpus"] = []any{map[string]any{"name": "g1", "deviceName": "amd.com/MI300"}}
		}), refused: []string{"device amd.com/MI300: tenant lab does not allow it (spec.allow.devices: nvidia.com/*)"}},
		{name: "foreign network", as: plain, object: vm("plain", "net", func(v map[string]any) {
			withNetwork(v, "lab", map[string]any{"bridge": map[string]any{}}, "lab/lab-bridge")
		}), refused: []string{"virtc guardrail networks: VirtualMachine plain/net: network lab/lab-bridge is not an additional network tenant plain may use (it allows none: the pod network only)"}},
		{name: "SR-IOV interface", as: plain, object: vm("plain", "sriov", func(v map[string]any) {
			spec := vmiSpec(v)
			spec["domain"].(map[string]any)["devices"].(map[string]any)["interfaces"] = []any{map[string]any{"name": "default", "sriov": map[string]any{}}}
			spec["networks"] = []any{map[string]any{"name": "default", "pod": map[string]any{}}}
		}), refused: []string{"virtc guardrail sriov: VirtualMachine plain/sriov: interface default is SR-IOV but not on an SR-IOV network tenant plain may use (it allows none)"}},
		{name: "SR-IOV interface on a bridge network", as: lab, object: vm("lab", "sriov", func(v map[string]any) {
			withNetwork(v, "lab", map[string]any{"sriov": map[string]any{}}, "lab-bridge")
		}), refused: []string{"virtc guardrail sriov: VirtualMachine lab/sriov: interface lab is SR-IOV", "allowed: lab-sriov"}},
		{name: "new NetworkAttachmentDefinition", as: plain, object: nadFrom(t, objs, "lab", "lab-bridge", "plain"),
			refused: []string{"virtc guardrail network-attachment: NetworkAttachmentDefinition plain/lab-bridge: the platform provides the network attachments of tenant plain (none"}},
		{name: "changed NetworkAttachmentDefinition", as: lab, update: true, object: strings.NewReplacer(`"vlan":120`, `"vlan":1`, `\"vlan\":120`, `\"vlan\":1`).Replace(nadFrom(t, objs, "lab", "lab-bridge", "")),
			refused: []string{"virtc guardrail network-attachment: NetworkAttachmentDefinition lab/lab-bridge"}},
		{name: "nodeSelector", as: plain, object: vm("plain", "ns", func(v map[string]any) {
			vmiSpec(v)["nodeSelector"] = map[string]any{"kubernetes.io/hostname": "node-7"}
		}), refused: []string{"virtc guardrail placement: VirtualMachine plain/ns: spec.template.spec: node selector kubernetes.io/hostname=node-7", "general: node selector node-role.kubernetes.io/virt=, pool.example.com/general="}},
		{name: "pool not allowed", as: plain, object: vm("plain", "pool", func(v map[string]any) {
			vmiSpec(v)["nodeSelector"] = map[string]any{"node-role.kubernetes.io/virt": "", "pool.example.com/gpu": ""}
		}), refused: []string{"virtc guardrail placement"}},
		{name: "affinity", as: plain, object: vm("plain", "aff", func(v map[string]any) {
			vmiSpec(v)["affinity"] = map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{
				map[string]any{"matchExpressions": []any{map[string]any{"key": "kubernetes.io/hostname", "operator": "In", "values": []any{"node-7"}}}},
			}}}}
		}), refused: []string{"virtc guardrail placement: VirtualMachine plain/aff", "and a node or pod affinity"}},
		{name: "toleration", as: plain, object: vm("plain", "tol", func(v map[string]any) {
			vmiSpec(v)["tolerations"] = []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}}
		}), refused: []string{"virtc guardrail placement: VirtualMachine plain/tol", "tolerations nvidia.com/gpu|Exists||NoSchedule"}},
		{name: "inline password in cloud-init", as: plain, object: vm("plain", "pw", func(v map[string]any) {
			withCloudInit(v, map[string]any{"userData": "#cloud-config\npassword: hunter2\nchpasswd: {expire: false}\n"})
		}), refused: []string{"virtc guardrail cloud-init-secrets: VirtualMachine plain/pw: inline cloud-init holds a password: secrets must not be in Git or in the VM"}},
		{name: "private key in base64 cloud-init", as: plain, object: vm("plain", "key", func(v map[string]any) {
			withCloudInit(v, map[string]any{"userDataBase64": "I2Nsb3VkLWNvbmZpZwp3cml0ZV9maWxlczoKLSBjb250ZW50OiB8CiAgICAtLS0tLUJFR0lOIE9QRU5TU0ggUFJJVkFURSBLRVktLS0tLQo="})
		}), refused: []string{"virtc guardrail cloud-init-secrets: VirtualMachine plain/key: inline cloud-init in base64, which the guardrail cannot read"}},
		{name: "DataVolume on a storage class not allowed", as: plain, object: dataVolume("plain", "sc", map[string]any{"blank": map[string]any{}}, "lvms-vg1"),
			refused: []string{"virtc guardrail storage-class: DataVolume plain/sc: storage class lvms-vg1 is not one of the storage profiles tenant plain may use (storage classes: ocs-external-storagecluster-ceph-rbd"}},
		{name: "PVC on a storage class not allowed", as: plain, object: claim("plain", "sc", "lvms-vg1", nil, nil),
			refused: []string{"virtc guardrail storage-class: PersistentVolumeClaim plain/sc: storage class lvms-vg1"}},
		{name: "PVC filled by CDI from a URL (annotation)", as: plain, object: claim("plain", "imp", "ocs-external-storagecluster-ceph-rbd", map[string]any{"cdi.kubevirt.io/storage.import.endpoint": "https://example.com/evil.qcow2"}, nil),
			refused: []string{"virtc guardrail claim-source: PersistentVolumeClaim plain/imp"}},
		{name: "PVC from a VolumeImportSource", as: plain, object: claim("plain", "pop", "ocs-external-storagecluster-ceph-rbd", nil, map[string]any{"apiGroup": "cdi.kubevirt.io", "kind": "VolumeImportSource", "name": "evil"}),
			refused: []string{"virtc guardrail claim-source"}},
		{name: "DataImportCron of its own", as: plain, object: `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataImportCron
metadata: {name: evil, namespace: plain}
spec:
  managedDataSource: evil
  schedule: "0 * * * *"
  template:
    spec:
      source: {registry: {url: "docker://quay.io/evil/disk:latest"}}
      storage: {resources: {requests: {storage: 10Gi}}}
`, refused: []string{"virtc guardrail import-source: DataImportCron plain/evil"}},
		{name: "VirtualMachineInstance of its own", as: plain, object: `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: raw, namespace: plain}
spec:
  domain: {devices: {}, memory: {guest: 1Gi}}
`, refused: []string{"virtc guardrail workload-kind: VirtualMachineInstance plain/raw"}},
		{name: "restore with patches", as: plain, object: `apiVersion: snapshot.kubevirt.io/v1beta1
kind: VirtualMachineRestore
metadata: {name: patched, namespace: plain}
spec:
  target: {apiGroup: kubevirt.io, kind: VirtualMachine, name: web01-copy}
  virtualMachineSnapshotName: web01-snap
  patches: ['{"op": "add", "path": "/spec/template/spec/nodeSelector", "value": {"kubernetes.io/hostname": "node-7"}}']
`, refused: []string{"virtc guardrail copy-patches: VirtualMachineRestore plain/patched: spec.patches"}},
		{name: "restore without patches", as: plain, object: `apiVersion: snapshot.kubevirt.io/v1beta1
kind: VirtualMachineRestore
metadata: {name: plain-copy, namespace: plain}
spec:
  target: {apiGroup: kubevirt.io, kind: VirtualMachine, name: web01-copy}
  virtualMachineSnapshotName: web01-snap
`},
		{name: "live migration it cannot have", as: lab, object: vm("lab", "evict", func(v map[string]any) {
			vmiSpec(v)["evictionStrategy"] = "LiveMigrate"
			withNetwork(v, "lab", map[string]any{"bridge": map[string]any{}}, "lab-bridge")
		}), refused: []string{"virtc guardrail eviction: VirtualMachine lab/evict: evictionStrategy LiveMigrate but the VM cannot live-migrate"}},

		// Admitted: what KubeVirt and CDI create for the tenant, as their
		// service accounts: virt-controller's DataVolume from a template
		// and VMI from a VM (KubeVirt v1.8.4 pkg/virt-controller/watch/vm
		// creates them owned by the VM), virt-api's update of a VM
		// (subresources), CDI's claim of an import with its annotations
		// (containerized-data-importer v1.65.0 pkg/controller/import-
		// controller.go), a Velero restore's claim.
		{name: "virt-controller: DataVolume of a template", as: sa("kubevirt-controller"), object: dataVolume("plain", "web01-rootdisk-x", map[string]any{"http": map[string]any{"url": "https://example.com/evil.qcow2"}}, "lvms-vg1")},
		{name: "virt-controller: VirtualMachineInstance of a VM", as: sa("kubevirt-controller"), object: `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: web01, namespace: plain}
spec:
  domain: {devices: {}, memory: {guest: 1Gi}}
`},
		{name: "virt-api: a VM it updates", as: sa("kubevirt-apiserver"), object: vm("plain", "api", func(v map[string]any) {
			vmiSpec(v)["nodeSelector"] = map[string]any{"kubernetes.io/hostname": "node-7"}
		})},
		{name: "CDI: the claim of an import", as: sa("cdi-sa"), object: claim("plain", "prime-x", "ocs-external-storagecluster-ceph-rbd", map[string]any{"cdi.kubevirt.io/storage.import.endpoint": "https://example.com/disk.qcow2"}, nil)},
		// virt-handler updates VMIs whole (KubeVirt v1.8.4
		// pkg/virt-handler/vm.go; no status subresource), the PV binder
		// sets a claim's spec.volumeName and the scheduler its
		// selected-node annotation, also on CDI's claims with their import
		// annotations: none of them is judged.
		{name: "virt-handler: a VMI it writes", as: []string{"--as=system:serviceaccount:openshift-cnv:kubevirt-handler"}, object: `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: web02, namespace: plain}
spec:
  domain: {devices: {}, memory: {guest: 1Gi}}
`},
		{name: "PV binder: a CDI claim it binds", as: []string{"--as=system:serviceaccount:kube-system:persistent-volume-binder"}, object: claim("plain", "prime-y", "ocs-external-storagecluster-ceph-rbd", map[string]any{"cdi.kubevirt.io/storage.import.endpoint": "https://example.com/disk.qcow2"}, nil)},
		{name: "scheduler: a CDI claim's selected node", as: []string{"--as=system:kube-scheduler"}, object: claim("plain", "prime-z", "ocs-external-storagecluster-ceph-rbd", map[string]any{"cdi.kubevirt.io/storage.import.endpoint": "https://example.com/disk.qcow2", "volume.kubernetes.io/selected-node": "node-1"}, nil)},
		// A service account of the tenant's own namespace is the tenant.
		{name: "the tenant's own service account: a VMI", as: []string{"--as=system:serviceaccount:plain:default"}, object: `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: web03, namespace: plain}
spec:
  domain: {devices: {}, memory: {guest: 1Gi}}
`, refused: []string{"virtc guardrail workload-kind"}},
		{name: "Velero: a restored claim", as: sa("velero"), object: claim("plain", "restored", "lvms-vg1", nil, map[string]any{"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "velero-x"})},
	}
	refusedCount := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			admitted, message := tryBypass(t, c, tc)
			if len(tc.refused) == 0 {
				if !admitted {
					t.Errorf("refused, want admitted:\n%s\n%s", message, tc.object)
				}
				return
			}
			refusedCount++
			if admitted {
				t.Errorf("admitted, want refused with %q:\n%s", tc.refused, tc.object)
				return
			}
			if strings.Contains(message, "is forbidden: User") {
				t.Errorf("refused by RBAC, not by the policy (the test's user must hold the rights):\n%s", message)
				return
			}
			for _, want := range tc.refused {
				if !strings.Contains(message, want) {
					t.Errorf("refused without %q:\n%s", want, message)
				}
			}
		})
	}
	if refusedCount < 15 {
		t.Errorf("%d bypasses tried, want at least 15", refusedCount)
	}
}

// tryBypass makes the bypass's write as its user, a server-side dry run:
// an update with `kubectl apply --server-side` (as a tenant's user would
// change the object), a creation as `kubectl create` sends it (a POST with
// the user's Impersonate-User and Impersonate-Group headers, which
// kubectl's --as and --as-group set). It returns whether the server
// admitted the write, and else the server's message.
func tryBypass(t *testing.T, c *Cluster, tc bypass) (bool, string) {
	t.Helper()
	if tc.update {
		args := append([]string{"apply", "--server-side", "--force-conflicts", "--field-manager=tenant", "--dry-run=server", "-f", "-"}, tc.as...)
		res, err := c.CP.Kubectl(t.Context(), []byte(tc.object), args...)
		if err != nil {
			t.Fatal(err)
		}
		return res.ExitCode == 0, res.String()
	}
	objs, err := ParseObjects([]byte(tc.object))
	if err != nil || len(objs) != 1 {
		t.Fatalf("bypass object: %d objects, %v", len(objs), err)
	}
	header := http.Header{}
	for _, a := range tc.as {
		if v, ok := strings.CutPrefix(a, "--as="); ok {
			header.Add("Impersonate-User", v)
		} else if v, ok := strings.CutPrefix(a, "--as-group="); ok {
			header.Add("Impersonate-Group", v)
		} else {
			t.Fatalf("bypass user %q: neither --as nor --as-group", a)
		}
	}
	err = c.create(t.Context(), objs[0], true, header)
	var refused *APIError
	if err != nil && !errors.As(err, &refused) {
		t.Fatal(err)
	}
	if refused != nil {
		return false, refused.Message
	}
	return true, ""
}

// vm is a VirtualMachine in a tenant's namespace that keeps to the
// guardrails of golden/guardrails (size u1.small, image rhel9, the
// catalog's default storage and the general pool), changed by edit.
func vm(namespace, name string, edit func(map[string]any)) string {
	v := map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"runStrategy":  "Halted",
			"instancetype": map[string]any{"kind": "VirtualMachineClusterInstancetype", "name": "u1.small"},
			"preference":   map[string]any{"kind": "VirtualMachineClusterPreference", "name": "rhel.9"},
			"dataVolumeTemplates": []any{map[string]any{
				"metadata": map[string]any{"name": name + "-root"},
				"spec": map[string]any{
					"sourceRef": map[string]any{"kind": "DataSource", "namespace": "openshift-virtualization-os-images", "name": "rhel9"},
					"storage": map[string]any{
						"accessModes": []any{"ReadWriteMany"}, "volumeMode": "Block",
						"storageClassName": "ocs-external-storagecluster-ceph-rbd",
						"resources":        map[string]any{"requests": map[string]any{"storage": "30Gi"}},
					},
				},
			}},
			"template": map[string]any{"spec": map[string]any{
				"domain":           map[string]any{"devices": map[string]any{}},
				"evictionStrategy": "LiveMigrate",
				"nodeSelector":     map[string]any{"node-role.kubernetes.io/virt": "", "pool.example.com/general": ""},
				"volumes":          []any{map[string]any{"name": "rootdisk", "dataVolume": map[string]any{"name": name + "-root"}}},
			}},
		},
	}
	if edit != nil {
		edit(v)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(out)
}

func vmiSpec(v map[string]any) map[string]any {
	return v["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
}

// dvt is the spec of the VM's first dataVolumeTemplate.
func dvt(v map[string]any) map[string]any {
	return v["spec"].(map[string]any)["dataVolumeTemplates"].([]any)[0].(map[string]any)["spec"].(map[string]any)
}

func withNetwork(v map[string]any, name string, binding map[string]any, networkName string) {
	spec := vmiSpec(v)
	iface := map[string]any{"name": name}
	for k, x := range binding {
		iface[k] = x
	}
	spec["domain"].(map[string]any)["devices"].(map[string]any)["interfaces"] = []any{
		map[string]any{"name": "default", "masquerade": map[string]any{}}, iface,
	}
	spec["networks"] = []any{
		map[string]any{"name": "default", "pod": map[string]any{}},
		map[string]any{"name": name, "multus": map[string]any{"networkName": networkName}},
	}
}

func withCloudInit(v map[string]any, source map[string]any) {
	spec := vmiSpec(v)
	spec["volumes"] = append(spec["volumes"].([]any), map[string]any{"name": "cloudinitdisk", "cloudInitNoCloud": source})
}

func dataVolume(namespace, name string, source map[string]any, class string) string {
	out, err := yaml.Marshal(map[string]any{
		"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"source":  source,
			"storage": map[string]any{"storageClassName": class, "resources": map[string]any{"requests": map[string]any{"storage": "10Gi"}}},
		},
	})
	if err != nil {
		panic(err)
	}
	return string(out)
}

func claim(namespace, name, class string, annotations map[string]any, dataSourceRef map[string]any) string {
	meta := map[string]any{"name": name, "namespace": namespace}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	spec := map[string]any{
		"accessModes":      []any{"ReadWriteMany"},
		"storageClassName": class,
		"resources":        map[string]any{"requests": map[string]any{"storage": "10Gi"}},
	}
	if dataSourceRef != nil {
		spec["dataSourceRef"] = dataSourceRef
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec})
	if err != nil {
		panic(err)
	}
	return string(out)
}

// nadFrom is the NetworkAttachmentDefinition the output holds for
// namespace/name, moved into another namespace when into is set.
func nadFrom(t *testing.T, objs []Object, namespace, name, into string) string {
	i := slices.IndexFunc(objs, func(o Object) bool {
		return o.Kind == "NetworkAttachmentDefinition" && o.Namespace == namespace && o.Name == name
	})
	if i < 0 {
		t.Fatalf("the output has no NetworkAttachmentDefinition %s/%s", namespace, name)
	}
	doc := map[string]any{"apiVersion": objs[i].APIVersion, "kind": objs[i].Kind,
		"metadata": map[string]any{"name": name, "namespace": namespace}, "spec": objs[i].Doc["spec"]}
	if into != "" {
		doc["metadata"].(map[string]any)["namespace"] = into
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
