package render

import (
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/virtc/virtc/fn/catalog"
	"github.com/virtc/virtc/fn/emit"
	"github.com/virtc/virtc/fn/resolve"
)

// GoldenImages imports the catalog's HTTP images into the golden-image
// namespace: a DataVolume verified by its checksum, and a DataSource named
// like the image that VMs clone. (Registry images are imported by the
// HyperConverged's dataImportCronTemplates instead.)
func GoldenImages(cat *catalog.Catalog, p *resolve.Platform) []emit.Object {
	var objs []emit.Object
	ns := cat.GoldenImageNamespace
	for _, name := range cat.Images.Names() {
		e, _ := cat.Images.Entry(name)
		h := e.Obj.Spec.HTTP
		if h == nil {
			continue
		}
		labels := map[string]string{LabelPlatform: p.Name}
		dv := &cdiv1.DataVolume{
			TypeMeta: typeMeta("cdi.kubevirt.io/v1beta1", "DataVolume"),
			ObjectMeta: withWave(objectMeta("DataVolume", ns, name, e.Doc.Rel, labels, map[string]string{
				AnnotationDeleteAfterCompletion: "false",
				AnnotationBindImmediate:         "true",
			}), wavePlatform),
			Spec: cdiv1.DataVolumeSpec{
				Source:  &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: h.URL, Checksum: h.Checksum}},
				Storage: &cdiv1.StorageSpec{Resources: storageRequest(e.Obj.Spec.MinRootDisk)},
			},
		}
		ds := &cdiv1.DataSource{
			TypeMeta:   typeMeta("cdi.kubevirt.io/v1beta1", "DataSource"),
			ObjectMeta: objectMeta("DataSource", ns, name, e.Doc.Rel, labels, nil),
			Spec: cdiv1.DataSourceSpec{
				Source: cdiv1.DataSourceSource{PVC: &cdiv1.DataVolumeSourcePVC{Namespace: ns, Name: name}},
			},
		}
		objs = append(objs,
			emit.Object{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume", Namespace: ns, Name: name, Scope: emit.Cluster, Body: dv},
			emit.Object{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataSource", Namespace: ns, Name: name, Scope: emit.Cluster, Body: ds},
		)
	}
	return objs
}
