package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/versions"
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

// bootSourceMarks holds catalog images that refer to a DataSource to what
// it is: one of HyperConverged's auto-updated boot sources in the
// golden-image namespace must say so (spec.dataSource.managedBy:
// HyperConverged, a warning otherwise: VMs clone an image no digest in Git
// pins), and the mark on any other DataSource is refused (HCO would never
// create it). The names are the Platform's release's commonBootImages, or
// those of every supported release without a Platform.
func bootSourceMarks(m *resolve.Model, diags *diag.List) {
	releases := versions.Releases()
	if p := m.Platform; p != nil {
		releases = []versions.Release{p.Release}
	}
	managed := func(name string) (string, bool) {
		for _, r := range releases {
			if r.ManagesBootImage(name) {
				return r.Minor, true
			}
		}
		return "", false
	}
	for _, name := range m.Catalog.Images.Names() {
		e, _ := m.Catalog.Images.Entry(name)
		ref := e.Obj.Spec.DataSource
		if ref == nil {
			continue
		}
		ds := resolve.ImageDataSource(name, e.Obj, m.Catalog)
		minor, ok := managed(ds.Name)
		ok = ok && ds.Namespace == m.Catalog.GoldenImageNamespace
		switch {
		case ok && ref.ManagedBy == "":
			diags.Warnf(e.Doc.Pos("spec.dataSource"), "spec.dataSource", "image %q refers to DataSource %s/%s, which HyperConverged's common boot-image import of OpenShift Virtualization %s keeps re-pointing at the newest image of a tag (no digest in Git pins what VMs clone): mark it spec.dataSource.managedBy: HyperConverged, or import a digest-pinned image under another name",
				name, ds.Namespace, ds.Name, minor)
		case !ok && ref.ManagedBy == api.ManagedByHyperConverged:
			diags.Errorf(e.Doc.Pos("spec.dataSource.managedBy"), "spec.dataSource.managedBy", "%s", fmt.Sprintf("DataSource %s/%s is not one of HyperConverged's common boot sources (%s in %s): remove managedBy", ds.Namespace, ds.Name, bootSourceList(releases), m.Catalog.GoldenImageNamespace))
		}
	}
}

func bootSourceList(releases []versions.Release) string {
	var names []string
	for _, r := range releases {
		for _, n := range r.CommonBootImages {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// imageProvenance refuses a production VM whose image has no provenance
// record (image spec.provenance). Doc 000, "Runtime, storage, and network
// model" (Images and provisioning: sources "traceable to a provenance
// record") and the workload eligibility matrix (the standard class needs
// "Template/image provenance" before onboarding).
//
// Nor may it clone one of HyperConverged's auto-updated boot sources (an
// image whose dataSource says managedBy: HyperConverged): doc 000 asks for
// sources that are "versioned, and traceable to a provenance record", and
// HCO's DataImportCron re-points such a DataSource at every new image of
// a tag (CDI v1.65.0 pkg/controller/dataimportcron-controller.go), so
// which image a VM cloned is recorded nowhere in Git. A production VM's
// image is pinned: a registry image by digest or an HTTP image by checksum
// (or a DataSource the platform team keeps pinned). In the cluster the
// tenant's policy leaves such DataSources out of the production
// allowances (rule image-source).
func imageProvenance(vm *resolve.VM, diags *diag.List) {
	if vm.Tier != resolve.TierProduction || vm.Image == nil || vm.Doc.Shadows("spec.tier") {
		return
	}
	if AutoUpdated(vm.Image) {
		diags.RuleFor("image-source", vm.Namespace+"/"+vm.Name).Errorf(vm.Doc.Pos("spec.image"), "spec.image", "VM %s/%s is production tier but image %q is one of HyperConverged's auto-updated boot sources: its DataImportCron re-points the DataSource at every new image, so the version a VM clones is recorded nowhere (doc 000: production images are versioned and traceable to a provenance record) (use a catalog image pinned by digest (spec.registry) or checksum (spec.http), with spec.provenance, or use tier standard)",
			vm.Namespace, vm.Name, vm.ImageName)
		return
	}
	if vm.Image.Spec.Provenance != "" {
		return
	}
	diags.Errorf(vm.Doc.Pos("spec.image"), "spec.image", "VM %s/%s is production tier but image %q has no provenance record (the catalog image's spec.provenance: where it comes from, who approved it, its scan); add it to the image, or use tier standard",
		vm.Namespace, vm.Name, vm.ImageName)
}

// AutoUpdated reports an image that clones one of HyperConverged's
// auto-updated boot sources: not versioned (imageProvenance).
func AutoUpdated(img *api.Image) bool {
	return img.Spec.DataSource != nil && img.Spec.DataSource.ManagedBy == api.ManagedByHyperConverged
}
