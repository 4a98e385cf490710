package rules

import (
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	kubevirtv1 "kubevirt.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/secret"
)

// The Guardrails' compile-time checks that are more than a call of a
// decision: the intent checks of a VM, then the checks of the objects the
// compile writes.

// checkSize is rule instancetype's intent check: the size's verdict, and
// its fit to the image's preference, which KubeVirt's VM admission checks
// too (requirements).
func checkSize(c *VMCheck) {
	rs := c.j.size(c.VM)
	c.refuse(rs)
	if !slices.ContainsFunc(rs, func(r refusal) bool {
		return strings.Contains(r.Message, "is not installed by OpenShift Virtualization")
	}) {
		requirements(c.j.m, c.VM, c.diags)
	}
}

// checkPreference refuses a VM whose image the tenant may use but whose
// preference is not one the cluster admits (the cluster's preference list
// is the preferences of the images the tenant may use, so this holds them
// together).
func checkPreference(c *VMCheck) {
	vm := c.VM
	if vm.Image == nil || vm.Image.Spec.Preference == "" || vm.Spec.Preference == "none" || len(c.j.image(vm)) > 0 || len(c.j.architecture(vm)) > 0 {
		return
	}
	if !slices.Contains(c.A.Preferences, vm.Image.Spec.Preference) {
		c.diags.Errorf(vm.Doc.Pos("spec.image"), "spec.image", "image %q has preference %q, which is not one tenant %q may use", vm.ImageName, vm.Image.Spec.Preference, vm.Tenant.Name)
	}
}

// cloudInitSecrets refuses inline cloud-init data that holds secret
// material (secret.Patterns, which the cluster's rule reads as well).
func cloudInitSecrets(vm *resolve.VM) []refusal {
	ci := vm.Spec.CloudInit
	if ci == nil || ci.UserData == "" {
		return nil
	}
	var found []string
	for i, re := range secretRegexps() {
		if re.MatchString(ci.UserData) {
			found = append(found, secret.Patterns[i].What)
		}
	}
	if len(found) == 0 {
		return nil
	}
	return []refusal{{Field: "spec.cloudInit.userData", Message: "inline cloud-init holds " + strings.Join(found, ", ") + ": secrets must not be in Git (put the user data in a Secret and name it in spec.cloudInit.userDataSecret)"}}
}

// checkEviction is rule eviction's intent check: migration: Required a VM
// cannot have, or the cluster's migrating strategy on one that cannot.
func checkEviction(c *VMCheck) { migration(c.j.m, c.VM, c.diags) }

// checkBackup is rule backup's intent check: a production VM's policy
// takes backups, copies their data off the storage system and captures
// every disk (backupAllowed).
func checkBackup(c *VMCheck) {
	productionBackup(c.VM, c.diags)
	snapshotOnlyBackup(c.VM, c.diags)
	uncapturedDisks(c.VM, c.diags)
}

// checkDiskLimits is rule disk-limits' intent check.
func checkDiskLimits(c *VMCheck) { diskLimits(c.j.m, c.VM, c.diags) }

// vmBody is an object's VirtualMachine, if it is one (render writes some
// through a wrapper that changes only their JSON).
func vmBody(body any) *kubevirtv1.VirtualMachine {
	switch b := body.(type) {
	case *kubevirtv1.VirtualMachine:
		return b
	case interface {
		Unwrap() *kubevirtv1.VirtualMachine
	}:
		return b.Unwrap()
	}
	return nil
}

// vmOf is the name of the VM an object belongs to: a VirtualMachine's
// own, else its virtc.dev/vm label.
func vmOf(o emit.Object) string {
	if o.Kind == "VirtualMachine" {
		return o.Name
	}
	acc, err := meta.Accessor(o.Body)
	if err != nil {
		return ""
	}
	return acc.GetLabels()[model.LabelVM]
}

// templates are a VM's dataVolumeTemplates (none for another object).
func templates(body any) []kubevirtv1.DataVolumeTemplateSpec {
	if vm := vmBody(body); vm != nil {
		return vm.Spec.DataVolumeTemplates
	}
	return nil
}

func checkDiskSources(c *ObjectCheck) {
	specs := []*cdiv1.DataVolumeSpec{}
	for i := range templates(c.Object.Body) {
		specs = append(specs, &templates(c.Object.Body)[i].Spec)
	}
	if dv, ok := c.Object.Body.(*cdiv1.DataVolume); ok {
		specs = append(specs, &dv.Spec)
	}
	for _, s := range specs {
		switch {
		case s.SourceRef != nil:
			ns := c.Object.Namespace
			if s.SourceRef.Namespace != nil {
				ns = *s.SourceRef.Namespace
			}
			if s.SourceRef.Kind != cdiv1.DataVolumeDataSource || !slices.Contains(c.A.DataSources, ns+"/"+s.SourceRef.Name) {
				c.refuse("a disk clones %s %s/%s, which is not the DataSource of an image the tenant may use", s.SourceRef.Kind, ns, s.SourceRef.Name)
			}
		case s.Source == nil:
			c.refuse("a disk has no source")
		case s.Source.Registry != nil:
			if s.Source.Registry.URL == nil || !slices.Contains(c.A.Registries, *s.Source.Registry.URL) {
				c.refuse("a disk imports a registry image that is not one of the tenant's images")
			}
		case s.Source.Blank != nil, s.Source.PVC != nil && (s.Source.PVC.Namespace == "" || s.Source.PVC.Namespace == c.Object.Namespace), s.Source.Snapshot != nil && (s.Source.Snapshot.Namespace == "" || s.Source.Snapshot.Namespace == c.Object.Namespace):
		default:
			c.refuse("a disk source that is not in the catalog")
		}
	}
}

func checkPreferenceOutput(c *ObjectCheck) {
	vm := vmBody(c.Object.Body)
	if vm == nil || vm.Spec.Preference == nil {
		return
	}
	if !slices.Contains(c.A.Preferences, vm.Spec.Preference.Name) {
		c.refuse("preference %s is not the preference of an image the tenant may use", vm.Spec.Preference.Name)
	}
}

func checkStorageClasses(c *ObjectCheck) {
	check := func(class *string) {
		if class == nil || !slices.Contains(c.A.StorageClasses, *class) {
			name := "(none)"
			if class != nil {
				name = *class
			}
			c.refuse("storage class %s is not one of the storage profiles the tenant may use", name)
		}
	}
	for _, t := range templates(c.Object.Body) {
		switch {
		case t.Spec.Storage != nil:
			check(t.Spec.Storage.StorageClassName)
		case t.Spec.PVC != nil:
			check(t.Spec.PVC.StorageClassName)
		}
	}
	if pvc, ok := c.Object.Body.(*corev1.PersistentVolumeClaim); ok {
		check(pvc.Spec.StorageClassName)
	}
}

func checkClaimSources(c *ObjectCheck) {
	pvc, ok := c.Object.Body.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	if pvc.Spec.DataSource != nil || pvc.Spec.DataSourceRef != nil || pvc.Spec.VolumeName != "" {
		c.refuse("a claim with a data source or a volume name")
	}
}

func checkCDIAnnotations(c *ObjectCheck) {
	check := func(annotations map[string]string) {
		for k := range annotations {
			if cdiActKey(k) {
				c.refuse("annotation %s makes CDI act on the claim", k)
			}
		}
	}
	for _, t := range templates(c.Object.Body) {
		check(t.Annotations)
	}
	switch c.Object.Body.(type) {
	case *corev1.PersistentVolumeClaim, *cdiv1.DataVolume:
		if acc, err := meta.Accessor(c.Object.Body); err == nil {
			check(acc.GetAnnotations())
		}
	}
}

func checkNADs(c *ObjectCheck) {
	nad, ok := c.Object.Body.(*extapi.NetworkAttachmentDefinition)
	if !ok {
		return
	}
	if cfg, ok := c.A.NADs[nad.Name]; !ok || cfg != nad.Spec.Config {
		c.refuse("a network attachment that is not one of the tenant's as virtc writes them")
	}
}

func checkUDNs(c *ObjectCheck) {
	udn, ok := c.Object.Body.(*extapi.UserDefinedNetwork)
	if !ok {
		return
	}
	if spec, ok := c.A.UDNs[udn.Name]; !ok || !reflect.DeepEqual(spec, jsonValue(udn.Spec)) {
		c.refuse("a user-defined network that is not the tenant's as virtc writes it")
	}
}

func checkBackupLabels(c *ObjectCheck) {
	acc, err := meta.Accessor(c.Object.Body)
	if err != nil {
		return
	}
	if _, ok := acc.GetLabels()["velero.io/exclude-from-backup"]; ok {
		c.refuse("label velero.io/exclude-from-backup")
	}
	for _, t := range templates(c.Object.Body) {
		if _, ok := t.Labels["velero.io/exclude-from-backup"]; ok {
			c.refuse("a dataVolumeTemplate with label velero.io/exclude-from-backup")
		}
	}
	if c.Object.Kind != "VirtualMachine" {
		return
	}
	p, ok := acc.GetLabels()[model.LabelBackupPolicy]
	if !ok {
		return
	}
	allowed := c.A.BackupPolicies
	if own, ok := c.A.VMBackupPolicies[c.Object.Name]; ok {
		allowed = own
	}
	if !slices.Contains(allowed, p) {
		c.refuse("backup policy %s is not one the VM may use", p)
	}
}

func checkTemplateFields(c *ObjectCheck) {
	vm := vmBody(c.Object.Body)
	if vm == nil {
		return
	}
	if out := Outside(vm.Spec); len(out) > 0 {
		c.refuse("fields outside the template allow list: %s", strings.Join(out, ", "))
	}
}

func refuseCopyChanges(c *ObjectCheck) {
	if c.Object.Kind != "VirtualMachineRestore" && c.Object.Kind != "VirtualMachineClone" {
		return
	}
	obj, _ := jsonValue(c.Object.Body).(map[string]any)
	spec, _ := obj["spec"].(map[string]any)
	if p, _ := spec["patches"].([]any); len(p) > 0 {
		c.refuse("spec.patches")
	}
	overrides, _ := spec["volumeRestoreOverrides"].([]any)
	for _, o := range overrides {
		m, _ := o.(map[string]any)
		a, _ := m["annotations"].(map[string]any)
		for k := range a {
			if cdiActKey(k) {
				c.refuse("a restore override with annotation %s", k)
			}
		}
		l, _ := m["labels"].(map[string]any)
		for k := range l {
			if slices.Contains(backupLabelKeys, k) {
				c.refuse("a restore override with label %s", k)
			}
		}
	}
}
