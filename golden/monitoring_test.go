package golden

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMonitoringOff holds the Platform switch spec.monitoring.enabled:
// false to what it promises: golden/monitoring-off is golden/
// network-allowed-tenants with the switch off, and its output is that
// scenario's with the monitoring objects (every PrometheusRule and
// AlertmanagerConfig) and the openshift.io/cluster-monitoring label of
// openshift-cnv taken out, byte for byte but for the virtc.dev/source
// paths. (When the switch was added, golden/monitoring-off/expected.yaml
// was also byte-identical to network-allowed-tenants' output before virtc
// compiled monitoring.)
func TestMonitoringOff(t *testing.T) {
	on, err := os.ReadFile("network-allowed-tenants/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	off, err := os.ReadFile("monitoring-off/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(on, []byte("kind: PrometheusRule")) {
		t.Fatal("network-allowed-tenants compiles no PrometheusRule: monitoring is not on by default")
	}
	var kept []string
	for _, doc := range strings.SplitAfter(string(on), "---\n") {
		if monitoringKind.MatchString(doc) {
			continue
		}
		kept = append(kept, strings.Replace(doc, "    openshift.io/cluster-monitoring: \"true\"\n", "", 1))
	}
	want := strings.TrimSuffix(strings.Join(kept, ""), "---\n")
	want = strings.ReplaceAll(want, "golden/network-allowed-tenants/", "golden/monitoring-off/")
	if diff := cmp.Diff(want, string(off)); diff != "" {
		t.Errorf("monitoring-off is not network-allowed-tenants without its monitoring (-want +got):\n%s", diff)
	}
}

var monitoringKind = regexp.MustCompile(`(?m)^kind: (PrometheusRule|AlertmanagerConfig)$`)
