package render

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
)

// VirtualMachine renders the VM with its root disk as a dataVolumeTemplate
// cloned from the image's DataSource and its data disks as references to
// their PersistentVolumeClaims (see DataDisks).
func VirtualMachine(vm *resolve.VM, safe safety) emit.Object {
	labels := model.VMLabels(vm)
	templateLabels := model.PlacementLabels(vm, maps.Clone(labels))
	if vm.Spec.Retired {
		labels[model.LabelRetired] = "true"
	}

	disks, volumes, templates := vmDisks(vm)
	if ci := model.CloudInit(vm); ci != nil {
		var dev *api.DiskDevice
		if vm.Spec.CloudInit != nil {
			dev = vm.Spec.CloudInit.Device
		}
		disks = appendDisk(disks, model.CloudInitVolume, dev, nil)
		volumes = append(volumes, kubevirtv1.Volume{Name: model.CloudInitVolume, VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: ci}})
	}
	hotDisks, hotVolumes := dataDisks(vm, true)
	disks, volumes = append(disks, hotDisks...), append(volumes, hotVolumes...)
	var interfaces []kubevirtv1.Interface
	var networks []kubevirtv1.Network
	for _, n := range vm.Networks {
		iface, net := attachment(n, vm.Namespace, vm.Spec.Interfaces[n.Name])
		iface.MacAddress = vm.Spec.MACAddresses[n.Name]
		interfaces = append(interfaces, iface)
		networks = append(networks, net)
	}
	var creds []kubevirtv1.AccessCredential
	for _, s := range vm.Spec.SSHKeySecrets {
		method := kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &kubevirtv1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}
		if users := vm.Spec.SSHKeyGuestAgentUsers; len(users) > 0 {
			method = kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{QemuGuestAgent: &kubevirtv1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: slices.Clone(users)}}
		}
		creds = append(creds, kubevirtv1.AccessCredential{SSHPublicKey: &kubevirtv1.SSHPublicKeyAccessCredential{
			Source:            kubevirtv1.SSHPublicKeyAccessCredentialSource{Secret: &kubevirtv1.AccessCredentialSecretSource{SecretName: s}},
			PropagationMethod: method,
		}})
	}
	runStrategy := kubevirtv1.VirtualMachineRunStrategy(vm.RunStrategy)
	eviction := model.EvictionStrategy(vm)
	evictionRef := &eviction
	defaults := vm.Spec.KubeVirtDefaults
	if slices.Contains(defaults, api.DefaultDisks) {
		disks = nil
	}
	if slices.Contains(defaults, api.DefaultNetworks) {
		interfaces, networks = nil, nil
	}
	if slices.Contains(defaults, api.DefaultEvictionStrategy) {
		evictionRef = nil
	}

	annotations := vm.Metadata.Annotations
	if len(vm.PreviewFeatures) > 0 {
		// Marked for people and tools: the VM runs a feature that is not
		// generally available (class confidential-or-tech-preview).
		annotations = maps.Clone(annotations)
		if annotations == nil {
			annotations = map[string]string{}
		}
		var gates []string
		for _, u := range vm.PreviewFeatures {
			gates = append(gates, u.Gate)
		}
		annotations[model.AnnotationPreviewFeatures] = strings.Join(gates, ",")
	}
	obj := &kubevirtv1.VirtualMachine{
		TypeMeta:   typeMeta("kubevirt.io/v1", "VirtualMachine"),
		ObjectMeta: safe.meta(objectMeta("VirtualMachine", vm.Namespace, vm.Name, vm.Doc.Rel, labels, annotations)),
		Spec: kubevirtv1.VirtualMachineSpec{
			RunStrategy:         &runStrategy,
			Instancetype:        &kubevirtv1.InstancetypeMatcher{Kind: instancetypeKind(vm.Spec.MatcherKinds), Name: vm.SizeName},
			Preference:          preferenceMatcher(vm),
			DataVolumeTemplates: templates,
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: objectMeta("", "", "", "", templateLabels, nil),
				Spec: kubevirtv1.VirtualMachineInstanceSpec{
					Architecture:     model.Architecture(vm),
					EvictionStrategy: evictionRef,
					Domain: kubevirtv1.DomainSpec{
						Machine:  machine(vm.Spec.MachineType),
						Firmware: firmware(vm),
						Devices:  kubevirtv1.Devices{Disks: disks, Interfaces: interfaces, GPUs: gpus(vm.Spec.GPUs), HostDevices: hostDevices(vm.Spec.HostDevices)},
					},
					Networks:          networks,
					Volumes:           volumes,
					AccessCredentials: creds,
				},
			},
		},
	}
	if vm.Spec.Preference == "none" {
		// A template VM states its tuning itself (api.VMSpec.Preference).
		obj.Spec.Preference = nil
	}
	obj.Spec.Template.Spec.TerminationGracePeriodSeconds = vm.Spec.TerminationGracePeriodSeconds
	obj.Spec.Template.Spec.Domain.LaunchSecurity = launchSecurity(vm.Spec.Confidential)
	cdroms(vm, &obj.Spec.Template.Spec)
	bootAndDevices(vm.Spec, &obj.Spec.Template.Spec)
	vmPlacement(vm, &obj.Spec.Template.Spec)
	health(vm, &obj.Spec.Template.Spec)
	if vm.Size != nil && vm.Size.Spec.Inline != nil {
		inlineSize(obj, vm.Size.Spec)
	}
	var body any = obj
	if f := vm.Spec.Features; f != nil && f.ACPI == api.ACPIUnwritten && obj.Spec.Template.Spec.Domain.Features != nil {
		body = withoutACPI{obj}
	}
	return emit.Object{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Namespace: vm.Namespace, Name: vm.Name, Scope: emit.VMScope, Body: body}
}

// withoutACPI is a VirtualMachine written without features.acpi.
// kubevirt.io/api v1.8.4's Features.ACPI is a struct (FeatureState) with
// omitempty, which encoding/json never omits: KubeVirt's Go types write
// acpi: {} whenever a VM has features. A VM created by a client that
// writes JSON itself (the console) has none; writing acpi: {} onto it
// would be a change of its template spec, which KubeVirt marks
// RestartRequired, although ACPI is on either way.
type withoutACPI struct {
	*kubevirtv1.VirtualMachine
}

// The render steps after VirtualMachine (retire, in meta.go) reach a
// VM's metadata through metav1.Object.
var _ metav1.Object = withoutACPI{}

// Unwrap is the VirtualMachine (internal/rules reads it).
func (w withoutACPI) Unwrap() *kubevirtv1.VirtualMachine { return w.VirtualMachine }

// MarshalJSON writes the VM as encoding/json does, without
// spec.template.spec.domain.features.acpi.
func (w withoutACPI) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(w.VirtualMachine)
	if err != nil {
		return nil, err
	}
	m, err := emit.DecodeGeneric(data)
	if err != nil {
		return nil, err
	}
	cur := m
	for _, k := range []string{"spec", "template", "spec", "domain", "features"} {
		next, _ := cur[k].(map[string]any)
		if next == nil {
			return data, nil
		}
		cur = next
	}
	delete(cur, "acpi")
	return json.Marshal(m)
}

// cdroms writes the VM's CD-ROMs of catalog container disks, after its
// other disks (as the console appends the drivers CD).
func cdroms(vm *resolve.VM, t *kubevirtv1.VirtualMachineInstanceSpec) {
	for _, cd := range vm.Spec.CDROMs {
		img, ok := vm.CDROMs[cd.Name]
		if !ok {
			continue
		}
		d := kubevirtv1.Disk{Name: cd.Name, DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{Bus: kubevirtv1.DiskBus(cd.Bus)}}}
		if cd.BootOrder != nil && *cd.BootOrder > 0 {
			b := uint(*cd.BootOrder)
			d.BootOrder = &b
		}
		if !slices.Contains(vm.Spec.KubeVirtDefaults, api.DefaultDisks) {
			t.Domain.Devices.Disks = append(t.Domain.Devices.Disks, d)
		}
		t.Volumes = append(t.Volumes, kubevirtv1.Volume{Name: cd.Name, VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: img}}})
	}
}

// Kinds of the instance type and preference references, as
// spec.matcherKinds spells them (KubeVirt v1.8.4
// pkg/instancetype/find/spec.go reads absent and lower-case kinds as the
// cluster kinds).
func instancetypeKind(k *api.MatcherKinds) string {
	if k == nil {
		return "VirtualMachineClusterInstancetype"
	}
	return kindSpelling(k.Instancetype, "VirtualMachineClusterInstancetype")
}

func preferenceKind(k *api.MatcherKinds) string {
	if k == nil {
		return "VirtualMachineClusterPreference"
	}
	return kindSpelling(k.Preference, "VirtualMachineClusterPreference")
}

func kindSpelling(spelling, kind string) string {
	switch spelling {
	case api.KindAbsent:
		return ""
	case api.KindLowercase:
		return strings.ToLower(kind)
	}
	return kind
}

// machine is the stated machine type, nil when the intent states none.
func machine(t string) *kubevirtv1.Machine {
	if t == "" {
		return nil
	}
	return &kubevirtv1.Machine{Type: t}
}

// appendDisk appends a volume's disk entry as dev spells it (nil: a disk
// target on the default bus); boot is the boot order when dev states none.
func appendDisk(disks []kubevirtv1.Disk, name string, dev *api.DiskDevice, boot *uint) []kubevirtv1.Disk {
	d := kubevirtv1.Disk{Name: name, BootOrder: boot, DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{}}}
	if dev == nil {
		return append(disks, d)
	}
	if dev.BootOrder != nil {
		d.BootOrder = nil
		if *dev.BootOrder > 0 {
			b := uint(*dev.BootOrder)
			d.BootOrder = &b
		}
	}
	switch dev.Target {
	case api.TargetNone:
		return disks
	case api.TargetUnset:
		d.DiskDevice = kubevirtv1.DiskDevice{}
	default:
		d.Disk.Bus = kubevirtv1.DiskBus(dev.Bus)
		d.Serial = dev.Serial
	}
	return append(disks, d)
}

// bootAndDevices writes the firmware, boot guards, clock, input and
// subdomain an intent states (an adopted VM's, kept as they run).
func bootAndDevices(spec api.VMSpec, t *kubevirtv1.VirtualMachineInstanceSpec) {
	t.Subdomain = spec.Subdomain
	dom := &t.Domain
	dom.Clock = clock(spec.Clock)
	if spec.Tablet != "" {
		dom.Devices.Inputs = []kubevirtv1.Input{{Type: kubevirtv1.InputTypeTablet, Bus: kubevirtv1.InputBus(spec.Tablet), Name: "tablet"}}
	}
	if spec.RNG {
		dom.Devices.Rng = &kubevirtv1.Rng{}
	}
	if f := spec.Features; f != nil {
		dom.Features = features(f)
	}
	fw := spec.Firmware
	if fw == nil {
		return
	}
	switch fw.Bootloader {
	case "bios":
		dom.Firmware.Bootloader = &kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{}}
	case "efi":
		dom.Firmware.Bootloader = &kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{SecureBoot: fw.SecureBoot, Persistent: fw.PersistentEFI}}
	}
	if fw.SMM != nil {
		if dom.Features == nil {
			dom.Features = &kubevirtv1.Features{}
		}
		dom.Features.SMM = &kubevirtv1.FeatureState{Enabled: fw.SMM.Enabled}
	}
	if fw.TPM != nil {
		dom.Devices.TPM = &kubevirtv1.TPMDevice{Enabled: fw.TPM.Enabled, Persistent: fw.TPM.Persistent}
	}
}

// inlineSize writes an inline size into the VM instead of the instance
// type reference.
func inlineSize(obj *kubevirtv1.VirtualMachine, s api.SizeSpec) {
	obj.Spec.Instancetype = nil
	dom := &obj.Spec.Template.Spec.Domain
	in := s.Inline
	if in.Sockets != 0 || in.Cores != 0 || in.Threads != 0 {
		dom.CPU = &kubevirtv1.CPU{Sockets: uint32(in.Sockets), Cores: uint32(in.Cores), Threads: uint32(in.Threads)}
	}
	guest := s.Memory.DeepCopy()
	dom.Memory = &kubevirtv1.Memory{Guest: &guest}
}

// firmware is the VM's SMBIOS identity: the intent's, else derived from
// namespace and name; no serial when the intent leaves it to KubeVirt (a
// VM adopted from before KubeVirt v1.7, which has none).
func firmware(vm *resolve.VM) *kubevirtv1.Firmware {
	fw := &kubevirtv1.Firmware{
		UUID:   types.UID(model.FirmwareUUID(vm.Namespace, vm.Name)),
		Serial: model.FirmwareSerial(vm.Namespace, vm.Name),
	}
	if slices.Contains(vm.Spec.KubeVirtDefaults, api.DefaultSerial) {
		fw.Serial = ""
	}
	if f := vm.Spec.Firmware; f != nil {
		if f.UUID != "" {
			fw.UUID = types.UID(f.UUID)
		}
		if f.Serial != "" {
			fw.Serial = f.Serial
		}
	}
	return fw
}

// vmDisks are the VM's disks, volumes and dataVolumeTemplates: the root
// disk (a clone of the image, or an existing DataVolume or claim) and the
// attached data disks (virtc's claims, or existing claims and DataVolumes).
func vmDisks(vm *resolve.VM) ([]kubevirtv1.Disk, []kubevirtv1.Volume, []kubevirtv1.DataVolumeTemplateSpec) {
	boot := uint(1)
	rootVolume := model.RootVolume
	var templates []kubevirtv1.DataVolumeTemplateSpec
	var rootSource kubevirtv1.VolumeSource
	if ex := vm.Spec.ExistingRootDisk; ex != nil {
		if ex.VolumeName != "" {
			rootVolume = ex.VolumeName
		}
		rootSource = existingSource(ex.DataVolume, ex.PersistentVolumeClaim, false)
	} else {
		rootName := model.RootDiskName(vm.Name)
		dsNamespace := vm.DataSource.Namespace
		rootSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: rootName}}
		spec := cdiv1.DataVolumeSpec{
			SourceRef: &cdiv1.DataVolumeSourceRef{Kind: cdiv1.DataVolumeDataSource, Namespace: &dsNamespace, Name: vm.DataSource.Name},
			Storage:   storageSpec(vm.RootStorage, vm.RootDisk),
		}
		if vm.Image == nil && strings.Contains(vm.ImageName, "://") {
			// An image named by URL: the rules refuse it (images are the
			// catalog's), so no build writes this; it is what the intent
			// asks of the cluster (Unchecked), which refuses it too.
			spec.SourceRef = nil
			spec.Source = &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: vm.ImageName}}
		}
		templates = []kubevirtv1.DataVolumeTemplateSpec{{
			ObjectMeta: objectMeta("", "", rootName, "", diskLabels(vm), nil),
			Spec:       spec,
		}}
	}
	disks := appendDisk(nil, rootVolume, vm.Spec.RootDiskDevice, &boot)
	volumes := []kubevirtv1.Volume{{Name: rootVolume, VolumeSource: rootSource}}
	d, v := dataDisks(vm, false)
	return append(disks, d...), append(volumes, v...), templates
}

// dataDisks are the disks and volumes of the attached data disks that are
// hot-pluggable or not: KubeVirt appends a disk hot-plugged into the VM's
// spec (virtctl addvolume) after the others, so virtc writes those last.
func dataDisks(vm *resolve.VM, hot bool) ([]kubevirtv1.Disk, []kubevirtv1.Volume) {
	var disks []kubevirtv1.Disk
	var volumes []kubevirtv1.Volume
	for _, d := range vm.Attached() {
		if d.Hotpluggable != hot {
			continue
		}
		disks = appendDisk(disks, d.Name, &api.DiskDevice{Bus: d.Bus, Serial: d.Serial, BootOrder: d.BootOrder, Target: d.Target}, nil)
		src := kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
			PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: model.DiskName(vm.Name, d.Name)},
		}}
		if d.Existing() {
			src = existingSource(d.ExistingDataVolume, d.ExistingClaim, d.Hotpluggable)
		}
		volumes = append(volumes, kubevirtv1.Volume{Name: d.Name, VolumeSource: src})
	}
	return disks, volumes
}

// existingSource is the volume source of an existing DataVolume or claim.
func existingSource(dataVolume, claim string, hotpluggable bool) kubevirtv1.VolumeSource {
	if dataVolume != "" {
		return kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: dataVolume, Hotpluggable: hotpluggable}}
	}
	return kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
		PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
		Hotpluggable:                      hotpluggable,
	}}
}

// attachment is the interface and network of a network profile, as the
// intent's spec.interfaces spells it.
func attachment(n resolve.Network, namespace string, sp api.Interface) (kubevirtv1.Interface, kubevirtv1.Network) {
	name := cmp.Or(sp.Name, n.Name)
	iface := kubevirtv1.Interface{Name: name, Model: sp.Model, PciAddress: sp.PCIAddress, ACPIIndex: int(sp.ACPIIndex), State: kubevirtv1.InterfaceState(sp.State)}
	net := kubevirtv1.Network{Name: name}
	nad := n.Name
	if sp.QualifiedNetworkName {
		nad = namespace + "/" + n.Name
	}
	switch n.Spec.Type {
	case api.NetworkPod:
		iface.Masquerade = &kubevirtv1.InterfaceMasquerade{}
		net.Pod = &kubevirtv1.PodNetwork{}
	case api.NetworkUDNPrimary:
		// The primary UDN replaces the pod network; KubeVirt reaches it
		// through the l2bridge binding plugin.
		iface.Binding = &kubevirtv1.PluginBinding{Name: "l2bridge"}
		net.Pod = &kubevirtv1.PodNetwork{}
	case api.NetworkSRIOV:
		// The SR-IOV operator creates the attachment of that name.
		iface.SRIOV = &kubevirtv1.InterfaceSRIOV{}
		net.Multus = &kubevirtv1.MultusNetwork{NetworkName: nad}
	case api.NetworkBridge, api.NetworkLocalnet:
		// The attachment is named like the profile: a NAD virtc writes
		// (bridge) or one the ClusterUserDefinedNetwork creates (localnet).
		iface.Bridge = &kubevirtv1.InterfaceBridge{}
		net.Multus = &kubevirtv1.MultusNetwork{NetworkName: nad}
	}
	return iface, net
}

func gpus(ds []api.Device) []kubevirtv1.GPU {
	var out []kubevirtv1.GPU
	for _, d := range ds {
		out = append(out, kubevirtv1.GPU{Name: d.Name, DeviceName: d.DeviceName})
	}
	return out
}

func hostDevices(ds []api.Device) []kubevirtv1.HostDevice {
	var out []kubevirtv1.HostDevice
	for _, d := range ds {
		out = append(out, kubevirtv1.HostDevice{Name: d.Name, DeviceName: d.DeviceName})
	}
	return out
}

// clock is the guest clock an intent states (nil: KubeVirt's default,
// UTC).
func clock(c *api.Clock) *kubevirtv1.Clock {
	if c == nil || c.Timezone == "" && c.UTC == nil && c.Timer == nil {
		return nil
	}
	out := &kubevirtv1.Clock{}
	if c.Timezone != "" {
		tz := kubevirtv1.ClockOffsetTimezone(c.Timezone)
		out.Timezone = &tz
	}
	if u := c.UTC; u != nil {
		out.UTC = &kubevirtv1.ClockOffsetUTC{}
		if u.OffsetSeconds != nil {
			s := int(*u.OffsetSeconds)
			out.UTC.OffsetSeconds = &s
		}
	}
	if t := c.Timer; t != nil {
		out.Timer = &kubevirtv1.Timer{}
		if x := t.HPET; x != nil {
			out.Timer.HPET = &kubevirtv1.HPETTimer{TickPolicy: kubevirtv1.HPETTickPolicy(x.TickPolicy), Enabled: x.Present}
		}
		if x := t.KVM; x != nil {
			out.Timer.KVM = &kubevirtv1.KVMTimer{Enabled: x.Present}
		}
		if x := t.PIT; x != nil {
			out.Timer.PIT = &kubevirtv1.PITTimer{TickPolicy: kubevirtv1.PITTickPolicy(x.TickPolicy), Enabled: x.Present}
		}
		if x := t.RTC; x != nil {
			out.Timer.RTC = &kubevirtv1.RTCTimer{TickPolicy: kubevirtv1.RTCTickPolicy(x.TickPolicy), Enabled: x.Present}
		}
		if x := t.Hyperv; x != nil {
			out.Timer.Hyperv = &kubevirtv1.HypervTimer{Enabled: x.Present}
		}
	}
	return out
}

// features are the hypervisor features an intent states (SMM aside,
// which spec.firmware states).
func features(f *api.Features) *kubevirtv1.Features {
	out := &kubevirtv1.Features{}
	if f.ACPI == api.ACPIOff {
		off := false
		out.ACPI = kubevirtv1.FeatureState{Enabled: &off}
	}
	if a := f.APIC; a != nil {
		out.APIC = &kubevirtv1.FeatureAPIC{FeatureState: kubevirtv1.FeatureState{Enabled: a.Enabled}}
	}
	h := f.Hyperv
	if h == nil {
		return out
	}
	state := func(s *api.FeatureState) *kubevirtv1.FeatureState {
		if s == nil {
			return nil
		}
		return &kubevirtv1.FeatureState{Enabled: s.Enabled}
	}
	hv := &kubevirtv1.FeatureHyperv{
		Relaxed: state(h.Relaxed), VAPIC: state(h.VAPIC), VPIndex: state(h.VPIndex), Runtime: state(h.Runtime),
		SyNIC: state(h.SyNIC), Reset: state(h.Reset), Frequencies: state(h.Frequencies),
		Reenlightenment: state(h.Reenlightenment), IPI: state(h.IPI),
	}
	if s := h.Spinlocks; s != nil {
		hv.Spinlocks = &kubevirtv1.FeatureSpinlocks{FeatureState: kubevirtv1.FeatureState{Enabled: s.Enabled}}
		if s.Retries != nil {
			r := uint32(*s.Retries)
			hv.Spinlocks.Retries = &r
		}
	}
	if s := h.SyNICTimer; s != nil {
		hv.SyNICTimer = &kubevirtv1.SyNICTimer{FeatureState: kubevirtv1.FeatureState{Enabled: s.Enabled}, Direct: state(s.Direct)}
	}
	if s := h.TLBFlush; s != nil {
		hv.TLBFlush = &kubevirtv1.TLBFlush{FeatureState: kubevirtv1.FeatureState{Enabled: s.Enabled}, Direct: state(s.Direct), Extended: state(s.Extended)}
	}
	out.Hyperv = hv
	return out
}

// preferenceMatcher is the VM's image's preference (none without an
// image).
func preferenceMatcher(vm *resolve.VM) *kubevirtv1.PreferenceMatcher {
	if vm.Image == nil {
		return nil
	}
	return &kubevirtv1.PreferenceMatcher{Kind: preferenceKind(vm.Spec.MatcherKinds), Name: vm.Image.Spec.Preference}
}

// launchSecurity is the memory encryption an intent asks for. The rules
// refuse every one (confidential VMs are excluded from the platform
// baseline), so no build writes it; it is what the intent asks of the
// cluster (render.Unchecked), which the cluster's confidential rule
// refuses too.
func launchSecurity(c string) *kubevirtv1.LaunchSecurity {
	switch c {
	case "SEV":
		t := true
		return &kubevirtv1.LaunchSecurity{SEV: &kubevirtv1.SEV{Policy: &kubevirtv1.SEVPolicy{EncryptedState: &t}}}
	case "SEV-SNP":
		return &kubevirtv1.LaunchSecurity{SNP: &kubevirtv1.SEVSNP{}}
	case "TDX":
		return &kubevirtv1.LaunchSecurity{TDX: &kubevirtv1.TDX{}}
	}
	return nil
}
