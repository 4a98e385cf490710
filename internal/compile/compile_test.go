package compile

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/source"
)

func examplesDir(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", name)
}

func build(t *testing.T, docs []*source.Doc) []byte {
	t.Helper()
	diags := &diag.List{}
	res := Compile(docs, Options{}, diags)
	if diags.HasErrors() {
		t.Fatalf("compile failed:\n%s", diag.Format(diags.Sorted()))
	}
	return res.YAML
}

// The same inputs give the same bytes whatever the order of the files and
// documents, and however often they are compiled.
func TestDeterministicAcrossInputOrder(t *testing.T) {
	for _, example := range []string{"quickstart", "platform"} {
		diags := &diag.List{}
		docs := source.Read([]string{examplesDir(example)}, source.Options{}, diags)
		if diags.HasErrors() {
			t.Fatal(diag.Format(diags.Sorted()))
		}
		want := build(t, docs)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range 25 {
			shuffled := append([]*source.Doc(nil), docs...)
			rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
			if got := build(t, shuffled); !bytes.Equal(got, want) {
				t.Fatalf("%s: run %d with shuffled inputs differs", example, i)
			}
		}
	}
}

// A failing compile returns no output at all, even when most objects are
// fine.
func TestFailingCompileEmitsNothing(t *testing.T) {
	diags := &diag.List{}
	docs := source.Read([]string{examplesDir("quickstart")}, source.Options{}, diags)
	bad := source.Parse("bad.yaml", "bad.yaml", []byte("apiVersion: virtc.dev/v1alpha1\nkind: VM\nmetadata: {name: x, namespace: payments}\nspec: {size: u1.huge, image: rhel9}\n"), diags)
	res := Compile(append(docs, bad...), Options{}, diags)
	if !diags.HasErrors() {
		t.Fatal("expected an error")
	}
	if len(res.YAML) != 0 || len(res.Objects) != 0 {
		t.Fatalf("a failing compile produced %d bytes and %d objects", len(res.YAML), len(res.Objects))
	}
}

// A VM-scope build never prints a cluster-scoped object, nor one outside
// a tenant's namespace: a tenant repository's Application cannot reach the
// cluster through it.
func TestVMScopeStaysInTenantNamespaces(t *testing.T) {
	diags := &diag.List{}
	docs := source.Read([]string{examplesDir("platform")}, source.Options{}, diags)
	res := Compile(docs, Options{Scopes: []emit.Scope{emit.VMScope}}, diags)
	if diags.HasErrors() {
		t.Fatal(diag.Format(diags.Sorted()))
	}
	tenants := map[string]bool{}
	for _, tn := range res.Model.Tenants {
		tenants[tn.Name] = true
	}
	if len(res.Objects) == 0 {
		t.Fatal("no objects")
	}
	for _, o := range res.Objects {
		if o.Namespace == "" || !tenants[o.Namespace] {
			t.Errorf("%s %q in namespace %q is not in a tenant namespace", o.Kind, o.Name, o.Namespace)
		}
	}
}

// Every VM and every data disk (DataVolume and PVC) asks Argo CD for a
// person's confirmation before it is pruned or deleted.
func TestDisksAndVMsConfirmDeletion(t *testing.T) {
	for _, example := range []string{"quickstart", "platform"} {
		diags := &diag.List{}
		docs := source.Read([]string{examplesDir(example)}, source.Options{}, diags)
		res := Compile(docs, Options{}, diags)
		if diags.HasErrors() {
			t.Fatal(diag.Format(diags.Sorted()))
		}
		n := 0
		for _, o := range res.Objects {
			switch o.Kind {
			case "VirtualMachine", "DataVolume", "PersistentVolumeClaim":
			default:
				continue
			}
			if o.Namespace == "openshift-virtualization-os-images" {
				continue // golden images belong to the platform
			}
			n++
			g, err := emit.Generic(o.Body)
			if err != nil {
				t.Fatal(err)
			}
			ann, _ := g["metadata"].(map[string]any)["annotations"].(map[string]any)
			opts, _ := ann["argocd.argoproj.io/sync-options"].(string)
			if !strings.Contains(opts, "Prune=confirm") || !strings.Contains(opts, "Delete=confirm") {
				t.Errorf("%s: %s %s/%s has sync-options %q", example, o.Kind, o.Namespace, o.Name, opts)
			}
		}
		if n == 0 {
			t.Errorf("%s: no VM or disk checked", example)
		}
	}
}

// syncOption reads one option of argocd.argoproj.io/sync-options the way
// Argo CD does (gitops-engine v3.6.1 pkg/sync/resource/annotations.go,
// GetAnnotationOptionValue: comma-separated, the first KEY= wins).
func syncOption(t *testing.T, o emit.Object, key string) (string, bool) {
	t.Helper()
	g, err := emit.Generic(o.Body)
	if err != nil {
		t.Fatal(err)
	}
	ann, _ := g["metadata"].(map[string]any)["annotations"].(map[string]any)
	opts, _ := ann["argocd.argoproj.io/sync-options"].(string)
	for item := range strings.SplitSeq(opts, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(item), key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Every Namespace virtc emits (tenants, openshift-cnv, openshift-adp) is
// protected like the disks in it: deleting the namespace would let
// Kubernetes delete its VMs and disks without asking Argo CD.
//
// Argo CD v3.6.1 (github.com/argoproj/argo-cd, tag v3.6.1):
//   - controller/appcontroller.go, finalizeApplicationDeletion and
//     shouldBeDeleted: on deletion of the Application, an object whose
//     Delete option is "false" is never deleted; Delete=confirm only makes
//     the whole Application's deletion wait for one approval, after which
//     the namespace (and through it the VMs of other Applications) goes.
//   - gitops-engine/pkg/sync/sync_context.go, objRequiresPruneConfirmation:
//     a prune of an object with Prune=confirm waits for a person.
//
// So a Namespace carries Delete=false (never deleted with the Application)
// and Prune=confirm (a retired tenant removed from Git goes after a person
// confirms). With confirmDeletion: false it carries neither, like the disks.
func TestNamespacesProtected(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	golden := filepath.Join(filepath.Dir(file), "..", "..", "golden")
	for _, c := range []struct {
		name    string
		dir     string
		confirm bool
		want    []string
	}{
		{"platform example", examplesDir("platform"), true, []string{"openshift-cnv"}},
		{"quickstart example (no Platform)", examplesDir("quickstart"), true, nil},
		{"confirmDeletion false", filepath.Join(golden, "dpa-two-locations", "inputs.yaml"), false, []string{"openshift-adp", "openshift-cnv"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			diags := &diag.List{}
			docs := source.Read([]string{c.dir}, source.Options{}, diags)
			res := Compile(docs, Options{}, diags)
			if diags.HasErrors() {
				t.Fatal(diag.Format(diags.Sorted()))
			}
			seen := map[string]bool{}
			tenants := 0
			for _, o := range res.Objects {
				if o.Kind != "Namespace" {
					continue
				}
				seen[o.Name] = true
				if !strings.HasPrefix(o.Name, "openshift-") {
					tenants++
				}
				del, hasDel := syncOption(t, o, "Delete")
				prune, hasPrune := syncOption(t, o, "Prune")
				if c.confirm && (del != "false" || prune != "confirm") {
					t.Errorf("Namespace %s: Delete=%q Prune=%q, want Delete=false (Argo CD never deletes it with the Application) and Prune=confirm", o.Name, del, prune)
				}
				if !c.confirm && (hasDel || hasPrune) {
					t.Errorf("Namespace %s: confirmDeletion is false but it carries Delete=%q Prune=%q", o.Name, del, prune)
				}
			}
			if tenants == 0 {
				t.Error("no tenant Namespace checked")
			}
			for _, ns := range c.want {
				if !seen[ns] {
					t.Errorf("Namespace %s not emitted", ns)
				}
			}
		})
	}
}
