package conformance

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/virtc/virtc/internal/emit"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/test/internal/vap"
)

// checkCompileRefusals holds every refusal of a guardrail in the goldens
// to the same refusal by a real API server (issue 39): each golden
// scenario in which the compile refuses a VM by a guardrail is rendered as
// the compile would have rendered it (test/internal/vap CompileRefused: the
// tenants' Namespaces, policies and bindings, each VM's disks and VM),
// the tenants' guardrails are put in force, and each VM's objects are
// created (server-side dry runs) as a cluster-admin, whom the policies
// judge. The API server must refuse an object by the first rule test/internal/vap's
// CEL gives it (it reports only the first), and admit it when that gives
// none; a VM the compile refuses by a guardrail has an object the server
// refuses, and a VM of the scenario the compile admits has none. test/internal/vap's
// TestCompileRefusalsHoldInTheCluster holds each rule the compile refuses
// a VM by to the same rule of the CEL, offline, for every scenario: with
// this, each compile refusal holds on the real server.
func checkCompileRefusals(t *testing.T, c *Cluster) {
	dirs, err := vap.RefusedDirs(filepath.Join(repoRoot, "golden"))
	if err != nil {
		t.Fatal(err)
	}
	grantWriters(t, c)
	var all []*refusedScenario
	for _, dir := range dirs {
		if s := refusedScenarioOf(t, dir); s != nil {
			all = append(all, s)
		}
	}
	// Scenarios whose tenants differ are put in force together: a
	// tenant's policy is cluster-scoped and named after it, and each
	// policy change takes the API server a refresh to enforce or lift.
	var batches [][]*refusedScenario
	for _, s := range all {
		placed := false
		for i, b := range batches {
			if !slices.ContainsFunc(b, func(o *refusedScenario) bool { return overlaps(o.tenants, s.tenants) }) {
				batches[i], placed = append(b, s), true
				break
			}
		}
		if !placed {
			batches = append(batches, []*refusedScenario{s})
		}
	}
	held := 0
	for i, b := range batches {
		t.Run(fmt.Sprintf("batch-%d", i+1), func(t *testing.T) { held += refusalsHeld(t, c, b) })
	}
	t.Logf("%d scenarios in %d batches: %d VMs the compile refuses by a guardrail refused by the API server (each object by the first rule of the policy's CEL)", len(all), len(batches), held)
	if held == 0 {
		t.Fatal("no refusal checked")
	}
}

func overlaps(a, b []string) bool {
	return slices.ContainsFunc(a, func(x string) bool { return slices.Contains(b, x) })
}

// refusedScenario is a golden scenario the compile refuses by a guardrail,
// with its tenants' Namespaces and guardrails as the API server receives
// them.
type refusedScenario struct {
	name        string
	r           *vap.Refused
	tenants     []string
	ns, guard   []Object
	byCompile   map[string][]string
	refusedByIt map[string]bool
}

// refusedScenarioOf compiles the scenario in dir; nil when no VM of it is
// refused by a guardrail (test/internal/vap holds the other direction offline too),
// or when a tenant's name is one the API server refuses (the compile
// refuses the name itself: there is no namespace to judge in).
func refusedScenarioOf(t *testing.T, dir string) *refusedScenario {
	t.Helper()
	r, err := vap.CompileRefused(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model == nil || len(r.Policies) == 0 {
		return nil
	}
	s := &refusedScenario{name: filepath.Base(dir), r: r}
	s.byCompile, s.refusedByIt = r.Guardrails()
	if len(s.byCompile) == 0 {
		return nil
	}
	namespaces, bindings, err := r.Namespaces()
	if err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	var guardrails []emit.Object
	for _, tenant := range slices.Sorted(maps.Keys(r.Policies)) {
		if len(validation.IsDNS1123Label(tenant)) > 0 {
			t.Logf("%s: tenant %q is no namespace name the API server accepts; the compile refuses the name itself", s.name, tenant)
			return nil
		}
		s.tenants = append(s.tenants, tenant)
		guardrails = append(guardrails, r.Policies[tenant])
	}
	s.ns, s.guard = objectsOf(t, namespaces), objectsOf(t, append(guardrails, bindings...))
	return s
}

// refusalsHeld puts a batch's guardrails in force, checks each scenario,
// and returns how many VMs the compile refuses by a guardrail the API
// server refused.
func refusalsHeld(t *testing.T, c *Cluster, batch []*refusedScenario) int {
	ctx := t.Context()
	var nsObjs, guardObjs []Object
	for _, s := range batch {
		nsObjs, guardObjs = append(nsObjs, s.ns...), append(guardObjs, s.guard...)
	}
	t.Cleanup(func() {
		ctx := context.WithoutCancel(ctx)
		if err := c.Delete(ctx, guardObjs); err != nil {
			t.Errorf("clean up: %v", err)
		}
		for _, ns := range nsObjs {
			if err := waitLifted(ctx, c, ns.Name); err != nil {
				t.Error(err)
			}
		}
		if err := c.Delete(ctx, nsObjs); err != nil {
			t.Errorf("clean up: %v", err)
		}
	})
	stream, err := Stream(append(slices.Clone(nsObjs), guardObjs...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(ctx, stream); err != nil {
		t.Fatal(err)
	}
	for _, ns := range nsObjs {
		waitEnforced(t, c, ns.Name)
	}
	held := 0
	for _, s := range batch {
		t.Run(s.name, func(t *testing.T) { held += s.check(t, c) })
	}
	return held
}

// check dry-runs each VM's objects of the scenario and returns how many
// VMs the compile refuses by a guardrail the API server refused.
func (s *refusedScenario) check(t *testing.T, c *Cluster) int {
	compiled := map[string]*vap.Policy{}
	for tenant, o := range s.r.Policies {
		p, err := vap.Compile(o.Body.(*admissionv1.ValidatingAdmissionPolicy))
		if err != nil {
			t.Fatal(err)
		}
		compiled[tenant] = p
	}
	vms := slices.SortedFunc(maps.Keys(s.r.VMs), func(a, b *resolve.VM) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	held := 0
	for _, vm := range vms {
		p := compiled[vm.Namespace]
		if p == nil {
			continue
		}
		key := vm.Namespace + "/" + vm.Name
		var serverRefused []string
		for _, o := range objectsOf(t, s.r.VMs[vm]) {
			denials, err := p.Admit(vap.Request{Object: o.Doc, User: vap.ClusterAdmin.User, Groups: vap.ClusterAdmin.Groups}, map[string]string{"virtc.dev/tenant": vm.Namespace})
			if err != nil {
				t.Fatalf("%s: %v", o, err)
			}
			want := ""
			if len(denials) > 0 {
				want = denials[0].Rule
				serverRefused = append(serverRefused, want)
			}
			t.Run(o.Kind+" "+key, func(t *testing.T) {
				tryCase(t, c, vap.Case{Name: o.String(), As: vap.ClusterAdmin, Object: o.Doc}, want)
			})
		}
		switch {
		case len(s.byCompile[key]) > 0 && len(serverRefused) == 0:
			t.Errorf("the compile refuses VM %s by %v, the API server admits every object of it", key, s.byCompile[key])
		case !s.refusedByIt[key] && len(serverRefused) > 0:
			t.Errorf("the API server refuses VM %s by %v, the compile admits it", key, serverRefused)
		case len(serverRefused) > 0:
			held++
		}
	}
	return held
}

// objectsOf is objs as virtc writes them (internal/emit), as the API server
// receives them.
func objectsOf(t *testing.T, objs []emit.Object) []Object {
	t.Helper()
	pieces, err := emit.WriteEach(objs)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParseObjects(bytes.Join(pieces, []byte("---\n")))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
