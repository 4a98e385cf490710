package e2e

import (
	"strings"
	"testing"
)

// healthCase is a live object and the health Argo CD must give it.
type healthCase struct {
	name       string
	obj        map[string]any
	status     string
	msgPattern string
}

func runHealthCases(t *testing.T, key string, cases []healthCase) {
	t.Helper()
	var cm configMapPatch
	readYAML(t, argocdFile("argocd-cm-patch.yaml"), &cm)
	script, ok := cm.Data[key]
	if !ok {
		t.Fatalf("argocd-cm-patch.yaml has no %s", key)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, msg := runHealth(t, script, tc.obj)
			if status != tc.status || !strings.Contains(msg, tc.msgPattern) {
				t.Errorf("got %s %q, want %s with %q", status, msg, tc.status, tc.msgPattern)
			}
		})
	}
}

func cond(typ, status, reason, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg}
}

// The Subscription states are OLM's (operator-framework/api
// pkg/operators/v1alpha1/subscription_types.go: SubscriptionState and the
// Subscription condition types); Argo CD's built-in check
// (resource_customizations/operators.coreos.com/Subscription/health.lua)
// has the same inputs, but a first install waiting for approval there is
// the same Progressing, so the sample objects below follow its test data.
func TestSubscriptionHealth(t *testing.T) {
	spec := map[string]any{"installPlanApproval": "Manual", "startingCSV": "kubevirt-hyperconverged-operator.v4.22.3",
		"source": "redhat-operators", "sourceNamespace": "openshift-marketplace"}
	// status.catalogHealth lists every CatalogSource of the Subscription's
	// namespace and of the global catalog namespace, and
	// CatalogSourcesUnhealthy is True when any one of them is unhealthy,
	// with a message naming the Subscription's own source only when that
	// one is unhealthy or missing (operator-lifecycle-manager
	// pkg/controller/operators/catalog/subscription/reconciler.go
	// catalogHealth, state.go UpdateHealth).
	health := func(name string, healthy bool) map[string]any {
		return map[string]any{"catalogSourceRef": map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
			"namespace": "openshift-marketplace", "name": name, "uid": name + "-uid"}, "healthy": healthy, "lastUpdated": "2026-12-01T10:00:00Z"}
	}
	otherUnhealthy := []any{health("certified-operators", false), health("redhat-operators", true)}
	ownUnhealthy := []any{health("certified-operators", true), health("redhat-operators", false)}
	ownMissing := []any{health("certified-operators", true)}
	runHealthCases(t, "resource.customizations.health.operators.coreos.com_Subscription", []healthCase{
		{"new", map[string]any{"spec": spec}, "Progressing", "resolve"},
		{"first install pending approval", map[string]any{"spec": spec, "status": map[string]any{
			"state": "UpgradePending", "currentCSV": "kubevirt-hyperconverged-operator.v4.22.3",
			"conditions": []any{cond("InstallPlanPending", "True", "RequiresApproval", ""), cond("CatalogSourcesUnhealthy", "False", "AllCatalogSourcesHealthy", "")},
		}}, "Progressing", "first install: waiting for kubevirt-hyperconverged-operator.v4.22.3"},
		{"installed", map[string]any{"spec": spec, "status": map[string]any{
			"state": "AtLatestKnown", "installedCSV": "kubevirt-hyperconverged-operator.v4.22.3", "currentCSV": "kubevirt-hyperconverged-operator.v4.22.3",
			"conditions": []any{cond("CatalogSourcesUnhealthy", "False", "AllCatalogSourcesHealthy", "")},
		}}, "Healthy", "kubevirt-hyperconverged-operator.v4.22.3 installed"},
		{"newer CSV proposed, not pinned", map[string]any{"spec": spec, "status": map[string]any{
			"state": "UpgradePending", "installedCSV": "kubevirt-hyperconverged-operator.v4.22.3", "currentCSV": "kubevirt-hyperconverged-operator.v4.22.6",
			"conditions": []any{cond("InstallPlanPending", "True", "RequiresApproval", "")},
		}}, "Healthy", "OLM proposes kubevirt-hyperconverged-operator.v4.22.6"},
		{"resolution failed", map[string]any{"spec": spec, "status": map[string]any{
			"conditions": []any{cond("ResolutionFailed", "True", "ConstraintsNotSatisfiable", "no operators found with name kubevirt-hyperconverged-operator.v4.22.9")},
		}}, "Degraded", "ResolutionFailed: no operators found"},
		// Another catalog of the cluster is down: nothing to do with this
		// Subscription (the check before said Degraded and failed every
		// sync while, say, a certified-operators pod restarted).
		{"another catalog unhealthy, installed", map[string]any{"spec": spec, "status": map[string]any{
			"state": "AtLatestKnown", "installedCSV": "kubevirt-hyperconverged-operator.v4.22.3", "currentCSV": "kubevirt-hyperconverged-operator.v4.22.3",
			"catalogHealth": otherUnhealthy,
			"conditions":    []any{cond("CatalogSourcesUnhealthy", "True", "UnhealthyCatalogSourceFound", "")},
		}}, "Healthy", "kubevirt-hyperconverged-operator.v4.22.3 installed"},
		{"another catalog unhealthy, first install", map[string]any{"spec": spec, "status": map[string]any{
			"state": "UpgradePending", "currentCSV": "kubevirt-hyperconverged-operator.v4.22.3", "catalogHealth": otherUnhealthy,
			"conditions": []any{cond("InstallPlanPending", "True", "RequiresApproval", ""), cond("CatalogSourcesUnhealthy", "True", "UnhealthyCatalogSourceFound", "")},
		}}, "Progressing", "first install: waiting for kubevirt-hyperconverged-operator.v4.22.3"},
		// Its own catalog down before anything is installed: nothing can
		// be installed.
		{"own catalog unhealthy, first install", map[string]any{"spec": spec, "status": map[string]any{
			"catalogHealth": ownUnhealthy,
			"conditions":    []any{cond("CatalogSourcesUnhealthy", "True", "UnhealthyCatalogSourceFound", "targeted catalogsource openshift-marketplace/redhat-operators unhealthy")},
		}}, "Degraded", "CatalogSource openshift-marketplace/redhat-operators is unhealthy"},
		{"own catalog missing, first install", map[string]any{"spec": spec, "status": map[string]any{
			"catalogHealth": ownMissing,
			"conditions":    []any{cond("CatalogSourcesUnhealthy", "True", "UnhealthyCatalogSourceFound", "targeted catalogsource openshift-marketplace/redhat-operators missing")},
		}}, "Degraded", "redhat-operators does not exist"},
		// Installed: the operator runs without its catalog; only upgrades
		// wait, and the message says so.
		{"own catalog unhealthy, installed", map[string]any{"spec": spec, "status": map[string]any{
			"state": "AtLatestKnown", "installedCSV": "kubevirt-hyperconverged-operator.v4.22.3", "currentCSV": "kubevirt-hyperconverged-operator.v4.22.3",
			"catalogHealth": ownUnhealthy,
			"conditions":    []any{cond("CatalogSourcesUnhealthy", "True", "UnhealthyCatalogSourceFound", "targeted catalogsource openshift-marketplace/redhat-operators unhealthy")},
		}}, "Healthy", "redhat-operators is unhealthy: upgrades wait for it"},
		{"install plan failed", map[string]any{"spec": spec, "status": map[string]any{
			"state": "UpgradeFailed", "installedCSV": "kubevirt-hyperconverged-operator.v4.22.2", "currentCSV": "kubevirt-hyperconverged-operator.v4.22.3",
			"conditions": []any{cond("InstallPlanFailed", "True", "InstallComponentFailed", "bundle unpacking failed")},
		}}, "Degraded", "bundle unpacking failed"},
		{"upgrade failed without condition", map[string]any{"spec": spec, "status": map[string]any{
			"state": "UpgradeFailed", "installedCSV": "kubevirt-hyperconverged-operator.v4.22.2", "currentCSV": "kubevirt-hyperconverged-operator.v4.22.3",
		}}, "Degraded", "UpgradeFailed"},
	})
}

// InstallPlan phases: operator-framework/api
// pkg/operators/v1alpha1/installplan_types.go (InstallPlanPhase).
func TestInstallPlanHealth(t *testing.T) {
	csvs := []any{"kubevirt-hyperconverged-operator.v4.22.3"}
	plan := func(approved bool, phase string, conds ...any) map[string]any {
		o := map[string]any{"spec": map[string]any{"approved": approved, "clusterServiceVersionNames": csvs, "approval": "Manual"}}
		if phase != "" {
			o["status"] = map[string]any{"phase": phase, "conditions": conds}
		}
		return o
	}
	runHealthCases(t, "resource.customizations.health.operators.coreos.com_InstallPlan", []healthCase{
		{"no status", plan(false, ""), "Progressing", "planning"},
		{"requires approval", plan(false, "RequiresApproval"), "Suspended", "waiting for approval of kubevirt-hyperconverged-operator.v4.22.3"},
		{"approved, installing", plan(true, "Installing"), "Progressing", "Installing"},
		{"complete", plan(true, "Complete", cond("Installed", "True", "", "")), "Healthy", "installed kubevirt-hyperconverged-operator.v4.22.3"},
		{"failed", plan(true, "Failed", cond("Installed", "False", "InstallComponentFailed", "error creating csv")), "Degraded", "error creating csv"},
	})
}

// CSV phases: operator-framework/api
// pkg/operators/v1alpha1/clusterserviceversion_types.go (ClusterServiceVersionPhase).
func TestClusterServiceVersionHealth(t *testing.T) {
	csv := func(phase, reason, msg string) map[string]any {
		return map[string]any{"status": map[string]any{"phase": phase, "reason": reason, "message": msg}}
	}
	runHealthCases(t, "resource.customizations.health.operators.coreos.com_ClusterServiceVersion", []healthCase{
		{"no status", map[string]any{}, "Progressing", "waiting"},
		{"installing", csv("Installing", "InstallWaiting", "installing: waiting for deployment hco-operator to become ready"), "Progressing", "waiting for deployment"},
		{"succeeded", csv("Succeeded", "InstallSucceeded", "install strategy completed with no errors"), "Healthy", "no errors"},
		{"replacing", csv("Replacing", "BeingReplaced", "being replaced by csv: kubevirt-hyperconverged-operator.v4.22.5"), "Progressing", "being replaced"},
		{"failed", csv("Failed", "ComponentUnhealthy", "installing: deployment changed old hash"), "Degraded", "Failed"},
	})
}

// OADP's DataProtectionApplication conditions (openshift/oadp-operator
// oadp-1.5 internal/controller/dataprotectionapplication_controller.go:
// Reconciled True/Complete, or False/Error).
func TestDataProtectionApplicationHealth(t *testing.T) {
	dpa := func(conds ...any) map[string]any {
		return map[string]any{"status": map[string]any{"conditions": conds}}
	}
	runHealthCases(t, "resource.customizations.health.oadp.openshift.io_DataProtectionApplication", []healthCase{
		{"no status", map[string]any{}, "Progressing", "waiting"},
		{"reconciled", dpa(cond("Reconciled", "True", "Complete", "Reconcile complete")), "Healthy", "Reconcile complete"},
		{"error", dpa(cond("Reconciled", "False", "Error", "secret onsite-s3 not found")), "Degraded", "secret onsite-s3 not found"},
	})
}
