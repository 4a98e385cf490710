package admission

import (
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	appsv1 "k8s.io/client-go/kubernetes/typed/apps/v1"
	k8scorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	virtv1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	snapshotv1 "kubevirt.io/api/snapshot/v1beta1"
	kvcdiclient "kubevirt.io/client-go/containerizeddataimporter"
	kvcdifake "kubevirt.io/client-go/containerizeddataimporter/fake"
	"kubevirt.io/client-go/kubecli"
	kvfake "kubevirt.io/client-go/kubevirt/fake"
	typedinstancetype "kubevirt.io/client-go/kubevirt/typed/instancetype/v1beta1"
	typedsnapshot "kubevirt.io/client-go/kubevirt/typed/snapshot/v1beta1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	cdifake "kubevirt.io/containerized-data-importer/pkg/client/clientset/versioned/fake"
	"kubevirt.io/kubevirt/pkg/testutils"
	virtconfig "kubevirt.io/kubevirt/pkg/virt-config"
	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"
)

// cluster is the fake cluster a stream is admitted into: the stream's own
// objects, the common-instancetypes bundle KubeVirt v1.8.4 deploys, the
// boot-source DataSources the platform provides, and the KubeVirt and CDI
// configuration HCO v1.18.1 writes.
type cluster struct {
	config        *virtconfig.ClusterConfig
	hc            *hyperConverged
	virt          kubecli.KubevirtClient
	kv            *kvfake.Clientset
	k8s           *k8sfake.Clientset
	k8sWithClaims *k8sfake.Clientset
	kvcdi         *kvcdifake.Clientset
	cdi           *cdifake.Clientset
	crc           crclient.Client
	// provided are the DataSources the cluster provides (namespace/name).
	provided map[string]bool
	// dvs and pvcs are the DataVolumes (standalone and of templates) and
	// claims the stream makes exist (namespace/name).
	dvs, pvcs map[string]bool
}

// Bundle is the common-instancetypes bundle of KubeVirt v1.8.4
// (pkg/virt-operator/resource/generate/components/instancetypes.go, which
// embeds data/common-instancetypes/*.yaml).
func Bundle() ([]*instancetypev1beta1.VirtualMachineClusterInstancetype, []*instancetypev1beta1.VirtualMachineClusterPreference, error) {
	its, err := components.NewClusterInstancetypes()
	if err != nil {
		return nil, nil, err
	}
	prefs, err := components.NewClusterPreferences()
	if err != nil {
		return nil, nil, err
	}
	return its, prefs, nil
}

func decode[T any](o *object) (*T, error) {
	var v T
	if err := json.Unmarshal(o.raw, &v); err != nil {
		return nil, fmt.Errorf("%s %s/%s: %v", o.Kind, o.Metadata.Namespace, o.Metadata.Name, err)
	}
	return &v, nil
}

func newCluster(stream, ctxObjs []*object) (*cluster, error) {
	// the stream, then the context objects the stream does not hold
	var objs []*object
	seen := map[string]bool{}
	for _, o := range append(append([]*object{}, stream...), ctxObjs...) {
		key := o.group() + "/" + o.Kind + "/" + o.Metadata.Namespace + "/" + o.Metadata.Name
		if !seen[key] {
			seen[key] = true
			objs = append(objs, o)
		}
	}
	cl := &cluster{hc: &hyperConverged{}, provided: map[string]bool{}}
	for _, o := range objs {
		if o.group() == "hco.kubevirt.io" && o.Kind == "HyperConverged" {
			hc, err := decode[hyperConverged](o)
			if err != nil {
				return nil, err
			}
			cl.hc = hc
		}
	}
	kvCfg, err := cl.hc.kubeVirtConfig()
	if err != nil {
		return nil, err
	}
	cfg, crdInformer, _ := testutils.NewFakeClusterConfigUsingKVConfig(kvCfg)
	testutils.AddDataSourceAPI(crdInformer)
	cl.config = cfg

	// instancetypes and preferences: the bundle, then the stream's (which
	// replace a bundle object of the same name)
	its, prefs, err := Bundle()
	if err != nil {
		return nil, err
	}
	kvObjs := map[string]runtime.Object{}
	for _, it := range its {
		kvObjs["cit/"+it.Name] = it
	}
	for _, p := range prefs {
		kvObjs["cp/"+p.Name] = p
	}
	ix := &indexed{kv: kvObjs, dvs: map[string]bool{}, pvcs: map[string]bool{}}
	for _, o := range objs {
		if err := ix.add(o); err != nil {
			return nil, err
		}
	}
	k8sObjs, dvNames, pvcNames := ix.k8s, ix.dvs, ix.pvcs
	cl.dvs, cl.pvcs = dvNames, pvcNames
	cdiObjs := cl.bootSources(ix.cdi)

	var kvList []runtime.Object
	for _, k := range sortedKeys(kvObjs) {
		kvList = append(kvList, kvObjs[k])
	}
	cl.kv = kvfake.NewSimpleClientset(kvList...)
	cl.k8s = k8sfake.NewSimpleClientset(k8sObjs...)
	// the same, plus an unowned claim of every DataVolume's name that the
	// stream does not hold itself
	withClaims := append([]runtime.Object{}, k8sObjs...)
	for _, key := range sortedKeys(dvNames) {
		if pvcNames[key] {
			continue
		}
		ns, name := splitKey(key)
		withClaims = append(withClaims, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
	cl.k8sWithClaims = k8sfake.NewSimpleClientset(withClaims...)
	cl.kvcdi = kvcdifake.NewSimpleClientset(cdiObjs...)
	cl.cdi = cdifake.NewSimpleClientset(cdiObjs...)

	scheme := runtime.NewScheme()
	if err := cdiv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cl.crc = crfake.NewClientBuilder().WithScheme(scheme).WithObjects(&cdiv1.CDIConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "config"},
		Spec:       cdiv1.CDIConfigSpec{FeatureGates: hcoCDIFeatureGates},
	}).Build()
	cl.virt = &fakeVirtClient{cl: cl}
	return cl, nil
}

// indexed are the objects of the fake clients, by client.
type indexed struct {
	kv       map[string]runtime.Object // KubeVirt's, by kind and name
	k8s, cdi []runtime.Object
	dvs      map[string]bool // namespace/name of every DataVolume that will exist
	pvcs     map[string]bool // namespace/name of the stream's claims
}

// add decodes one object of the stream or context into its client's list.
func (ix *indexed) add(o *object) error {
	ns, name := o.Metadata.Namespace, o.Metadata.Name
	kvAt := func(key string) func(runtime.Object) { return func(v runtime.Object) { ix.kv[key] = v } }
	toK8s := func(v runtime.Object) { ix.k8s = append(ix.k8s, v) }
	toCDI := func(v runtime.Object) { ix.cdi = append(ix.cdi, v) }
	switch {
	case o.group() == "instancetype.kubevirt.io" && o.Kind == "VirtualMachineClusterInstancetype":
		return decodeTo[instancetypev1beta1.VirtualMachineClusterInstancetype](o, kvAt("cit/"+name))
	case o.group() == "instancetype.kubevirt.io" && o.Kind == "VirtualMachineClusterPreference":
		return decodeTo[instancetypev1beta1.VirtualMachineClusterPreference](o, kvAt("cp/"+name))
	case o.group() == "instancetype.kubevirt.io" && o.Kind == "VirtualMachineInstancetype":
		return decodeTo[instancetypev1beta1.VirtualMachineInstancetype](o, kvAt("it/"+ns+"/"+name))
	case o.group() == "instancetype.kubevirt.io" && o.Kind == "VirtualMachinePreference":
		return decodeTo[instancetypev1beta1.VirtualMachinePreference](o, kvAt("p/"+ns+"/"+name))
	case o.group() == "" && o.Kind == "PersistentVolumeClaim":
		ix.pvcs[ns+"/"+name] = true
		return decodeTo[corev1.PersistentVolumeClaim](o, toK8s)
	case o.group() == "" && o.Kind == "Namespace":
		return decodeTo[corev1.Namespace](o, toK8s)
	case o.group() == "cdi.kubevirt.io" && o.Kind == "DataVolume":
		ix.dvs[ns+"/"+name] = true
		return decodeTo[cdiv1.DataVolume](o, toCDI)
	case o.group() == "cdi.kubevirt.io" && o.Kind == "DataSource":
		return decodeTo[cdiv1.DataSource](o, toCDI)
	case o.group() == "kubevirt.io" && o.Kind == "VirtualMachine":
		var vm struct {
			Spec struct {
				DataVolumeTemplates []struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				} `json:"dataVolumeTemplates"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(o.raw, &vm); err != nil {
			return err
		}
		for _, t := range vm.Spec.DataVolumeTemplates {
			ix.dvs[ns+"/"+t.Metadata.Name] = true
		}
		// the VM itself, for the snapshot and restore admitters
		v, err := decode[virtv1.VirtualMachine](o)
		if err != nil {
			return err
		}
		v.UID = types.UID("uid-vm-" + ns + "-" + name)
		ix.kv["vm/"+ns+"/"+name] = v
	case o.group() == "snapshot.kubevirt.io" && o.Kind == "VirtualMachineSnapshot":
		v, err := decode[snapshotv1.VirtualMachineSnapshot](o)
		if err != nil {
			return err
		}
		// as the snapshot controller leaves it
		// (pkg/storage/snapshot/snapshot.go, GetVMSnapshotContentName): the
		// source VM's UID and the content's name
		if v.Spec.Source.Kind == "VirtualMachine" {
			uid := types.UID("uid-vm-" + ns + "-" + v.Spec.Source.Name)
			content := "vmsnapshot-content-uid-vms-" + ns + "-" + name
			v.Status = &snapshotv1.VirtualMachineSnapshotStatus{SourceUID: &uid, VirtualMachineSnapshotContentName: &content}
		}
		ix.kv["vms/"+ns+"/"+name] = v
	}
	return nil
}

// decodeTo decodes o as a T and hands it to put.
func decodeTo[T any](o *object, put func(runtime.Object)) error {
	v, err := decode[T](o)
	if err != nil {
		return err
	}
	put(any(v).(runtime.Object))
	return nil
}

// bootSources are cdiObjs and the boot-source DataSources the platform
// provides that they do not hold.
func (cl *cluster) bootSources(cdiObjs []runtime.Object) []runtime.Object {
	dsNS := cl.hc.bootImageNamespace()
	var provided []string
	if cl.hc.Spec.EnableCommonBootImageImport == nil || *cl.hc.Spec.EnableCommonBootImageImport {
		provided = append(provided, clusterBootSources...)
	}
	for _, t := range cl.hc.Spec.DataImportCronTemplates {
		var dic cdiv1.DataImportCron
		if err := json.Unmarshal(t, &dic); err == nil && dic.Spec.ManagedDataSource != "" {
			provided = append(provided, dic.Spec.ManagedDataSource)
		}
	}
	have := map[string]bool{}
	for _, o := range cdiObjs {
		if ds, ok := o.(*cdiv1.DataSource); ok {
			have[ds.Namespace+"/"+ds.Name] = true
		}
	}
	for _, name := range provided {
		key := dsNS + "/" + name
		cl.provided[key] = true
		if have[key] {
			continue
		}
		have[key] = true
		// as CDI's DataImportCron controller leaves it: the DataSource
		// points at the newest imported claim
		cdiObjs = append(cdiObjs, &cdiv1.DataSource{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: dsNS},
			Spec: cdiv1.DataSourceSpec{Source: cdiv1.DataSourceSource{
				PVC: &cdiv1.DataVolumeSourcePVC{Namespace: dsNS, Name: name + "-imported"},
			}},
		})
	}
	return cdiObjs
}

func splitKey(key string) (string, string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fakeVirtClient serves the parts of kubecli.KubevirtClient that the
// admission code calls from the fake clientsets; any other call panics
// (the embedded interface is nil) and the checker reports it.
type fakeVirtClient struct {
	kubecli.KubevirtClient
	cl *cluster
}

func (f *fakeVirtClient) VirtualMachineInstancetype(ns string) typedinstancetype.VirtualMachineInstancetypeInterface {
	return f.cl.kv.InstancetypeV1beta1().VirtualMachineInstancetypes(ns)
}

func (f *fakeVirtClient) VirtualMachineClusterInstancetype() typedinstancetype.VirtualMachineClusterInstancetypeInterface {
	return f.cl.kv.InstancetypeV1beta1().VirtualMachineClusterInstancetypes()
}

func (f *fakeVirtClient) VirtualMachinePreference(ns string) typedinstancetype.VirtualMachinePreferenceInterface {
	return f.cl.kv.InstancetypeV1beta1().VirtualMachinePreferences(ns)
}

func (f *fakeVirtClient) VirtualMachineClusterPreference() typedinstancetype.VirtualMachineClusterPreferenceInterface {
	return f.cl.kv.InstancetypeV1beta1().VirtualMachineClusterPreferences()
}

// VirtualMachine serves the stream's VMs (the restore admitter reads its
// target VM).
func (f *fakeVirtClient) VirtualMachine(ns string) kubecli.VirtualMachineInterface {
	return f.cl.kv.KubevirtV1().VirtualMachines(ns)
}

// VirtualMachineSnapshot serves the stream's snapshots (the restore
// admitter reads the snapshot it restores).
func (f *fakeVirtClient) VirtualMachineSnapshot(ns string) typedsnapshot.VirtualMachineSnapshotInterface {
	return f.cl.kv.SnapshotV1beta1().VirtualMachineSnapshots(ns)
}

func (f *fakeVirtClient) VirtualMachineSnapshotContent(ns string) typedsnapshot.VirtualMachineSnapshotContentInterface {
	return f.cl.kv.SnapshotV1beta1().VirtualMachineSnapshotContents(ns)
}

func (f *fakeVirtClient) CdiClient() kvcdiclient.Interface { return f.cl.kvcdi }

func (f *fakeVirtClient) CoreV1() k8scorev1.CoreV1Interface { return f.cl.k8s.CoreV1() }

func (f *fakeVirtClient) AppsV1() appsv1.AppsV1Interface { return f.cl.k8s.AppsV1() }

var _ kubernetes.Interface = (*k8sfake.Clientset)(nil)
