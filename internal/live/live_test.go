package live

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/diff"
	"github.com/virtc/virtc/internal/emit"
)

func body(t *testing.T, js string) map[string]any {
	t.Helper()
	m, err := generic([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseListAndStreamDropServerFields(t *testing.T) {
	list := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: a, namespace: ns, uid: u1, resourceVersion: "7", managedFields: [{manager: x}], creationTimestamp: "2026-01-01T00:00:00Z", generation: 1}
  spec: {resources: {requests: {storage: 1Gi}}}
  status: {phase: Bound}
`
	stream := "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: b, namespace: ns}\n---\n"
	a, err := Parse([]byte(list), "list.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse([]byte(stream), "stream.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || len(b) != 1 || a[0].Name != "a" || b[0].Name != "b" {
		t.Fatalf("parsed %v and %v", a, b)
	}
	meta := a[0].Body["metadata"].(map[string]any)
	for _, k := range []string{"uid", "resourceVersion", "managedFields", "creationTimestamp", "generation"} {
		if _, ok := meta[k]; ok {
			t.Errorf("metadata.%s kept", k)
		}
	}
	if _, ok := a[0].Body["status"]; ok {
		t.Error("status kept")
	}
}

func TestCompareOnlyDesiredFieldsListsWhole(t *testing.T) {
	desired := body(t, `{"spec":{"a":"x","q":"1Gi","m":{"k":"v"},"l":[{"name":"d","disk":{}}],"empty":{}}}`)
	same := body(t, `{"spec":{"a":"x","q":"1024Mi","m":{"k":"v","server":"default"},"l":[{"name":"d","disk":{},"gone":null}],"extra":1}}`)
	if d := Compare(desired, same); len(d) != 0 {
		t.Errorf("server defaults, equal quantities and other keys are no differences: %+v", d)
	}
	other := body(t, `{"spec":{"a":"y","q":"2Gi","m":{"k":"v"},"l":[{"name":"d","disk":{"bus":"sata"}}]}}`)
	got := Compare(desired, other)
	var paths []string
	for _, d := range got {
		paths = append(paths, d.Path)
	}
	want := []string{"spec.a", "spec.l", "spec.q"}
	if len(paths) != len(want) {
		t.Fatalf("differences %v, want %v", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Errorf("difference %d: %s, want %s (an element of an atomic list differs as a whole)", i, paths[i], want[i])
		}
	}
	labels := Compare(body(t, `{"metadata":{"labels":{"virtc.dev/vm":"x","app":"y"}}}`), body(t, `{"metadata":{}}`))
	if len(labels) != 2 || labels[0].Path != `metadata.labels.app` || labels[1].Path != `metadata.labels["virtc.dev/vm"]` {
		t.Errorf("labels absent on the live object: one difference per key, got %+v", labels)
	}
}

func TestLastAppliedRemovals(t *testing.T) {
	last, _ := json.Marshal(map[string]any{"spec": map[string]any{"keep": 1, "drop": map[string]any{"x": 1}, "template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}}}})
	live := body(t, `{"metadata":{"annotations":{"`+LastAppliedAnnotation+`":`+string(mustJSON(t, string(last)))+`}},"spec":{"keep":1,"drop":{"x":1}}}`)
	desired := body(t, `{"spec":{"keep":1,"template":{"metadata":{"labels":{"virtc.dev/vm":"v"}}}}}`)
	got := LastApplied(desired, live)
	if len(got) != 2 || got[0].Path != "spec.drop" || got[1].Path != "spec.template.metadata.labels.a" || !got[0].Removed {
		t.Fatalf("removals %+v, want spec.drop and spec.template.metadata.labels.a", got)
	}
	if ch := classify("VirtualMachine", got[1], nil); ch.Field != "last-applied" {
		t.Errorf("a removal of another tool's label is field %q, want last-applied", ch.Field)
	}
}

func mustJSON(t *testing.T, s string) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		kind, path    string
		desired, live any
		effect, field string
	}{
		{"VirtualMachine", `metadata.labels["virtc.dev/vm"]`, "a", nil, diff.EffectNone, FieldOwnMetadata},
		{"VirtualMachine", `metadata.annotations.team`, "a", nil, diff.EffectNone, "labels"},
		{"VirtualMachine", "spec.template.spec.domain.devices.disks", []any{}, []any{}, diff.EffectRestart, "spec.template.spec.domain.devices.disks"},
		{"VirtualMachine", "spec.template.spec.domain.memory.guest", "8Gi", "4Gi", diff.EffectManual, "spec.template.spec.domain.memory.guest"},
		{"VirtualMachine", "spec.runStrategy", "Halted", "Always", diff.EffectStops, "spec.runStrategy"},
		{"VirtualMachine", "spec.dataVolumeTemplates", []any{}, []any{}, diff.EffectRefused, "spec.dataVolumeTemplates"},
		{"PersistentVolumeClaim", "spec.resources.requests.storage", "20Gi", "10Gi", diff.EffectOnline, "spec.resources.requests.storage"},
		{"PersistentVolumeClaim", "spec.resources.requests.storage", "5Gi", "10Gi", diff.EffectRefused, "spec.resources.requests.storage"},
		{"PersistentVolumeClaim", "spec.storageClassName", "a", "b", diff.EffectRefused, "spec.storageClassName"},
		{"DataVolume", "spec.storage", map[string]any{}, map[string]any{}, diff.EffectRefused, "spec.storage"},
		{"NetworkAttachmentDefinition", "spec.config", "{}", "{}", diff.EffectNextStart, "spec.config"},
		{"UserDefinedNetwork", "spec.layer2.subnets", []any{}, []any{}, diff.EffectRefused, "spec.layer2.subnets"},
		{"ClusterUserDefinedNetwork", "spec.network.localnet.vlan", map[string]any{}, nil, diff.EffectRefused, "spec.network.localnet.vlan"},
		{"ClusterUserDefinedNetwork", "spec.namespaceSelector.matchExpressions", []any{}, []any{}, diff.EffectNone, "spec.namespaceSelector.matchExpressions"},
		{"ClusterUserDefinedNetwork", `metadata.labels["virtc.dev/platform"]`, "p", nil, diff.EffectNone, FieldOwnMetadata},
	} {
		ch := classify(c.kind, Difference{Path: c.path, Desired: c.desired, Live: c.live}, nil)
		if ch.Effect != c.effect || ch.Field != c.field {
			t.Errorf("%s %s: effect %s field %s, want %s %s", c.kind, c.path, ch.Effect, ch.Field, c.effect, c.field)
		}
	}
}

// A kind beyond vm,dv,pvc,nad is compared when the export holds an object
// of it (the export was asked for it); otherwise it is listed as not
// compared.
func TestExportedKindsAreCompared(t *testing.T) {
	udn := func(subnet string) map[string]any {
		return body(t, `{"apiVersion":"k8s.ovn.org/v1","kind":"UserDefinedNetwork","metadata":{"name":"primary","namespace":"apps"},"spec":{"topology":"Layer2","layer2":{"role":"Primary","subnets":["`+subnet+`"]}}}`)
	}
	desired := []emit.Object{{APIVersion: "k8s.ovn.org/v1", Kind: "UserDefinedNetwork", Namespace: "apps", Name: "primary", Body: udn("10.100.0.0/16")}}
	r, err := Diff(desired, nil, "live", "git", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 1 || r.Warnings[0].Rule != "live-not-compared" || len(r.Refusals) != 0 {
		t.Fatalf("without a UserDefinedNetwork in the export: warnings %+v refusals %+v, want it not compared", r.Warnings, r.Refusals)
	}
	live := []Object{{APIVersion: "k8s.ovn.org/v1", Kind: "UserDefinedNetwork", Namespace: "apps", Name: "primary", Body: udn("10.200.0.0/16")}}
	if r, err = Diff(desired, live, "live", "git", nil); err != nil {
		t.Fatal(err)
	}
	if len(r.Refusals) != 1 || r.Refusals[0].Object != "UserDefinedNetwork apps/primary" || !strings.Contains(r.Refusals[0].Message, "spec.layer2.subnets") {
		t.Fatalf("refusals %+v, want the UserDefinedNetwork's subnets refused", r.Refusals)
	}
}

// A live object virtc does not write is left alone only when Argo CD does
// not track it (argo-cd v3.6.1 util/argo/resource_tracking.go GetAppName:
// the tracking-id annotation by default, the app.kubernetes.io/instance
// label with label tracking). A tracked disk is refused with the offline
// diff's disk-deleted rule; another tracked object is reported as pruned.
func TestTrackedLiveObjectsArePruned(t *testing.T) {
	obj := func(kind, name, meta string, spec string) Object {
		return Object{APIVersion: "v1", Kind: kind, Namespace: "ns", Name: name,
			Body: body(t, `{"metadata":`+meta+`,"spec":`+spec+`}`)}
	}
	tracking := `{"annotations":{"argocd.argoproj.io/tracking-id":"app:cdi.kubevirt.io/DataVolume:ns/%s"}}`
	live := []Object{
		obj("VirtualMachine", "vm1", `{}`, `{"template":{"spec":{"volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"data1"}}]}}}`),
		obj("PersistentVolumeClaim", "data1", `{"labels":{"app.kubernetes.io/instance":"app"}}`, `{}`),
		obj("DataVolume", "dv1", fmt.Sprintf(tracking, "dv1"), `{}`),
		obj("PersistentVolumeClaim", "scratch", `{"labels":{"app.kubernetes.io/managed-by":"virtc"}}`, `{}`),
		obj("NetworkAttachmentDefinition", "net", `{"labels":{"app.kubernetes.io/instance":"app"}}`, `{}`),
		obj("PersistentVolumeClaim", "foreign", `{"annotations":{"argocd.argoproj.io/tracking-id":"not-a-tracking-id"}}`, `{}`),
	}
	r, err := Diff(nil, live, "live", "git", nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{}
	for _, f := range r.Refusals {
		refused[f.Object] = f.Rule
	}
	for _, want := range []string{"PersistentVolumeClaim ns/data1", "DataVolume ns/dv1"} {
		if refused[want] != diff.RuleDiskDeleted {
			t.Errorf("%s: rule %q, want %s (refusals %+v)", want, refused[want], diff.RuleDiskDeleted, r.Refusals)
		}
	}
	if len(r.Refusals) != 2 || r.Allowed {
		t.Errorf("refusals %+v allowed %v, want exactly data1 and dv1, not allowed", r.Refusals, r.Allowed)
	}
	rules := map[string]string{}
	for _, f := range r.Warnings {
		rules[f.Object] = f.Rule
	}
	for ref, want := range map[string]string{
		"PersistentVolumeClaim ns/scratch":   "live-pruned",
		"NetworkAttachmentDefinition ns/net": "live-pruned",
		"PersistentVolumeClaim ns/foreign":   "live-unmanaged",
		"VirtualMachine ns/vm1":              "live-unmanaged",
	} {
		if rules[ref] != want {
			t.Errorf("%s: rule %q, want %s", ref, rules[ref], want)
		}
	}
	if r.Summary.Removed != 2 {
		t.Errorf("removed %d, want 2 (scratch, net)", r.Summary.Removed)
	}
}

// The nodes' own values are what the long way (yaml.v3 writes the
// document, sigs.k8s.io/yaml makes it JSON, encoding/json reads it) gives,
// for every form of scalar an export can hold (the short way takes those
// of no obvious value the long way one by one); a document whose
// structure it does not take on, it leaves to the long way whole.
func TestFastGenericIsTheLongWay(t *testing.T) {
	scalars := []string{
		`a`, `"quoted"`, `'single'`, `yes`, `no`, `on`, `off`, `y`, `n`, `Yes`, `"yes"`,
		`true`, `True`, `TRUE`, `false`, `null`, `~`, `Null`, `""`, `''`,
		`0`, `-0`, `7`, `-7`, `007`, `0o17`, `0x1F`, `+5`, `1_000`, `123456789012345678`, `1234567890123456789`, `99999999999999999999`,
		`1.5`, `1e3`, `.inf`, `-.Inf`, `.nan`, `1:20`, `2001-12-14`, `2001-12-14T21:59:43.10-05:00`,
		`"123"`, `"true"`, `1Gi`, `100m`, `"a\nb"`, `"tab\there"`, `"\u00e9t\u00e9"`, `été`, `!!str 5`, `!!int "5"`, `!custom x`,
		`10Gi`, `100m`, `1.5Gi`, `-foo`, `.hidden`, `2001-12-14x`, `0b101`, `-0b101`, `1_0`, `10.0.0.1`, `10.0.0.0/24`, `+inf`, `inf`, `nan`,
		`.5`, `5.`, `0x1p-2`, `1e`, `12:30`, `1:20:30`, `0xdeadbeef`, `0xdeadbeefg`, `9e6e7da6359c143293d3`, `0b787ac4a6d16fc93c3e`, `0b1`, `-0b1`, `-0b12`, `934a4430-aadd-5b86-9f82-12109e19ae14`, `2001-1x`, `1e5`, `1e5x`, `v1`, `app-1`, `a b`, `~x`, `yess`, `Off-peak`,
		"|\n    block\n    text", ">\n    folded\n    text", `[]`, `{}`, `[a, 1, true, null]`, `{k: v, n: 1}`,
	}
	checked := 0
	for _, sc := range scalars {
		for _, doc := range []string{
			"kind: X\nvalue: " + sc + "\n",
			"kind: X\nlist:\n- " + sc + "\n- other\n",
			"kind: X\nnested:\n  deeper:\n    value: " + sc + "\n",
		} {
			var node yaml.Node
			if err := yaml.Unmarshal([]byte(doc), &node); err != nil {
				continue
			}
			got, ok := fastGeneric(&node)
			if !ok {
				continue
			}
			out, err := yaml.Marshal(&node)
			if err != nil {
				t.Fatal(err)
			}
			want, err := generic(out)
			if err != nil {
				t.Errorf("%q: the long way fails (%v) where the short way gives %#v", doc, err, got)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q: short way %#v, long way %#v", doc, got, want)
			}
			checked++
		}
	}
	if checked < 75 {
		t.Errorf("only %d documents took the short way", checked)
	}
	for _, doc := range []string{
		"a: &x 1\nb: *x\n", "<<: {a: 1}\nb: 2\n", "a: 1\na: 2\n", "- a\n", "n: 1\n", "1: a\n", "a: !!str 1\n", "!!map {a: 1}\n",
	} {
		var node yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &node); err != nil {
			continue
		}
		if _, ok := fastGeneric(&node); ok {
			t.Errorf("%q took the short way", doc)
		}
	}
}

// Changes is Diff without the text: the same summary, VMs, changes,
// refusals and warnings, and objects without manifests or diffs; a body
// already in JSON values (virtc import's) compares as its typed form.
func TestChangesIsDiffWithoutText(t *testing.T) {
	vm := `{"metadata":{"labels":{"app":"web","virtc.dev/vm":"vm1"}},"spec":{"runStrategy":"Always","template":{"spec":{"domain":{"cpu":{"cores":2}}}}}}`
	desired := []emit.Object{
		{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Namespace: "ns", Name: "vm1", Body: body(t, vm)},
		{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "vm1-data", Body: body(t, `{"metadata":{"labels":{"virtc.dev/vm":"vm1"}},"spec":{"resources":{"requests":{"storage":"1Gi"}}}}`)},
	}
	live := []Object{
		{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Namespace: "ns", Name: "vm1",
			Body: body(t, `{"metadata":{"labels":{"app":"old"}},"spec":{"runStrategy":"Halted","template":{"spec":{"domain":{"cpu":{"cores":4}}}}}}`)},
		{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "gone",
			Body: body(t, `{"metadata":{"labels":{"app.kubernetes.io/managed-by":"virtc"}},"spec":{}}`)},
	}
	withText, err := Diff(desired, live, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Changes(desired, live, nil)
	if err != nil {
		t.Fatal(err)
	}
	texts := 0
	for i := range withText.Objects {
		if withText.Objects[i].Diff != "" {
			texts++
		}
		withText.Objects[i].Diff = ""
	}
	if texts != 3 || len(withText.VMs) != 1 || len(withText.VMs[0].Changes) < 3 {
		t.Fatalf("the case shows too little: %d diffs, VMs %+v", texts, withText.VMs)
	}
	if !reflect.DeepEqual(got, withText) {
		t.Errorf("Changes:\n%+v\nDiff without text:\n%+v", got, withText)
	}
}
