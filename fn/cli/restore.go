package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/virtc/virtc/fn/compile"
	"github.com/virtc/virtc/fn/diag"
	"github.com/virtc/virtc/fn/emit"
	"github.com/virtc/virtc/fn/jsonnet"
	"github.com/virtc/virtc/fn/render"
	"github.com/virtc/virtc/fn/resolve"
	"github.com/virtc/virtc/fn/source"
)

func runRestorePlan(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("restore-plan", "NAMESPACE/VM PATH...", stderr)
	backup := fs.String("backup", "", "restore from this Velero Backup (default: the latest backup of the VM's Schedule)")
	target := fs.String("to", "", "restore a copy into this namespace beside the original (new MAC addresses and firmware UUID); default: in place")
	positional, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(positional) < 2 {
		fmt.Fprintln(stderr, "virtc restore-plan: name the VM as NAMESPACE/VM and at least one PATH")
		fs.Usage()
		return ExitUsage
	}
	ns, name, found := strings.Cut(positional[0], "/")
	if !found || ns == "" || name == "" {
		fmt.Fprintf(stderr, "virtc restore-plan: %q is not NAMESPACE/VM\n", positional[0])
		return ExitUsage
	}
	diags := &diag.List{}
	docs := source.Read(positional[1:], source.Options{Evaluate: jsonnet.Options{}.Evaluate}, diags)
	res := compile.Compile(docs, compile.Options{}, diags)
	if code := report(res, stderr); code != ExitOK {
		return code
	}
	var vm *resolve.VM
	var names []string
	for _, t := range res.Model.Tenants {
		for _, v := range t.VMs {
			names = append(names, v.Namespace+"/"+v.Name)
			if v.Namespace == ns && v.Name == name {
				vm = v
			}
		}
	}
	if vm == nil {
		fmt.Fprintf(stderr, "virtc restore-plan: %s\n", diag.UnknownName("VM", positional[0], names))
		return ExitFailed
	}
	if *backup == "" && !vm.TakesBackups() {
		fmt.Fprintf(stderr, "virtc restore-plan: VM %s/%s has backup policy %q, which takes no scheduled backups: name a Backup with --backup\n", ns, name, vm.Backup.Name)
		return ExitFailed
	}
	out, err := emit.Write([]emit.Object{render.Restore(render.RestorePlan{VM: vm, Backup: *backup, TargetNamespace: *target})})
	if err != nil {
		fmt.Fprintf(stderr, "virtc: %v\n", err)
		return ExitFailed
	}
	stdout.Write(out)
	return ExitOK
}
