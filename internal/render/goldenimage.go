package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// GoldenImages imports the catalog's pinned images into the golden-image
// namespace: per image a DataVolume that imports it once (from the
// registry by digest, or over HTTP verified by its checksum), and a
// DataSource named like the image, pointing at that DataVolume's claim,
// which VMs clone.
//
// A registry image is not a HyperConverged dataImportCronTemplate: CDI's
// DataImportCron polls the URL for a digest and imports
// "<url>@<digest>" (containerized-data-importer v1.65.0,
// pkg/controller/dataimportcron-controller.go newSourceDataVolume), so a
// URL already pinned by digest becomes "…@sha256:X@sha256:X", an invalid
// reference, and its DataSource never becomes ready (test/controllers
// TestCDI shows the doubled reference with CDI's real controller). A
// DataImportCron is for a tag that moves; virtc accepts only pinned
// images, so it emits none.
//
// CDI refuses every change to a DataVolume's spec, so the DataVolume's name
// carries a hash of its spec (goldenImageVolumeName): a new digest, URL,
// checksum or size is a new DataVolume, imported beside the old one, and
// the DataSource (whose spec CDI lets change: there is no DataSource
// webhook, and the DataImportCron controller itself re-points its
// DataSources in updateDataSource) moves to it. Argo CD prunes the old
// DataVolume with its claim; clones already made are independent copies.
func GoldenImages(cat *catalog.Catalog, p *resolve.Platform) []emit.Object {
	var objs []emit.Object
	ns := cat.GoldenImageNamespace
	for _, name := range cat.Images.Names() {
		e, _ := cat.Images.Entry(name)
		source := goldenImageSource(e.Obj.Spec)
		if source == nil {
			continue
		}
		labels := map[string]string{model.LabelPlatform: p.Name}
		spec := cdiv1.DataVolumeSpec{
			Source:  source,
			Storage: &cdiv1.StorageSpec{Resources: storageRequest(e.Obj.Spec.MinRootDisk)},
		}
		dvName := goldenImageVolumeName(name, spec)
		dv := &cdiv1.DataVolume{
			TypeMeta: typeMeta("cdi.kubevirt.io/v1beta1", "DataVolume"),
			ObjectMeta: withWave(objectMeta("DataVolume", ns, dvName, e.Doc.Rel, labels, map[string]string{
				AnnotationBindImmediate: "true",
			}), wavePlatform),
			Spec: spec,
		}
		ds := &cdiv1.DataSource{
			TypeMeta:   typeMeta("cdi.kubevirt.io/v1beta1", "DataSource"),
			ObjectMeta: objectMeta("DataSource", ns, name, e.Doc.Rel, labels, nil),
			Spec: cdiv1.DataSourceSpec{
				Source: cdiv1.DataSourceSource{PVC: &cdiv1.DataVolumeSourcePVC{Namespace: ns, Name: dvName}},
			},
		}
		objs = append(objs,
			emit.Object{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume", Namespace: ns, Name: dvName, Scope: emit.Cluster, Body: dv},
			emit.Object{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataSource", Namespace: ns, Name: name, Scope: emit.Cluster, Body: ds},
		)
	}
	return objs
}

// goldenImageSource is the import source of an image virtc imports, nil for
// an image that names an existing DataSource. A digest URL is the form CDI's
// own DataImportCron gives the registry DataVolumes it creates. Only the URL
// (and the HTTP checksum) is set: the catalog has no registry credentials or CA bundle
// (secretRef, certConfigMap), and CDI's default pull method (pod) is the
// one that works for any registry (pullMethod node needs the image on the
// nodes' container runtime; CDI's webhook accepts both, util.go
// validateDataVolumeSourceRegistry).
func goldenImageSource(spec api.ImageSpec) *cdiv1.DataVolumeSource {
	switch {
	case spec.Registry != nil:
		url := spec.Registry.URL
		return &cdiv1.DataVolumeSource{Registry: &cdiv1.DataVolumeSourceRegistry{URL: &url}}
	case spec.HTTP != nil:
		return &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: spec.HTTP.URL, Checksum: spec.HTTP.Checksum}}
	}
	return nil
}

// goldenVolumeHashLen is the number of hex digits of the spec hash in a
// golden-image DataVolume's name.
const goldenVolumeHashLen = 10

// goldenImageVolumeName names an image's DataVolume: the image name (cut to
// fit a DNS label) and a hash of the image name and the DataVolume spec, so
// that any change of what the DataVolume imports is a new name.
func goldenImageVolumeName(image string, spec cdiv1.DataVolumeSpec) string {
	data, err := json.Marshal(spec)
	if err != nil {
		// The spec is plain data; json.Marshal cannot fail on it.
		panic(err)
	}
	h := sha256.New()
	h.Write([]byte(image))
	h.Write([]byte{0})
	h.Write(data)
	sum := hex.EncodeToString(h.Sum(nil))[:goldenVolumeHashLen]
	prefix := image
	if max := 63 - 1 - goldenVolumeHashLen; len(prefix) > max {
		prefix = strings.TrimRight(prefix[:max], "-")
	}
	return prefix + "-" + sum
}
