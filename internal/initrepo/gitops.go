package initrepo

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// GitOpsNamespace and GitOpsInstance are OpenShift GitOps' default Argo CD
// instance: the ArgoCD resource the operator creates and owns.
const (
	GitOpsNamespace = "openshift-gitops"
	GitOpsInstance  = "openshift-gitops"
)

// gitOpsHeader explains the file OpenShiftGitOps writes.
const gitOpsHeader = `# The virtc wiring for OpenShift GitOps, where the operator owns argocd-cm
# and the repo-server Deployment and reverts patches to them: the same
# sidecar, volumes, health checks and ignore-differences as
# repo-server-patch.yaml and argocd-cm-patch.yaml (which say why each is
# there), as fields of the ArgoCD resource the operator reconciles
# (argocd-operator v0.18.0: controllers/argocd/repo_server.go appends
# spec.repo.sidecarContainers and spec.repo.volumes to the repo-server's
# own, which hold var-files, plugins and the copyutil init container the
# sidecar uses; controllers/argocd/configmap.go writes
# resource.customizations.health.<group>_<kind> from each
# spec.resourceHealthChecks entry and
# resource.customizations.ignoreDifferences.<group>_<kind> from each
# spec.resourceIgnoreDifferences.resourceIdentifiers entry). Generated from
# those two files (virtc init; make image-pin for the example); do not edit
# by hand.
#
# A merge patch of the default instance (it replaces these lists whole:
# add any sidecars, volumes or checks of your own to this file):
#
#   oc -n openshift-gitops create configmap virtc-plugin --from-file=plugin.yaml
#   oc -n openshift-gitops patch argocd openshift-gitops --type merge --patch-file openshift-gitops.yaml
`

// OpenShiftGitOps is the ArgoCD resource (argoproj.io/v1beta1, the kind
// argocd-operator and OpenShift GitOps reconcile Argo CD from) that holds
// what repoServerPatch (a patch of the argocd-repo-server Deployment: the
// virtc sidecar and its volumes) and argocdCM (a patch of argocd-cm:
// health checks and ignore-differences) add to upstream Argo CD.
func OpenShiftGitOps(repoServerPatch, argocdCM []byte) ([]byte, error) {
	var deploy struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []yaml.Node `yaml:"containers"`
					Volumes    []yaml.Node `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(repoServerPatch, &deploy); err != nil {
		return nil, fmt.Errorf("repo-server patch: %v", err)
	}
	pod := deploy.Spec.Template.Spec
	if len(pod.Containers) == 0 {
		return nil, fmt.Errorf("repo-server patch: no container")
	}
	var cm struct {
		Data yaml.Node `yaml:"data"`
	}
	if err := yaml.Unmarshal(argocdCM, &cm); err != nil {
		return nil, fmt.Errorf("argocd-cm patch: %v", err)
	}
	if cm.Data.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("argocd-cm patch: no data")
	}
	type health struct {
		Group string `yaml:"group"`
		Kind  string `yaml:"kind"`
		Check string `yaml:"check"`
	}
	type ignore struct {
		Group         string    `yaml:"group"`
		Kind          string    `yaml:"kind"`
		Customization yaml.Node `yaml:"customization"`
	}
	var checks []health
	var ignores []ignore
	for i := 0; i+1 < len(cm.Data.Content); i += 2 {
		key, value := cm.Data.Content[i].Value, cm.Data.Content[i+1].Value
		if rest, ok := strings.CutPrefix(key, "resource.customizations.health."); ok {
			g, k := groupKind(rest)
			checks = append(checks, health{Group: g, Kind: k, Check: value})
			continue
		}
		if rest, ok := strings.CutPrefix(key, "resource.customizations.ignoreDifferences."); ok && rest != "all" {
			g, k := groupKind(rest)
			var c yaml.Node
			if err := yaml.Unmarshal([]byte(value), &c); err != nil || len(c.Content) == 0 {
				return nil, fmt.Errorf("argocd-cm patch: %s: not a customization (%v)", key, err)
			}
			ignores = append(ignores, ignore{Group: g, Kind: k, Customization: *c.Content[0]})
			continue
		}
		// A key the ArgoCD resource has no field for would go to
		// spec.extraConfig; the patch has none, and a new one must be
		// placed by hand here first.
		return nil, fmt.Errorf("argocd-cm patch: key %s has no place in the ArgoCD resource yet", key)
	}
	type repo struct {
		SidecarContainers []yaml.Node `yaml:"sidecarContainers"`
		Volumes           []yaml.Node `yaml:"volumes,omitempty"`
	}
	type ignoreDiffs struct {
		ResourceIdentifiers []ignore `yaml:"resourceIdentifiers"`
	}
	cr := struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name      string `yaml:"name"`
			Namespace string `yaml:"namespace"`
		} `yaml:"metadata"`
		Spec struct {
			Repo                      repo         `yaml:"repo"`
			ResourceHealthChecks      []health     `yaml:"resourceHealthChecks,omitempty"`
			ResourceIgnoreDifferences *ignoreDiffs `yaml:"resourceIgnoreDifferences,omitempty"`
		} `yaml:"spec"`
	}{APIVersion: "argoproj.io/v1beta1", Kind: "ArgoCD"}
	cr.Metadata.Name, cr.Metadata.Namespace = GitOpsInstance, GitOpsNamespace
	cr.Spec.Repo = repo{SidecarContainers: pod.Containers, Volumes: pod.Volumes}
	cr.Spec.ResourceHealthChecks = checks
	if len(ignores) > 0 {
		cr.Spec.ResourceIgnoreDifferences = &ignoreDiffs{ResourceIdentifiers: ignores}
	}
	var buf bytes.Buffer
	buf.WriteString(gitOpsHeader)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(cr); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// groupKind splits argocd-cm's <group>_<kind> (a core kind has no group
// and no underscore).
func groupKind(s string) (group, kind string) {
	if i := strings.LastIndex(s, "_"); i >= 0 {
		return s[:i], s[i+1:]
	}
	return "", s
}
