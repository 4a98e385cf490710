package importer

import (
	"fmt"
	"slices"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/live"
	"github.com/virtc/virtc/internal/source"
)

// Options of an import.
type Options struct {
	// DeferChanges adopts, in the compliant form, a VM that policy refuses
	// only for what this mode can change: inline cloud-init user data that
	// holds secret material (a password, a key: 000 keeps secrets out of
	// Git) becomes a reference to a Secret the owner creates from the live
	// data. The intent then differs from the running VM: the report lists
	// each changed field, and says that KubeVirt marks the VM
	// RestartRequired (pkg/virt-controller/watch/vm/vm.go: any change of
	// the template spec) and that the change takes effect at the VM's next
	// restart, which stays the owner's decision: virtc never restarts a VM.
	// Off (the default), such a VM is refused.
	DeferChanges bool
}

// deferral is a change of a live VM that the deferred-change mode makes:
// the report line, the cluster action it needs first, and the live VM as
// it will be once the change applies.
type deferral struct {
	path, from, to string
	action         string
	apply          func(vm map[string]any)
	// runs: the change leaves what the VM runs as it is (a field's older
	// form replaced by the one virtc writes): the report has its action,
	// and no deferred change.
	runs bool
}

// runningForm replaces spec.running, the form of a VM before runStrategy
// (KubeVirt v1.3-era VMs, and creators that still write it), by the run
// strategy KubeVirt reads from it: running true is Always, false Halted
// (kubevirt.io/api v1.8.4 core/v1 types.go, VirtualMachine.RunStrategy).
// The VM runs as before; but virt-api refuses a VM that has both fields
// (pkg/virt-api/webhooks/validating-webhook/admitters/vms-admitter.go),
// and Argo CD's apply of virtc's runStrategy leaves a field it never
// wrote in place, so spec.running goes before the first sync.
func runningForm(o live.Object) (deferral, bool) {
	spec, _ := o.Body["spec"].(map[string]any)
	running, isBool := spec["running"].(bool)
	if spec == nil || !isBool || spec["runStrategy"] != nil {
		return deferral{}, false
	}
	rs := "Halted"
	if running {
		rs = "Always"
	}
	return deferral{
		path: "spec.running",
		runs: true,
		action: fmt.Sprintf(`BEFORE THE FIRST SYNC: oc patch vm/%s -n %s --type=json -p '[{"op":"remove","path":"/spec/running"},{"op":"add","path":"/spec/runStrategy","value":"%s"}]' (running: %t is runStrategy %s to KubeVirt, so the VM keeps running as it does; virt-api refuses a VM with both fields, and Argo CD's apply of virtc's runStrategy would leave spec.running in place)`,
			o.Name, o.Namespace, rs, running, rs),
		apply: func(body map[string]any) {
			s := body["spec"].(map[string]any)
			delete(s, "running")
			s["runStrategy"] = rs
		},
	}, true
}

// deferChanges moves what policy refuses in a VM's intent into its compliant
// form, if that is all that keeps the intent from compiling; it returns
// the changes made (none: the intent is unchanged).
func (im *importer) deferChanges(vm *api.VM, catalogDocs []*source.Doc, opts catalog.Options) []deferral {
	_, why := im.compileVMDiags(vm, catalogDocs, opts)
	if len(why) == 0 || slices.ContainsFunc(why, func(d string) bool { return d != "spec.cloudInit.userData" }) {
		return nil
	}
	ci := vm.Spec.CloudInit
	if ci == nil || ci.UserData == "" || ci.UserDataSecret != "" {
		return nil
	}
	secret := vm.Metadata.Name + "-userdata"
	from := "userData"
	if ci.UserDataEncoding != "" {
		from = "userDataBase64"
	}
	ci.UserDataSecret, ci.UserData, ci.UserDataEncoding = secret, "", ""
	return []deferral{{
		path: "spec.template.spec.volumes[cloudinitdisk].cloudInitNoCloud",
		from: from + " (inline, with secret material)",
		to:   "secretRef " + secret + " (a Secret with the key userdata)",
		action: fmt.Sprintf("BEFORE THE FIRST SYNC: create the Secret from the live user data (it never goes to Git): oc get vm/%s -n %s -o jsonpath='{.spec.template.spec.volumes[?(@.name==\"cloudinitdisk\")].cloudInitNoCloud.%s}'%s | oc create secret generic %s -n %s --from-file=userdata=/dev/stdin",
			vm.Metadata.Name, vm.Metadata.Namespace, from, map[bool]string{true: " | base64 -d", false: ""}[from == "userDataBase64"], secret, vm.Metadata.Namespace),
		apply: func(body map[string]any) {
			for _, v := range listAt(body, "spec", "template", "spec", "volumes") {
				vol, _ := v.(map[string]any)
				if vol["name"] != "cloudinitdisk" {
					continue
				}
				src, _ := vol["cloudInitNoCloud"].(map[string]any)
				delete(src, "userData")
				delete(src, "userDataBase64")
				src["secretRef"] = map[string]any{"name": secret}
			}
		},
	}}
}

// withDeferred is the export with a VM as it will be once its deferred
// changes apply.
func withDeferred(objs []live.Object, o live.Object, changes []deferral) []live.Object {
	if len(changes) == 0 {
		return objs
	}
	out := slices.Clone(objs)
	for i, x := range out {
		if x.Ref() != o.Ref() {
			continue
		}
		body := deepCopy(x.Body).(map[string]any)
		for _, c := range changes {
			c.apply(body)
		}
		out[i].Body = body
	}
	return out
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = deepCopy(x)
		}
		return l
	}
	return v
}

// deferredItems are the report lines of a VM's deferred changes.
func deferredItems(ref string, changes []deferral) []Item {
	var items []Item
	for _, c := range changes {
		if c.runs {
			items = append(items, Item{VM: ref, Path: c.path, Action: true, Why: c.action})
			continue
		}
		items = append(items,
			Item{VM: ref, Path: c.path, Action: true, Why: c.action},
			Item{VM: ref, Path: c.path, Deferred: true, Why: fmt.Sprintf("%s → %s: the intent's compliant form; KubeVirt marks the VM RestartRequired once Argo CD applies it, and the change takes effect at the VM's next restart, which is the owner's decision (virtc never restarts it)", c.from, c.to)})
	}
	return items
}
