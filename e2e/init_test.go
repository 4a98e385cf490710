package e2e

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// TestCMPInit runs the Argo CD wiring `virtc init` writes the way
// TestCMPContract runs the example's: the ApplicationSet rendered as its
// generators would for the new repository, the plugin's generate run for
// each Application as Argo CD's cmp-server does, and its output compared
// with `virtc build` given the Application's parameters as flags (the
// plugin's contract, docs/argocd.md, "Use with Argo CD"); each Application's
// project is one of argocd/projects.yaml and allows its destination.
func TestCMPInit(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	cmd := exec.Command(virtcBin(), "init", "--cluster", "east", "--tenant", "shop", "--tenant", "analytics",
		"--approver-image", "registry.example.com/virtc@sha256:60568197a6d52ccf4633639751dee5e194eaf9e140674fcb8ac3af0b648e9abd", repo)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("virtc init: %v\n%s", err, out)
	}

	p := readPluginFile(t, filepath.Join(repo, "argocd", "plugin.yaml"))
	projects := map[string][]string{} // project: destination namespaces
	for _, doc := range yamlDocs(t, filepath.Join(repo, "argocd", "projects.yaml")) {
		md, _ := doc["metadata"].(map[string]any)
		spec, _ := doc["spec"].(map[string]any)
		dests, _ := spec["destinations"].([]any)
		name, _ := md["name"].(string)
		for _, d := range dests {
			dm, _ := d.(map[string]any)
			ns, _ := dm["namespace"].(string)
			projects[name] = append(projects[name], ns)
		}
	}
	apps := applicationSet(t, repo, filepath.Join(repo, "argocd", "applicationset.yaml"))
	var names []string
	for _, app := range apps {
		names = append(names, app.Metadata.Name)
		t.Run(app.Metadata.Name, func(t *testing.T) {
			appDir, stdout := generateOK(t, p, app, repo)
			dests, ok := projects[app.Spec.Project]
			if !ok {
				t.Errorf("project %q is not in argocd/projects.yaml", app.Spec.Project)
			} else if ns := app.Spec.Destination.Namespace; ns != "" && !slices.Contains(dests, ns) && !slices.Contains(dests, "*") {
				t.Errorf("project %s does not allow the destination namespace %q", app.Spec.Project, ns)
			}
			var args []string
			for _, prm := range app.Spec.Source.Plugin.Parameters {
				if prm.String != nil {
					args = append(args, "--"+prm.Name, *prm.String)
				}
				for _, v := range prm.Array {
					args = append(args, "--"+prm.Name, v)
				}
			}
			want := checkoutBuild(t, repo, appDir, append(args, ".")...)
			if stdout != want {
				t.Errorf("generate output is not virtc build %s:\n%s", strings.Join(args, " "), gocmp.Diff(want, stdout))
			}
			if !strings.Contains(stdout, "kind: ") {
				t.Error("generate printed no object")
			}
		})
	}
	slices.Sort(names)
	if want := []string{"virtc-east-platform", "virtc-east-tenant-analytics", "virtc-east-tenant-shop"}; !slices.Equal(names, want) {
		t.Errorf("Applications %q, want %q", names, want)
	}
}
