package importer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/api"
)

func ptr[T any](v T) *T { return &v }

// How a live disk entry becomes the intent's spelling (api.DiskDevice):
// the spellings of virtctl create vm (no entry, or name and boot order
// only), of the console templates (a bus, no boot order) and of forklift
// (bus, serial, boot order 1), and the devices virtc does not write.
func TestDiskSpelling(t *testing.T) {
	for _, c := range []struct {
		name   string
		disk   kubevirtv1.Disk
		has    bool
		want   api.DiskDevice
		wantOK bool
		root   *api.DiskDevice
	}{
		{name: "no entry", has: false, want: api.DiskDevice{Target: api.TargetNone}, wantOK: true,
			root: &api.DiskDevice{Target: api.TargetNone, BootOrder: ptr(int64(0))}},
		{name: "name and boot order", has: true, disk: kubevirtv1.Disk{Name: "r", BootOrder: ptr(uint(1))},
			want: api.DiskDevice{Target: api.TargetUnset, BootOrder: ptr(int64(1))}, wantOK: true, root: &api.DiskDevice{Target: api.TargetUnset}},
		{name: "virtc's own", has: true, disk: kubevirtv1.Disk{Name: "r", BootOrder: ptr(uint(1)), DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{}}},
			want: api.DiskDevice{Target: api.TargetDisk, BootOrder: ptr(int64(1))}, wantOK: true, root: nil},
		{name: "template bus, no boot order", has: true, disk: kubevirtv1.Disk{Name: "r", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "virtio"}}},
			want: api.DiskDevice{Target: api.TargetDisk, Bus: "virtio"}, wantOK: true, root: &api.DiskDevice{Bus: "virtio", BootOrder: ptr(int64(0))}},
		{name: "forklift", has: true, disk: kubevirtv1.Disk{Name: "vol-0", Serial: "6000c29a", BootOrder: ptr(uint(1)), DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "sata"}}},
			want: api.DiskDevice{Target: api.TargetDisk, Bus: "sata", Serial: "6000c29a", BootOrder: ptr(int64(1))}, wantOK: true, root: &api.DiskDevice{Bus: "sata", Serial: "6000c29a"}},
		{name: "cdrom", has: true, disk: kubevirtv1.Disk{Name: "cd", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{Bus: "sata"}}}},
		{name: "shareable", has: true, disk: kubevirtv1.Disk{Name: "d", Shareable: ptr(true), DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{}}}},
		{name: "serial without target", has: true, disk: kubevirtv1.Disk{Name: "d", Serial: "x"}},
	} {
		got, ok := diskDevice(c.disk, c.has)
		if ok != c.wantOK {
			t.Errorf("%s: ok %v, want %v", c.name, ok, c.wantOK)
			continue
		}
		if !ok {
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s: device (-want +got):\n%s", c.name, d)
		}
		if d := cmp.Diff(c.root, rootDevice(got)); d != "" {
			t.Errorf("%s: as the root disk (-want +got):\n%s", c.name, d)
		}
	}
}

// KubeVirt v1.8.4 writes no default kind (virtctl create vm and the
// console leave it out; forklift and virtctl with a kind/ prefix write it
// lower-case): the intent keeps the spelling.
func TestKindSpelling(t *testing.T) {
	for kind, want := range map[string]string{
		"":                                  api.KindAbsent,
		"virtualmachineclusterpreference":   api.KindLowercase,
		"virtualmachineclusterinstancetype": api.KindLowercase,
		"VirtualMachineClusterPreference":   "",
	} {
		if got := kindSpelling(kind); got != want {
			t.Errorf("kindSpelling(%q) = %q, want %q", kind, got, want)
		}
	}
}
