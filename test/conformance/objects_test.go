package conformance

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseObjects(t *testing.T) {
	objs, err := ParseObjects([]byte(`apiVersion: v1
kind: Namespace
metadata:
  name: team-a
---
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: app01
  namespace: team-a
spec:
  runStrategy: Always
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.Key()+" "+o.String())
	}
	want := []string{
		"/Namespace//team-a v1 Namespace team-a",
		"kubevirt.io/VirtualMachine/team-a/app01 kubevirt.io/v1 VirtualMachine team-a/app01",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

func TestParseObjectsRejectsNonObjects(t *testing.T) {
	for _, in := range []string{"kind: Namespace\nmetadata: {name: a}\n", "apiVersion: v1\nkind: Namespace\n", "- a\n- b\n", "a: [\n"} {
		if _, err := ParseObjects([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestContains(t *testing.T) {
	live := map[string]any{
		"metadata": map[string]any{"name": "q", "uid": "1"},
		"spec": map[string]any{
			"hard":  map[string]any{"requests.memory": "1Gi", "requests.cpu": "1"},
			"disks": []any{map[string]any{"name": "root", "bootOrder": float64(1), "disk": map[string]any{"bus": "virtio"}}},
		},
	}
	tests := []struct {
		name string
		want map[string]any
		diff []string
	}{
		{"subset with a canonicalised quantity", map[string]any{
			"metadata": map[string]any{"name": "q"},
			"spec": map[string]any{
				"hard":  map[string]any{"requests.memory": "1024Mi"},
				"disks": []any{map[string]any{"name": "root", "disk": map[string]any{}}},
			},
		}, nil},
		{"missing field", map[string]any{"spec": map[string]any{"runStrategy": "Always"}},
			[]string{`.spec.runStrategy: missing on the server (want "Always")`}},
		{"different value", map[string]any{"spec": map[string]any{"hard": map[string]any{"requests.cpu": "2"}}},
			[]string{`.spec.hard.requests.cpu: want "2", server has "1"`}},
		{"different list length", map[string]any{"spec": map[string]any{"disks": []any{}}},
			[]string{`.spec.disks: want [], server has [{"bootOrder":1,"disk":{"bus":"virtio"},"name":"root"}]`}},
		{"number is not a string", map[string]any{"spec": map[string]any{"disks": []any{map[string]any{"bootOrder": "1"}}}},
			[]string{`.spec.disks[0].bootOrder: want "1", server has 1`}},
		{"object is not a scalar", map[string]any{"metadata": map[string]any{"name": map[string]any{}}},
			[]string{`.metadata.name: want an object, server has "q"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.diff, Contains(tt.want, live)); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComparable(t *testing.T) {
	live, err := LiveObjects([]byte(`{"kind":"List","items":[
	  {"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":"a","uid":"u","resourceVersion":"7","generation":2,
	    "creationTimestamp":"2026-01-01T00:00:00Z","managedFields":[{"manager":"virtc","operation":"Apply","time":"2026-01-01T00:00:00Z","fieldsV1":{"f:spec":{}}}]},
	   "spec":{"hard":{"pods":"1"}},"status":{"used":{"pods":"0"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := Comparable(live["/ResourceQuota/a/q"])
	want := map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": map[string]any{"name": "q", "namespace": "a",
			"managedFields": []any{map[string]any{"manager": "virtc", "operation": "Apply", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}},
		"spec": map[string]any{"hard": map[string]any{"pods": "1"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("comparable (-want +got):\n%s", diff)
	}
}

func TestStreamRoundTrip(t *testing.T) {
	in := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels: {x: \"1\"}\n"
	objs, err := ParseObjects([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	data, err := Stream(objs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "---\n{") {
		t.Errorf("stream = %q", data)
	}
	back, err := ParseObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(objs, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
