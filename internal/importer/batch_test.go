package importer

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/fleet"
	"github.com/virtc/virtc/internal/live"
	"github.com/virtc/virtc/internal/source"
)

// goldenImports are the export, user catalog and options of every import
// scenario (golden/import).
func goldenImports(t *testing.T) map[string]struct {
	objs    []live.Object
	catalog []*source.Doc
	mode    Options
} {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "golden", "import")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]struct {
		objs    []live.Object
		catalog []*source.Doc
		mode    Options
	}{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		objs, err := live.Read([]string{filepath.Join(dir, "live.yaml")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var docs []*source.Doc
		if _, err := os.Stat(filepath.Join(dir, "catalog.yaml")); err == nil {
			diags := &diag.List{}
			docs = source.Read([]string{filepath.Join(dir, "catalog.yaml")}, source.Options{}, diags)
			if diags.HasErrors() {
				t.Fatal(diag.Format(diags.Sorted()))
			}
		}
		args, _ := os.ReadFile(filepath.Join(dir, "args"))
		out[e.Name()] = struct {
			objs    []live.Object
			catalog []*source.Doc
			mode    Options
		}{objs, docs, Options{DeferChanges: strings.Contains(string(args), "--defer-changes")}}
	}
	return out
}

// fleetExport is what `oc get vm,dv,pvc,nad -o yaml` prints for a
// generated fleet once Argo CD applied its build (the bench's export).
func fleetExport(t *testing.T, opts fleet.Options) []live.Object {
	t.Helper()
	files, err := fleet.Generate(opts)
	if err != nil {
		t.Fatal(err)
	}
	diags := &diag.List{}
	var docs []*source.Doc
	for _, f := range files {
		docs = append(docs, source.Parse(f.Path, f.Path, f.Data, diags)...)
	}
	res := compile.Compile(docs, compile.Options{}, diags)
	if diags.HasErrors() {
		t.Fatal(diag.Format(diags.Sorted()))
	}
	objs, err := live.Parse(res.YAML, "export.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []live.Object
	for _, o := range objs {
		switch o.Kind {
		case "VirtualMachine", "DataVolume", "PersistentVolumeClaim", "NetworkAttachmentDefinition":
			out = append(out, o)
		}
	}
	return out
}

// The import compiles every VM in one batch (compileAll) and only refused
// VMs one by one: its outcome is the same as compiling each VM alone, for
// every import scenario, for all of them in one export (the same
// namespaces and names across scenarios, refusals of every kind, with and
// without deferred changes), and for a generated fleet.
func TestBatchIsEachAlone(t *testing.T) {
	var all []live.Object
	for name, sc := range goldenImports(t) {
		t.Run(name, func(t *testing.T) {
			same(t, sc.objs, sc.catalog, sc.mode)
		})
		all = append(all, sc.objs...)
	}
	t.Run("all-scenarios", func(t *testing.T) {
		same(t, all, nil, Options{})
		same(t, all, nil, Options{DeferChanges: true})
	})
	t.Run("fleet", func(t *testing.T) {
		res := same(t, fleetExport(t, fleet.Options{Tenants: 4, VMs: 60, Seed: 1}), nil, Options{})
		if len(res.Imported) != 60 {
			t.Errorf("%d VMs imported, want 60 (refused: %v)", len(res.Imported), res.Refused)
		}
	})
}

func same(t *testing.T, objs []live.Object, docs []*source.Doc, mode Options) Result {
	t.Helper()
	batch := importVMs(objs, docs, catalog.Options{}, mode, true)
	alone := importVMs(objs, docs, catalog.Options{}, mode, false)
	if !reflect.DeepEqual(batch, alone) {
		t.Errorf("the batch's import differs from each VM's alone:\nbatch:\n%s\nalone:\n%s", batch.Report(), alone.Report())
		for i := range min(len(batch.Files), len(alone.Files)) {
			if batch.Files[i].Path != alone.Files[i].Path || string(batch.Files[i].Data) != string(alone.Files[i].Data) {
				t.Errorf("first file that differs: %s / %s", batch.Files[i].Path, alone.Files[i].Path)
				break
			}
		}
	}
	return batch
}

// A VM's files are the same whether the export holds it alone, with one
// other VM or with a whole fleet: what else the export holds does not
// change how a VM is imported.
func TestExportSizeDoesNotMatter(t *testing.T) {
	objs := fleetExport(t, fleet.Options{Tenants: 3, VMs: 30, Seed: 2})
	var vms, others []live.Object
	for _, o := range objs {
		if o.Kind == "VirtualMachine" {
			vms = append(vms, o)
		} else {
			others = append(others, o)
		}
	}
	files := func(objs []live.Object) map[string]string {
		res := Import(objs, nil, catalog.Options{}, Options{})
		out := map[string]string{}
		for _, f := range res.Files {
			out[f.Path] = string(f.Data)
		}
		return out
	}
	whole := files(objs)
	pair := files(append([]live.Object{vms[0], vms[len(vms)-1]}, others...))
	for _, vm := range vms {
		p := vm.Namespace + "/" + vm.Name + ".yaml"
		one := files(append([]live.Object{vm}, others...))
		if one[p] == "" || one[p] != whole[p] {
			t.Errorf("%s: imported alone:\n%s\nwith the fleet:\n%s", p, one[p], whole[p])
		}
		if got, ok := pair[p]; ok && got != whole[p] {
			t.Errorf("%s: imported with one other VM:\n%s\nwith the fleet:\n%s", p, got, whole[p])
		}
	}
	if len(pair) < 2 {
		t.Errorf("the two-VM export imported %d files", len(pair))
	}
}
