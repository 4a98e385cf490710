package render

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/model"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/test/conform"
)

// Hostile values, each planting a command that creates a file named after
// it in the script's working directory if the shell ever reads it as
// syntax. restore-plan refuses them on its command line and decode in Git;
// the script must be safe without either check.
const (
	hostileNS       = "ns$(touch pwned-ns)"
	hostileVM       = "vm`touch pwned-vm`"
	hostileDisk     = "d;touch pwned-disk"
	hostileNetwork  = `n"$(touch pwned-net)"`
	hostilePolicy   = "p$(touch pwned-policy)"
	hostileApp      = "a}';touch pwned-app;'"
	hostileBackup   = "b\ntouch pwned-backup"
	hostileTarget   = "t'$(touch pwned-to)'"
	hostileSnapshot = "s\n`touch pwned-snap`'"
)

// hostilePlan is a plan of mode for a VM whose every name is hostile.
func hostilePlan(mode RestoreMode) RestorePlan {
	doc := &source.Doc{Rel: "inputs.yaml"}
	policy := &api.BackupPolicy{Spec: api.BackupPolicySpec{Schedule: "0 2 * * *"}}
	bridge := &api.NetworkProfile{Spec: api.NetworkProfileSpec{Type: api.NetworkBridge}}
	pod := &api.NetworkProfile{Spec: api.NetworkProfileSpec{Type: api.NetworkPod}}
	t := &resolve.Tenant{Tenant: decode.Tenant{Tenant: &api.Tenant{}, Doc: doc}, Name: hostileNS}
	vm := &resolve.VM{
		VM:          decode.VM{VM: &api.VM{}, Doc: doc},
		Tenant:      t,
		Name:        hostileVM,
		Namespace:   hostileNS,
		ImageName:   "img\ntouch pwned-image",
		Image:       &api.Image{},
		RunStrategy: "Always",
		Backup:      resolve.Backup{Name: hostilePolicy, BackupPolicy: policy},
		Disks:       []resolve.Disk{{Disk: api.Disk{Name: hostileDisk}}},
		Networks:    []resolve.Network{{Name: "default", NetworkProfile: pod}, {Name: hostileNetwork, NetworkProfile: bridge}},
	}
	t.VMs = []*resolve.VM{vm}
	p := RestorePlan{Mode: mode, Tenant: t, App: hostileApp}
	switch mode {
	case RestoreInPlace:
		p.VM, p.Backup = vm, hostileBackup
	case RestoreCopy:
		p.VM, p.TargetNamespace = vm, hostileTarget
	case RestoreSnapshot:
		p.VM, p.Snapshot = vm, hostileSnapshot
	}
	return p
}

// No value in a restore plan's script runs as a command: the script of
// every mode, with every name hostile, parses (bash -n) and runs to its
// end with stub tools, which receive each name as one argument, and no
// planted command runs. Each here-document holds a line EOF followed by
// a command, which must stay in the document.
func TestRestoreScriptQuotesEveryValue(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		conform.Skipped(t, "no bash")
	}
	tools := t.TempDir()
	// Each call logs its arguments in brackets, and kubectl create its
	// standard input; the answers let the script run to its end.
	stub := `#!/usr/bin/env bash
printf '%s' "$(basename "$0")" >> "$STUB_LOG"
printf ' [%s]' "$@" >> "$STUB_LOG"
echo >> "$STUB_LOG"
if [ "$1" = create ]; then cat >> "$STUB_LOG"; fi
# the copy's target holds no VM of that name
if [ "$3 $4 $#" = "get virtualmachine 5" ]; then exit 1; fi
case "$*" in
  *"get clusterserviceversions"*) printf 'kubevirt-hyperconverged-operator.v4.22.2\n' ;;
  *"jsonpath={.spec.syncPolicy.automated.enabled}"*) echo false ;;
  *"jsonpath={.status.sync.status}"*) echo Synced ;;
  *"jsonpath={.status.phase}"*) echo Completed ;;
  *"includedVolumes"*) printf '%s\n' "$STUB_INCLUDED" ;;
esac
exit 0
`
	for _, tool := range []string{"kubectl", "argocd", "velero", "virtctl", "sleep"} {
		if err := os.WriteFile(filepath.Join(tools, tool), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []RestoreMode{RestoreInPlace, RestoreCopy, RestoreTenant, RestoreOtherCluster, RestoreSnapshot} {
		t.Run(string(mode), func(t *testing.T) {
			p := hostilePlan(mode)
			var docs [][]byte
			for range p.Objects() {
				docs = append(docs, []byte("kind: Restore\nEOF\ntouch pwned-heredoc\n"))
			}
			script := p.Script(docs)
			if out, err := exec.Command(bash, "-n", "-c", script).CombinedOutput(); err != nil {
				t.Fatalf("bash -n: %v\n%s\n%s", err, out, script)
			}
			dir := t.TempDir()
			log := filepath.Join(t.TempDir(), "log")
			cmd := exec.Command(bash, "-c", script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+tools+":"+os.Getenv("PATH"), "STUB_LOG="+log,
				"STUB_INCLUDED="+model.RootVolume+"\n"+hostileDisk, "DRILL_LINK=https://ci.example.com/1", "APP=")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("the script stops: %v\n%s", err, out)
			}
			if pwned, _ := filepath.Glob(filepath.Join(dir, "pwned-*")); len(pwned) > 0 {
				t.Errorf("the script ran planted commands: %v\n%s", pwned, script)
			}
			data, _ := os.ReadFile(log)
			calls := string(data)
			want := []string{"[" + hostileNS + "]", "[" + hostileApp + "]"}
			switch mode {
			case RestoreCopy:
				want = []string{"[" + hostileTarget + "]", "[" + hostileVM + "]"}
			case RestoreSnapshot:
				want = append(want, "[virtualmachinesnapshot/"+hostileSnapshot+"]", "["+hostileVM+"-"+hostileDisk+"]")
			case RestoreInPlace, RestoreTenant:
				want = append(want, "["+hostileVM+"-"+hostileDisk+"]")
			}
			for _, arg := range want {
				if !strings.Contains(calls, arg) {
					t.Errorf("no call has the argument %s:\n%s", arg, calls)
				}
			}
			if !strings.Contains(calls, "\nEOF\ntouch pwned-heredoc\n") {
				t.Errorf("kubectl create did not read the whole document:\n%s", calls)
			}
			if mode != RestoreInPlace {
				return
			}
			// The drill's Evidence names the tenant and policy as they are.
			files, _ := filepath.Glob(filepath.Join(dir, "restore-drill-*.yaml"))
			if len(files) != 1 {
				t.Fatalf("the script wrote %v, want one Evidence file\n%s", files, out)
			}
			data, err = os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			var ev struct {
				Spec struct {
					Covers struct {
						BackupPolicy string `yaml:"backupPolicy"`
						Tenant       string `yaml:"tenant"`
					} `yaml:"covers"`
				} `yaml:"spec"`
			}
			if err := yaml.Unmarshal(data, &ev); err != nil {
				t.Fatalf("the Evidence is not YAML: %v\n%s", err, data)
			}
			if c := ev.Spec.Covers; c.Tenant != hostileNS || c.BackupPolicy != hostilePolicy {
				t.Errorf("the Evidence covers tenant %q and policy %q, want %q and %q\n%s", c.Tenant, c.BackupPolicy, hostileNS, hostilePolicy, data)
			}
		})
	}
}

// The quoting leaves plain values, which every valid name is, as they
// are, so that the plans of valid inputs read as they did; any other value
// is one word, or stays within the string it is put in.
func TestShellQuoting(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		conform.Skipped(t, "no bash")
	}
	for _, s := range []string{"shop", "db-1.example", "velero.io/schedule-name=shop-daily", ":PersistentVolumeClaim:shop/web-1-data"} {
		if sh(s) != s || shDQ(s) != s || shSQ(s) != s || hd(s) != s || cm(s) != s {
			t.Errorf("%q is quoted: %s %s %s %s %s", s, sh(s), shDQ(s), shSQ(s), hd(s), cm(s))
		}
	}
	dir := t.TempDir()
	for _, s := range []string{"x$(touch pwned)", "a;touch pwned", "a\ntouch pwned", "`touch pwned`", "'", `"\`, "", "a b", "$HOME", "-"} {
		script := "printf '[%s]' " + sh(s) + ` "x` + shDQ(s) + `y" '` + shSQ(s) + "'"
		cmd := exec.Command(bash, "-c", script)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("%q: %v: %s", s, err, script)
			continue
		}
		json := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
		if want := "[" + s + "][x" + s + "y][" + json + "]"; string(out) != want {
			t.Errorf("%q: %s prints %q, want %q", s, script, out, want)
		}
		if strings.ContainsAny(cm(s), "\n\r") {
			t.Errorf("%q in a comment is %q: a line break ends the comment", s, cm(s))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a planted command ran")
	}
}
