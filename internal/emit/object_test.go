package emit

import (
	"slices"
	"testing"
)

func TestSortOrder(t *testing.T) {
	objs := []Object{
		{Kind: "VirtualMachine", Namespace: "b", Name: "x"},
		{Kind: "Zebra", Name: "z"},
		{Kind: "VirtualMachine", Namespace: "a", Name: "y"},
		{Kind: "Aardvark", Name: "a"},
		{Kind: "Namespace", Name: "b"},
		{Kind: "VirtualMachine", Namespace: "a", Name: "x", APIVersion: "first"},
		{Kind: "VirtualMachine", Namespace: "a", Name: "x", APIVersion: "second"},
		{Kind: "Namespace", Name: "a"},
	}
	Sort(objs)
	var got []string
	for _, o := range objs {
		got = append(got, o.Kind+"/"+o.Namespace+"/"+o.Name+o.APIVersion)
	}
	want := []string{"Namespace//a", "Namespace//b", "VirtualMachine/a/xfirst", "VirtualMachine/a/xsecond",
		"VirtualMachine/a/y", "VirtualMachine/b/x", "Aardvark//a", "Zebra//z"}
	if !slices.Equal(got, want) {
		t.Errorf("order\n%v\nwant\n%v", got, want)
	}
}

func TestParseScope(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Scope
	}{
		{"all", []Scope{Cluster, TenantScope, VMScope}},
		{"platform", []Scope{Cluster}},
		{"tenants", []Scope{TenantScope}},
		{"vms", []Scope{VMScope}},
		{"platform,tenants", []Scope{Cluster, TenantScope}},
		{"vms,platform", []Scope{Cluster, VMScope}},
		{"tenants,all,tenants", []Scope{Cluster, TenantScope, VMScope}},
	} {
		got, ok := ParseScope(tc.in)
		if !ok || !slices.Equal(got, tc.want) {
			t.Errorf("ParseScope(%q) = %v, %t; want %v", tc.in, got, ok, tc.want)
		}
	}
	for _, in := range []string{"", "vm", "platform,", ",vms", "platform, tenants", "Platform", "platform;tenants"} {
		if got, ok := ParseScope(in); ok {
			t.Errorf("ParseScope(%q) = %v, want refused", in, got)
		}
	}
}
