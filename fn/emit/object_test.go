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
