package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// restore-plan refuses a flag value that is not the name it stands for,
// before it compiles anything: the value would go into the script a
// cluster administrator runs. The message names the flag and the value
// and says what a right one is.
func TestRestorePlanRefusesNamesThatAreNot(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	inputs := "../../golden/restore-in-place/inputs.yaml"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--app", "x$(touch " + marker + ")", "shop/web-1"}, "not an Argo CD Application name"},
		{[]string{"--app", "argocd/virtc-vms", "shop/web-1"}, "--app virtc-vms) and run the script with ARGOCD_NS=argocd"},
		{[]string{"--app", "Virtc", "shop/web-1"}, "not an Argo CD Application name"},
		{[]string{"--to", "a;rm -rf /", "shop/web-1"}, "not a namespace name: a DNS-1123 label"},
		{[]string{"--to", "shop.drill", "shop/web-1"}, "not a namespace name"},
		{[]string{"--to", "`touch " + marker + "`", "shop/web-1"}, "not a namespace name"},
		{[]string{"--snapshot", "a\nb", "shop/db-1"}, "not a VirtualMachineSnapshot name: a DNS-1123 subdomain"},
		{[]string{"--snapshot", "it's", "shop/db-1"}, "not a VirtualMachineSnapshot name"},
		{[]string{"--backup", "b$(id)", "shop/web-1"}, "not a Velero Backup name"},
	} {
		code, out, errOut := run(append(append([]string{"restore-plan"}, c.args...), inputs)...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, c.args[0]) {
			t.Errorf("restore-plan %q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, errOut, ExitUsage, c.want)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a planted command ran")
	}
	// Names are still names.
	for _, args := range [][]string{
		{"--app", "virtc-vms", "--to", "shop-drill", "shop/web-1"},
		{"--app", "virtc.vms", "--backup", "shop-daily-20261201020000", "shop/web-1"},
		{"--snapshot", "db-1-2026-12-01-upgrade", "shop/db-1"},
	} {
		if code, _, errOut := run(append(append([]string{"restore-plan"}, args...), inputs)...); code != ExitOK {
			t.Errorf("restore-plan %q: exit %d: %s", args, code, errOut)
		}
	}
}
