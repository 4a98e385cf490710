// Package velero runs the real Velero server, with its AWS object store
// plugin, against a conformance control plane, and an S3 object store on
// loopback as its BackupStorageLocation, so that what virtc emits for
// OADP (the DataProtectionApplication's locations, the Schedules) and the
// Restores of its restore plans are taken and restored by Velero itself
// (issue 26). tools/build-velero.sh builds and caches the programs.
//
// What is not Velero's own here: OADP's operator, which turns the
// DataProtectionApplication into BackupStorageLocations and Velero's
// server arguments, is played by BackupStorageLocations and ServerArgs,
// which follow oadp-operator's code (cited there).
package velero

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/virtc/virtc/test/conformance"
	"github.com/virtc/virtc/test/controllers"
)

// Versions of the programs tools/build-velero.sh builds: Velero v1.18 is
// the release OADP 1.6 (OpenShift Virtualization 4.22's OADP) ships, and
// velero-plugin-for-aws v1.14 the plugin release of Velero 1.18.
const (
	DefaultVersion          = "v1.18.3"
	DefaultAWSPluginVersion = "v1.14.3"
	DefaultGoFakeS3Version  = "v1.2.0"
)

// Namespace is where OADP runs Velero on OpenShift, and where virtc puts
// the DataProtectionApplication, Schedules and Restores.
const Namespace = "openshift-adp"

// Tools are the cached programs of tools/build-velero.sh.
type Tools struct {
	Dir string
	// Velero is the velero program: `velero server` and the CLI.
	Velero string
	// PluginDir holds velero-plugin-for-aws, as /plugins does in OADP's
	// Velero pod.
	PluginDir string
	// ObjectStore is gofakes3, an S3 server.
	ObjectStore string
	// CRDs are Velero's CRDs, one per file.
	CRDs string
}

// FindTools finds the cached build, or says how to make it.
func FindTools() (Tools, error) {
	cache, err := conformance.CacheDir()
	if err != nil {
		return Tools{}, err
	}
	key := "velero-" + conformance.EnvOr("VELERO_VERSION", DefaultVersion) + "-aws-" + conformance.EnvOr("AWS_PLUGIN_VERSION", DefaultAWSPluginVersion) +
		"-s3-" + conformance.EnvOr("GOFAKES3_VERSION", DefaultGoFakeS3Version)
	dir := filepath.Join(cache, key)
	t := Tools{Dir: dir, Velero: filepath.Join(dir, "velero"), PluginDir: filepath.Join(dir, "plugins"),
		ObjectStore: filepath.Join(dir, "gofakes3"), CRDs: filepath.Join(dir, "crds")}
	return t, conformance.CheckCache("Velero tools", dir, "build them with `make velero-tools`",
		t.Velero, filepath.Join(t.PluginDir, "velero-plugin-for-aws"), t.ObjectStore, filepath.Join(t.CRDs, "velero.io_backups.yaml"))
}

// ObjectStore is an S3 server on 127.0.0.1, keeping its buckets in
// memory. (gofakes3's file backend answers a listing under a prefix that
// holds nothing yet with NoSuchBucket, backend/s3afero/multi.go
// getBucketWithFilePrefixLocked, where S3 answers an empty list: Velero
// would find a new location unavailable.)
type ObjectStore struct {
	URL  string
	proc *conformance.Process
}

// StartObjectStore starts gofakes3 with bucket created.
func StartObjectStore(ctx context.Context, t Tools, dir, bucket string) (*ObjectStore, error) {
	port, err := conformance.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p, err := conformance.StartProcess(dir, "gofakes3", t.ObjectStore, nil,
		"-host", addr, "-backend", "memory", "-initialbucket", bucket)
	if err != nil {
		return nil, err
	}
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if p.Exited() {
			return nil, fmt.Errorf("gofakes3 exited:\n%s", p.Tail())
		}
		select {
		case <-ctx.Done():
			p.Stop()
			return nil, fmt.Errorf("gofakes3 on %s: %w", addr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return &ObjectStore{URL: "http://" + addr, proc: p}, nil
}

// Stop stops the server.
func (s *ObjectStore) Stop() { s.proc.Stop() }

// Objects are the keys stored in bucket under prefix, sorted, as S3's
// ListObjectsV2 answers (gofakes3 does not check request signatures).
func (s *ObjectStore) Objects(ctx context.Context, bucket, prefix string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/"+bucket+"?list-type=2&prefix="+url.QueryEscape(prefix), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list %s/%s: %s\n%s", bucket, prefix, resp.Status, body)
	}
	var list struct {
		Contents []struct {
			Key string `xml:"Key"`
		} `xml:"Contents"`
	}
	if err := xml.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("list %s/%s: %w", bucket, prefix, err)
	}
	var keys []string
	for _, c := range list.Contents {
		keys = append(keys, c.Key)
	}
	slices.Sort(keys)
	return keys, nil
}

// DPA is the part of OADP's DataProtectionApplication
// (oadp.openshift.io/v1alpha1) the stand-in reads.
type DPA struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		UID       string `json:"uid"`
	} `json:"metadata"`
	Spec struct {
		BackupLocations []struct {
			Name   string         `json:"name"`
			Velero map[string]any `json:"velero"`
		} `json:"backupLocations"`
		Configuration struct {
			Velero struct {
				DefaultPlugins []string `json:"defaultPlugins"`
				FeatureFlags   []string `json:"featureFlags"`
			} `json:"velero"`
		} `json:"configuration"`
	} `json:"spec"`
}

// BackupStorageLocations are what OADP's operator creates for the
// DataProtectionApplication's spec.backupLocations[].velero
// (oadp-operator internal/controller/bsl.go ReconcileBackupStorageLocations
// and updateBSLFromSpec): one BackupStorageLocation per entry in the DPA's
// namespace, named as the entry or "<dpa>-<index+1>", its spec the entry's
// velero spec as it is, labelled as OADP's and owned by the DPA.
func BackupStorageLocations(dpa DPA) []map[string]any {
	var out []map[string]any
	for i, l := range dpa.Spec.BackupLocations {
		if l.Velero == nil {
			continue
		}
		name := fmt.Sprintf("%s-%d", dpa.Metadata.Name, i+1)
		if l.Name != "" {
			name = l.Name
		}
		out = append(out, map[string]any{
			"apiVersion": "velero.io/v1",
			"kind":       "BackupStorageLocation",
			"metadata": map[string]any{
				"name":      name,
				"namespace": dpa.Metadata.Namespace,
				"labels": map[string]any{
					"app.kubernetes.io/name":       "oadp-operator-velero",
					"app.kubernetes.io/instance":   name,
					"app.kubernetes.io/managed-by": "oadp-operator",
					"app.kubernetes.io/component":  "bsl",
					"openshift.io/oadp":            "True",
				},
				"ownerReferences": []any{map[string]any{
					"apiVersion": "oadp.openshift.io/v1alpha1", "kind": "DataProtectionApplication",
					"name": dpa.Metadata.Name, "uid": dpa.Metadata.UID, "controller": true, "blockOwnerDeletion": true,
				}},
			},
			"spec": l.Velero,
		})
	}
	return out
}

// Image is the Velero image of OADP 1.6; no image is pulled here, the
// name is what the Deployment carries.
const Image = "registry.redhat.io/oadp/oadp-velero-rhel9:1.6"

// Deployment is the Deployment "velero" OADP's operator creates for the
// Velero server (oadp-operator internal/controller/velero.go
// ReconcileVeleroDeployment, owned by the DPA). Its pod does not run here:
// `velero server` (StartServer) plays it. Velero reads the object itself:
// a restore's pod volume restore action takes its image for the restore
// helper, and fails the restore without it
// (pkg/restore/actions/pod_volume_restore_action.go).
func Deployment(dpa DPA) map[string]any {
	// OADP's app labels with the DPA's name as instance (oadp-1.5
	// internal/controller/velero.go getDpaAppLabels), on the Deployment and
	// its pods: its metrics Service selects them
	labels := map[string]any{"app.kubernetes.io/name": "velero", "app.kubernetes.io/component": "server",
		"app.kubernetes.io/managed-by": "oadp-operator", "app.kubernetes.io/instance": dpa.Metadata.Name, "openshift.io/oadp": "True",
		"component": "velero", "deploy": "velero"}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "velero", "namespace": dpa.Metadata.Namespace, "labels": labels,
			"ownerReferences": []any{map[string]any{
				"apiVersion": "oadp.openshift.io/v1alpha1", "kind": "DataProtectionApplication",
				"name": dpa.Metadata.Name, "uid": dpa.Metadata.UID, "controller": true, "blockOwnerDeletion": true,
			}},
		},
		"spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": map[string]any{"deploy": "velero"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"serviceAccountName": "velero",
					"containers": []any{map[string]any{
						"name": "velero", "image": Image,
						"command": []any{"/velero"},
						"args":    append([]any{"server"}, anySlice(ServerArgs(dpa))...),
					}},
				},
			},
		},
	}
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// ServerArgs are the arguments of `velero server` that OADP's operator
// derives from the DPA and that matter without a node: the csi default
// plugin adds the EnableCSI feature flag to
// spec.configuration.velero.featureFlags (oadp-operator
// api/v1alpha1/dataprotectionapplication_types.go AutoCorrect,
// hasCSIPlugin), which become `--features` (pkg/velero/server/args.go).
// Velero 1.18 skips its CSI actions without it (pkg/util/csi/util.go).
func ServerArgs(dpa DPA) []string {
	flags := slices.Clone(dpa.Spec.Configuration.Velero.FeatureFlags)
	if slices.Contains(dpa.Spec.Configuration.Velero.DefaultPlugins, "csi") && !slices.Contains(flags, "EnableCSI") {
		flags = append(flags, "EnableCSI")
	}
	var args []string
	if len(flags) > 0 {
		args = append(args, "--features="+strings.Join(flags, ","))
	}
	return args
}

// Server is a running `velero server`.
type Server struct {
	*conformance.Process
	tools      Tools
	kubeconfig string
	// Metrics is the address of its Prometheus metrics (pkg/metrics).
	Metrics string
}

// MetricsHost is the address the servers started next serve their
// metrics on (default loopback; the alerts test gives a pod's address,
// which the API server takes in Endpoints).
var MetricsHost = "127.0.0.1"

// StartServer starts `velero server` in Namespace against cp, with the
// plugins of t and args (ServerArgs). Its metrics and profiler listen on
// free loopback ports.
func StartServer(ctx context.Context, cp *conformance.ControlPlane, t Tools, dir string, args ...string) (*Server, error) {
	return startServer(ctx, cp, cp.Kubeconfig, t, dir, args...)
}

// startServer starts the server with the credentials of kubeconfig.
func startServer(ctx context.Context, cp *conformance.ControlPlane, kubeconfig string, t Tools, dir string, args ...string) (*Server, error) {
	metrics, err := conformance.FreePort()
	if err != nil {
		return nil, err
	}
	profiler, err := conformance.FreePort()
	if err != nil {
		return nil, err
	}
	all := append([]string{"server", "--kubeconfig", kubeconfig, "--namespace", Namespace,
		"--plugin-dir", t.PluginDir, "--log-level", "info",
		"--metrics-address", MetricsHost + ":" + strconv.Itoa(metrics),
		"--profiler-address", "127.0.0.1:" + strconv.Itoa(profiler),
		// how often Velero checks a location (default 1 minute): the
		// suite waits for the first check
		"--store-validation-frequency", "5s",
	}, args...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	prog, err := ownMetricsPort(t.Velero, filepath.Join(dir, "velero"))
	if err != nil {
		return nil, err
	}
	// credentials of locations with spec.credential are written here
	// (pkg/credentials file store), /tmp/credentials in the pod
	p, err := conformance.StartProcess(dir, "velero", prog, []string{"TMPDIR=" + dir}, all...)
	if err != nil {
		return nil, err
	}
	return &Server{Process: p, tools: t, kubeconfig: cp.Kubeconfig, Metrics: MetricsHost + ":" + strconv.Itoa(metrics)}, nil
}

// Scrape reads the server's metrics in Prometheus' text format, as
// Prometheus scrapes them.
func (s *Server) Scrape(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+s.Metrics+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("velero metrics: %s: %s", resp.Status, body)
	}
	return string(body), nil
}

// CLI runs the velero CLI against the server's cluster.
func (s *Server) CLI(ctx context.Context, args ...string) ([]byte, error) {
	return runCLI(ctx, s.tools.Velero, append([]string{"--kubeconfig", s.kubeconfig, "--namespace", Namespace}, args...)...)
}

// WaitAvailable waits until Velero has checked the location and found it
// Available (pkg/controller/backup_storage_location_controller.go).
func WaitAvailable(ctx context.Context, cp *conformance.ControlPlane, s *Server, name string) error {
	path := "/apis/velero.io/v1/namespaces/" + Namespace + "/backupstoragelocations/" + name
	var last string
	for {
		data, err := cp.Get(ctx, path)
		if err == nil {
			var bsl struct {
				Status struct {
					Phase   string `json:"phase"`
					Message string `json:"message"`
				} `json:"status"`
			}
			if err := json.Unmarshal(data, &bsl); err != nil {
				return err
			}
			if bsl.Status.Phase == "Available" {
				return nil
			}
			last = bsl.Status.Phase + " " + bsl.Status.Message
		}
		if s.Exited() {
			return fmt.Errorf("velero server exited:\n%s", s.Tail())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("BackupStorageLocation %s not Available (%s): %w\nvelero:\n%s", name, last, ctx.Err(), s.Tail())
		case <-time.After(time.Second):
		}
	}
}

func runCLI(ctx context.Context, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("velero %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return out, nil
}

// controllerRuntimeMetrics is controller-runtime v0.21.0's default metrics
// address (pkg/metrics/server/server.go DefaultBindAddress), which Velero's
// controller manager listens on: Velero v1.18.3 pkg/cmd/server/server.go
// gives ctrl.NewManager no metrics options and no flag sets them. On a
// cluster the pod has the port to itself; here every program shares the
// host's, and OLM's operators bind the same literal (operator-lifecycle-
// manager v0.42.0 pkg/lib/server/server.go getAddress, without TLS) for
// as long as the Argo CD suite runs, so a drill beside it used to wait.
const controllerRuntimeMetrics = ":8080"

// ownMetricsPort copies the velero program to path with its standalone
// controllerRuntimeMetrics literal (not the "localhost:8080" nor the
// "metadata.google.internal.:8080" of its dependencies) changed to a port
// between 8081 and 8999 that nothing listens on now
// (conformance.CopyWithPort, as for cdi-controller's).
func ownMetricsPort(prog, path string) (string, error) {
	path, _, err := conformance.CopyWithPort(prog, path, controllerRuntimeMetrics, 8081, 8999, func(before []byte) bool {
		return bytes.HasSuffix(before, []byte("localhost")) || bytes.HasSuffix(before, []byte("."))
	})
	return path, err
}

// External is Velero as the platform team runs it beside a cluster whose
// Platform says dataProtection.external (OADP installed outside Git, as
// examples/argocd/clusters/*/platform.yaml): the DataProtectionApplication
// they create, with one default location in the object store, and what
// OADP's operator makes of it (BackupStorageLocations, Deployment) with
// `velero server` playing the Deployment's pod. Velero's Schedules without
// a storageLocation (virtc's) back up to that default location.
type External struct {
	Store  *ObjectStore
	Server *Server
	// Location is the BackupStorageLocation's name; Bucket and Prefix
	// where it keeps the backups.
	Location, Bucket, Prefix string
	// ownStore: Stop stops Store too (StartExternal, not StartExternalOn).
	ownStore bool
	// what StartServer needs to start the server again
	cp         *conformance.ControlPlane
	tools      Tools
	dir        string
	kubeconfig string
	args       []string
	starts     int
}

// StartExternal installs Velero's CRDs missing from cp (from t.CRDs),
// starts the object store, creates the credential Secret and the
// DataProtectionApplication "velero" in Namespace (which must exist) with
// one default location "default" in it, OADP's objects for it, and the
// server, and waits until the location is Available. Stop stops the
// server and the store.
func StartExternal(ctx context.Context, cp *conformance.ControlPlane, t Tools, dir string) (*External, error) {
	return StartExternalOn(ctx, cp, t, dir, nil)
}

// StartExternalOn is StartExternal with the location in store, when not
// nil: the object store of another cluster's Velero, as two clusters
// share one (a restore onto another cluster reads the backups the first
// one wrote, which Velero's backup sync brings into the cluster:
// pkg/controller/backup_sync_controller.go). Stop leaves that store
// running.
func StartExternalOn(ctx context.Context, cp *conformance.ControlPlane, t Tools, dir string, store *ObjectStore) (*External, error) {
	x := &External{Location: "default", Bucket: "vm-backups", Prefix: "drills", Store: store, ownStore: store == nil, cp: cp, tools: t, dir: filepath.Join(dir, "velero")}
	for _, d := range []string{"crds", "s3", "velero"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if _, err := controllers.InstallMissingCRDs(ctx, cp, filepath.Join(dir, "crds"), t.CRDs); err != nil {
		return nil, fmt.Errorf("install Velero's CRDs: %w", err)
	}
	var err error
	if x.ownStore {
		if x.Store, err = StartObjectStore(ctx, t, filepath.Join(dir, "s3"), x.Bucket); err != nil {
			return nil, err
		}
	}
	fail := func(err error) (*External, error) {
		x.Stop()
		return nil, err
	}
	create := func(obj map[string]any) error {
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = cp.MustKubectl(ctx, data, "create", "-f", "-")
		return err
	}
	// the AWS shared credentials file the plugin reads (gofakes3 checks no
	// signature)
	if err := create(map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "cloud-credentials", "namespace": Namespace},
		"stringData": map[string]any{"cloud": "[default]\naws_access_key_id=virtc\naws_secret_access_key=virtc-e2e\n"}}); err != nil {
		return fail(err)
	}
	if err := create(map[string]any{"apiVersion": "oadp.openshift.io/v1alpha1", "kind": "DataProtectionApplication",
		"metadata": map[string]any{"name": "velero", "namespace": Namespace},
		"spec": map[string]any{
			"backupLocations": []any{map[string]any{"name": x.Location, "velero": map[string]any{
				"provider": "aws", "default": true,
				"credential":    map[string]any{"name": "cloud-credentials", "key": "cloud"},
				"objectStorage": map[string]any{"bucket": x.Bucket, "prefix": x.Prefix},
				"config":        map[string]any{"region": "us-east-1", "s3Url": x.Store.URL},
			}}},
			"configuration": map[string]any{"velero": map[string]any{"defaultPlugins": []any{"openshift", "kubevirt", "csi", "aws"}}},
		}}); err != nil {
		return fail(err)
	}
	data, err := cp.Get(ctx, "/apis/oadp.openshift.io/v1alpha1/namespaces/"+Namespace+"/dataprotectionapplications/velero")
	if err != nil {
		return fail(err)
	}
	var dpa DPA
	if err := json.Unmarshal(data, &dpa); err != nil {
		return fail(err)
	}
	for _, b := range BackupStorageLocations(dpa) {
		if err := create(b); err != nil {
			return fail(err)
		}
	}
	if err := create(Deployment(dpa)); err != nil {
		return fail(err)
	}
	// Velero writes as its ServiceAccount openshift-adp/velero, as in
	// OADP's pod: the identity virtc's tenant guardrails exempt
	// (rules.Exempt). It may touch every kind it backs up and restores:
	// bound to cluster-admin here.
	if x.kubeconfig, err = controllers.AdminServiceAccountKubeconfig(ctx, cp, x.dir, Namespace, "velero"); err != nil {
		return fail(err)
	}
	x.args = ServerArgs(dpa)
	if err := x.StartServer(ctx); err != nil {
		return fail(err)
	}
	return x, nil
}

// StartServer starts the server (again, once StopServer stopped it) and
// waits until the location is Available.
func (x *External) StartServer(ctx context.Context) error {
	dir := x.dir
	if x.starts++; x.starts > 1 {
		// a log of its own for each start
		dir = filepath.Join(x.dir, "start-"+strconv.Itoa(x.starts))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	var err error
	if x.Server, err = startServer(ctx, x.cp, x.kubeconfig, x.tools, dir, x.args...); err != nil {
		return err
	}
	return WaitAvailable(ctx, x.cp, x.Server, x.Location)
}

// StopServer stops the server only.
func (x *External) StopServer() {
	if x.Server != nil {
		x.Server.Stop()
		x.Server = nil
	}
}

// Stop stops the server and the object store when it started it.
func (x *External) Stop() {
	x.StopServer()
	if x.ownStore && x.Store != nil {
		x.Store.Stop()
	}
}

// Field is the JSON of the value at path in o, "null" where there is none:
// what the suites compare of an object before and after a restore.
func Field(o map[string]any, path ...string) string {
	var v any = o
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return "null"
		}
		v = m[p]
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// Velero's schedule controller starts a Schedule's backup at the first
// slot of its cron after the Schedule's last backup, or after its creation
// or skipped backup (v1.18.3 pkg/controller/schedule_controller.go
// getNextRunTime), checking every minute (scheduleSyncPeriod). The suites
// set the crons of the Schedules they create with QuietCron or CronAt, so
// that a Schedule fires when a test asks and never because the run
// crossed the catalog's 02:00 (issue 48).

// QuietCron is a daily cron whose slot is two minutes before now: a
// Schedule created from now on fires about a day later, during no test.
func QuietCron(now time.Time) string {
	return CronAt(now.Add(-2 * time.Minute))
}

// CronAt is the daily cron whose slot is the minute of at (UTC).
func CronAt(at time.Time) string {
	at = at.UTC()
	return fmt.Sprintf("%d %d * * *", at.Minute(), at.Hour())
}

// TrackedByArgoCD gives o what Argo CD adds to each object it applies for
// Application app: its tracking label (label tracking) and annotation
// (annotation tracking, Argo CD 3's default), argo-cd v3.6.1
// util/argo/resource_tracking.go SetAppInstance, BuildAppInstanceValue.
func TrackedByArgoCD(o map[string]any, app string) {
	meta, _ := o["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		o["metadata"] = meta
	}
	set := func(field, k, v string) {
		m, _ := meta[field].(map[string]any)
		if m == nil {
			m = map[string]any{}
			meta[field] = m
		}
		m[k] = v
	}
	group, _, grouped := strings.Cut(fmt.Sprint(o["apiVersion"]), "/")
	if !grouped {
		group = "" // the core group: "v1"
	}
	set("labels", ArgoCDTrackingLabel, app)
	set("annotations", ArgoCDTrackingAnnotation, fmt.Sprintf("%s:%s/%s:%s/%s", app, group, o["kind"], meta["namespace"], meta["name"]))
}

// Argo CD's tracking label and annotation (argo-cd v3.6.1 common/common.go
// LabelKeyAppInstance, AnnotationKeyAppInstance).
const (
	ArgoCDTrackingLabel      = "app.kubernetes.io/instance"
	ArgoCDTrackingAnnotation = "argocd.argoproj.io/tracking-id"
)
