package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	virtv1 "kubevirt.io/api/core/v1"
)

// LaunchOptions is one virt-launcher pod of a VMI that a cluster's
// virt-controller created: the end-to-end suite's node agent starts one
// per launcher pod it runs (test/controllers Node), as a kubelet starts
// the pod's compute container.
type LaunchOptions struct {
	// VMI is the VMI as the API server has it.
	VMI *virtv1.VirtualMachineInstance
	// Dir is the pod's private directory (short: the domain's UNIX socket
	// paths have at most 107 bytes). The Secrets of the VMI's cloud-init
	// and access credentials are laid out under Dir/secrets by the caller,
	// where virt-controller's pod mounts them
	// (pkg/virt-controller/services/rendervolumes.go).
	Dir string
	// Image is the guest image (tools/build-image.sh) the boot disk's
	// claim holds.
	Image string
	// Claims are the claims the pod mounts, by name.
	Claims map[string]Claim
	// Marker, when set, is a line virtc's user data writes to the serial
	// console: its appearance is reported once.
	Marker string
	// SSHKeys are the access credentials' keys the guest must have.
	SSHKeys []string
}

// Event is a line the launcher writes (JSON) for its node agent.
type Event struct {
	// Event is one of: tcg, change (a pod-provided change), started,
	// panic (the guest's kernel), marker, agent (the guest agent channel's state, as virt-handler
	// reads it), ready (guest-ping, virtc's readiness probe), promises
	// (what the guest sees against the VMI), stopped, error.
	Event  string   `json:"event"`
	Detail string   `json:"detail,omitempty"`
	OK     bool     `json:"ok,omitempty"`
	List   []string `json:"list,omitempty"`
}

// agentChannel is the guest agent channel's target in the live domain,
// whose state virt-handler turns into the VMI's AgentConnected condition
// (KubeVirt v1.8.4 pkg/virt-handler/vm.go updateGuestAgentConditions).
var agentChannel = regexp.MustCompile(`<target type='virtio' name='org\.qemu\.guest_agent\.0'(?: state='(\w+)')?`)

// kernelPanic is a guest kernel's panic on the serial console: the
// domain keeps running (it has no panic device), so the suites fail at
// once rather than after their waits.
var kernelPanic = regexp.MustCompile(`Kernel panic - not syncing:[^\r\n]*`)

// Launch boots the VMI's domain with its own libvirtd, as virt-launcher
// does with its virtqemud, and reports what virt-handler and the kubelet
// learn from the pod: the domain running, the guest agent channel, the
// readiness probe. When ctx ends it shuts the guest down as virt-handler
// does for a VMI being deleted (a graceful shutdown within the VMI's
// termination grace period, then destroy), and returns.
func Launch(ctx context.Context, o LaunchOptions, events io.Writer) error {
	var mu sync.Mutex
	emit := func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(ev)
		fmt.Fprintf(events, "%s\n", b)
	}
	vmi := o.VMI
	kvm, why := hostKVM()
	if !kvm {
		emit(Event{Event: "tcg", Detail: why})
	}
	lv, err := startLibvirt(filepath.Join(o.Dir, "libvirt"), kvm)
	if err != nil {
		return err
	}
	defer lv.stop()
	disks, blockDV, err := podDisks(vmi, o.Claims)
	if err != nil {
		return err
	}
	l := &launcher{dir: o.Dir, hostKVM: kvm, marker: o.Marker, blockDV: blockDV, disks: disks}
	name, domXML, changes, err := l.start(lv, vmi, o.Image, nil)
	bg := context.Background()
	if name != "" {
		defer func() { _, _ = lv.virsh(bg, "undefine", "--nvram", "--tpm", name) }()
	}
	if err != nil {
		return err
	}
	for _, c := range changes {
		emit(Event{Event: "change", Detail: c})
	}
	started := time.Now()
	emit(Event{Event: "started", Detail: name})
	serial := ""
	if m := logFileRE.FindStringSubmatch(domXML); m != nil {
		serial = m[1]
	}

	agent, ready, marker, checked, panicked := "", false, false, false, false
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return shutdown(lv, name, vmi, emit)
		case <-tick.C:
		}
		if err := domainAlive(bg, lv, name); err != nil {
			// the guest powered itself off (shut off, reason shutdown:
			// virt-handler's Succeeded) or crashed
			out, _ := lv.virsh(bg, "domstate", name, "--reason")
			state := strings.TrimSpace(out)
			emit(Event{Event: "stopped", OK: state == "shut off (shutdown)", Detail: fmt.Sprintf("%s (%v), %s after start", state, err, time.Since(started).Round(time.Second))})
			return nil
		}
		if serial != "" && (!panicked || o.Marker != "" && !marker) {
			data, _ := os.ReadFile(serial)
			if m := kernelPanic.Find(data); m != nil && !panicked {
				panicked = true
				emit(Event{Event: "panic", Detail: string(m)})
			}
			if o.Marker != "" && !marker && consoleHas(data, o.Marker) {
				marker = true
				emit(Event{Event: "marker", Detail: time.Since(started).Round(time.Second).String()})
			}
		}
		live, err := lv.virsh(bg, "dumpxml", name)
		if err == nil {
			state := ""
			if m := agentChannel.FindStringSubmatch(live); m != nil {
				state = m[1]
			}
			if state != agent {
				agent = state
				emit(Event{Event: "agent", OK: state == "connected", Detail: state})
			}
		}
		if ok := lv.agentAnswers(bg, name); ok != ready {
			ready = ok
			emit(Event{Event: "ready", OK: ok, Detail: time.Since(started).Round(time.Second).String()})
		}
		if ready && !checked {
			checked = true
			facts, err := readFacts(bg, lv, name)
			if err != nil {
				emit(Event{Event: "promises", List: []string{err.Error()}})
				continue
			}
			bad := checkPromises(vmi, l.wantDisks(vmi), o.SSHKeys, facts)
			emit(Event{Event: "promises", OK: len(bad) == 0, List: bad, Detail: facts.String()})
		}
	}
}

// start writes the claims' files and the VMI's domain under l.dir and
// starts the domain with lv, as virt-launcher's SyncVMI does; edit, when
// set, may change what the pod holds before the domain is defined (the
// boot suite's unreadable cloud-init disk). name is set once the domain
// is defined (the caller undefines it), changes are the pod-provided
// changes.
func (l *launcher) start(lv *libvirt, vmi *virtv1.VirtualMachineInstance, image string, edit func(domXML string) error) (name, domXML string, changes []string, err error) {
	if err := l.createDisks(image); err != nil {
		return "", "", nil, err
	}
	if domXML, changes, err = l.domain(vmi); err != nil {
		return "", "", nil, err
	}
	if err := l.mkdirs(domXML); err != nil {
		return "", "", nil, err
	}
	if edit != nil {
		if err := edit(domXML); err != nil {
			return "", "", nil, err
		}
	}
	domFile := filepath.Join(l.dir, "domain.xml")
	if err := os.WriteFile(domFile, []byte(domXML), 0o644); err != nil {
		return "", "", nil, err
	}
	bg := context.Background()
	if _, err := lv.virsh(bg, "define", domFile); err != nil {
		return "", domXML, changes, fmt.Errorf("%v\n%s", err, domXML)
	}
	name = vmi.Namespace + "_" + vmi.Name
	if _, err := lv.virsh(bg, "start", name); err != nil {
		return name, domXML, changes, err
	}
	return name, domXML, changes, nil
}

// consoleHas says whether the serial console printed line as a line of
// its own.
func consoleHas(data []byte, line string) bool {
	return bytes.Contains(data, []byte(line+"\n")) || bytes.Contains(data, []byte(line+"\r\n"))
}

// shutdown ends the domain as virt-handler ends a deleted VMI's:
// virt-launcher's SignalShutdownVMI (KubeVirt v1.8.4
// pkg/virt-launcher/virtwrap/manager.go) asks libvirt for its default
// shutdown (DOMAIN_SHUTDOWN_DEFAULT: libvirt's QEMU driver has the guest
// agent shut the guest down when it is connected, else presses the ACPI
// power button), and virt-handler destroys the domain once the VMI's
// termination grace period has passed (pkg/virt-handler/vm.go
// processVmShutdown).
func shutdown(lv *libvirt, name string, vmi *virtv1.VirtualMachineInstance, emit func(Event)) error {
	bg := context.Background()
	grace := time.Duration(virtv1.DefaultGracePeriodSeconds) * time.Second
	if g := vmi.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	began := time.Now()
	if _, err := lv.virsh(bg, "shutdown", name); err != nil {
		emit(Event{Event: "error", Detail: err.Error()})
	}
	deadline := began.Add(grace)
	failures := 0
	for time.Now().Before(deadline) {
		out, err := lv.virsh(bg, "domstate", name, "--reason")
		switch {
		case err == nil && strings.HasPrefix(strings.TrimSpace(out), "shut off"):
			emit(Event{Event: "stopped", OK: true, Detail: fmt.Sprintf("%s, %s after the shutdown request", strings.TrimSpace(out), time.Since(began).Round(time.Second))})
			return nil
		case err != nil:
			if failures++; failures > 10 {
				emit(Event{Event: "stopped", Detail: err.Error()})
				return err
			}
		}
		time.Sleep(time.Second)
	}
	_, err := lv.virsh(bg, "destroy", name)
	emit(Event{Event: "stopped", Detail: fmt.Sprintf("destroyed after the grace period of %s", grace)})
	return err
}
