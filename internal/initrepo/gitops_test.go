package initrepo

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// TestOpenShiftGitOpsIsTheExample: examples/argocd/openshift-gitops.yaml
// is what OpenShiftGitOps makes of the example's two patches (make
// image-pin keeps the image of all three the same; go test
// ./internal/initrepo -update rewrites it).
func TestOpenShiftGitOpsIsTheExample(t *testing.T) {
	patch, cm := readExample(t, "repo-server-patch.yaml"), readExample(t, "argocd-cm-patch.yaml")
	got, err := OpenShiftGitOps(patch, cm)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("../../examples/argocd/openshift-gitops.yaml", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := readExample(t, "openshift-gitops.yaml"); string(got) != string(want) {
		t.Errorf("examples/argocd/openshift-gitops.yaml is not generated from the patches (-file +generated; go test ./internal/initrepo -update):\n%s", cmp.Diff(string(want), string(got)))
	}
}

// TestOpenShiftGitOpsReconcilesToThePatches applies to the ArgoCD resource
// what argocd-operator v0.18.0 does with its fields and requires the
// result to be the upstream patches: controllers/argocd/configmap.go
// (getResourceHealthChecks: key resource.customizations.health. + group +
// "_" if a group + kind, the check as value; getResourceIgnoreDifferences:
// the same key under ignoreDifferences, the customization marshalled as
// YAML) and controllers/argocd/repo_server.go (spec.repo.sidecarContainers
// and spec.repo.volumes appended to the repo-server's own). The operator
// itself does not run here (docs/testing.md).
func TestOpenShiftGitOpsReconcilesToThePatches(t *testing.T) {
	patch, cm := readExample(t, "repo-server-patch.yaml"), readExample(t, "argocd-cm-patch.yaml")
	gen, err := OpenShiftGitOps(patch, cm)
	if err != nil {
		t.Fatal(err)
	}
	var cr struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Spec       struct {
			Repo struct {
				SidecarContainers []any `yaml:"sidecarContainers"`
				Volumes           []any `yaml:"volumes"`
			} `yaml:"repo"`
			ResourceHealthChecks []struct {
				Group, Kind, Check string
			} `yaml:"resourceHealthChecks"`
			ResourceIgnoreDifferences struct {
				ResourceIdentifiers []struct {
					Group, Kind   string
					Customization map[string]any
				} `yaml:"resourceIdentifiers"`
			} `yaml:"resourceIgnoreDifferences"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(gen, &cr); err != nil {
		t.Fatal(err)
	}
	if cr.APIVersion != "argoproj.io/v1beta1" || cr.Kind != "ArgoCD" {
		t.Fatalf("%s %s", cr.APIVersion, cr.Kind)
	}
	key := func(group, kind string) string {
		if group != "" {
			group += "_"
		}
		return group + kind
	}
	got := map[string]any{}
	for _, h := range cr.Spec.ResourceHealthChecks {
		got["resource.customizations.health."+key(h.Group, h.Kind)] = h.Check
	}
	for _, r := range cr.Spec.ResourceIgnoreDifferences.ResourceIdentifiers {
		got["resource.customizations.ignoreDifferences."+key(r.Group, r.Kind)] = r.Customization
	}
	var upstreamCM struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(cm, &upstreamCM); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	for k, v := range upstreamCM.Data {
		if strings.HasPrefix(k, "resource.customizations.ignoreDifferences.") {
			var c map[string]any
			if err := yaml.Unmarshal([]byte(v), &c); err != nil {
				t.Fatal(err)
			}
			want[k] = c
			continue
		}
		want[k] = v
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("argocd-cm as the operator writes it from the resource differs from argocd-cm-patch.yaml (-patch +resource):\n%s", d)
	}
	var upstream struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []any `yaml:"containers"`
					Volumes    []any `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(patch, &upstream); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(upstream.Spec.Template.Spec.Containers, cr.Spec.Repo.SidecarContainers); d != "" || len(cr.Spec.Repo.SidecarContainers) == 0 {
		t.Errorf("sidecar differs from the repo-server patch's container:\n%s", d)
	}
	if d := cmp.Diff(upstream.Spec.Template.Spec.Volumes, cr.Spec.Repo.Volumes); d != "" {
		t.Errorf("volumes differ from the repo-server patch's:\n%s", d)
	}

	// A key the resource has no field for is refused, not dropped.
	if _, err := OpenShiftGitOps(patch, []byte("data:\n  timeout.reconciliation: 60s\n")); err == nil || !strings.Contains(err.Error(), "timeout.reconciliation") {
		t.Errorf("an argocd-cm key without a field: %v", err)
	}
}

func readExample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../examples/argocd/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
