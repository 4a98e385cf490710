package admission

import (
	"path/filepath"
	"testing"
)

// TestInitAdmission admits what a repository `virtc init` writes compiles
// to, with the approver's image given (--approver-image), built from the repository's
// top as docs/argocd.md says (virtc build clusters/NAME: the catalog is
// the one clusters/NAME/virtc.yaml names, as for its Argo CD
// Applications), with KubeVirt's and CDI's webhook code, as
// TestUpstreamAdmission admits the examples.
func TestInitAdmission(t *testing.T) {
	bin := virtcBinary(t)
	repo := filepath.Join(t.TempDir(), "repo")
	if _, stderr, err := run(t, repoRoot, bin, "init", "--cluster", "east", "--tenant", "shop", "--tenant", "analytics",
		"--approver-image", "quay.io/virtc/virtc@sha256:5f0c3a4e8d9b1c2a7e6f4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19087", repo); err != nil {
		t.Fatalf("virtc init: %v\n%s", err, stderr)
	}
	args := []string{filepath.Join("clusters", "east")}
	stdout, stderr, err := run(t, repo, bin, append([]string{"build"}, args...)...)
	if err != nil {
		t.Fatalf("virtc build %v: %v\n%s", args, err, stderr)
	}
	rep, err := CheckWithContext("virtc init (clusters/east)", stdout, declaredDataSources(t, bin, repo, args...))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Objects == 0 {
		t.Fatal("nothing was admitted")
	}
	t.Logf("%d objects, %d admission reviews", rep.Objects, rep.Reviews)
	for _, f := range rep.Findings {
		if f.Unresolved {
			t.Errorf("unresolved reference: %s", f)
		} else {
			t.Errorf("denied: %s", f)
		}
	}
}
