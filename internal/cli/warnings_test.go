package cli

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/warnings"
)

func lastDoc(t *testing.T, out string) map[string]any {
	t.Helper()
	docs := strings.Split(out, "---\n")
	var m map[string]any
	if err := yaml.Unmarshal([]byte(docs[len(docs)-1]), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWarningsConfigMap: --warnings-configmap appends a ConfigMap with the
// warnings as stderr lists them, the same bytes on every run, and an empty
// one when there are none.
func TestWarningsConfigMap(t *testing.T) {
	dir := "../../golden/platform-full"
	args := []string{"build", "--warnings-configmap", "openshift-cnv/virtc-warnings", dir + "/platform.yaml", dir + "/catalog", dir + "/tenants", dir + "/vms"}
	var out1, out2, plain, stderr bytes.Buffer
	if code := Main(args, strings.NewReader(""), &out1, &stderr); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	Main(args, strings.NewReader(""), &out2, &bytes.Buffer{})
	if !bytes.Equal(out1.Bytes(), out2.Bytes()) {
		t.Error("two builds differ")
	}
	Main([]string{"build", dir + "/platform.yaml", dir + "/catalog", dir + "/tenants", dir + "/vms"}, strings.NewReader(""), &plain, &bytes.Buffer{})
	if !bytes.HasPrefix(out1.Bytes(), plain.Bytes()) {
		t.Error("the ConfigMap is not appended to the unchanged output")
	}
	cm := lastDoc(t, out1.String())
	meta := cm["metadata"].(map[string]any)
	data := cm["data"].(map[string]any)
	if cm["kind"] != "ConfigMap" || meta["name"] != "virtc-warnings" || meta["namespace"] != "openshift-cnv" {
		t.Fatalf("last object %v", cm)
	}
	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ": warning: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatal("the golden has no warnings")
	}
	if data[warnings.WarningsKey] != strings.Join(lines, "\n")+"\n" || data[warnings.CountKey] != strconv.Itoa(len(lines)) {
		t.Errorf("data %v, want the warnings of stderr:\n%s", data, strings.Join(lines, "\n"))
	}

	var clean bytes.Buffer
	if code := Main([]string{"build", "--warnings-configmap", "shop/virtc-warnings", "../../examples/quickstart"}, strings.NewReader(""), &clean, &bytes.Buffer{}); code != ExitOK {
		t.Fatalf("quickstart: exit %d", code)
	}
	if d := lastDoc(t, clean.String())["data"].(map[string]any); d[warnings.CountKey] != "0" || d[warnings.WarningsKey] != "" {
		t.Errorf("without warnings: data %v, want count 0 and no text", d)
	}
	for _, bad := range []string{"virtc-warnings", "Shop/x", "shop/", "/x"} {
		if code := Main([]string{"build", "--warnings-configmap", bad, "../../examples/quickstart"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}); code != ExitUsage {
			t.Errorf("--warnings-configmap %q: exit %d, want %d", bad, code, ExitUsage)
		}
	}
}
