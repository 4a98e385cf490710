package render

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/versions"
)

// DataProtection renders the OADP install and its DataProtectionApplication:
// Velero with the OpenShift, KubeVirt and CSI plugins, the node agent with
// the kopia uploader (it moves snapshot data off the cluster), and the
// platform's storage locations. Credentials stay in a Secret named by
// reference; they never appear here. An external OADP is installed
// elsewhere: nothing here.
func DataProtection(p *resolve.Platform) []emit.Object {
	dp := p.Obj.Spec.DataProtection
	if dp == nil || dp.External {
		return nil
	}
	src := p.Doc.Rel
	labels := map[string]string{model.LabelPlatform: p.Name}
	ns := &corev1.Namespace{
		TypeMeta:   typeMeta("v1", "Namespace"),
		ObjectMeta: withWave(objectMeta("Namespace", "", model.OADPNamespace, src, labels, nil), waveOperator),
	}
	og := &extapi.OperatorGroup{
		TypeMeta:   typeMeta("operators.coreos.com/v1", "OperatorGroup"),
		ObjectMeta: objectMeta("OperatorGroup", model.OADPNamespace, "oadp-operator-group", src, labels, nil),
		Spec:       extapi.OperatorGroupSpec{TargetNamespaces: []string{model.OADPNamespace}},
	}
	sub := &extapi.Subscription{
		TypeMeta:   typeMeta("operators.coreos.com/v1alpha1", "Subscription"),
		ObjectMeta: objectMeta("Subscription", model.OADPNamespace, model.OADPPackage, src, labels, nil),
		Spec: extapi.SubscriptionSpec{
			Channel:             p.Release.OADP.Channel,
			Name:                model.OADPPackage,
			Source:              catalogSourceName(p),
			SourceNamespace:     model.CatalogSourceNS,
			StartingCSV:         versions.OADPCSV(p.Release.OADP.Version),
			InstallPlanApproval: "Manual",
			Config:              subscriptionConfig(p.Obj.Spec.Infra),
		},
	}
	var locations []extapi.BackupLocation
	for _, l := range dp.StorageLocations {
		locations = append(locations, extapi.BackupLocation{
			Name: l.Name,
			Velero: &extapi.BackupLocationSpec{
				Provider:      l.Provider,
				Default:       l.Name == p.DefaultLocation,
				ObjectStorage: extapi.ObjectStorage{Bucket: l.Bucket, Prefix: l.Prefix},
				Credential:    &extapi.SecretKeySelector{Name: l.Credential.Name, Key: l.Credential.Key},
				Config:        l.Config,
			},
		})
	}
	enable := true
	provider := map[string]bool{}
	plugins := []string{"openshift", "kubevirt", "csi"}
	for _, l := range dp.StorageLocations {
		if !provider[l.Provider] {
			provider[l.Provider] = true
			plugins = append(plugins, l.Provider)
		}
	}
	dpa := &extapi.DataProtectionApplication{
		TypeMeta:   typeMeta("oadp.openshift.io/v1alpha1", "DataProtectionApplication"),
		ObjectMeta: withWave(objectMeta("DataProtectionApplication", model.OADPNamespace, model.DPAName, src, labels, nil), waveHyperConverged),
		Spec: extapi.DataProtectionApplicationSpec{
			Configuration: extapi.ApplicationConfig{
				Velero:    &extapi.VeleroConfig{DefaultPlugins: plugins},
				NodeAgent: &extapi.NodeAgentConfig{Enable: &enable, UploaderType: "kopia"},
			},
			BackupLocations: locations,
		},
	}
	objs := []emit.Object{
		{APIVersion: "v1", Kind: "Namespace", Name: model.OADPNamespace, Scope: emit.Cluster, Body: ns},
		{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: model.OADPNamespace, Name: "oadp-operator-group", Scope: emit.Cluster, Body: og},
		{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: model.OADPNamespace, Name: model.OADPPackage, Scope: emit.Cluster, Body: sub},
		{APIVersion: "oadp.openshift.io/v1alpha1", Kind: "DataProtectionApplication", Namespace: model.OADPNamespace, Name: model.DPAName, Scope: emit.Cluster, Body: dpa},
	}
	return append(objs, Approver(p, oadpApproval(p))...)
}
