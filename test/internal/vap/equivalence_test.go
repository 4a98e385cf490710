package vap

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/rules"
	"github.com/virtc/virtc/internal/source"
)

// notGuardrails are the refusals of the golden scenarios, at a VM's field,
// that no guardrail makes, and why the cluster needs no policy of virtc's
// for them: the API server or KubeVirt refuses the object itself, or it
// is a mistake that would not work, not a boundary (each message's start
// identifies it).
var notGuardrails = map[string]string{
	"the root disk would be named":      "the API server refuses a DataVolume name longer than 63 characters (CDI's name validation); a naming mistake",
	"the disk would be named":           "the same, for a data disk's claim",
	"set userData or userDataSecret":    "an intent mistake: the object holds one of them",
	"unknown":                           "a catalog name the catalog does not have: there is no object to judge",
	"spread":                            "placement that can never schedule: the scheduler leaves the VM Pending (docs/placement.md), no boundary",
	"is not reachable from pool":        "placement that can never schedule (the pool's nodes lack the network or storage)",
	"needs a virt-launcher pod of":      "a size larger than a node of its pool: the scheduler leaves it Pending",
	"image \"":                          "an image's properties (guest agent, minimum root disk) that make the VM not work, not a boundary",
	"root disk":                         "a root disk smaller than its image needs: the guest does not boot, no boundary",
	"cannot snapshot":                   "a VirtualMachineSnapshot KubeVirt would leave failing: no boundary",
	"liveness":                          "a probe that would restart the guest: no boundary",
	"is a live-migration network":       "the platform's migration network: no VM attaches to it",
	"would be":                          "names",
	"a VM cannot":                       "an intent field virtc's schema refuses (the object it would be is judged by template-fields and placement)",
	"virtc writes the KubeVirt spec":    "the same",
	"set spec.migration":                "the same",
	"which has no maintenance reserve":  "capacity across the pool's VMs (virtc report's placement): no one object shows it",
	"none of its VMs may be production": "tier is Git's: a VM object has none (a production tenant's namespace holds its VMs' production allowances)",
	"is lower than tenant":              "the same",
	"spec.workerNode":                   "the worker-virtualization class: nothing in a VirtualMachine says that its guest runs a Kubernetes node, so only Git's gate can ask for its evidence",
	"unknown field":                     "the same",
}

// TestCompileRefusalsHoldInTheCluster: for every golden scenario the compile
// refuses, each refusal a guardrail makes of a VM holds in the cluster too
// (its objects, rendered as the compile would, are refused by the same
// rule of the tenant's policy, as the API server evaluates it), and the
// cluster refuses no VM the compile admits.
func TestCompileRefusalsHoldInTheCluster(t *testing.T) {
	dirs, err := RefusedDirs("../../../golden")
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) { held += holds(t, dir) })
	}
	t.Logf("%d refusals of guardrails held by the cluster's policies", held)
	if held == 0 {
		t.Fatal("no refusal checked")
	}
}

// holds checks one scenario and returns how many refusals it held.
func holds(t *testing.T, dir string) int {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(source.BaseEnv, abs)
	r, err := CompileRefused(abs)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model == nil {
		return 0
	}
	intentErrors, intentRefused := r.IntentRefusals()
	compiled := map[string]*Policy{}
	for ns, o := range r.Policies {
		p := o.Body.(*admissionv1.ValidatingAdmissionPolicy)
		c, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		compiled[ns] = c
	}
	// The cluster's refusals of each VM's objects, by rule.
	cluster := map[string][]string{}
	messages := map[string][]string{}
	for vm, objs := range r.VMs {
		p := compiled[vm.Namespace]
		if p == nil {
			continue
		}
		key := vm.Namespace + "/" + vm.Name
		cluster[key] = []string{}
		for _, o := range objs {
			obj := asMap(t, o)
			denials, err := p.Admit(Request{Object: obj, User: PlainUser.User, Groups: PlainUser.Groups}, map[string]string{"virtc.dev/tenant": vm.Namespace})
			if err != nil {
				t.Fatalf("%s %s: %v", o.Kind, key, err)
			}
			for _, d := range denials {
				if !slices.Contains(cluster[key], d.Rule) {
					cluster[key] = append(cluster[key], d.Rule)
				}
				messages[key] = append(messages[key], d.Message)
			}
		}
	}
	_, refusedVMs := r.Guardrails()
	n := 0
	for _, d := range r.Diags.Errors() {
		vm := r.VMAt(d)
		if vm == "" || intentErrors[d.String()] {
			continue
		}
		if d.Rule == "" {
			if why := notGuardrail(d.Message); why == "" {
				t.Errorf("%s: a refusal of VM %s that no guardrail makes, and not listed as one the cluster needs no policy for: %s", d.Field, vm, d.Message)
			}
			continue
		}
		if _, ok := rules.Lookup(d.Rule); !ok {
			t.Errorf("%s: rule %s is no guardrail", d, d.Rule)
		}
		if d.Subject != "" && d.Subject != vm {
			t.Errorf("%s: the refusal names %s, its document is VM %s", d, d.Subject, vm)
		}
		rs, rendered := cluster[vm]
		if !rendered {
			// A VM whose references do not resolve renders nothing: its
			// refusals are about names the catalog lacks.
			if !intentRefused[vm] {
				t.Errorf("VM %s, refused by %s, does not render, and no refusal of its intent says why", vm, d.Rule)
			}
			continue
		}
		if !slices.Contains(rs, d.Rule) {
			t.Errorf("the compile refuses VM %s by %s (%s), the cluster does not (its refusals: %v)", vm, d.Rule, d.Message, rs)
			continue
		}
		n++
	}
	keys := make([]string, 0, len(cluster))
	for k := range cluster {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, vm := range keys {
		if len(cluster[vm]) > 0 && !refusedVMs[vm] {
			t.Errorf("the cluster refuses VM %s, the compile admits it: %s", vm, strings.Join(messages[vm], "; "))
		}
	}
	return n
}

func notGuardrail(message string) string {
	for prefix, why := range notGuardrails {
		if strings.HasPrefix(message, prefix) || strings.Contains(message, prefix) {
			return why
		}
	}
	return ""
}

// asMap is an object as virtc writes it (internal/emit: empty structs and null
// timestamps dropped), as the API server receives it.
func asMap(t *testing.T, o emit.Object) map[string]any {
	t.Helper()
	pieces, err := emit.WriteEach([]emit.Object{o})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Split(pieces[0])
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %v", pieces[0], err)
	}
	return objs[0]
}
