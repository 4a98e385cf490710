package boot

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// libvirt is a libvirtd (and the virtlogd it writes QEMU's logs through)
// started by the suite, listening on a private socket.
type libvirt struct {
	dir   string
	uri   string
	procs []*exec.Cmd
}

// startLibvirt starts virtlogd and libvirtd with their configuration and
// sockets under dir. Root's libvirtd keeps its QEMU state in /run/libvirt
// (fixed at build time); the suite's domains have names of their own.
//
// Without a usable /dev/kvm (hostKVM false), libvirtd runs in a mount
// namespace where /dev/kvm is a file its QEMU user cannot open, as a
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
	if _, err := os.Stat("/run/libvirt/virtlogd-sock"); err != nil {
		vl := exec.Command("virtlogd")
		vl.Stdout, vl.Stderr = logFile(dir, "virtlogd.out"), logFile(dir, "virtlogd.out")
		if err := vl.Start(); err != nil {
			return nil, fmt.Errorf("virtlogd: %v", err)
		}
		l.procs = append(l.procs, vl)
	}
	// libvirtd's QEMU driver reads /etc/libvirt/qemu.conf, fixed for
	// root: the suite's own one is bind-mounted over it in libvirtd's
	// mount namespace. namespaces = []: no private /dev per domain (it
	// cannot copy the hidden /dev/kvm below, and the suite needs none).
	qconf := filepath.Join(dir, "qemu.conf")
	if err := os.WriteFile(qconf, []byte("namespaces = [ ]\n"), 0o644); err != nil {
		return nil, err
	}
	script := `mount --bind "$1" /etc/libvirt/qemu.conf; shift`
	args := []string{qconf}
	if !kvm {
		nokvm := filepath.Join(dir, "no-kvm")
		if err := os.WriteFile(nokvm, nil, 0o600); err != nil {
			return nil, err
		}
		script += `; mount --bind "$1" /dev/kvm; shift`
		args = append(args, nokvm)
	}
	args = append(args, "libvirtd", "--config", conf, "--pid-file", filepath.Join(dir, "libvirtd.pid"))
	ld := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-ec", script + `; exec "$@"`, "sh"}, args...)...)
	ld.Stdout, ld.Stderr = logFile(dir, "libvirtd.out"), logFile(dir, "libvirtd.out")
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
}

// hostKVM says whether /dev/kvm can run the guest's firmware: a
// paravirtual KVM (PVM, as on this CI machine) opens but fails on the
// firmware's first instructions ("KVM internal error ... emulation
// failure"), so OVMF is run under KVM for a few seconds to see.
func hostKVM() (bool, string) {
	if _, err := os.Stat("/dev/kvm"); err != nil {
		return false, "no /dev/kvm"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	var errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", "-accel", "kvm", "-M", "q35", "-m", "128",
		"-nodefaults", "-display", "none", "-monitor", "none", "-serial", "none",
		"-drive", "if=pflash,format=raw,readonly=on,file="+ovmfNames["OVMF_CODE.fd"])
	cmd.Stderr = &errb
	err := cmd.Run()
	msg := errb.String()
	if strings.Contains(msg, "KVM internal error") || strings.Contains(msg, "failed to initialize") ||
		(err != nil && ctx.Err() == nil) {
		line := strings.SplitN(strings.TrimSpace(msg), "\n", 3)
		return false, "/dev/kvm cannot run firmware (" + strings.Join(line[:min(2, len(line))], "; ") + ")"
	}
	return true, ""
}
