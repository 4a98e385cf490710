package importer

import (
	"slices"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/live"
)

// Each additional network kind virtc writes is imported from the objects
// its writer leaves (golden/import/additional-networks), and each form
// virtc cannot write the same way is refused with the reason, the VM
// left running.
func TestNetworkKinds(t *testing.T) {
	find := func(objs []live.Object, kind, name string) map[string]any {
		for _, o := range objs {
			if o.Kind == kind && o.Name == name {
				return o.Body
			}
		}
		t.Fatalf("no %s %s in the export", kind, name)
		return nil
	}
	spec := func(body map[string]any) map[string]any { return body["spec"].(map[string]any) }
	cases := []struct {
		name string
		edit func(objs []live.Object) []live.Object
		vm   string // namespace/name refused, "" for none
		want string // in the reasons
	}{
		{name: "as exported", edit: func(objs []live.Object) []live.Object { return objs }},
		{name: "localnet NAD made by hand", vm: "telco/edge01", want: "not made by a ClusterUserDefinedNetwork named dc-vlan200",
			edit: func(objs []live.Object) []live.Object {
				delete(find(objs, "NetworkAttachmentDefinition", "dc-vlan200")["metadata"].(map[string]any), "ownerReferences")
				return objs
			}},
		{name: "ClusterUserDefinedNetwork not exported", vm: "telco/edge01", want: "which is not in the export",
			edit: func(objs []live.Object) []live.Object { return without(objs, "ClusterUserDefinedNetwork") }},
		{name: "localnet with IPAM", vm: "telco/edge01", want: "spec.network.localnet.subnets",
			edit: func(objs []live.Object) []live.Object {
				ln := spec(find(objs, "ClusterUserDefinedNetwork", "dc-vlan200"))["network"].(map[string]any)["localnet"].(map[string]any)
				ln["ipam"] = map[string]any{"mode": "Enabled", "lifecycle": "Persistent"}
				ln["subnets"] = []any{"192.0.2.0/24"}
				return objs
			}},
		{name: "localnet of a Layer2 ClusterUserDefinedNetwork", vm: "telco/edge01", want: "spec.network.topology Layer2",
			edit: func(objs []live.Object) []live.Object {
				spec(find(objs, "ClusterUserDefinedNetwork", "dc-vlan200"))["network"].(map[string]any)["topology"] = "Layer2"
				return objs
			}},
		{name: "an attachment of another CNI", vm: "telco/edge02", want: `a "macvlan" attachment`,
			edit: func(objs []live.Object) []live.Object {
				spec(find(objs, "NetworkAttachmentDefinition", "vf-data"))["config"] = `{"cniVersion":"1.0.0","name":"vf-data","type":"macvlan","master":"eth1"}`
				return objs
			}},
		{name: "an SR-IOV attachment on the bridge binding", vm: "telco/edge01", want: "is sriov, which virtc attaches through the sriov binding",
			edit: func(objs []live.Object) []live.Object {
				spec(find(objs, "NetworkAttachmentDefinition", "dc-vlan200"))["config"] = `{"cniVersion":"1.0.0","name":"dc-vlan200","type":"sriov","vlan":0}`
				return objs
			}},
		{name: "primary UserDefinedNetwork with join subnets", vm: "apps/api01", want: "spec.layer2.joinSubnets",
			edit: func(objs []live.Object) []live.Object {
				spec(find(objs, "UserDefinedNetwork", "primary"))["layer2"].(map[string]any)["joinSubnets"] = []any{"100.99.0.0/16"}
				return objs
			}},
		{name: "primary UserDefinedNetwork not exported", vm: "apps/api01", want: "0 primary UserDefinedNetworks in the export",
			edit: func(objs []live.Object) []live.Object { return without(objs, "UserDefinedNetwork") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Import(c.edit(goldenExport(t, "additional-networks")), nil, catalog.Options{}, Options{})
			refused := map[string]string{}
			for _, r := range res.Refused {
				refused[r.VM] = strings.Join(r.Reasons, "\n")
			}
			// edge02 is refused for policy in every case: SR-IOV is
			// excluded from the baseline without a Platform enabling it.
			if !strings.Contains(refused["telco/edge02"], "SR-IOV, which is excluded from the platform baseline") && c.vm != "telco/edge02" {
				t.Errorf("edge02: %q, want the SR-IOV policy refusal", refused["telco/edge02"])
			}
			delete(refused, "telco/edge02")
			if c.vm == "telco/edge02" {
				refused["telco/edge02"] = strings.Join(refusalOf(res, "telco/edge02"), "\n")
			}
			if c.vm == "" {
				if len(refused) > 0 {
					t.Fatalf("refused %v, want only edge02 (policy)", refused)
				}
				return
			}
			if !strings.Contains(refused[c.vm], c.want) {
				t.Fatalf("%s refused for %q, want %q (all refused: %v)", c.vm, refused[c.vm], c.want, refused)
			}
			if len(refused) != 1 {
				t.Errorf("refused %v, want %s alone (and edge02 for policy)", refused, c.vm)
			}
		})
	}
}

func refusalOf(res Result, vm string) []string {
	for _, r := range res.Refused {
		if r.VM == vm {
			return r.Reasons
		}
	}
	return nil
}

// without is objs without those of kind.
func without(objs []live.Object, kind string) []live.Object {
	return slices.DeleteFunc(objs, func(o live.Object) bool { return o.Kind == kind })
}
