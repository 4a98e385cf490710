package controllers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	virtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/test/conformance"
)

// Guests is the part of the node agent that runs the guests of chosen
// VMs for real: for each of their VMIs virt-controller hands over, it
// starts the suite's virt-launcher (test/boot/cmd/virt-launcher: KubeVirt
// v1.8.4's cloud-init generator and converter to a libvirt domain, booted
// by its own libvirtd under QEMU) with the VMI as the API server has it,
// the claims of its volumes and the Secrets its pod would mount. What the
// guest does then decides the status (Node.Sync): the VMI Running once the
// domain runs (virt-handler, pkg/virt-handler/vm.go updateVMIStatus), the
// launcher pod's compute container ready once the guest agent answers
// guest-ping (the kubelet running virtc's readiness probe, which
// virt-controller copies to the VMI's Ready: pkg/virt-controller/watch/
// vmi/lifecycle.go syncReadyConditionFromPod), AgentConnected from the
// guest agent channel's state in the live domain (vm.go
// updateGuestAgentConditions); a deleted VMI or launcher pod shuts the
// guest down (test/boot Launch: virt-launcher's SignalShutdownVMI, then
// destroy after the grace period, vm.go processVmShutdown) and the VMI
// ends Succeeded (vm.go calculateVmPhaseForStatusReason: shut off, reason
// shutdown), Failed when destroyed.
type Guests struct {
	// Launcher is the virt-launcher command, Image the guest image the
	// boot disk's claim holds, Dir where the pods' directories go.
	Launcher, Image, Dir string

	mu     sync.Mutex
	vms    map[string]string // namespace/name: the marker of its user data
	byVMI  map[string]*Guest // by VMI uid
	latest map[string]*Guest // by namespace/name
	failed map[string]bool   // by VMI uid: the launcher could not start
	err    error             // the first of those
}

// Err is the first VMI whose launcher could not start (nil: none), as
// the kubelet reports a container that cannot be created.
func (g *Guests) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

func (g *Guests) fail(uid string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failed == nil {
		g.failed = map[string]bool{}
	}
	g.failed[uid] = true
	if g.err == nil {
		g.err = err
	}
}

func (g *Guests) hasFailed(uid string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failed[uid]
}

// Guest is one VMI's launcher process and what it reported.
type Guest struct {
	VMI    string // namespace/name
	UID    string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}

	mu       sync.Mutex
	events   []GuestEvent
	started  bool
	agent    bool
	ready    bool
	stopping bool
}

// GuestEvent is a line of the launcher (test/boot Event).
type GuestEvent struct {
	Event  string   `json:"event"`
	Detail string   `json:"detail,omitempty"`
	OK     bool     `json:"ok,omitempty"`
	List   []string `json:"list,omitempty"`
}

// Boot says that VM namespace/name's VMIs boot. marker is a line its user
// data writes to the serial console ("": none): the launcher requires it
// in the user data KubeVirt reads and reports when the guest writes it.
func (g *Guests) Boot(namespace, name, marker string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.vms == nil {
		g.vms = map[string]string{}
	}
	g.vms[namespace+"/"+name] = marker
}

func (g *Guests) boots(namespace, name string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.vms[namespace+"/"+name]
	return ok
}

func (g *Guests) marker(namespace, name string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.vms[namespace+"/"+name]
}

// Latest is the guest of VM namespace/name's latest VMI (nil before one).
func (g *Guests) Latest(namespace, name string) *Guest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.latest[namespace+"/"+name]
}

func (g *Guests) byUID(uid string) *Guest {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.byVMI[uid]
}

// Stop ends every guest (the suite's end).
func (g *Guests) Stop() {
	g.mu.Lock()
	all := make([]*Guest, 0, len(g.byVMI))
	for _, gu := range g.byVMI {
		all = append(all, gu)
	}
	g.mu.Unlock()
	for _, gu := range all {
		gu.Stop()
		<-gu.exited
	}
}

// Events are what the launcher reported so far.
func (gu *Guest) Events() []GuestEvent {
	gu.mu.Lock()
	defer gu.mu.Unlock()
	return append([]GuestEvent(nil), gu.events...)
}

// Saw says whether the launcher reported an event of this kind.
func (gu *Guest) Saw(event string) bool {
	gu.mu.Lock()
	defer gu.mu.Unlock()
	for _, ev := range gu.events {
		if ev.Event == event {
			return true
		}
	}
	return false
}

// Log is the launcher's own output (stderr) file.
func (gu *Guest) Log() string { return gu.log }

// state is what the launcher reported last (all false for no guest).
func (gu *Guest) state() (started, agent, ready bool) {
	if gu == nil {
		return
	}
	gu.mu.Lock()
	defer gu.mu.Unlock()
	return gu.started, gu.agent, gu.ready
}

// Stop asks the launcher to shut the guest down (SIGTERM, as the kubelet
// stops a deleted pod's container); it does not wait.
func (gu *Guest) Stop() {
	gu.mu.Lock()
	defer gu.mu.Unlock()
	if gu.stopping || gu.Exited() {
		return
	}
	gu.stopping = true
	_ = gu.cmd.Process.Signal(syscall.SIGTERM)
}

// Exited says whether the launcher has ended.
func (gu *Guest) Exited() bool {
	select {
	case <-gu.exited:
		return true
	default:
		return false
	}
}

// start runs the launcher for vmi (raw: as the API server has it).
func (g *Guests) start(ctx context.Context, cp *conformance.ControlPlane, vmi *virtv1.VirtualMachineInstance, raw []byte) (*Guest, error) {
	ns, name := vmi.Namespace, vmi.Name
	// short: the domain's UNIX socket paths have at most 107 bytes
	dir, err := os.MkdirTemp(g.Dir, "pod.")
	if err != nil {
		return nil, err
	}
	vmiFile := filepath.Join(dir, "vmi.json")
	if err := os.WriteFile(vmiFile, raw, 0o644); err != nil {
		return nil, err
	}
	args := []string{"-vmi", vmiFile, "-dir", dir, "-image", g.Image}
	if m := g.marker(ns, name); m != "" {
		args = append(args, "-marker", m)
	}
	get := func(path string, into any) error {
		data, err := cp.Get(ctx, "/api/v1/namespaces/"+ns+"/"+path)
		if err == nil {
			err = json.Unmarshal(data, into)
		}
		return err
	}
	// The Secrets where virt-controller's pod mounts them
	// (pkg/virt-controller/services/rendervolumes.go: a cloud-init
	// Secret's keys at <SecretSourceDir>/<volume>/, an access
	// credential's at <SecretSourceDir>/<secret>-access-cred/).
	lay := func(sub, secretName string, keys func(k string, v []byte)) error {
		var secret corev1.Secret
		if err := get("secrets/"+secretName, &secret); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dir, "secrets", sub), 0o755); err != nil {
			return err
		}
		for k, v := range secret.Data {
			if err := os.WriteFile(filepath.Join(dir, "secrets", sub, k), v, 0o600); err != nil {
				return err
			}
			if keys != nil {
				keys(k, v)
			}
		}
		return nil
	}
	for _, v := range vmi.Spec.Volumes {
		var claim string
		switch {
		case v.DataVolume != nil:
			claim = v.DataVolume.Name
		case v.PersistentVolumeClaim != nil:
			claim = v.PersistentVolumeClaim.ClaimName
		case v.CloudInitNoCloud != nil:
			for _, ref := range []*corev1.LocalObjectReference{v.CloudInitNoCloud.UserDataSecretRef, v.CloudInitNoCloud.NetworkDataSecretRef} {
				if ref != nil {
					if err := lay(v.Name, ref.Name, nil); err != nil {
						return nil, err
					}
				}
			}
			continue
		default:
			continue
		}
		var pvc corev1.PersistentVolumeClaim
		if err := get("persistentvolumeclaims/"+claim, &pvc); err != nil {
			return nil, fmt.Errorf("claim %s/%s of VMI %s: %v", ns, claim, name, err)
		}
		size, ok := pvc.Status.Capacity[corev1.ResourceStorage]
		if !ok {
			size = pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		}
		arg := claim + "=" + strconv.FormatInt(size.Value(), 10)
		if pvc.Spec.VolumeMode != nil && *pvc.Spec.VolumeMode == corev1.PersistentVolumeBlock {
			arg += ":block"
		}
		args = append(args, "-claim", arg)
	}
	for _, ac := range vmi.Spec.AccessCredentials {
		if ac.SSHPublicKey != nil && ac.SSHPublicKey.Source.Secret != nil {
			sn := ac.SSHPublicKey.Source.Secret.SecretName
			if err := lay(sn+"-access-cred", sn, func(_ string, v []byte) { args = append(args, "-ssh-key", string(v)) }); err != nil {
				return nil, err
			}
		}
	}
	gu := &Guest{VMI: ns + "/" + name, UID: string(vmi.UID), log: filepath.Join(dir, "launcher.log"), exited: make(chan struct{})}
	logf, err := os.Create(gu.log)
	if err != nil {
		return nil, err
	}
	gu.cmd = exec.Command(g.Launcher, args...)
	gu.cmd.Stderr = logf
	out, err := gu.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := gu.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev GuestEvent
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				ev = GuestEvent{Event: "output", Detail: sc.Text()}
			}
			gu.mu.Lock()
			gu.events = append(gu.events, ev)
			switch ev.Event {
			case "started":
				gu.started = true
			case "agent":
				gu.agent = ev.OK
			case "ready":
				gu.ready = ev.OK
			case "stopped":
				gu.agent, gu.ready = false, false
			}
			gu.mu.Unlock()
		}
		err := gu.cmd.Wait()
		logf.Close()
		gu.mu.Lock()
		gu.agent, gu.ready = false, false
		if err != nil {
			gu.events = append(gu.events, GuestEvent{Event: "exit", Detail: err.Error()})
		}
		gu.mu.Unlock()
		close(gu.exited)
	}()
	g.mu.Lock()
	if g.byVMI == nil {
		g.byVMI, g.latest = map[string]*Guest{}, map[string]*Guest{}
	}
	g.byVMI[gu.UID], g.latest[gu.VMI] = gu, gu
	g.mu.Unlock()
	return gu, nil
}
