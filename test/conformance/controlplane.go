// Package conformance runs a local Kubernetes control plane (etcd and
// kube-apiserver built from source, see tools/build.sh) with the real
// OpenShift Virtualization CRDs installed, and checks that everything virtc
// compiles is accepted by it. The tests run only when asked for
// (VIRTC_CONFORMANCE=1, set by `make conformance`).
package conformance

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Pinned versions of the control plane; tools/build.sh builds the same ones
// (the Makefile passes both to it and to the tests).
const (
	DefaultKubeVersion = "v1.37.2"
	DefaultEtcdVersion = "v3.7.3"
)

// Binaries are the programs of the control plane.
type Binaries struct {
	Etcd, APIServer, Kubectl string
}

// CacheDir is where tools/build.sh caches the binaries:
// $VIRTC_TOOLS_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/virtc-tools.
func CacheDir() (string, error) {
	if d := os.Getenv("VIRTC_TOOLS_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "virtc-tools"), nil
}

// EnvOr is the value of the environment variable name, or def when it is
// unset or empty (a version or path the caller may override).
func EnvOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// CheckCache says whether a cached build in dir is complete: nil when every
// one of paths exists, else an error naming what is missing (what, e.g.
// "KubeVirt v1.8.4") and how to build it (build, e.g. "build it with `make
// controllers-tools`").
func CheckCache(what, dir, build string, paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s missing in %s (%s): %v", what, dir, build, err)
		}
	}
	return nil
}

// FindBinaries locates the cached binaries of the pinned versions
// (KUBE_VERSION and ETCD_VERSION override the versions; ETCD_BIN,
// KUBE_APISERVER_BIN and KUBECTL_BIN the paths).
func FindBinaries() (Binaries, error) {
	cache, err := CacheDir()
	if err != nil {
		return Binaries{}, err
	}
	kube := filepath.Join(cache, "kube-"+EnvOr("KUBE_VERSION", DefaultKubeVersion))
	etcd := filepath.Join(cache, "etcd-"+EnvOr("ETCD_VERSION", DefaultEtcdVersion))
	b := Binaries{
		Etcd:      EnvOr("ETCD_BIN", filepath.Join(etcd, "etcd")),
		APIServer: EnvOr("KUBE_APISERVER_BIN", filepath.Join(kube, "kube-apiserver")),
		Kubectl:   EnvOr("KUBECTL_BIN", filepath.Join(kube, "kubectl")),
	}
	var missing []string
	for _, p := range []string{b.Etcd, b.APIServer, b.Kubectl} {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("control plane binaries missing: %s (build them with `make conformance-tools`)", strings.Join(missing, ", "))
	}
	return b, nil
}

// ControlPlane is a running etcd and kube-apiserver, listening on
// 127.0.0.1 only, with an admin kubeconfig.
type ControlPlane struct {
	// URL is the API server's address.
	URL string
	// Kubeconfig is an admin kubeconfig (group system:masters).
	Kubeconfig string
	// Startup is how long etcd and the API server took to become ready.
	Startup time.Duration

	bins      Binaries
	creds     *credentials
	dir       string
	cacheDir  string
	client    *http.Client
	etcd      *process
	apiserver *process
}

// process is a started program, stopped by its PID.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func startProcess(dir, name, bin string, args ...string) (*process, error) {
	return StartProcess(dir, name, bin, nil, args...)
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process's PID and SIGKILL if it has not exited
// after a grace period.
func (p *process) stop() {
	if p == nil || p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail is the end of the process's log, for error messages.
func (p *process) tail() string {
	data, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 25 {
		lines = lines[len(lines)-25:]
	}
	return fmt.Sprintf("%s (pid %d) log tail:\n%s", p.name, p.cmd.Process.Pid, strings.Join(lines, "\n"))
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts etcd and kube-apiserver with state in dir (which must be
// empty and is not removed by Stop) and waits until the server is ready;
// apiserverArgs are added to kube-apiserver's flags (test/argocd adds an
// audit log); a --disable-admission-plugins among them replaces the
// default one, which turns the ServiceAccount plugin off (the flag is a
// list that a second occurrence extends). A port taken between choosing and binding makes a start
// fail; Start retries with new ports then.
func Start(ctx context.Context, bins Binaries, dir string, apiserverArgs ...string) (*ControlPlane, error) {
	var errs []error
	for attempt := 1; attempt <= 3; attempt++ {
		sub := filepath.Join(dir, "attempt-"+strconv.Itoa(attempt))
		cp, err := start(ctx, bins, sub, apiserverArgs)
		if err == nil {
			return cp, nil
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w", attempt, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func start(ctx context.Context, bins Binaries, dir string, apiserverArgs []string) (cp *ControlPlane, err error) {
	began := time.Now()
	pki := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return nil, err
	}
	creds, err := writePKI(pki)
	if err != nil {
		return nil, err
	}
	cp = &ControlPlane{bins: bins, creds: creds, dir: dir, cacheDir: filepath.Join(dir, "kubectl-cache")}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()

	clientPort, err := freePort()
	if err != nil {
		return nil, err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	cp.etcd, err = startProcess(dir, "etcd", bins.Etcd,
		"--name=virtc",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=virtc="+peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	)
	if err != nil {
		return nil, err
	}
	plain := &http.Client{Timeout: 2 * time.Second}
	if err := waitReady(ctx, cp.etcd, plain, etcdURL+"/health", `"health":"true"`); err != nil {
		return nil, err
	}

	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cp.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	cp.apiserver, err = startProcess(dir, "kube-apiserver", bins.APIServer, append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + creds.serverCert,
		"--tls-private-key-file=" + creds.serverKey,
		"--client-ca-file=" + creds.caCert,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + creds.saPub,
		"--service-account-signing-key-file=" + creds.saKey,
		"--service-cluster-ip-range=10.96.0.0/24",
		"--authorization-mode=RBAC",
		disableAdmission(apiserverArgs),
		"--enable-priority-and-fairness=false",
		// The default reconciler refuses to publish a loopback address.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"--cert-dir=" + filepath.Join(dir, "cert-dir"),
	}, apiserverArgs...)...)
	if err != nil {
		return nil, err
	}
	cp.client, err = creds.httpClient()
	if err != nil {
		return nil, err
	}
	if err := waitReady(ctx, cp.apiserver, cp.client, cp.URL+"/readyz", "ok"); err != nil {
		return nil, err
	}
	cp.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := creds.writeKubeconfig(cp.Kubeconfig, cp.URL); err != nil {
		return nil, err
	}
	cp.Startup = time.Since(began)
	return cp, nil
}

// waitReady polls url until it answers 200 with a body containing want,
// failing early when the process exits.
func waitReady(ctx context.Context, p *process, client *http.Client, url, want string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var last string
	for {
		if p.exited() {
			return fmt.Errorf("%s exited before it was ready (%v)\n%s", p.name, p.err, p.tail())
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), want) {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, bytes.TrimSpace(body))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s: %s\n%s", p.name, url, last, p.tail())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Stop stops the API server, then etcd, each by its PID.
func (cp *ControlPlane) Stop() {
	if cp == nil {
		return
	}
	cp.apiserver.stop()
	cp.etcd.stop()
}

// KubectlResult is the outcome of one kubectl run.
type KubectlResult struct {
	Args           []string
	Stdout, Stderr []byte
	ExitCode       int
}

func (r KubectlResult) String() string {
	return fmt.Sprintf("kubectl %s (exit %d)\n%s%s", strings.Join(r.Args, " "), r.ExitCode, r.Stdout, r.Stderr)
}

// Kubectl runs the matching kubectl against the control plane. An error
// is returned only when kubectl could not run; a non-zero exit is in the
// result.
func (cp *ControlPlane) Kubectl(ctx context.Context, stdin []byte, args ...string) (KubectlResult, error) {
	full := append([]string{"--kubeconfig=" + cp.Kubeconfig, "--cache-dir=" + cp.cacheDir}, args...)
	cmd := exec.CommandContext(ctx, cp.bins.Kubectl, full...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cp.Kubeconfig, "HOME="+cp.dir)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := KubectlResult{Args: args, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExitCode = ee.ExitCode()
		return res, nil
	}
	return res, err
}

// MustKubectl runs kubectl and fails unless it exits 0.
func (cp *ControlPlane) MustKubectl(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	res, err := cp.Kubectl(ctx, stdin, args...)
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, errors.New(res.String())
	}
	return res.Stdout, nil
}

// ClientTLS is the PEM of the server's CA and of the admin client
// certificate and key, for clients configured without the kubeconfig (an
// Argo CD cluster Secret).
func (cp *ControlPlane) ClientTLS() (ca, cert, key []byte, err error) {
	if ca, err = os.ReadFile(cp.creds.caCert); err != nil {
		return nil, nil, nil, err
	}
	if cert, err = os.ReadFile(cp.creds.adminCert); err != nil {
		return nil, nil, nil, err
	}
	key, err = os.ReadFile(cp.creds.adminKey)
	return ca, cert, key, err
}

// ForgetDiscovery drops kubectl's discovery cache, so that the next run
// sees newly established CRDs.
func (cp *ControlPlane) ForgetDiscovery() error { return os.RemoveAll(cp.cacheDir) }

// InstallCRDs creates every CustomResourceDefinition under dir (recursively)
// and waits until all of them are Established. It returns their number.
func (cp *ControlPlane) InstallCRDs(ctx context.Context, dir string) (int, error) {
	return cp.installCRDs(ctx, dir, "create", "-o", "name")
}

// ReplaceCRDs is InstallCRDs for CRDs that may exist already (an operator's
// own CRDs over the shared schemas' copies of some of them): it applies
// them server-side, taking over their fields.
func (cp *ControlPlane) ReplaceCRDs(ctx context.Context, dir string) (int, error) {
	return cp.installCRDs(ctx, dir, "apply", "--server-side", "--force-conflicts", "-o", "name")
}

func (cp *ControlPlane) installCRDs(ctx context.Context, dir string, args ...string) (int, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(files) == 0 {
		return 0, fmt.Errorf("no CRD files under %s", dir)
	}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	out, err := cp.MustKubectl(ctx, nil, args...)
	if err != nil {
		return 0, err
	}
	n := len(strings.Fields(string(out)))
	// Polled here rather than with `kubectl wait`, which fails when it
	// reads a CRD before the server has given it any condition.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		pending, err := cp.pendingCRDs(ctx)
		if err == nil && len(pending) == 0 {
			return n, cp.ForgetDiscovery()
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return n, err
			}
			return n, fmt.Errorf("CRDs not Established: %s", strings.Join(pending, ", "))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// pendingCRDs lists the CRDs that are not Established yet.
func (cp *ControlPlane) pendingCRDs(ctx context.Context) ([]string, error) {
	data, err := cp.Get(ctx, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Status struct {
				Conditions []struct {
					Type   string `json:"type"`
					Status string `json:"status"`
				} `json:"conditions"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	var pending []string
	for _, crd := range list.Items {
		established := false
		for _, c := range crd.Status.Conditions {
			established = established || (c.Type == "Established" && c.Status == "True")
		}
		if !established {
			pending = append(pending, crd.Metadata.Name)
		}
	}
	return pending, nil
}

// Get fetches a path of the API with the admin credentials.
func (cp *ControlPlane) Get(ctx context.Context, path string) ([]byte, error) {
	return cp.Do(ctx, http.MethodGet, path, "", nil)
}

// List fetches a collection path of the API (Get) and decodes its items
// into T, the part of an item the caller reads.
func List[T any](ctx context.Context, cp *ControlPlane, path string) ([]T, error) {
	data, err := cp.Get(ctx, path)
	if err != nil {
		return nil, err
	}
	var l struct {
		Items []T `json:"items"`
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// Request sends one request to the API with the admin credentials (and the
// extra headers, such as Impersonate-User) and returns the answer's status
// code and body, whatever the status.
func (cp *ControlPlane) Request(ctx context.Context, method, path, contentType string, body []byte, header http.Header) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, cp.URL+path, r)
	if err != nil {
		return 0, nil, err
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := cp.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, data, nil
}

// tlsClient is an HTTPS client trusting ca and presenting cert.
func tlsClient(caPEM []byte, cert tls.Certificate) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("bad CA certificate")
	}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs:      pool,
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS12,
		}},
	}, nil
}

// Process is a program started by StartProcess (the same mechanism that
// runs etcd and kube-apiserver), for tests that run more programs against
// the control plane (test/argocd runs Argo CD and redis).
type Process = process

// StartProcess starts bin with args in dir, its output in dir/name.log,
// with env added to this process's environment.
func StartProcess(dir, name, bin string, env []string, args ...string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = dir
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Stop stops the process by its PID (SIGTERM, then SIGKILL).
func (p *process) Stop() { p.stop() }

// Exited reports whether the process has ended.
func (p *process) Exited() bool { return p.exited() }

// Tail is the end of the process's log.
func (p *process) Tail() string { return p.tail() }

// Log is the path of the process's log (its standard output and error).
func (p *process) Log() string { return p.log }

// FreePort is a free TCP port on 127.0.0.1.
func FreePort() (int, error) { return freePort() }

// Do sends one request to the API with the admin credentials and returns
// the body of a 2xx answer.
func (cp *ControlPlane) Do(ctx context.Context, method, path, contentType string, body []byte) ([]byte, error) {
	status, data, err := cp.Request(ctx, method, path, contentType, body, nil)
	if err != nil {
		return nil, err
	}
	if status/100 != 2 {
		return nil, fmt.Errorf("%s %s: %d %s: %s", method, path, status, http.StatusText(status), bytes.TrimSpace(data))
	}
	return data, nil
}

// disableAdmission is kube-apiserver's --disable-admission-plugins: the
// one among args (then given twice: the same list), else ServiceAccount, whose
// token volume needs kube-controller-manager's service account controller
// to have made the pod's ServiceAccount.
func disableAdmission(args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "--disable-admission-plugins=") {
			return a
		}
	}
	return "--disable-admission-plugins=ServiceAccount"
}
