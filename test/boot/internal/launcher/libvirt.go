package launcher

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// libvirt is a libvirtd (and the virtlogd it writes QEMU's logs through)
// started by the suite, listening on a private socket, with a private
// runtime directory.
type libvirt struct {
	dir   string
	uri   string
	procs []*exec.Cmd
	// pidFiles name daemons started inside libvirtd's namespace (its
	// virtlogd), ended after it.
	pidFiles []string
}

// startLibvirt starts virtlogd and libvirtd with their configuration and
// sockets under dir. Root's libvirtd keeps its QEMU state in /run/libvirt
// (fixed at build time); the suite's domains have names of their own.
//
// With a /dev/kvm that cannot run the guest (hostKVM false), libvirtd
// runs in a mount namespace where /dev/kvm is a file its QEMU user cannot
// open, as a
// virt-launcher pod of a VMI under useEmulation has no /dev/kvm: libvirt
// 9.0 otherwise sees /dev/kvm, finds QEMU's KVM probe failing, and probes
// QEMU's capabilities again on every lookup.
func startLibvirt(dir string, kvm bool) (*libvirt, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l := &libvirt{dir: dir}
	sock := filepath.Join(dir, "libvirt-sock")
	conf := filepath.Join(dir, "libvirtd.conf")
	cfg := fmt.Sprintf("unix_sock_dir = %q\nlisten_tls = 0\nlisten_tcp = 0\nauth_unix_rw = \"none\"\nlog_outputs = \"3:file:%s\"\n", dir, filepath.Join(dir, "libvirtd.log"))
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	// libvirtd's QEMU driver reads /etc/libvirt/qemu.conf, fixed for
	// root: the suite's own one is bind-mounted over it in libvirtd's
	// mount namespace. namespaces = []: no private /dev per domain (it
	// cannot copy the hidden /dev/kvm below, and the suite needs none).
	qconf := filepath.Join(dir, "qemu.conf")
	if err := os.WriteFile(qconf, []byte("namespaces = [ ]\n"), 0o644); err != nil {
		return nil, err
	}
	// Root's runtime directory (/run/libvirt: QEMU driver state, swtpm
	// sockets, virtlogd's socket) is fixed at build time, so the suite
	// gives its libvirtd and virtlogd a private one in their mount
	// namespace: a host libvirt, running or dead (a stale virtlogd-sock
	// refused every domain start in CI), cannot meet them. virtlogd is
	// the suite's own, as virt-launcher starts its own beside virtqemud
	// (KubeVirt v1.8.4 pkg/virt-launcher/virtwrap/util/libvirt_helper.go,
	// StartVirtlog).
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		return nil, err
	}
	vlpid := filepath.Join(dir, "virtlogd.pid")
	script := `mount --bind "$1" /etc/libvirt/qemu.conf; shift
mkdir -p /run/libvirt; mount --bind "$1" /run/libvirt; shift
virtlogd --pid-file "$1" >>"$2" 2>&1 & shift 2
i=0; while [ ! -S /run/libvirt/virtlogd-sock ]; do i=$((i+1)); [ $i -lt 100 ] || { echo "virtlogd did not start" >&2; exit 1; }; sleep 0.1; done`
	args := []string{qconf, run, vlpid, filepath.Join(dir, "virtlogd.out")}
	l.pidFiles = append(l.pidFiles, vlpid)
	// A machine without /dev/kvm has nothing to hide (and nowhere to
	// mount over).
	if _, err := os.Stat("/dev/kvm"); !kvm && err == nil {
		nokvm := filepath.Join(dir, "no-kvm")
		if err := os.WriteFile(nokvm, nil, 0o600); err != nil {
			return nil, err
		}
		script += "\nmount --bind \"$1\" /dev/kvm; shift"
		args = append(args, nokvm)
	}
	args = append(args, "libvirtd", "--config", conf, "--pid-file", filepath.Join(dir, "libvirtd.pid"))
	ld := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-ec", script + "\nexec \"$@\"", "sh"}, args...)...)
	ld.Stdout, ld.Stderr = logFile(dir, "libvirtd.out"), logFile(dir, "libvirtd.out")
	// its own process group: a signal to the caller's group (a launcher
	// told to shut its guest down) must not end libvirtd first
	ld.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ld.Start(); err != nil {
		l.stop()
		return nil, fmt.Errorf("libvirtd: %v", err)
	}
	l.procs = append(l.procs, ld)
	l.uri = "qemu:///system?socket=" + sock
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := l.virsh(context.Background(), "version"); err == nil {
			return l, nil
		} else if time.Now().After(deadline) {
			l.stop()
			out, _ := os.ReadFile(filepath.Join(dir, "libvirtd.out"))
			return nil, fmt.Errorf("libvirtd did not answer on %s: %v\n%s", sock, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func logFile(dir, name string) *os.File {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	return f
}

// logFileRE finds the file the domain's serial console is logged to
// (virt-launcher's SerialConsoleLog, on by default).
var logFileRE = regexp.MustCompile(`<log file="([^"]+)"`)

// domainAlive errs unless the domain runs.
func domainAlive(ctx context.Context, lv *libvirt, name string) error {
	out, err := lv.virsh(ctx, "domstate", name)
	if err != nil {
		return err
	}
	if s := strings.TrimSpace(out); s != "running" {
		return fmt.Errorf("domain %s is %s", name, s)
	}
	return nil
}

// agentAnswers says whether the domain's guest agent answers guest-ping
// (virtc's readiness probe).
func (l *libvirt) agentAnswers(ctx context.Context, name string) bool {
	out, err := l.virsh(ctx, "qemu-agent-command", name, `{"execute":"guest-ping"}`)
	return err == nil && strings.TrimSpace(out) == `{"return":{}}`
}

// virsh runs virsh against the suite's libvirtd.
func (l *libvirt) virsh(ctx context.Context, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "virsh", append([]string{"-c", l.uri}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("virsh %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// stop ends the processes startLibvirt started, libvirtd first.
func (l *libvirt) stop() {
	for i := len(l.procs) - 1; i >= 0; i-- {
		p := l.procs[i]
		if p.Process == nil {
			continue
		}
		_ = p.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
	}
	l.procs = nil
	for _, f := range l.pidFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(string(b), &pid); err != nil || pid <= 1 {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Signal(os.Interrupt)
		}
	}
	l.pidFiles = nil
}

// Missing is what a guest boot needs and this machine lacks: the tools
// (Debian's packages in InstallHint) and root (debootstrap, loop devices,
// libvirtd). The boot suite and the end-to-end suite's launcher
// (virt-launcher -check) ask the same.
func Missing() []string {
	var missing []string
	for _, tool := range []string{"qemu-system-x86_64", "qemu-img", "libvirtd", "virtlogd", "virsh", "swtpm", "xorrisofs", "debootstrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if os.Geteuid() != 0 {
		missing = append(missing, "root (debootstrap, loop devices, libvirtd)")
	}
	return missing
}

// InstallHint installs the tools Missing looks for.
const InstallHint = "apt-get install qemu-system-x86 qemu-utils libvirt-daemon-system ovmf swtpm swtpm-tools debootstrap xorriso fdisk dosfstools mtools"

// hostKVM says whether /dev/kvm can run the guest's firmware: a
// paravirtual KVM (PVM, as on this CI machine) opens but fails on the
// firmware's first instructions ("KVM internal error ... emulation
// failure", after which QEMU pauses rather than exits), so OVMF is run
// under KVM to see. The answer is the first failure QEMU reports, or KVM
// when none came within kvmProbe: on a loaded machine (CI's niced lanes
// beside this one, load 34) QEMU took longer than the 4 s this probe once
// allowed to reach the firmware, and a KVM that could not run it was taken
// for one that could (e2e-argocd, cold at c877596: libvirt then refused
// the domain of type kvm).
func hostKVM() (bool, string) {
	if _, err := os.Stat("/dev/kvm"); err != nil {
		return false, "no /dev/kvm"
	}
	ctx, cancel := context.WithTimeout(context.Background(), kvmProbe)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", "-accel", "kvm", "-M", "q35", "-m", "128",
		"-nodefaults", "-display", "none", "-monitor", "none", "-serial", "none",
		"-drive", "if=pflash,format=raw,readonly=on,file="+ovmfNames["OVMF_CODE.fd"])
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return false, err.Error()
	}
	if err := cmd.Start(); err != nil {
		return false, "qemu-system-x86_64: " + err.Error()
	}
	var msg bytes.Buffer
	failed := make(chan bool, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := stderr.Read(buf)
			msg.Write(buf[:n])
			if t := msg.String(); strings.Contains(t, "KVM internal error") || strings.Contains(t, "failed to initialize") {
				failed <- true
				return
			}
			if err != nil {
				failed <- false
				return
			}
		}
	}()
	var f bool
	select {
	case f = <-failed:
	case <-ctx.Done():
		f = <-failed // the kill closes stderr
	}
	// Still running when the probe ended it: no failure in kvmProbe.
	timedOut := ctx.Err() != nil
	cancel()
	cmd.Wait()
	ok := !f && timedOut
	if !ok {
		line := strings.SplitN(strings.TrimSpace(msg.String()), "\n", 3)
		return false, "/dev/kvm cannot run firmware (" + strings.Join(line[:min(2, len(line))], "; ") + ")"
	}
	return true, ""
}

// kvmProbe is how long hostKVM lets OVMF run under KVM without a failure
// before it takes KVM to work.
const kvmProbe = 20 * time.Second
