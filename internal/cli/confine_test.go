package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCMPConfinesPaths: in the plugin, no path of the repository's
// virtc.yaml or of the Application's parameters reads outside the
// repository's copy (issue 43). Another Application's repository, unpacked
// beside this one in the same sidecar, holds a valid catalog and a planted
// secret: neither reaches stdout or stderr, and the call fails with nothing
// on stdout. What stays inside the copy still builds.
func TestCMPConfinesPaths(t *testing.T) {
	sidecar := t.TempDir()
	other := filepath.Join(sidecar, "other-app")
	copyTop := filepath.Join(sidecar, "this-app")
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const planted = "PLANTED-OTHER-TEAM-7f3a"
	write(filepath.Join(other, "catalog", "sizes.yaml"), "# "+planted+"\napiVersion: virtc.dev/v1alpha1\nkind: Size\nmetadata: {name: "+strings.ToLower(planted)+"}\nspec: {cpu: 1, memory: 1Gi}\n")
	app := filepath.Join(copyTop, "clusters", "east")
	write(filepath.Join(app, "tenant.yaml"), "apiVersion: virtc.dev/v1alpha1\nkind: Tenant\nmetadata: {name: shop}\nspec: {environment: lab}\n")
	write(filepath.Join(copyTop, "platform", "sizes.yaml"), "apiVersion: virtc.dev/v1alpha1\nkind: Size\nmetadata: {name: tiny}\nspec: {cpu: 1, memory: 1Gi}\n")
	if err := os.Symlink(filepath.Join(other, "catalog"), filepath.Join(copyTop, "linked")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(app)
	env := func(extra ...string) []string { return append([]string{AppPathEnv + "=clusters/east"}, extra...) }
	marker := func(spec string) {
		t.Helper()
		write(filepath.Join(app, "virtc.yaml"), "apiVersion: virtc.dev/v1alpha1\nkind: Compiler\nmetadata: {name: east}\nspec:\n"+spec)
	}
	for _, tc := range []struct {
		name, marker string
		env          []string
		want         string // in stderr; "" for a build that passes
	}{
		{"inside the copy", "  catalogDirs: [../../platform]\n", env(), ""},
		{"marker catalogDirs up out of the copy", "  catalogDirs: [../../../other-app/catalog]\n", env(), `catalog "../../../other-app/catalog": outside the repository`},
		{"marker catalogDirs absolute", "  catalogDirs: [" + filepath.Join(other, "catalog") + "]\n", env(), "an absolute path"},
		{"marker paths out of the copy", "  paths: [., ../../../other-app]\n", env(), `path "../../../other-app": outside the repository`},
		{"marker appProjects out of the copy", "  appProjects: [../../../other-app/catalog]\n", env(), `app-projects "../../../other-app/catalog": outside the repository`},
		{"symlink out of the copy", "  catalogDirs: [../../linked]\n", env(), "a symlink that leads outside the repository"},
		{"parameter catalog", "  {}\n", env(`ARGOCD_APP_PARAMETERS=[{"name":"catalog","array":["../../../other-app/catalog"]}]`), "outside the repository"},
		{"plugin env catalog", "  {}\n", env("ARGOCD_ENV_CATALOG=/etc"), "an absolute path"},
		// Argo CD did not say where the application sits: only its own
		// directory is known to be the copy.
		{"no app path", "  catalogDirs: [../../platform]\n", nil, "outside the repository"},
		{"parameter that writes a file", "  {}\n", env(`ARGOCD_APP_PARAMETERS=[{"name":"cpuprofile","string":"` + filepath.Join(sidecar, "x") + `"}]`), `"cpuprofile" is not an option the plugin takes`},
		{"parameter that ends with no output", "  {}\n", env(`ARGOCD_APP_PARAMETERS=[{"name":"help","string":"true"}]`), `"help" is not an option the plugin takes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker(tc.marker)
			var out, errs bytes.Buffer
			code := runCMPEnv(nil, tc.env, nil, &out, &errs)
			if tc.want == "" {
				if code != ExitOK || !strings.Contains(out.String(), "kind: Namespace") {
					t.Fatalf("exit %d, stdout %d bytes, stderr:\n%s", code, out.Len(), errs.String())
				}
				return
			}
			if code == ExitOK || out.Len() != 0 {
				t.Errorf("exit %d with %d bytes on stdout; want a failure that prints nothing", code, out.Len())
			}
			if !strings.Contains(errs.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, errs.String())
			}
			if strings.Contains(strings.ToLower(errs.String()+out.String()), strings.ToLower(planted)) {
				t.Errorf("the other repository's bytes leaked:\n%s", errs.String())
			}
			if _, err := os.Stat(filepath.Join(sidecar, "x")); err == nil {
				t.Error("a parameter wrote a file")
			}
		})
	}
}
