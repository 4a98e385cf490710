package vap

import (
	"os"
	"path/filepath"
	"testing"
)

// Output is one build's objects, split.
type Output struct {
	Name    string
	Objects []map[string]any
}

// GoldenOutputs are the outputs of the golden scenarios (expected.yaml,
// and the builds of the import and init scenarios).
func GoldenOutputs(t testing.TB) []Output {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../../../golden/*/expected.yaml", "../../golden/*/*/build.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	var out []Output
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := Split(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rel, _ := filepath.Rel("../../../golden", f)
		out = append(out, Output{Name: filepath.ToSlash(rel), Objects: objs})
	}
	return out
}

// Every policy of every golden output compiles, and admits every object
// of its tenant's namespace that the output holds, written by Argo CD (a
// user the policies judge): the compile never writes what its own policy
// refuses. A VirtualMachine is judged as written and as KubeVirt's VM
// mutating webhook, which runs before the policies, hands it on.
func TestGoldenOutputsAdmitted(t *testing.T) {
	admitted := 0
	for _, o := range GoldenOutputs(t) {
		policies, err := Policies(o.Objects)
		if err != nil {
			t.Fatalf("%s: %v", o.Name, err)
		}
		if len(policies) == 0 {
			continue
		}
		for _, obj := range o.Objects {
			meta, _ := obj["metadata"].(map[string]any)
			ns, _ := meta["namespace"].(string)
			p := policies[ns]
			if p == nil {
				continue
			}
			forms := map[string]map[string]any{"": obj}
			if obj["kind"] == "VirtualMachine" {
				m, err := KubeVirtMutated(obj)
				if err != nil {
					t.Fatalf("%s: %s/%s: %v", o.Name, ns, meta["name"], err)
				}
				forms[" as KubeVirt's mutating webhook hands it on"] = m
			}
			for form, obj := range forms {
				denials, err := p.Admit(Request{Object: obj, User: "system:serviceaccount:openshift-gitops:openshift-gitops-argocd-application-controller"}, map[string]string{"virtc.dev/tenant": ns})
				if err != nil {
					t.Errorf("%s: %s %s/%s%s: %v", o.Name, obj["kind"], ns, meta["name"], form, err)
					continue
				}
				for _, d := range denials {
					t.Errorf("%s: %s %s/%s%s refused: %s", o.Name, obj["kind"], ns, meta["name"], form, d)
				}
				admitted++
			}
		}
	}
	if admitted == 0 {
		t.Fatal("no object judged")
	}
	t.Logf("%d objects admitted under their tenants' policies", admitted)
}
