package admission

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	virtv1 "kubevirt.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// checkReferences reports what the stream names but nobody provides: an
// instancetype or preference that is neither in the stream nor in the
// common-instancetypes bundle, a DataSource that is neither in the stream
// nor a boot source of the platform, a claim or DataVolume a volume or a
// clone names that the stream does not create, a NetworkAttachmentDefinition
// a VM attaches that the stream does not hold. KubeVirt admits a VM whose
// instancetype is missing (the lookup failure is only logged) and CDI
// admits a DataVolume whose DataSource is missing; both then never start.
func (c *checker) checkReferences(objs, all []*object) {
	nads, err := networkAttachments(all)
	if err != nil {
		c.report.Findings = append(c.report.Findings, Finding{Input: c.input, Kind: "stream", Check: "reference", Message: "checker error: " + err.Error()})
	}
	for _, o := range objs {
		switch {
		case o.group() == "kubevirt.io" && o.Kind == "VirtualMachine":
			vm := &virtv1.VirtualMachine{}
			if err := json.Unmarshal(o.raw, vm); err != nil {
				continue // reported by the admission checks
			}
			c.vmReferences(o, vm, nads)
		case o.group() == "hco.kubevirt.io" && o.Kind == "HyperConverged":
			// virt-operator adds the migration network to every
			// virt-handler pod (KubeVirt v1.8.4
			// pkg/virt-operator/resource/generate/components/daemonsets.go);
			// the NetworkAttachmentDefinition lives in KubeVirt's namespace,
			// the HyperConverged's.
			hc := &hyperConverged{}
			if err := json.Unmarshal(o.raw, hc); err != nil {
				continue
			}
			if n := hc.Spec.LiveMigrationConfig.Network; n != nil && *n != "" {
				ns := o.Metadata.Namespace
				if ns == "" {
					ns = "openshift-cnv"
				}
				if !nads[ns+"/"+*n] {
					c.unresolved(o, fmt.Sprintf("spec.liveMigrationConfig.network: NetworkAttachmentDefinition %s/%s is not in the stream", ns, *n))
				}
			}
		case o.group() == "cdi.kubevirt.io" && o.Kind == "DataVolume":
			dv := &cdiv1.DataVolume{}
			if err := json.Unmarshal(o.raw, dv); err != nil {
				continue
			}
			c.dvReferences(o, "", o.Metadata.Namespace, &dv.Spec)
		case o.group() == "cdi.kubevirt.io" && o.Kind == "DataSource":
			ds := &cdiv1.DataSource{}
			if err := json.Unmarshal(o.raw, ds); err != nil {
				continue
			}
			src := ds.Spec.Source
			if src.PVC != nil {
				ns := nsOr(&src.PVC.Namespace, ds.Namespace)
				if !c.claimExists(ns, src.PVC.Name) {
					c.unresolved(o, fmt.Sprintf("spec.source.pvc: claim %s/%s is neither in the stream nor created by a DataVolume of it", ns, src.PVC.Name))
				}
			}
			if src.DataSource != nil {
				ns := nsOr(&src.DataSource.Namespace, ds.Namespace)
				if !c.dataSourceExists(ns, src.DataSource.Name) {
					c.unresolved(o, fmt.Sprintf("spec.source.dataSource: DataSource %s/%s is neither in the stream nor a boot source of the platform", ns, src.DataSource.Name))
				}
			}
		}
	}
}

// networkAttachments are the NetworkAttachmentDefinitions that will exist
// (namespace/name): those of the stream, and those OVN-Kubernetes renders
// for a UserDefinedNetwork (in its namespace) and for a
// ClusterUserDefinedNetwork (in each namespace its namespaceSelector
// selects among the stream's namespaces), named after the network.
func networkAttachments(all []*object) (map[string]bool, error) {
	nads := map[string]bool{}
	nsLabels := map[string]labels.Set{}
	for _, o := range all {
		if o.group() == "" && o.Kind == "Namespace" {
			var ns corev1.Namespace
			if err := json.Unmarshal(o.raw, &ns); err != nil {
				return nil, err
			}
			set := labels.Set{"kubernetes.io/metadata.name": ns.Name}
			for k, v := range ns.Labels {
				set[k] = v
			}
			nsLabels[ns.Name] = set
		}
	}
	for _, o := range all {
		switch {
		case o.group() == "k8s.cni.cncf.io" && o.Kind == "NetworkAttachmentDefinition",
			o.group() == "k8s.ovn.org" && o.Kind == "UserDefinedNetwork":
			nads[o.Metadata.Namespace+"/"+o.Metadata.Name] = true
		case o.group() == "k8s.ovn.org" && o.Kind == "ClusterUserDefinedNetwork":
			var cudn struct {
				Spec struct {
					NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`
				} `json:"spec"`
			}
			if err := json.Unmarshal(o.raw, &cudn); err != nil {
				return nil, err
			}
			sel, err := metav1.LabelSelectorAsSelector(&cudn.Spec.NamespaceSelector)
			if err != nil {
				return nil, fmt.Errorf("ClusterUserDefinedNetwork %s: %v", o.Metadata.Name, err)
			}
			for ns, set := range nsLabels {
				if sel.Matches(set) {
					nads[ns+"/"+o.Metadata.Name] = true
				}
			}
		}
	}
	return nads, nil
}

// typesResolve says whether the VM's instancetype and preference exist.
func (c *checker) typesResolve(vm *virtv1.VirtualMachine) bool {
	return c.instancetypeErr(vm) == nil && c.preferenceErr(vm) == nil
}

func (c *checker) instancetypeErr(vm *virtv1.VirtualMachine) error {
	m := vm.Spec.Instancetype
	if m == nil {
		return nil
	}
	var err error
	switch strings.ToLower(m.Kind) {
	case "", "virtualmachineclusterinstancetype", "virtualmachineclusterinstancetypes":
		_, err = c.cl.kv.InstancetypeV1beta1().VirtualMachineClusterInstancetypes().Get(c.ctx, m.Name, metav1.GetOptions{})
	case "virtualmachineinstancetype", "virtualmachineinstancetypes":
		_, err = c.cl.kv.InstancetypeV1beta1().VirtualMachineInstancetypes(vm.Namespace).Get(c.ctx, m.Name, metav1.GetOptions{})
	default:
		err = fmt.Errorf("unknown kind %q", m.Kind)
	}
	return err
}

func (c *checker) preferenceErr(vm *virtv1.VirtualMachine) error {
	m := vm.Spec.Preference
	if m == nil {
		return nil
	}
	var err error
	switch strings.ToLower(m.Kind) {
	case "", "virtualmachineclusterpreference", "virtualmachineclusterpreferences":
		_, err = c.cl.kv.InstancetypeV1beta1().VirtualMachineClusterPreferences().Get(c.ctx, m.Name, metav1.GetOptions{})
	case "virtualmachinepreference", "virtualmachinepreferences":
		_, err = c.cl.kv.InstancetypeV1beta1().VirtualMachinePreferences(vm.Namespace).Get(c.ctx, m.Name, metav1.GetOptions{})
	default:
		err = fmt.Errorf("unknown kind %q", m.Kind)
	}
	return err
}

func nsOr(ns *string, def string) string {
	if ns != nil && *ns != "" {
		return *ns
	}
	return def
}

func (c *checker) claimExists(ns, name string) bool {
	key := ns + "/" + name
	return c.cl.pvcs[key] || c.cl.dvs[key]
}

func (c *checker) dataSourceExists(ns, name string) bool {
	_, err := c.cl.kvcdi.CdiV1beta1().DataSources(ns).Get(c.ctx, name, metav1.GetOptions{})
	return err == nil
}

func (c *checker) vmReferences(o *object, vm *virtv1.VirtualMachine, nads map[string]bool) {
	if m := vm.Spec.Instancetype; m != nil {
		if c.instancetypeErr(vm) != nil {
			c.unresolved(o, fmt.Sprintf("spec.instancetype: %s %s is neither in the stream nor in the common-instancetypes bundle", kindOr(m.Kind, "VirtualMachineClusterInstancetype"), m.Name))
		}
	}
	if m := vm.Spec.Preference; m != nil {
		if c.preferenceErr(vm) != nil {
			c.unresolved(o, fmt.Sprintf("spec.preference: %s %s is neither in the stream nor in the common-instancetypes bundle", kindOr(m.Kind, "VirtualMachineClusterPreference"), m.Name))
		}
	}
	for _, t := range vm.Spec.DataVolumeTemplates {
		c.dvReferences(o, "spec.dataVolumeTemplates["+t.Name+"].", vm.Namespace, &t.Spec)
	}
	if vm.Spec.Template == nil {
		return
	}
	for _, v := range vm.Spec.Template.Spec.Volumes {
		switch {
		case v.DataVolume != nil:
			if !c.claimExists(vm.Namespace, v.DataVolume.Name) {
				c.unresolved(o, fmt.Sprintf("volume %s: DataVolume %s/%s is neither a dataVolumeTemplate nor in the stream", v.Name, vm.Namespace, v.DataVolume.Name))
			}
		case v.PersistentVolumeClaim != nil:
			if !c.claimExists(vm.Namespace, v.PersistentVolumeClaim.ClaimName) {
				c.unresolved(o, fmt.Sprintf("volume %s: claim %s/%s is neither in the stream nor created by a DataVolume of it", v.Name, vm.Namespace, v.PersistentVolumeClaim.ClaimName))
			}
		}
	}
	// An SR-IOV interface's network is a NetworkAttachmentDefinition the
	// SR-IOV Network Operator writes into the namespace from its
	// SriovNetwork (sriov-network-operator
	// controllers/sriovnetwork_controller.go), set up by the platform team
	// outside virtc's stream (a NetworkProfile of type sriov names it).
	sriov := map[string]bool{}
	for _, i := range vm.Spec.Template.Spec.Domain.Devices.Interfaces {
		if i.SRIOV != nil {
			sriov[i.Name] = true
		}
	}
	for _, n := range vm.Spec.Template.Spec.Networks {
		if n.Multus == nil || sriov[n.Name] {
			continue
		}
		ns, name := vm.Namespace, n.Multus.NetworkName
		if i := strings.Index(name, "/"); i >= 0 {
			ns, name = name[:i], name[i+1:]
		}
		if !nads[ns+"/"+name] {
			c.unresolved(o, fmt.Sprintf("network %s: NetworkAttachmentDefinition %s/%s is not in the stream", n.Name, ns, name))
		}
	}
}

func kindOr(k, def string) string {
	if k == "" {
		return def
	}
	return k
}

func (c *checker) dvReferences(o *object, prefix, ns string, spec *cdiv1.DataVolumeSpec) {
	if r := spec.SourceRef; r != nil && r.Kind == cdiv1.DataVolumeDataSource {
		dsNS := nsOr(r.Namespace, ns)
		if !c.dataSourceExists(dsNS, r.Name) {
			c.unresolved(o, fmt.Sprintf("%sspec.sourceRef: DataSource %s/%s is neither in the stream nor a boot source of the platform", prefix, dsNS, r.Name))
		}
	}
	if s := spec.Source; s != nil && s.PVC != nil {
		pvcNS := s.PVC.Namespace
		if pvcNS == "" {
			pvcNS = ns
		}
		if !c.claimExists(pvcNS, s.PVC.Name) && !c.cl.provided[pvcNS+"/"+strings.TrimSuffix(s.PVC.Name, "-imported")] {
			c.unresolved(o, fmt.Sprintf("%sspec.source.pvc: claim %s/%s is neither in the stream nor created by a DataVolume of it", prefix, pvcNS, s.PVC.Name))
		}
	}
}
