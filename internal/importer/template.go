package importer

import (
	"strings"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/diag"
)

// templateOSAnnotation is the annotation the common templates put on a
// VM's template: the OS the template is for (kubevirt/common-templates
// v0.34.1 templates/rhel9.tpl.yaml: vm.kubevirt.io/os).
const templateOSAnnotation = "vm.kubevirt.io/os"

// templatePreference is the catalog preference that names the OS of a VM
// without a preference (a template VM): the one whose name, without dots
// and dashes, is the template's OS (common-templates' OS ids rhel9 and
// windows2k22 are common-instancetypes' preferences rhel.9 and
// windows.2k22). It is used for virtc's checks only (requirements, and
// the image a new catalog entry names); the VM keeps no preference.
func (im *importer) templatePreference(kv kubevirtv1.VirtualMachine, refuse func(string, ...any)) string {
	os := kv.Spec.Template.ObjectMeta.Annotations[templateOSAnnotation]
	if os == "" {
		refuse("spec.preference: absent, and the template has no %s annotation: virtc names the OS of a VM without a preference by its template's OS (set the VM's preference, or the annotation, first)", templateOSAnnotation)
		return ""
	}
	flat := func(s string) string { return strings.NewReplacer(".", "", "-", "").Replace(s) }
	var names []string
	for _, name := range im.cat.Preferences.Names() {
		if flat(name) == flat(os) {
			return name
		}
		names = append(names, name)
	}
	refuse("spec.template.metadata.annotations[%q]: %s", templateOSAnnotation, diag.Unknown("preference for OS", os, names))
	return ""
}

// tuning maps what a VM states of the guest's tuning beside its firmware:
// RNG, features, clock offset and timers, and the termination grace
// period. body is the live VM as exported: whether features.acpi is
// written at all is lost in the typed VM (kubevirt.io/api's Features.ACPI
// is a struct).
func (im *importer) tuning(body map[string]any, tmpl kubevirtv1.VirtualMachineInstanceSpec, spec *api.VMSpec) {
	dom := tmpl.Domain
	spec.RNG = dom.Devices.Rng != nil
	if g := tmpl.TerminationGracePeriodSeconds; g != nil {
		v := *g
		spec.TerminationGracePeriodSeconds = &v
	}
	if c := dom.Clock; c != nil && (c.UTC != nil || c.Timer != nil) {
		clock := &api.Clock{}
		if spec.Clock != nil {
			clock = spec.Clock
		}
		if c.Timezone != nil {
			clock.Timezone = string(*c.Timezone)
		}
		if u := c.UTC; u != nil {
			clock.UTC = &api.ClockUTC{}
			if u.OffsetSeconds != nil {
				s := int64(*u.OffsetSeconds)
				clock.UTC.OffsetSeconds = &s
			}
		}
		if t := c.Timer; t != nil {
			tm := &api.Timers{}
			if x := t.HPET; x != nil {
				tm.HPET = &api.Timer{TickPolicy: string(x.TickPolicy), Present: x.Enabled}
			}
			if x := t.KVM; x != nil {
				tm.KVM = &api.Timer{Present: x.Enabled}
			}
			if x := t.PIT; x != nil {
				tm.PIT = &api.Timer{TickPolicy: string(x.TickPolicy), Present: x.Enabled}
			}
			if x := t.RTC; x != nil {
				tm.RTC = &api.Timer{TickPolicy: string(x.TickPolicy), Present: x.Enabled}
			}
			if x := t.Hyperv; x != nil {
				tm.Hyperv = &api.Timer{Present: x.Enabled}
			}
			clock.Timer = tm
		}
		spec.Clock = clock
	}
	f := dom.Features
	if f == nil {
		return
	}
	live, _ := mapAt(body, "spec", "template", "spec", "domain", "features")
	out := &api.Features{}
	if _, written := live["acpi"]; !written {
		out.ACPI = api.ACPIUnwritten
	} else if f.ACPI.Enabled != nil && !*f.ACPI.Enabled {
		out.ACPI = api.ACPIOff
	}
	if a := f.APIC; a != nil {
		out.APIC = &api.FeatureState{Enabled: a.Enabled}
	}
	if h := f.Hyperv; h != nil {
		state := func(s *kubevirtv1.FeatureState) *api.FeatureState {
			if s == nil {
				return nil
			}
			return &api.FeatureState{Enabled: s.Enabled}
		}
		hv := &api.Hyperv{
			Relaxed: state(h.Relaxed), VAPIC: state(h.VAPIC), VPIndex: state(h.VPIndex), Runtime: state(h.Runtime),
			SyNIC: state(h.SyNIC), Reset: state(h.Reset), Frequencies: state(h.Frequencies),
			Reenlightenment: state(h.Reenlightenment), IPI: state(h.IPI),
		}
		if s := h.Spinlocks; s != nil {
			hv.Spinlocks = &api.Spinlocks{Enabled: s.Enabled}
			if s.Retries != nil {
				r := int64(*s.Retries)
				hv.Spinlocks.Retries = &r
			}
		}
		if s := h.SyNICTimer; s != nil {
			hv.SyNICTimer = &api.SyNICTimer{Enabled: s.Enabled, Direct: state(s.Direct)}
		}
		if s := h.TLBFlush; s != nil {
			hv.TLBFlush = &api.TLBFlush{Enabled: s.Enabled, Direct: state(s.Direct), Extended: state(s.Extended)}
		}
		out.Hyperv = hv
	}
	if *out != (api.Features{}) {
		spec.Features = out
	}
}

// cdrom maps a containerDisk volume: a CD-ROM of a catalog container disk
// of the same image, else refused (an image outside the catalog is not
// approved: doc 000, Images and provisioning).
func (im *importer) cdrom(v kubevirtv1.Volume, d kubevirtv1.Disk, hasDisk bool, spec *api.VMSpec, refuse func(string, ...any)) {
	if !hasDisk || d.CDRom == nil || d.Serial != "" || d.Cache != "" || d.IO != "" || d.Shareable != nil || d.BlockSize != nil || d.DedicatedIOThread != nil || d.ErrorPolicy != nil || d.Tag != "" {
		refuse("spec.template.spec.domain.devices.disks[%s]: a container disk virtc writes as a CD-ROM only (a cdrom target with a bus and boot order)", v.Name)
		return
	}
	if c := d.CDRom; c.ReadOnly != nil || c.Tray != "" {
		refuse("spec.template.spec.domain.devices.disks[%s].cdrom: readOnly or tray stated; virtc writes a CD-ROM with its bus only", v.Name)
		return
	}
	if cd := v.ContainerDisk; cd.Path != "" || cd.ImagePullPolicy != "" || cd.ImagePullSecret != "" {
		refuse("spec.template.spec.volumes[%s].containerDisk: path, pull policy, or pull secret; virtc writes the image only", v.Name)
		return
	}
	var images []string
	for _, name := range im.cat.ContainerDisks.Names() {
		c, _ := im.cat.ContainerDisks.Get(name)
		if c.Spec.Image != v.ContainerDisk.Image {
			images = append(images, c.Spec.Image)
			continue
		}
		cd := api.CDROM{Name: v.Name, ContainerDisk: name, Bus: string(d.CDRom.Bus)}
		if d.BootOrder != nil {
			b := int64(*d.BootOrder)
			cd.BootOrder = &b
		}
		spec.CDROMs = append(spec.CDROMs, cd)
		return
	}
	refuse("spec.template.spec.volumes[%s].containerDisk.image: %s: only the catalog's approved container disks are mounted (a platform team adds a ContainerDisk of this image, with its provenance, to the catalog)", v.Name, diag.UnknownName("container disk image", v.ContainerDisk.Image, images))
}

// mapAt is the map at a path of a live object.
func mapAt(m map[string]any, path ...string) (map[string]any, bool) {
	cur := m
	for _, k := range path {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}
