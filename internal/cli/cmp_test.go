package cli

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/virtc/virtc/internal/krm"
)

// The Argo CD plugin runs in the application's directory of a repository
// copy and learns that directory's path from ARGOCD_APP_SOURCE_PATH (argo-cd
// v3.6.1 reposerver/repository/repository.go, newEnv).
func TestAppPlace(t *testing.T) {
	top := t.TempDir()
	app := filepath.Join(top, "clusters", "east")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "web01.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(app)
	for _, tc := range []struct {
		name string
		env  []string
		want place
	}{
		{"not under Argo CD", []string{"HOME=/root"}, place{}},
		{"application directory", []string{"ARGOCD_APP_SOURCE_PATH=clusters/east"}, place{base: top, prefix: "clusters/east"}},
		{"trailing slash", []string{"ARGOCD_APP_SOURCE_PATH=clusters/east/"}, place{base: top, prefix: "clusters/east"}},
		// An Application of the repository's root runs at the top: the
		// files are named as from there, and its calls are cached.
		{"repository root", []string{"ARGOCD_APP_SOURCE_PATH=."}, place{base: app}},
		{"repository root, empty path", []string{"ARGOCD_APP_SOURCE_PATH="}, place{base: app}},
		{"not where we run", []string{"ARGOCD_APP_SOURCE_PATH=clusters/west"}, place{}},
		{"outside the repository", []string{"ARGOCD_APP_SOURCE_PATH=../east"}, place{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := appPlace(tc.env); got != tc.want {
				t.Errorf("appPlace = %+v, want %+v", got, tc.want)
			}
		})
	}
	for file, want := range map[string]string{
		"web01.yaml":   "clusters/east/web01.yaml",
		"<stdin>":      "<stdin>",
		"VM ns/web01":  "VM ns/web01",
		"/etc/x.yaml":  "/etc/x.yaml",
		"missing.yaml": "missing.yaml",
	} {
		if got := inRepository("clusters/east", file); got != want {
			t.Errorf("inRepository(%q) = %q, want %q", file, got, want)
		}
	}
}

func TestSpecArgs(t *testing.T) {
	flags, paths := specArgs(krm.Spec{CatalogDirs: []string{"../p"}, NoDefaultCatalog: true, Paths: []string{"vms"}, WarningsConfigMap: "shop/virtc-warnings"})
	if want := []string{"--catalog=../p", "--no-default-catalog", "--warnings-configmap=shop/virtc-warnings"}; !slices.Equal(flags, want) {
		t.Errorf("flags %q, want %q", flags, want)
	}
	if !slices.Equal(paths, []string{"vms"}) {
		t.Errorf("paths %q", paths)
	}
}
