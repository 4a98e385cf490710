// Command virt-launcher is the end-to-end suite's virt-launcher pod for
// one VMI (package boot, Launch): KubeVirt v1.8.4's cloud-init generator
// and converter to the libvirt domain, booted by its own libvirtd. It
// writes events as JSON lines on stdout and shuts the guest down on
// SIGTERM, as the kubelet stops a deleted launcher pod. With -check it
// only says what a boot needs and the machine lacks.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	virtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/test/boot/internal/launcher"
)

type claims map[string]launcher.Claim

func (c claims) String() string { return fmt.Sprint(map[string]launcher.Claim(c)) }

// Set takes name=bytes[:block].
func (c claims) Set(v string) error {
	name, rest, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want name=bytes[:block], got %q", v)
	}
	size, mode, _ := strings.Cut(rest, ":")
	n, err := strconv.ParseInt(size, 10, 64)
	if err != nil {
		return err
	}
	c[name] = launcher.Claim{Size: n, Block: mode == "block"}
	return nil
}

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	o := launcher.LaunchOptions{Claims: claims{}}
	var vmiFile string
	var keys list
	flag.StringVar(&vmiFile, "vmi", "", "the VMI (JSON, as the API server has it)")
	flag.StringVar(&o.Dir, "dir", "", "the pod's private directory")
	flag.StringVar(&o.Image, "image", "", "the guest image of the boot disk's claim")
	flag.StringVar(&o.Marker, "marker", "", "a line the user data writes to the serial console")
	flag.Var(claims(o.Claims), "claim", "a claim the pod mounts: name=bytes[:block] (repeated)")
	flag.Var(&keys, "ssh-key", "an access credential's key the guest must have (repeated)")
	check := flag.Bool("check", false, "only say what a guest boot needs and this machine lacks (exit 1 if anything)")
	flag.Parse()
	if *check {
		if missing := launcher.Missing(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "%s (%s)\n", strings.Join(missing, ", "), launcher.InstallHint)
			os.Exit(1)
		}
		return
	}
	o.SSHKeys = keys
	data, err := os.ReadFile(vmiFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	o.VMI = &virtv1.VirtualMachineInstance{}
	if err := json.Unmarshal(data, o.VMI); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := launcher.Launch(ctx, o, os.Stdout); err != nil {
		b, _ := json.Marshal(launcher.Event{Event: "error", Detail: err.Error()})
		fmt.Println(string(b))
		os.Exit(1)
	}
}
