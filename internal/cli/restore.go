package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/render"
	"github.com/virtc/virtc/internal/resolve"
)

func runRestorePlan(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("restore-plan", "NAMESPACE/VM PATH... | --tenant NAME PATH...", stderr)
	backup := fs.String("backup", "", "restore from this Velero Backup (default: the latest backup of the VM's Schedule)")
	target := fs.String("to", "", "restore a copy into this namespace (new MAC addresses and firmware UUID); default: in place")
	snapshot := fs.String("snapshot", "", "roll the VM back to this VirtualMachineSnapshot instead of restoring a backup")
	tenantName := fs.String("tenant", "", "restore every VM of this tenant in place (no NAMESPACE/VM argument)")
	otherCluster := fs.Bool("other-cluster", false, "with --tenant: restore the tenant onto another cluster")
	app := fs.String("app", "", "the Argo CD Application that syncs the VMs (default: the script asks for $APP)")
	objectsOnly := fs.Bool("objects", false, "print only the objects the plan applies (YAML), not the script")
	positional, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	var ns, name string
	if *tenantName == "" {
		if len(positional) < 2 {
			fmt.Fprintln(stderr, "virtc restore-plan: name the VM as NAMESPACE/VM (or a tenant with --tenant) and at least one PATH")
			fs.Usage()
			return ExitUsage
		}
		var found bool
		ns, name, found = strings.Cut(positional[0], "/")
		if !found || ns == "" || name == "" {
			fmt.Fprintf(stderr, "virtc restore-plan: %q is not NAMESPACE/VM\n", positional[0])
			return ExitUsage
		}
		positional = positional[1:]
		if *otherCluster {
			fmt.Fprintln(stderr, "virtc restore-plan: --other-cluster restores a whole tenant: use it with --tenant")
			return ExitUsage
		}
	} else if *backup != "" || *target != "" || *snapshot != "" {
		fmt.Fprintln(stderr, "virtc restore-plan: --tenant restores from the latest backup of each Schedule: --backup, --to and --snapshot are for one VM")
		return ExitUsage
	}
	if len(positional) == 0 {
		fmt.Fprintln(stderr, "virtc restore-plan: name at least one PATH")
		return ExitUsage
	}
	if *snapshot != "" && (*backup != "" || *target != "") {
		fmt.Fprintln(stderr, "virtc restore-plan: --snapshot restores the VM in place from its snapshot: --backup and --to do not apply")
		return ExitUsage
	}
	for _, f := range []struct {
		flag, value string
		kind        nameKind
	}{
		{"--app", *app, applicationName},
		{"--backup", *backup, backupName},
		{"--to", *target, namespaceName},
		{"--snapshot", *snapshot, snapshotName},
	} {
		if f.value == "" {
			continue
		}
		if msg := f.kind.check(f.value); msg != "" {
			fmt.Fprintf(stderr, "virtc restore-plan: %s %q %s\n", f.flag, f.value, msg)
			return ExitUsage
		}
	}
	req, ok := request(api.CompilerSpec{Paths: positional}, place{}, stderr)
	if !ok {
		return ExitFailed
	}
	res := compile.Run(req, nil, &diag.List{})
	if code := report(res, stderr); code != ExitOK {
		return code
	}
	plan := render.RestorePlan{App: *app, Platform: res.Model.Platform}
	if *tenantName != "" {
		var names []string
		for _, t := range res.Model.Tenants {
			names = append(names, t.Name)
			if t.Name == *tenantName {
				plan.Tenant = t
			}
		}
		if plan.Tenant == nil {
			fmt.Fprintf(stderr, "virtc restore-plan: %s\n", diag.UnknownName("tenant", *tenantName, names))
			return ExitFailed
		}
		plan.Mode = render.RestoreTenant
		if *otherCluster {
			plan.Mode = render.RestoreOtherCluster
		}
		if !slices.ContainsFunc(plan.Tenant.VMs, (*resolve.VM).TakesBackups) {
			fmt.Fprintf(stderr, "virtc restore-plan: no VM of tenant %s takes scheduled backups: there is nothing to restore\n", plan.Tenant.Name)
			return ExitFailed
		}
	} else {
		var names []string
		for _, t := range res.Model.Tenants {
			for _, v := range t.VMs {
				names = append(names, v.Namespace+"/"+v.Name)
				if v.Namespace == ns && v.Name == name {
					plan.VM, plan.Tenant = v, t
				}
			}
		}
		if plan.VM == nil {
			fmt.Fprintf(stderr, "virtc restore-plan: %s\n", diag.UnknownName("VM", ns+"/"+name, names))
			return ExitFailed
		}
		plan.Backup, plan.Snapshot = *backup, *snapshot
		switch {
		case *snapshot != "":
			plan.Mode = render.RestoreSnapshot
		case *target != "" && *target != ns:
			plan.Mode, plan.TargetNamespace = render.RestoreCopy, *target
		default:
			plan.Mode = render.RestoreInPlace
		}
		if plan.Mode != render.RestoreSnapshot && *backup == "" && !plan.VM.TakesBackups() {
			fmt.Fprintf(stderr, "virtc restore-plan: VM %s/%s has backup policy %q, which takes no scheduled backups: name a Backup with --backup\n", ns, name, plan.VM.Backup.Name)
			return ExitFailed
		}
		if plan.Mode == render.RestoreCopy {
			for _, t := range res.Model.Tenants {
				if t.Name == plan.TargetNamespace {
					fmt.Fprintf(stderr, "virtc restore-plan: namespace %s is tenant %s's, which Argo CD syncs: restore the copy into a namespace of its own\n", t.Name, t.Name)
					return ExitFailed
				}
			}
		}
	}
	objs := plan.Objects()
	if *objectsOnly {
		out, err := emit.Write(objs)
		if err != nil {
			fmt.Fprintf(stderr, "virtc: %v\n", err)
			return ExitFailed
		}
		stdout.Write(out)
		return ExitOK
	}
	var docsOut [][]byte
	for _, o := range objs {
		out, err := emit.Write([]emit.Object{o})
		if err != nil {
			fmt.Fprintf(stderr, "virtc: %v\n", err)
			return ExitFailed
		}
		docsOut = append(docsOut, out)
	}
	io.WriteString(stdout, plan.Script(docsOut))
	return ExitOK
}

// The flags' values go into the plan's script, which a cluster
// administrator runs, and into its objects: each must be the Kubernetes
// name it stands for, so that none reads as shell syntax ($(...), a
// backquote, a ; or a newline would run a command of its own). The script
// quotes them as well (render.RestorePlan.Script).
type nameKind int

const (
	// namespaceName is a namespace: a DNS-1123 label.
	namespaceName nameKind = iota
	// backupName is a Velero Backup: a DNS-1123 subdomain.
	backupName
	// snapshotName is a VirtualMachineSnapshot: a DNS-1123 subdomain.
	snapshotName
	// applicationName is an Argo CD Application in $ARGOCD_NS (the script
	// runs kubectl -n "$ARGOCD_NS" get application "$APP"): a DNS-1123
	// subdomain, with no namespace of its own.
	applicationName
)

// check says why value is not a name of the kind, and what would be right;
// empty: it is one.
func (k nameKind) check(value string) string {
	var errs []string
	var want string
	switch k {
	case namespaceName:
		errs = validation.IsDNS1123Label(value)
		want = "a namespace name: a DNS-1123 label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit), such as shop-drill"
	case backupName:
		errs = validation.IsDNS1123Subdomain(value)
		want = "a Velero Backup name: a DNS-1123 subdomain (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit), as velero backup get lists it"
	case snapshotName:
		errs = validation.IsDNS1123Subdomain(value)
		want = "a VirtualMachineSnapshot name: a DNS-1123 subdomain (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit), as kubectl get virtualmachinesnapshots lists it"
	case applicationName:
		if ns, name, found := strings.Cut(value, "/"); found && len(validation.IsDNS1123Label(ns)) == 0 && len(validation.IsDNS1123Subdomain(name)) == 0 {
			// The script reads the Application's namespace from $ARGOCD_NS.
			return fmt.Sprintf("is NAMESPACE/NAME: give the Application's name alone (--app %s) and run the script with ARGOCD_NS=%s", name, ns)
		}
		errs = validation.IsDNS1123Subdomain(value)
		want = "an Argo CD Application name: a DNS-1123 subdomain (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit), such as virtc-vms"
	}
	if len(errs) == 0 {
		return ""
	}
	return "is not " + want
}
