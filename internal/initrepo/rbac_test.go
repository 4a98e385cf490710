package initrepo

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite examples/argocd/openshift-gitops.yaml and controller-rbac.yaml")

// TestControllerRBACIsTheExample: examples/argocd/controller-rbac.yaml is
// what virtc init writes for Argo CD in namespace argocd (go test
// ./internal/initrepo -update rewrites it).
func TestControllerRBACIsTheExample(t *testing.T) {
	got, err := ControllerRBAC("argocd")
	if err != nil {
		t.Fatal(err)
	}
	const file = "../../examples/argocd/controller-rbac.yaml"
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := readExample(t, "controller-rbac.yaml"); string(got) != string(want) {
		t.Errorf("examples/argocd/controller-rbac.yaml is not what virtc init writes (-file +generated; go test ./internal/initrepo -update):\n%s", cmp.Diff(string(want), string(got)))
	}
}

// TestControllerRBACSubjects: the binding names upstream Argo CD's
// controller in its namespace and OpenShift GitOps' default instance's
// (argocd-operator v0.18.0 getServiceAccountName: <ArgoCD>-<component>),
// once each when Argo CD is OpenShift GitOps' own.
func TestControllerRBACSubjects(t *testing.T) {
	for ns, want := range map[string][]string{
		"argocd":           {"argocd/argocd-application-controller", "openshift-gitops/openshift-gitops-argocd-application-controller"},
		"gitops":           {"gitops/argocd-application-controller", "openshift-gitops/openshift-gitops-argocd-application-controller"},
		"openshift-gitops": {"openshift-gitops/openshift-gitops-argocd-application-controller"},
	} {
		data, err := ControllerRBAC(ns)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		var got []string
		kinds := 0
		for {
			var doc struct {
				Kind     string `yaml:"kind"`
				Subjects []struct {
					Kind, Name, Namespace string
				} `yaml:"subjects"`
				RoleRef struct{ Kind, Name string } `yaml:"roleRef"`
			}
			if err := dec.Decode(&doc); err != nil {
				break
			}
			kinds++
			for _, s := range doc.Subjects {
				if s.Kind != "ServiceAccount" {
					t.Errorf("%s: subject %+v is not a ServiceAccount", ns, s)
				}
				got = append(got, s.Namespace+"/"+s.Name)
			}
		}
		if kinds != 2 {
			t.Errorf("%s: %d documents, want a ClusterRole and its ClusterRoleBinding", ns, kinds)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: subjects (-want +got):\n%s", ns, d)
		}
	}
}
