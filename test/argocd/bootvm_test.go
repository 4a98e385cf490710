package argocd

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/virtc/virtc/test/controllers"
)

// bootWait bounds each wait on the guest: under QEMU's TCG emulation a
// boot takes about 2 minutes on a quiet machine, several beside the
// suite's control planes.
const bootWait = 15 * time.Minute

// bootTools are the suite's virt-launcher command and the guest image of
// the boot suite (test/boot/tools/build-image.sh, cached by its recipe's
// hash), or why they are missing: the launcher says what else a boot
// needs (virt-launcher -check, the boot suite's own check).
func bootTools() (launcher, image string, missing []string) {
	launcher = os.Getenv("VIRTC_BOOT_LAUNCHER")
	if launcher == "" {
		launcher, _ = filepath.Abs(filepath.Join(repoRoot, "bin", "virt-launcher"))
	}
	if _, err := os.Stat(launcher); err != nil {
		return "", "", []string{launcher + " (make boot-launcher)"}
	}
	var stderr strings.Builder
	check := exec.Command(launcher, "-check")
	check.Stderr = &stderr
	if err := check.Run(); err != nil {
		return "", "", []string{fmt.Sprintf("%s (virt-launcher -check: %v)", strings.TrimSpace(stderr.String()), err)}
	}
	out, err := exec.Command(filepath.Join(repoRoot, "test", "boot", "tools", "build-image.sh")).Output()
	if err != nil {
		return "", "", []string{fmt.Sprintf("the guest image (test/boot/tools/build-image.sh: %v)", err)}
	}
	return launcher, strings.TrimSpace(string(out)), nil
}

// bootIntent is a VM of tenant shop whose user data writes marker to the
// serial console.
func bootIntent(marker, runStrategy string) string {
	return fmt.Sprintf(`apiVersion: virtc.dev/v1alpha1
kind: VM
metadata:
  name: boot01
  namespace: shop
  labels: {app: shop}
spec:
  size: u1.small
  image: ubuntu-24.04
  runStrategy: %s
  cloudInit:
    userData: |
      #cloud-config
      runcmd:
        - [sh, -c, "echo %s > /dev/ttyS0"]
`, runStrategy, marker)
}

// liveVMI is what the scenario reads of a live VMI.
type liveVMI struct {
	Metadata struct {
		UID string `json:"uid"`
	} `json:"metadata"`
	Status struct {
		Phase      string     `json:"phase"`
		Conditions conditions `json:"conditions"`
	} `json:"status"`
}

// conditions are a status's conditions as the scenarios read them.
type conditions []struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// status is the status of condition t ("" without one).
func (cs conditions) status(t string) string {
	for _, c := range cs {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// (15) A VM boots from a sync and halts from Git (issue 30): the node
// agent boots the guest of boot01's VMI with KubeVirt's launcher code
// (controllers.Guests) when virt-controller hands the VMI over. The VMI's
// Running, Ready (virt-controller, from the launcher pod's readiness: the
// guest agent answering guest-ping, virtc's probe) and AgentConnected
// (the guest agent channel) come from the guest; the guest ran virtc's
// user data and sees what the VM promises. runStrategy Halted in Git then
// makes virt-controller delete the VMI, and the guest shuts down as
// virt-launcher asks libvirt to: the VMI ends Succeeded and the VM is
// Stopped.
func (e *env) vmBootsAndHalts() {
	home := e.home
	if home.kv == nil {
		e.t.Fatal("KubeVirt does not run in in-cluster")
	}
	launcher, image, missing := bootTools()
	if len(missing) > 0 {
		if os.Getenv("VIRTC_REQUIRE_TOOLS") == "1" {
			e.t.Fatalf("booting a VM needs %s", strings.Join(missing, ", "))
		}
		e.t.Skipf("booting a VM needs %s", strings.Join(missing, ", "))
	}
	dir, err := os.MkdirTemp("/tmp", "vg.")
	if err != nil {
		e.t.Fatal(err)
	}
	guests := &controllers.Guests{Launcher: launcher, Image: image, Dir: dir}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	marker := "virtc-e2e-boot-" + hex.EncodeToString(b)
	guests.Boot("shop", "boot01", marker)
	home.nodes.SetGuests(guests)
	defer func() {
		guests.Stop()
		home.nodes.SetGuests(nil)
		if !e.t.Failed() {
			os.RemoveAll(dir)
		}
	}()
	path := appDir + "/boot01.yaml"

	start := time.Now()
	rev := e.commit("boot01: a VM whose guest boots", map[string]string{path: bootIntent(marker, "Always")})
	e.refresh()
	var gu *controllers.Guest
	// a launcher that fails ends the wait with what it said, not with
	// the VM's CrashLoopBackOff it leads to
	guestAlive := func() {
		if err := guests.Err(); err != nil {
			e.t.Fatal(err)
		}
		gu = guests.Latest("shop", "boot01")
		if gu != nil && gu.Saw("panic") {
			e.t.Fatalf("boot01's guest kernel panicked: %+v", gu.Events())
		}
		if gu != nil && gu.Exited() {
			log, _ := os.ReadFile(gu.Log())
			e.t.Fatalf("the launcher of boot01 ended: %+v\n%s", gu.Events(), log)
		}
	}
	e.waitApp("boot01 added", func(a app) bool { guestAlive(); return synced(rev)(a) })
	e.t.Logf("boot01 synced in %s", time.Since(start).Round(time.Second))
	vmi := e.waitVMI("boot01", "its guest agent connected and ready", func(v liveVMI) bool {
		guestAlive()
		return v.Status.Phase == "Running" && v.Status.Conditions.status("AgentConnected") == "True" && v.Status.Conditions.status("Ready") == "True"
	})
	e.t.Logf("boot01's VMI %s Running, AgentConnected and Ready %s after the commit", vmi.Metadata.UID, time.Since(start).Round(time.Second))
	vm := e.waitVM("boot01", "running and ready", func(vm liveVM) bool { return vm.Status.PrintableStatus == "Running" && vm.Status.Ready })
	e.t.Logf("VM boot01: %s, ready %v", vm.Status.PrintableStatus, vm.Status.Ready)
	// what the launcher saw: the user data's marker, the promises
	deadline := time.Now().Add(bootWait)
	for !gu.Saw("marker") || !gu.Saw("promises") {
		if gu.Exited() || time.Now().After(deadline) {
			e.t.Fatalf("boot01: marker seen %v, promises checked %v (launcher ended %v): %+v", gu.Saw("marker"), gu.Saw("promises"), gu.Exited(), gu.Events())
		}
		time.Sleep(2 * time.Second)
	}
	for _, ev := range gu.Events() {
		switch ev.Event {
		case "tcg", "change":
			e.t.Logf("launcher: %s: %s", ev.Event, ev.Detail)
		case "marker":
			e.t.Logf("virtc's user data ran in the guest (marker on the serial console %s after start)", ev.Detail)
		case "promises":
			if !ev.OK {
				e.t.Errorf("boot01's guest does not see what the VM promises:\n  %s", strings.Join(ev.List, "\n  "))
			} else {
				e.t.Logf("boot01's guest sees what its VMI promises: %s", ev.Detail)
			}
		}
	}

	// halted from Git
	since := time.Now()
	rev = e.commit("boot01: Halted", map[string]string{path: bootIntent(marker, "Halted")})
	e.refresh()
	e.waitApp("boot01 halted", synced(rev))
	e.waitVM("boot01", "stopped", printable("Stopped"))
	if !gu.Exited() {
		e.t.Fatalf("VM boot01 Stopped while its guest still runs: %+v", gu.Events())
	}
	shut := false
	for _, ev := range gu.Events() {
		if ev.Event == "stopped" {
			shut = ev.OK
			e.t.Logf("boot01's guest: %s", ev.Detail)
		}
	}
	if !shut {
		e.t.Errorf("boot01's guest did not shut down within its grace period: %+v", gu.Events())
	}
	if _, err := e.cp.Get(e.ctx, "/apis/kubevirt.io/v1/namespaces/shop/virtualmachineinstances/boot01"); err == nil {
		e.t.Errorf("boot01's VMI still exists after the VM stopped")
	}
	e.t.Logf("boot01 halted from Git: guest shut down, VM Stopped %s after the commit", time.Since(since).Round(time.Second))
}

// waitVMI waits, up to bootWait, until shop/name's VMI is ok.
func (e *env) waitVMI(name, what string, ok func(v liveVMI) bool) liveVMI {
	e.t.Helper()
	v, err := waitLive(e, "/apis/kubevirt.io/v1/namespaces/shop/virtualmachineinstances/"+name, bootWait, 2*time.Second, ok)
	if err != nil {
		e.t.Fatalf("VMI shop/%s: %s: %v: %+v", name, what, err, v)
	}
	return v
}
