package controllers

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/test/conformance"
)

// Default versions of the monitoring stack (tools/build-monitoring.sh).
const (
	DefaultPrometheusOperatorVersion = "v0.85.0"
	DefaultPrometheusVersion         = "v0.316.0"
	DefaultAlertmanagerVersion       = "v0.31.1"
)

// MonitoringTools are the cached programs of tools/build-monitoring.sh.
type MonitoringTools struct {
	Dir, Operator, Prometheus, Alertmanager string
	// CRDs are the operator's CRDs as its module ships them.
	CRDs string
}

// FindMonitoringTools locates the cache of tools/build-monitoring.sh.
func FindMonitoringTools() (MonitoringTools, error) {
	cache, err := conformance.CacheDir()
	if err != nil {
		return MonitoringTools{}, err
	}
	dir := filepath.Join(cache, "monitoring-op-"+conformance.EnvOr("PROMETHEUS_OPERATOR_VERSION", DefaultPrometheusOperatorVersion)+
		"-prom-"+conformance.EnvOr("PROMETHEUS_VERSION", DefaultPrometheusVersion)+
		"-k8s-sd-am-"+conformance.EnvOr("ALERTMANAGER_VERSION", DefaultAlertmanagerVersion))
	t := MonitoringTools{Dir: dir, Operator: filepath.Join(dir, "prometheus-operator"), Prometheus: filepath.Join(dir, "prometheus"),
		Alertmanager: filepath.Join(dir, "alertmanager"), CRDs: filepath.Join(dir, "crds")}
	return t, conformance.CheckCache("monitoring tools", dir, "build them with `make monitoring-tools`",
		t.Operator, t.Prometheus, t.Alertmanager, filepath.Join(t.CRDs, "monitoring.coreos.com_thanosrulers.yaml"))
}

// UserWorkloadNamespace is where OpenShift runs user-workload monitoring:
// its prometheus-operator, Thanos Ruler and Alertmanager.
const UserWorkloadNamespace = "openshift-user-workload-monitoring"

// Monitoring is OpenShift's user-workload monitoring, as far as a tenant's
// alerts go from its PrometheusRule to its receiver, made of real parts:
//
//   - prometheus-operator, run as cluster-monitoring-operator (CMO)
//     release-4.22 runs user-workload monitoring's
//     (assets/prometheus-operator-user-workload/deployment.yaml), renders
//     the tenants' PrometheusRules into the rule files of the ThanosRuler
//     user-workload (assets/thanos-ruler/thanos-ruler.yaml: its rule
//     selectors, and enforcedNamespaceLabel: namespace, which confines
//     each rule to its namespace's series), and their AlertmanagerConfigs
//     into the configuration of the Alertmanager user-workload (CMO's
//     base configuration, assets/alertmanager-user-workload/secret.yaml;
//     the selectors of pkg/manifests/manifests.go
//     AlertmanagerUserWorkload);
//   - Prometheus evaluates those rule files on the series it scrapes from
//     the real virt-controller and sends the alerts to Alertmanager;
//   - Alertmanager routes them with the operator's configuration.
//
// Stand-ins, for what cannot run here (docs/testing.md): the pods the
// operator's StatefulSets would run are these processes; Prometheus does
// the work of three on OpenShift (the platform Prometheus scraping
// openshift-cnv through virt-operator's ServiceMonitor, with honorLabels,
// KubeVirt v1.8.4 pkg/virt-operator/resource/generate/components/
// prometheus.go; Thanos Querier; Thanos Ruler evaluating the rule
// files), and it is given virt-controller's address where the
// ServiceMonitor's discovery would find it.
type Monitoring struct {
	cp  *conformance.ControlPlane
	dir string
	// Operator, Prometheus and Alertmanager are the running programs.
	Operator, Prometheus, Alertmanager *conformance.Process
	// PrometheusURL and AlertmanagerURL are their HTTP APIs.
	PrometheusURL, AlertmanagerURL string
	client                         *http.Client
	// platform: the platform's Prometheus k8s (StartPlatformMonitoring);
	// config its configuration as written
	platform bool
	options  PlatformOptions
	config   []byte
	// written is a digest of the configuration and rule files written
	written string
}

// Stop stops the programs.
func (m *Monitoring) Stop() {
	if m == nil {
		return
	}
	for _, p := range []*conformance.Process{m.Prometheus, m.Alertmanager, m.Operator} {
		if p != nil {
			p.Stop()
		}
	}
}

// StopWithLogs stops the programs when t ends, after logging, if t
// failed, their logs, the configuration Prometheus ran, its targets and
// what more says.
func (m *Monitoring) StopWithLogs(t testing.TB, more func()) {
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range m.Processes() {
				t.Logf("%s:\n%s", p.Log(), p.Tail())
			}
			t.Logf("Prometheus configuration:\n%s", m.Config())
			var targets any
			err := m.get(m.PrometheusURL+"/api/v1/targets?state=any", &targets)
			t.Logf("targets: %v %v", targets, err)
			if more != nil {
				more()
			}
		}
		m.Stop()
	})
}

// Processes are the programs started, for their logs.
func (m *Monitoring) Processes() []*conformance.Process {
	var out []*conformance.Process
	for _, p := range []*conformance.Process{m.Operator, m.Prometheus, m.Alertmanager} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// userWorkload are CMO release-4.22's objects of user-workload monitoring
// that the operator reconciles, with what this suite does not run left
// out (images, containers, TLS, the query configuration, which are the
// pods'): the selectors and the namespace enforcement are CMO's.
func userWorkload() []any {
	notIn := func(key, value string) map[string]any {
		return map[string]any{"key": key, "operator": "NotIn", "values": []string{value}}
	}
	meta := func(name string) map[string]any {
		return map[string]any{"name": name, "namespace": UserWorkloadNamespace,
			"annotations": map[string]any{"operator.prometheus.io/controller-id": UserWorkloadNamespace + "/prometheus-operator"}}
	}
	tenantNamespaces := map[string]any{"matchExpressions": []any{
		notIn("openshift.io/cluster-monitoring", "true"), notIn("openshift.io/user-monitoring", "false")}}
	return []any{
		map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": UserWorkloadNamespace,
			"labels": map[string]any{"openshift.io/cluster-monitoring": "true"}}},
		// assets/alertmanager-user-workload/secret.yaml, verbatim
		map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "alertmanager-user-workload", "namespace": UserWorkloadNamespace},
			"stringData": map[string]any{"alertmanager.yaml": "\"global\":\n  \"http_config\":\n    \"proxy_from_environment\": true\n\"receivers\":\n- \"name\": \"Default\"\n\"route\":\n  \"group_by\":\n  - \"namespace\"\n  \"receiver\": \"Default\"\n"}},
		map[string]any{"apiVersion": "monitoring.coreos.com/v1", "kind": "Alertmanager", "metadata": meta("user-workload"),
			"spec": map[string]any{
				"version":                             "0.31.1",
				"replicas":                            2,
				"alertmanagerConfigSelector":          map[string]any{"matchExpressions": []any{notIn("openshift.io/user-monitoring", "false")}},
				"alertmanagerConfigNamespaceSelector": tenantNamespaces,
			}},
		map[string]any{"apiVersion": "monitoring.coreos.com/v1", "kind": "ThanosRuler", "metadata": meta("user-workload"),
			"spec": map[string]any{
				"enforcedNamespaceLabel": "namespace",
				"ruleNamespaceSelector":  tenantNamespaces,
				"ruleSelector": map[string]any{"matchExpressions": []any{
					notIn("openshift.io/user-monitoring", "false"), notIn("openshift.io/prometheus-rule-evaluation-scope", "leaf-prometheus")}},
				"queryEndpoints": []string{"dnssrv+_web._tcp.thanos-querier-oauth.openshift-monitoring.svc"},
				"replicas":       2,
			}},
	}
}

// StartMonitoring installs the operator's CRDs and CMO's objects, and
// starts the operator, Alertmanager and Prometheus; Prometheus scrapes
// virt-controller's metrics (k) every 5 seconds and evaluates its rules as
// often, with extra rule files (controls of the suite's own) beside the
// operator's.
func StartMonitoring(ctx context.Context, cp *conformance.ControlPlane, tools MonitoringTools, k *KubeVirt, dir string, extra map[string]string) (m *Monitoring, err error) {
	started := &Monitoring{cp: cp, dir: dir, client: &http.Client{Timeout: 10 * time.Second}}
	m = started
	defer func() {
		if err != nil {
			started.Stop()
		}
	}()
	if err := m.startOperator(ctx, tools, UserWorkloadNamespace, userWorkload()); err != nil {
		return nil, err
	}
	for name, rules := range extra {
		if err := os.WriteFile(filepath.Join(dir, "rules", "suite-"+name+".yaml"), []byte(rules), 0o600); err != nil {
			return nil, err
		}
	}
	amPort, err := conformance.FreePort()
	if err != nil {
		return nil, err
	}
	m.AlertmanagerURL = "http://127.0.0.1:" + strconv.Itoa(amPort)
	// the base configuration until the operator's is there
	if err := m.writeAlertmanagerConfig(ctx, false); err != nil {
		return nil, err
	}
	m.Alertmanager, err = conformance.StartProcess(dir, "alertmanager", tools.Alertmanager, nil,
		"--config.file="+filepath.Join(dir, "am", "alertmanager.yaml"),
		"--storage.path="+filepath.Join(dir, "am", "data"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(amPort),
		"--cluster.listen-address=",
	)
	if err != nil {
		return nil, err
	}
	if err := m.waitOK(ctx, m.Alertmanager, m.AlertmanagerURL+"/-/ready"); err != nil {
		return nil, err
	}
	metrics, err := url.Parse(k.MetricsURL)
	if err != nil {
		return nil, err
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files:
- %s
alerting:
  alertmanagers:
  - static_configs:
    - targets: [127.0.0.1:%d]
scrape_configs:
# virt-operator's ServiceMonitor kubevirt (prometheus.go): the Service
# kubevirt-prometheus-metrics over virt-controller's HTTPS port, honorLabels
- job_name: serviceMonitor/openshift-cnv/kubevirt/0
  scheme: https
  honor_labels: true
  metrics_path: %s
  tls_config:
    ca_file: %s
  static_configs:
  - targets: [%s]
    labels: {namespace_of_target: openshift-cnv}
`, filepath.Join(dir, "rules", "*.yaml"), amPort, metrics.Path, k.MetricsCA, metrics.Host)
	if err := os.WriteFile(filepath.Join(dir, "prom", "prometheus.yaml"), []byte(config), 0o600); err != nil {
		return nil, err
	}
	if err := m.startPrometheus(ctx, tools); err != nil {
		return nil, err
	}
	return m, nil
}

// PlatformNamespace is where OpenShift runs the platform's monitoring.
const PlatformNamespace = "openshift-monitoring"

// platformPrometheus is CMO release-4.22's Prometheus k8s
// (assets/prometheus-k8s/prometheus.yaml) with what the operator
// reconciles into configuration: its rule and ServiceMonitor selectors
// (every namespace labelled openshift.io/cluster-monitoring) and its
// service discovery role.
func platformPrometheus(o PlatformOptions) []any {
	clusterMonitoring := map[string]any{"matchLabels": map[string]any{"openshift.io/cluster-monitoring": "true"}}
	objs := []any{
		map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": PlatformNamespace,
			"labels": map[string]any{"openshift.io/cluster-monitoring": "true"}}},
		map[string]any{"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus",
			"metadata": map[string]any{"name": "k8s", "namespace": PlatformNamespace,
				"annotations": map[string]any{"operator.prometheus.io/controller-id": PlatformNamespace + "/prometheus-operator"}},
			"spec": map[string]any{
				"version":                         "3.9.1",
				"replicas":                        2,
				"ruleNamespaceSelector":           clusterMonitoring,
				"ruleSelector":                    map[string]any{},
				"serviceMonitorNamespaceSelector": clusterMonitoring,
				"serviceMonitorSelector":          map[string]any{},
				"podMonitorNamespaceSelector":     clusterMonitoring,
				"podMonitorSelector":              map[string]any{},
				"probeNamespaceSelector":          clusterMonitoring,
				"probeSelector":                   map[string]any{},
				"serviceDiscoveryRole":            "Endpoints",
			}},
	}
	if o.EvaluationInterval != "" {
		spec := objs[1].(map[string]any)["spec"].(map[string]any)
		spec["evaluationInterval"] = o.EvaluationInterval
	}
	return objs
}

// PlatformOptions are what a suite changes of the platform's monitoring.
type PlatformOptions struct {
	// EvaluationInterval is the Prometheus's spec.evaluationInterval
	// (the operator's default, 30s, when empty, as CMO leaves it): a
	// suite's time scale, not a behaviour.
	EvaluationInterval string
	// Static are targets scraped every 2 seconds where on OpenShift a
	// ServiceMonitor of the component's own finds its pods (components
	// that run here as processes, not as pods behind a Service).
	Static []StaticTarget
}

// StaticTarget is a component's metrics endpoint, scraped as the job of
// its ServiceMonitor on OpenShift would be.
type StaticTarget struct {
	// Job is the job the ServiceMonitor's scrape would have
	// (serviceMonitor/NAMESPACE/NAME/0), Namespace the target's.
	Job, Namespace string
	// URL is the endpoint (http or https, host:port and path).
	URL string
	// CA is the CA file of an https endpoint.
	CA string
}

// StartPlatformMonitoring is the platform's monitoring, as far as the
// rules of namespaces labelled openshift.io/cluster-monitoring go: the real
// prometheus-operator, run as CMO runs the platform's, renders CMO's
// Prometheus k8s (platformPrometheus): the rule files of those
// namespaces' PrometheusRules, and a scrape configuration of their
// ServiceMonitors that discovers targets through the API server's
// Endpoints. A real Prometheus runs that configuration as the operator
// wrote it, with two changes: each Kubernetes service discovery is given
// the admin kubeconfig (in a pod it reads its ServiceAccount's), and the
// rule files are where it reads them here. Refresh takes later changes.
func StartPlatformMonitoring(ctx context.Context, cp *conformance.ControlPlane, tools MonitoringTools, dir string, o PlatformOptions) (m *Monitoring, err error) {
	started := &Monitoring{cp: cp, dir: dir, client: &http.Client{Timeout: 10 * time.Second}, platform: true, options: o}
	m = started
	defer func() {
		if err != nil {
			started.Stop()
		}
	}()
	if err := m.startOperator(ctx, tools, PlatformNamespace, platformPrometheus(o)); err != nil {
		return nil, err
	}
	if err := m.writePlatformConfig(ctx, time.Minute); err != nil {
		return nil, err
	}
	if err := m.startPrometheus(ctx, tools); err != nil {
		return nil, err
	}
	return m, nil
}

// Refresh writes the operator's current configuration and rule files of
// Prometheus k8s and has Prometheus reload them.
func (m *Monitoring) Refresh(ctx context.Context) error {
	before := m.written
	if err := m.writePlatformConfig(ctx, 0); err != nil {
		return err
	}
	if m.written == before {
		// a reload restarts service discovery
		return nil
	}
	return m.reload(m.PrometheusURL)
}

// writePlatformConfig writes the configuration the operator rendered for
// Prometheus k8s (the Secret prometheus-k8s, prometheus.yaml.gz:
// pkg/prometheus/server/operator.go), changed as StartPlatformMonitoring
// says, and the rule files of its ConfigMaps, waiting up to wait for the
// Secret.
func (m *Monitoring) writePlatformConfig(ctx context.Context, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var raw []byte
	for {
		var err error
		raw, err = m.secretFile(ctx, PlatformNamespace, "prometheus-k8s", "prometheus.yaml.gz")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("prometheus-operator rendered no configuration for Prometheus k8s: %v\n%s", err, m.Operator.Tail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return fmt.Errorf("prometheus-k8s: %w", err)
	}
	scrapes, _ := cfg["scrape_configs"].([]any)
	for _, sc := range scrapes {
		sds, _ := sc.(map[string]any)["kubernetes_sd_configs"].([]any)
		for _, sd := range sds {
			sd.(map[string]any)["kubeconfig_file"] = m.cp.Kubeconfig
		}
	}
	for _, st := range m.options.Static {
		scrapes = append(scrapes, st.scrapeConfig())
	}
	cfg["scrape_configs"] = scrapes
	cfg["rule_files"] = []string{filepath.Join(m.dir, "rules", "*.yaml")}
	files, err := m.ruleFilesOf(ctx, "prometheus-k8s-rulefiles-")
	if err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(m.dir, "rules", "*.yaml"))
	for _, f := range old {
		os.Remove(f)
	}
	sum := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(m.dir, "rules", name), []byte(files[name]), 0o600); err != nil {
			return err
		}
		fmt.Fprintf(sum, "%s\n%s\n", name, files[name])
	}
	m.config, err = yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	// what prometheus-config-reloader does before Prometheus reads the
	// file (cmd/prometheus-config-reloader --config-envsubst-file: $(VAR)
	// from the container's environment, which the operator's StatefulSet
	// sets, pkg/prometheus/server/statefulset.go): the first pod of the
	// only shard; unexpanded, the shard's keep rule drops every target
	m.config = []byte(strings.NewReplacer("$(SHARD)", "0", "$(POD_NAME)", "prometheus-k8s-0").Replace(string(m.config)))
	sum.Write(m.config)
	m.written = hex.EncodeToString(sum.Sum(nil))
	return os.WriteFile(filepath.Join(m.dir, "prom", "prometheus.yaml"), m.config, 0o600)
}

func (st StaticTarget) scrapeConfig() map[string]any {
	u, err := url.Parse(st.URL)
	if err != nil {
		panic(err) // a suite's own constant
	}
	sc := map[string]any{
		"job_name": st.Job, "scheme": u.Scheme, "metrics_path": u.Path, "scrape_interval": "2s",
		"static_configs": []any{map[string]any{"targets": []any{u.Host}, "labels": map[string]any{"namespace": st.Namespace}}},
	}
	if st.CA != "" {
		sc["tls_config"] = map[string]any{"ca_file": st.CA}
	}
	return sc
}

// Config is the configuration Prometheus runs (the platform's).
func (m *Monitoring) Config() string { return string(m.config) }

// startOperator creates objs and starts prometheus-operator for the
// instances of namespace, as CMO runs it there
// (assets/prometheus-operator*/deployment.yaml).
func (m *Monitoring) startOperator(ctx context.Context, tools MonitoringTools, namespace string, objs []any) error {
	for _, d := range []string{"rules", "am", "prom"} {
		if err := os.MkdirAll(filepath.Join(m.dir, d), 0o700); err != nil {
			return err
		}
	}
	if _, err := InstallMissingCRDs(ctx, m.cp, filepath.Join(m.dir, "crds"), tools.CRDs); err != nil {
		return fmt.Errorf("install prometheus-operator's CRDs: %w", err)
	}
	if err := create(ctx, m.cp, objs); err != nil {
		return err
	}
	port, err := conformance.FreePort()
	if err != nil {
		return err
	}
	m.Operator, err = conformance.StartProcess(m.dir, "prometheus-operator", tools.Operator, []string{"KUBECONFIG=" + m.cp.Kubeconfig},
		"--watch-referenced-objects-in-all-namespaces=true",
		"--disable-unmanaged-prometheus-configuration=true",
		"--prometheus-instance-namespaces="+namespace,
		"--alertmanager-instance-namespaces="+namespace,
		"--thanos-ruler-instance-namespaces="+namespace,
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port),
		"--controller-id="+namespace+"/prometheus-operator",
	)
	return err
}

// startPrometheus starts Prometheus on the configuration written in
// dir/prom, and waits until it is ready.
func (m *Monitoring) startPrometheus(ctx context.Context, tools MonitoringTools) error {
	port, err := conformance.FreePort()
	if err != nil {
		return err
	}
	m.PrometheusURL = "http://127.0.0.1:" + strconv.Itoa(port)
	m.Prometheus, err = conformance.StartProcess(m.dir, "prometheus", tools.Prometheus, nil,
		"--config.file="+filepath.Join(m.dir, "prom", "prometheus.yaml"),
		"--storage.tsdb.path="+filepath.Join(m.dir, "prom", "data"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port),
		"--web.enable-lifecycle",
	)
	if err != nil {
		return err
	}
	return m.waitOK(ctx, m.Prometheus, m.PrometheusURL+"/-/ready")
}

func (m *Monitoring) reload(u string) error {
	resp, err := m.client.Post(u+"/-/reload", "", nil)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reload %s: %s: %s", u, resp.Status, body)
	}
	return nil
}

// secretFile is a gzipped file of a Secret the operator wrote.
func (m *Monitoring) secretFile(ctx context.Context, namespace, name, key string) ([]byte, error) {
	raw, err := m.cp.Get(ctx, "/api/v1/namespaces/"+namespace+"/secrets/"+name)
	if err != nil {
		return nil, err
	}
	var s struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	gz, err := base64.StdEncoding.DecodeString(s.Data[key])
	if err != nil || len(gz) == 0 {
		return nil, fmt.Errorf("%s/%s has no %s (%v)", namespace, name, key, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func (m *Monitoring) waitOK(ctx context.Context, p *conformance.Process, u string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := m.client.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if p.Exited() || time.Now().After(deadline) {
			return fmt.Errorf("%s not ready (%v)\n%s", u, err, p.Tail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Rendered waits until the operator has rendered namespace's
// PrometheusRules (names) into the ThanosRuler's rule files and its
// AlertmanagerConfigs into Alertmanager's configuration (route to the
// receiver named receiver), writes them where Prometheus and Alertmanager
// read them, and has both reload. It returns the rule files by name.
func (m *Monitoring) Rendered(ctx context.Context, namespace string, rules []string, receiver string) (map[string]string, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		files, err := m.ruleFilesOf(ctx, "thanos-ruler-user-workload-rulefiles-")
		if err != nil {
			return nil, err
		}
		have := 0
		for _, r := range rules {
			for name := range files {
				if strings.HasPrefix(name, namespace+"-"+r+"-") {
					have++
				}
			}
		}
		amOK := m.writeAlertmanagerConfig(ctx, true) == nil
		if have == len(rules) && amOK {
			cfg, _ := os.ReadFile(filepath.Join(m.dir, "am", "alertmanager.yaml"))
			if receiver == "" || bytes.Contains(cfg, []byte(namespace+"/"+receiver)) {
				for name, content := range files {
					if err := os.WriteFile(filepath.Join(m.dir, "rules", name), []byte(content), 0o600); err != nil {
						return nil, err
					}
				}
				for _, u := range []string{m.PrometheusURL, m.AlertmanagerURL} {
					if err := m.reload(u); err != nil {
						return nil, err
					}
				}
				return files, nil
			}
		}
		if time.Now().After(deadline) {
			names := slices.Sorted(maps.Keys(files))
			return nil, fmt.Errorf("prometheus-operator rendered rule files %v and Alertmanager's configuration (%v) without %s's %v and receiver %s\n%s",
				names, amOK, namespace, rules, receiver, m.Operator.Tail())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// ruleFilesOf are the rule files in the operator's ConfigMaps whose
// names start with prefix (a key per PrometheusRule:
// <instance>-rulefiles-<n>, pkg/thanos/rules.go and
// pkg/prometheus/server/rules.go makeRulesConfigMaps).
func (m *Monitoring) ruleFilesOf(ctx context.Context, prefix string) (map[string]string, error) {
	ns := UserWorkloadNamespace
	if m.platform {
		ns = PlatformNamespace
	}
	cms, err := conformance.List[struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}](ctx, m.cp, "/api/v1/namespaces/"+ns+"/configmaps")
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, cm := range cms {
		if strings.HasPrefix(cm.Metadata.Name, prefix) {
			for k, v := range cm.Data {
				files[k] = v
			}
		}
	}
	return files, nil
}

// writeAlertmanagerConfig writes Alertmanager's configuration: the
// operator's (the Secret alertmanager-<name>-generated, gzipped:
// pkg/alertmanager/operator.go createOrUpdateGeneratedConfigSecret), or
// with base false CMO's base configuration.
func (m *Monitoring) writeAlertmanagerConfig(ctx context.Context, generated bool) error {
	path := filepath.Join(m.dir, "am", "alertmanager.yaml")
	if !generated {
		return os.WriteFile(path, []byte("route: {receiver: Default, group_by: [namespace]}\nreceivers: [{name: Default}]\n"), 0o600)
	}
	cfg, err := m.secretFile(ctx, UserWorkloadNamespace, "alertmanager-user-workload-generated", "alertmanager.yaml.gz")
	if err != nil {
		return err
	}
	return os.WriteFile(path, cfg, 0o600)
}

// PromAlert is an alert as Prometheus's /api/v1/alerts lists it.
type PromAlert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt time.Time         `json:"activeAt"`
}

// Alerts are the pending and firing alerts of Prometheus.
func (m *Monitoring) Alerts() ([]PromAlert, error) {
	var out struct {
		Data struct {
			Alerts []PromAlert `json:"alerts"`
		} `json:"data"`
	}
	return out.Data.Alerts, m.get(m.PrometheusURL+"/api/v1/alerts", &out)
}

// Sample is one series of an instant query.
type Sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// Query runs an instant PromQL query.
func (m *Monitoring) Query(q string) ([]Sample, error) {
	var out struct {
		Data struct {
			Result []Sample `json:"result"`
		} `json:"data"`
	}
	return out.Data.Result, m.get(m.PrometheusURL+"/api/v1/query?query="+url.QueryEscape(q), &out)
}

// Range is one series of a range query, its samples as [unix time,
// value].
type Range struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

// QueryRange runs a PromQL range query.
func (m *Monitoring) QueryRange(q string, start, end time.Time, step time.Duration) ([]Range, error) {
	var out struct {
		Data struct {
			Result []Range `json:"result"`
		} `json:"data"`
	}
	u := fmt.Sprintf("%s/api/v1/query_range?query=%s&start=%d&end=%d&step=%ds", m.PrometheusURL, url.QueryEscape(q), start.Unix(), end.Unix(), int(step/time.Second))
	return out.Data.Result, m.get(u, &out)
}

// AlertRules are the names of the alerting rules Prometheus has loaded,
// by group.
func (m *Monitoring) AlertRules() (map[string][]string, error) {
	var out struct {
		Data struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Name string `json:"name"`
					Type string `json:"type"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := m.get(m.PrometheusURL+"/api/v1/rules?type=alert", &out); err != nil {
		return nil, err
	}
	groups := map[string][]string{}
	for _, g := range out.Data.Groups {
		for _, r := range g.Rules {
			groups[g.Name] = append(groups[g.Name], r.Name)
		}
	}
	return groups, nil
}

func (m *Monitoring) get(u string, out any) error {
	resp, err := m.client.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, body)
	}
	return json.Unmarshal(body, out)
}

// Record writes the series of query from start to end, a sample every
// step, as the input series of a promtool unit test, after head (its
// comment): a sample per step, a stale marker where a series left the
// scrape (Prometheus's staleness handling), none after. With relative,
// each value is a Unix time made relative to start, promtool's time 0
// (time() there counts from 0). The scrape's own labels are left out.
func (m *Monitoring) Record(path, head, query string, start, end time.Time, step time.Duration, relative bool) error {
	start = start.Truncate(step)
	ranges, err := m.QueryRange(query, start, end, step)
	if err != nil {
		return err
	}
	n := int(end.Sub(start)/step) + 1
	type series struct {
		Series string `yaml:"series"`
		Values string `yaml:"values"`
	}
	scrape := map[string]bool{"__name__": true, "job": true, "instance": true, "namespace_of_target": true,
		"endpoint": true, "pod": true, "service": true, "container": true, "prometheus": true, "prometheus_replica": true}
	var out []series
	for _, r := range ranges {
		at := map[int]string{}
		for _, v := range r.Values {
			ts, _ := v[0].(float64)
			val, _ := v[1].(string)
			if relative {
				f, err := strconv.ParseFloat(val, 64)
				if err != nil {
					return fmt.Errorf("%s: value %q: %v", query, val, err)
				}
				val = strconv.FormatInt(int64(f)-start.Unix(), 10)
			}
			at[int((time.Unix(int64(ts), 0).Sub(start)+step/2)/step)] = val
		}
		var vals []string
		was := false
		for i := 0; i < n; i++ {
			v, ok := at[i]
			switch {
			case ok:
				vals = append(vals, v)
			case was:
				vals = append(vals, "stale")
			default:
				vals = append(vals, "_")
			}
			was = ok
		}
		var labels []string
		for _, k := range slices.Sorted(maps.Keys(r.Metric)) {
			if !scrape[k] {
				labels = append(labels, fmt.Sprintf("%s=%q", k, r.Metric[k]))
			}
		}
		out = append(out, series{Series: r.Metric["__name__"] + "{" + strings.Join(labels, ",") + "}", Values: strings.Join(vals, " ")})
	}
	slices.SortFunc(out, func(a, b series) int { return strings.Compare(a.Series, b.Series) })
	data, err := yaml.Marshal(map[string]any{"interval": step.String(), "input_series": out})
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(head), data...), 0o644)
}
