package argocd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/virtc/virtc/test/conformance"
)

// virtcImage is the repository of virtc's container image (tools/image):
// its entrypoint is virtc, so a container of it with only args runs
// `virtc <args>`.
const virtcImage = "quay.io/virtc/virtc@"

// jobPods plays kube-scheduler and the kubelet for the pods the real job
// controller of kube-controller-manager creates for Jobs (virtc's approver
// Sync hook): there is no kubelet or container runtime here, so it runs the
// container's command itself, as the kubelet would have the runtime run it,
// and reports the pod's end the way the kubelet does. For each pod of a Job
// (label batch.kubernetes.io/job-name):
//
//   - it binds the pod to the node stand-in (kube-scheduler's pods/binding,
//     pkg/scheduler/schedule_one.go bind);
//   - it gives the container what the kubelet's projected service account
//     volume gives it (pkg/volume/projected, pkg/kubelet/token/
//     token_manager.go): a token for the pod's ServiceAccount bound to the
//     pod (TokenRequest with boundObjectRef, 3607 s: the projection the
//     ServiceAccount admission plugin adds, plugin/pkg/admission/
//     serviceaccount/admission.go, pkg/serviceaccount/claims.go
//     WarnOnlyBoundTokenExpirationSeconds; the plugin is off on these API
//     servers), ca.crt from the namespace's kube-root-ca.crt
//     ConfigMap (published by kube-controller-manager's root CA publisher)
//     and the namespace, mounted at /var/run/secrets/kubernetes.io/
//     serviceaccount in a mount namespace of its own (unshare: a tmpfs over
//     /run, so nothing of the host is touched), and the environment the
//     kubelet sets (pkg/kubelet/kubelet_pods.go makeEnvironmentVariables:
//     the container's env plus KUBERNETES_SERVICE_HOST and _PORT, here the
//     API server's own address, as the kubernetes Service's cluster IP
//     routes nowhere without a node);
//   - it runs the container's command, virtc's image being the virtc this
//     test built, and marks the pod Running, then Succeeded or Failed with
//     the container terminated with the command's exit code (kubelet
//     pkg/kubelet/status/status_manager.go, pkg/kubelet/kubelet_pods.go
//     getPhase: restartPolicy Never, one container: its exit code decides);
//   - a pod being deleted has its command killed and is ended, as the
//     kubelet kills a deleted pod's containers and then confirms the
//     deletion.
//
// The job controller then counts the pod and completes or fails the Job
// itself (pkg/controller/job/job_controller.go).
type jobPods struct {
	cp    *conformance.ControlPlane
	node  string
	virtc string
	dir   string
	// started holds the UIDs of pods whose command runs or ran, with what
	// stops the command (the kubelet kills a deleted pod's containers).
	mu      sync.Mutex
	started map[string]context.CancelFunc
}

func newJobPods(cp *conformance.ControlPlane, node, virtc, dir string) *jobPods {
	return &jobPods{cp: cp, node: node, virtc: virtc, dir: dir, started: map[string]context.CancelFunc{}}
}

type jobPod struct {
	Metadata struct {
		Name              string `json:"name"`
		Namespace         string `json:"namespace"`
		UID               string `json:"uid"`
		DeletionTimestamp string `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName           string `json:"nodeName"`
		ServiceAccountName string `json:"serviceAccountName"`
		RestartPolicy      string `json:"restartPolicy"`
		Containers         []struct {
			Name    string   `json:"name"`
			Image   string   `json:"image"`
			Command []string `json:"command"`
			Args    []string `json:"args"`
			Env     []struct {
				Name      string `json:"name"`
				Value     string `json:"value"`
				ValueFrom any    `json:"valueFrom"`
			} `json:"env"`
		} `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// sync runs one round over every Job's pods.
func (j *jobPods) sync(ctx context.Context) error {
	data, err := j.cp.Get(ctx, "/api/v1/pods?labelSelector="+url.QueryEscape("batch.kubernetes.io/job-name"))
	if err != nil {
		return err
	}
	var pods struct{ Items []jobPod }
	if err := json.Unmarshal(data, &pods); err != nil {
		return err
	}
	var errs []error
	for _, p := range pods.Items {
		ns, name := p.Metadata.Namespace, p.Metadata.Name
		if p.Metadata.DeletionTimestamp != "" {
			j.mu.Lock()
			if stop := j.started[p.Metadata.UID]; stop != nil {
				stop()
			}
			j.mu.Unlock()
			if _, err := j.cp.MustKubectl(ctx, nil, "delete", "pod", name, "-n", ns, "--grace-period=0", "--force", "--wait=false"); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed" {
			continue
		}
		j.mu.Lock()
		_, started := j.started[p.Metadata.UID]
		j.mu.Unlock()
		if started {
			continue
		}
		podCtx, stop := context.WithCancel(ctx)
		j.mu.Lock()
		j.started[p.Metadata.UID] = stop
		j.mu.Unlock()
		if p.Spec.NodeName == "" {
			binding, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Binding",
				"metadata": map[string]any{"name": name, "namespace": ns},
				"target":   map[string]any{"apiVersion": "v1", "kind": "Node", "name": j.node}})
			if _, err := j.cp.Do(ctx, "POST", "/api/v1/namespaces/"+ns+"/pods/"+name+"/binding", "application/json", binding); err != nil {
				errs = append(errs, err)
				j.forget(p.Metadata.UID)
				stop()
				continue
			}
		}
		go j.run(podCtx, p)
	}
	return errors.Join(errs...)
}

func (j *jobPods) forget(uid string) {
	j.mu.Lock()
	delete(j.started, uid)
	j.mu.Unlock()
}

// run runs the pod's one container and reports its end.
func (j *jobPods) run(ctx context.Context, p jobPod) {
	ns, name := p.Metadata.Namespace, p.Metadata.Name
	started := time.Now().UTC().Format(time.RFC3339)
	code, reason, message := j.exec(ctx, p, started)
	if ctx.Err() != nil {
		return
	}
	finished := time.Now().UTC().Format(time.RFC3339)
	phase := "Succeeded"
	if code != 0 {
		phase = "Failed"
	}
	var statuses []any
	for _, c := range p.Spec.Containers {
		statuses = append(statuses, map[string]any{"name": c.Name, "image": c.Image, "imageID": "", "ready": false, "started": false, "restartCount": 0,
			"state": map[string]any{"terminated": map[string]any{"exitCode": code, "reason": reason, "message": message,
				"startedAt": started, "finishedAt": finished}}})
	}
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "lastTransitionTime": finished}
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{
		"phase": phase, "startTime": started,
		"conditions": []any{cond("PodScheduled", "True", ""), cond("Initialized", "True", ""),
			cond("ContainersReady", "False", "PodCompleted"), cond("Ready", "False", "PodCompleted")},
		"containerStatuses": statuses,
	}})
	// retried: the pod's status is the Job's outcome
	for i := 0; i < 20 && ctx.Err() == nil; i++ {
		if _, err := j.cp.Do(ctx, "PATCH", "/api/v1/namespaces/"+ns+"/pods/"+name+"/status", "application/merge-patch+json", patch); err == nil || strings.Contains(err.Error(), "404") {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// exec marks the pod Running and runs its container: the exit code, and
// the terminated state's reason and message.
func (j *jobPods) exec(ctx context.Context, p jobPod, started string) (int, string, string) {
	ns, name := p.Metadata.Namespace, p.Metadata.Name
	fail := func(err error) (int, string, string) { return 128, "ContainerCannotRun", err.Error() }
	if len(p.Spec.Containers) != 1 {
		return fail(fmt.Errorf("the Job pod stand-in runs pods of one container, %s/%s has %d", ns, name, len(p.Spec.Containers)))
	}
	c := p.Spec.Containers[0]
	if !strings.HasPrefix(c.Image, virtcImage) || len(c.Command) > 0 {
		return fail(fmt.Errorf("the Job pod stand-in runs virtc's image with its entrypoint only, not %s %v", c.Image, c.Command))
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=/"}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			return fail(fmt.Errorf("env %s: valueFrom is not supported by the Job pod stand-in", e.Name))
		}
		env = append(env, e.Name+"="+e.Value)
	}
	u, err := url.Parse(j.cp.URL)
	if err != nil {
		return fail(err)
	}
	env = append(env, "KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port())
	sa, err := j.serviceAccountFiles(ctx, p)
	if err != nil {
		return fail(err)
	}
	now := started
	running, _ := json.Marshal(map[string]any{"status": map[string]any{
		"phase": "Running", "startTime": started, "hostIP": "192.168.0.1", "podIP": "10.128.0.20",
		"conditions": []any{
			map[string]any{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "Initialized", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": now},
		},
		"containerStatuses": []any{map[string]any{"name": c.Name, "image": c.Image, "imageID": "", "ready": true, "started": true, "restartCount": 0,
			"state": map[string]any{"running": map[string]any{"startedAt": now}}}},
	}})
	if _, err := j.cp.Do(ctx, "PATCH", "/api/v1/namespaces/"+ns+"/pods/"+name+"/status", "application/merge-patch+json", running); err != nil {
		return fail(err)
	}
	// A mount namespace of its own with a tmpfs over /run (/var/run): the
	// service account files at the path the kubelet mounts them.
	const mountScript = `set -e
mount -t tmpfs -o mode=0755 tmpfs /var/run
mkdir -p /var/run/secrets/kubernetes.io/serviceaccount
cp "$0"/token "$0"/ca.crt "$0"/namespace /var/run/secrets/kubernetes.io/serviceaccount/
exec "$@"`
	args := append([]string{"--mount", "--propagation", "private", "sh", "-c", mountScript, sa, j.virtc}, c.Args...)
	cmd := exec.CommandContext(ctx, "unshare", args...)
	cmd.Env = env
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	logPath := filepath.Join(j.dir, ns+"_"+name+".log")
	_ = os.WriteFile(logPath, out.Bytes(), 0o600)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, "Completed", ""
	case errors.As(err, &exit):
		msg := strings.TrimSpace(out.String())
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return exit.ExitCode(), "Error", msg
	default:
		return fail(err)
	}
}

// serviceAccountFiles writes token, ca.crt and namespace for the pod into
// a directory of its own and returns it.
func (j *jobPods) serviceAccountFiles(ctx context.Context, p jobPod) (string, error) {
	ns := p.Metadata.Namespace
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req, _ := json.Marshal(map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		"spec": map[string]any{"expirationSeconds": 3607,
			"boundObjectRef": map[string]any{"apiVersion": "v1", "kind": "Pod", "name": p.Metadata.Name, "uid": p.Metadata.UID}}})
	data, err := j.cp.Do(ctx, "POST", "/api/v1/namespaces/"+ns+"/serviceaccounts/"+sa+"/token", "application/json", req)
	if err != nil {
		return "", fmt.Errorf("token for %s/%s: %w", ns, sa, err)
	}
	var tr struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &tr); err != nil || tr.Status.Token == "" {
		return "", fmt.Errorf("token for %s/%s: none in the answer (%v)", ns, sa, err)
	}
	var root struct {
		Data map[string]string `json:"data"`
	}
	data, err = j.cp.Get(ctx, "/api/v1/namespaces/"+ns+"/configmaps/kube-root-ca.crt")
	if err == nil {
		err = json.Unmarshal(data, &root)
	}
	if err != nil || root.Data["ca.crt"] == "" {
		return "", fmt.Errorf("ConfigMap %s/kube-root-ca.crt (kube-controller-manager's root CA publisher): %v", ns, err)
	}
	dir := filepath.Join(j.dir, p.Metadata.UID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for f, content := range map[string]string{"token": tr.Status.Token, "ca.crt": root.Data["ca.crt"], "namespace": ns} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600); err != nil {
			return "", err
		}
	}
	return dir, nil
}
