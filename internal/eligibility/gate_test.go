package eligibility_test

import (
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/versions"
)

// TestJudgeCompatibilityGate: each check of the exact-version gate (doc
// 000, "Acceptance evidence") counts only with platform-wide Evidence on
// the platform's exact version, and says why otherwise.
func TestJudgeCompatibilityGate(t *testing.T) {
	ev := func(name, check, version, tenant, date string) decode.Entry[api.Evidence] {
		return decode.Entry[api.Evidence]{Obj: &api.Evidence{
			Metadata: api.ObjectMeta{Name: name},
			Spec: api.EvidenceSpec{Check: check, Date: date, By: "platform-team", Link: "https://example.com/" + name,
				Covers: api.EvidenceCovers{PlatformVersion: version, Tenant: tenant}},
		}}
	}
	gate := []versions.GateCheck{
		{Check: "openshift-compatibility", Description: "operator"},
		{Check: "observability", Description: "alerts"},
		{Check: "worker-pool-lifecycle", Description: "pool"},
		{Check: "template-enforcement", Description: "admission"},
		{Check: "controlled-maintenance", Description: "maintenance"},
	}
	ctx := eligibility.Context{
		PlatformVersion: "4.22.3",
		AsOf:            time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Evidence: []decode.Entry[api.Evidence]{
			ev("ocp", "openshift-compatibility", "4.22.3", "", "2026-11-20"),
			ev("obs-old", "observability", "4.22.2", "", "2026-11-01"),
			ev("pool-pay", "worker-pool-lifecycle", "4.22.3", "pay", "2026-11-20"),
			ev("tpl-later", "template-enforcement", "4.22.3", "", "2026-12-24"),
		},
	}
	got := eligibility.JudgeCompatibilityGate(gate, ctx)
	want := []struct{ evidence, why string }{
		{evidence: "ocp"},
		{why: "recorded on platform 4.22.2, not 4.22.3"},
		{why: "narrowed to a tenant, VM or size, and the compatibility gate is about the whole platform"},
		{why: "dated 2026-12-24, after the as-of date 2026-12-01"},
		{why: "no evidence"},
	}
	if len(got) != len(want) {
		t.Fatalf("judged %d checks, want %d", len(got), len(want))
	}
	for i, w := range want {
		j := got[i]
		if j.Evidence != w.evidence || !strings.Contains(j.Why, w.why) {
			t.Errorf("%s: evidence %q why %q, want evidence %q why containing %q", j.Check, j.Evidence, j.Why, w.evidence, w.why)
		}
		if !strings.Contains(j.Missing(), "on the whole platform") {
			t.Errorf("%s: %q does not say the check is platform-wide", j.Check, j.Missing())
		}
	}
}
