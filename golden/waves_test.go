package golden

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"
)

// argoRankedKinds are the kinds Argo CD ranks inside a sync wave, in its
// order (gitops-engine v3.6.1, pkg/sync/sync_tasks.go, kindOrder, from
// Helm's kind sorter). Every other kind — VirtualMachine, DataVolume,
// DataSource, NetworkAttachmentDefinition, every custom resource — ranks
// after them and ties with the others, which then go by name. Within a
// wave Argo CD applies the tasks kind group by kind group (runTasks,
// processCreateTasks) without waiting for health; it waits for health only
// between waves. So the order virtc needs is in its waves, and the only
// order inside a wave it relies on is a claim applied before the custom
// resources of the same wave.
var argoRankedKinds = []string{"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
	"PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume",
	"PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
	"ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod",
	"ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob",
	"IngressClass", "Ingress", "APIService"}

type obj struct {
	Kind     string
	Metadata struct {
		Name, Namespace string
		Annotations     map[string]string
	}
	Spec map[string]any
}

func (o obj) wave(t *testing.T) int {
	t.Helper()
	w, err := strconv.Atoi(o.Metadata.Annotations["argocd.argoproj.io/sync-wave"])
	if err != nil {
		t.Fatalf("%s %s/%s: no sync wave", o.Kind, o.Metadata.Namespace, o.Metadata.Name)
	}
	return w
}

func ranked(kind string) bool {
	for _, k := range argoRankedKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// TestWavesOrderWhatVMsNeed checks, on the goldens with a platform and
// tenants, that everything a VirtualMachine needs when it is created is in
// an earlier wave: its namespace and quota, its instance type and
// preference (KubeVirt's admission refuses a VM whose instance type does not
// exist), its networks, the golden image (DataVolume and DataSource) its
// root disk clones; and that its data disks' claims share its wave, where
// Argo CD applies them first because PersistentVolumeClaim is a ranked
// kind and VirtualMachine is not (a wave of their own would never end on a
// WaitForFirstConsumer class: the claim binds only once the VM's pod is
// scheduled, and Argo CD waits for a wave to be healthy).
func TestWavesOrderWhatVMsNeed(t *testing.T) {
	if !ranked("PersistentVolumeClaim") || ranked("VirtualMachine") || ranked("DataVolume") {
		t.Fatal("the kinds Argo CD ranks changed")
	}
	vms := 0
	for _, dir := range []string{"platform-full", "platform-420", "basic-vm"} {
		data, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]obj{}
		var all []obj
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var o obj
			if err := dec.Decode(&o); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			all = append(all, o)
			byKey[o.Kind+"/"+o.Metadata.Namespace+"/"+o.Metadata.Name] = o
		}
		before := func(vm obj, kind, ns, name string) {
			t.Helper()
			o, ok := byKey[kind+"/"+ns+"/"+name]
			if !ok {
				return // not emitted here (the platform's builtins, another Application)
			}
			if o.wave(t) >= vm.wave(t) {
				t.Errorf("%s: VM %s/%s (wave %d) needs %s %s/%s, in wave %d", dir, vm.Metadata.Namespace, vm.Metadata.Name, vm.wave(t), kind, ns, name, o.wave(t))
			}
		}
		for _, vm := range all {
			if vm.Kind != "VirtualMachine" {
				continue
			}
			vms++
			ns := vm.Metadata.Namespace
			before(vm, "Namespace", "", ns)
			before(vm, "ResourceQuota", ns, "virtc-vms")
			if it, ok := vm.Spec["instancetype"].(map[string]any); ok {
				before(vm, it["kind"].(string), "", it["name"].(string))
			}
			if p, ok := vm.Spec["preference"].(map[string]any); ok {
				before(vm, p["kind"].(string), "", p["name"].(string))
			}
			tmpl, _ := vm.Spec["template"].(map[string]any)
			spec, _ := tmpl["spec"].(map[string]any)
			nets, _ := spec["networks"].([]any)
			for _, n := range nets {
				if m, ok := n.(map[string]any)["multus"].(map[string]any); ok {
					nsn := m["networkName"].(string)
					nns, name := ns, nsn
					if i := bytes.IndexByte([]byte(nsn), '/'); i >= 0 {
						nns, name = nsn[:i], nsn[i+1:]
					}
					before(vm, "NetworkAttachmentDefinition", nns, name)
				}
			}
			dvts, _ := vm.Spec["dataVolumeTemplates"].([]any)
			for _, d := range dvts {
				ref, _ := d.(map[string]any)["spec"].(map[string]any)["sourceRef"].(map[string]any)
				if ref != nil {
					before(vm, "DataSource", ref["namespace"].(string), ref["name"].(string))
				}
			}
			vols, _ := spec["volumes"].([]any)
			for _, v := range vols {
				if c, ok := v.(map[string]any)["persistentVolumeClaim"].(map[string]any); ok {
					pvc, ok := byKey["PersistentVolumeClaim/"+ns+"/"+c["claimName"].(string)]
					if ok && pvc.wave(t) != vm.wave(t) {
						t.Errorf("%s: claim %s of VM %s is in wave %d, the VM in %d", dir, pvc.Metadata.Name, vm.Metadata.Name, pvc.wave(t), vm.wave(t))
					}
				}
			}
		}
		for _, o := range all {
			// golden-image DataVolumes come before the DataSources naming
			// them only by the wave they share with everything the VMs
			// need; a DataSource whose claim is not there yet waits.
			if o.Kind == "DataVolume" && o.wave(t) != -10 {
				t.Errorf("%s: DataVolume %s/%s in wave %d: only golden images are DataVolumes, at -10", dir, o.Metadata.Namespace, o.Metadata.Name, o.wave(t))
			}
		}
	}
	if vms < 5 {
		t.Fatalf("only %d VMs checked", vms)
	}
}
