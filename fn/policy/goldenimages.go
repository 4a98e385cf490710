package policy

import (
	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/versions"
)

// bootImageOwners refuses a catalog image that virtc imports (registry or
// http) under the name of a DataSource that HyperConverged's common
// boot-image import manages. virtc writes a DataSource named like the image
// in the golden-image namespace, which it also makes HCO's
// commonBootImageNamespace; HCO v1.18.1 creates a DataImportCron there for
// each of its dataImportCronTemplates
// (controllers/handlers/golden-images/golden_images.go getCommonDicts,
// with enableCommonBootImageImport on by default), and CDI v1.65.0's
// DataImportCron controller creates the DataSource named by its
// spec.managedDataSource, labelled cdi.kubevirt.io/dataImportCron, and
// re-points it at every import (pkg/controller/dataimportcron-controller.go
// updateDataSource, newDataSource; getDataSource leaves alone one without
// its label). Who owns the DataSource then depends on which was created
// first: when CDI's came first (HCO is installed before the images), Argo
// CD's self-heal writes virtc's source back and CDI its own, for ever;
// when virtc's came first, the DataImportCron imports and garbage-collects
// its PVCs for nothing. Golden images have one owner: HCO keeps its boot
// sources (a catalog image refers to them with spec.dataSource), virtc
// owns the images it imports, under other names.
//
// The names are the Platform's release's (versions.yaml
// commonBootImages); without a Platform in the build, those of every
// release virtc supports.
func bootImageOwners(m *resolve.Model, diags *diag.List) {
	releases := versions.Releases()
	if p := m.Platform; p != nil {
		releases = []versions.Release{p.Release}
	}
	for _, name := range m.Catalog.Images.Names() {
		e, _ := m.Catalog.Images.Entry(name)
		if e.Obj.Spec.Registry == nil && e.Obj.Spec.HTTP == nil {
			continue
		}
		for _, r := range releases {
			if !r.ManagesBootImage(name) {
				continue
			}
			diags.Errorf(e.Doc.Pos("metadata.name"), "metadata.name", "image %q would be imported into DataSource %s/%s, which HyperConverged's common boot-image import of OpenShift Virtualization %s manages (its DataImportCron re-points it at every import, fighting Argo CD): name the image otherwise (such as %s-pinned), or refer to HyperConverged's with spec.dataSource.name: %s",
				name, m.Catalog.GoldenImageNamespace, name, r.Minor, name, name)
			break
		}
	}
}
