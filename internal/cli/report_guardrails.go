package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/rules"
)

// guardrailsReport says which of virtc's rules the cluster itself
// enforces for a VM's tenant: its ValidatingAdmissionPolicy and rules.
type guardrailsReport struct {
	Policy string   `json:"policy"`
	Rules  []string `json:"rules"`
}

func guardrailsOf(t *resolve.Tenant) guardrailsReport {
	g := guardrailsReport{Policy: model.GuardrailPolicyName(t.Name)}
	for _, r := range rules.Guardrails {
		g.Rules = append(g.Rules, r.Name)
	}
	return g
}

// gitOnly are the rules no admission policy holds: a write around Git
// meets them only in the next build of the intents.
const gitOnly = "the eligibility gate and its evidence, tiers and backup policies, image provenance, disk count and size limits, quota fit (the namespace's ResourceQuota holds the quota itself)"

func tenantNames(m *resolve.Model) []string {
	var names []string
	for _, t := range m.Tenants {
		names = append(names, t.Name+" ("+model.GuardrailPolicyName(t.Name)+")")
	}
	return names
}

// writeGuardrailsText lists the rules the cluster enforces in the
// tenants' namespaces, and those that hold in Git only.
func writeGuardrailsText(w io.Writer, m *resolve.Model) {
	if len(m.Tenants) == 0 {
		return
	}
	fmt.Fprintf(w, "\nGuardrails the cluster enforces in each tenant's namespace (a ValidatingAdmissionPolicy per tenant, Deny; writes of KubeVirt's, CDI's and Velero's service accounts are not judged): %s\n", strings.Join(tenantNames(m), ", "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rules.Guardrails {
		fmt.Fprintf(tw, "  %s\t%s\n", r.Name, r.What)
	}
	tw.Flush()
	fmt.Fprintf(w, "Held in Git only (virtc build refuses them, the cluster does not): %s\n", gitOnly)
}

func writeGuardrailsMarkdown(w io.Writer, m *resolve.Model) {
	if len(m.Tenants) == 0 {
		return
	}
	fmt.Fprintf(w, "\nGuardrails the cluster enforces in each tenant's namespace (a ValidatingAdmissionPolicy per tenant, Deny; writes of KubeVirt's, CDI's and Velero's service accounts are not judged): %s\n\n", strings.Join(tenantNames(m), ", "))
	fmt.Fprintln(w, "| Rule | What the cluster admits |")
	fmt.Fprintln(w, "|---|---|")
	for _, r := range rules.Guardrails {
		fmt.Fprintf(w, "| %s | %s |\n", r.Name, r.What)
	}
	fmt.Fprintf(w, "\nHeld in Git only (virtc build refuses them, the cluster does not): %s\n", gitOnly)
}
