package decode

import (
	"testing"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/source"
)

// Decoding any bytes reports problems with a file and field, and never
// panics.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"apiVersion: virtc.dev/v1alpha1\nkind: VM\nmetadata: {name: a, namespace: t}\nspec: {size: u1.small, image: fedora, disks: [{name: d, size: 1Gi}]}\n",
		"apiVersion: virtc.dev/v1alpha1\nkind: Tenant\nmetadata: {name: t}\nspec: {quota: {cpu: 4, memory: 8Gi}}\n",
		"a: &x [*x]\n",
		"- 1\n- 2\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		diags := &diag.List{}
		docs := source.Parse("fuzz.yaml", "fuzz.yaml", data, diags)
		Decode(docs, false, diags)
		for _, d := range diags.Sorted() {
			if d.File != "fuzz.yaml" || d.Message == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
	})
}
