package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportHTMLWithoutPools: without worker pools or a Platform the page
// says so instead of drawing bars, is the same bytes on every run, and
// escapes what it shows (html/template).
func TestReportHTMLWithoutPools(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "tenant.yaml"), tenantYAML)
	write(t, filepath.Join(dir, "vm.yaml"), vmYAML("web01", "u1.small"))
	page := func() string {
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"report", "--format", "html", dir}, nil, &stdout, &stderr); code != ExitOK {
			t.Fatalf("exit %d:\n%s", code, stderr.String())
		}
		return stdout.String()
	}
	got := page()
	if again := page(); again != got {
		t.Error("two runs print different pages")
	}
	for _, want := range []string{
		"<!DOCTYPE html>",
		"<title>virtc fleet report</title>",
		"No worker pools in the catalog: virtc does not judge capacity.",
		`<tr class="tenant" id="tenant-shop"><td>shop</td><td>standard</td><td>no quota`,
		`<tr class="vm" id="vm-shop-web01"><td>shop</td><td>web01</td>`,
		"any node (no worker pools)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the page lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `class="bar"`) {
		t.Error("a bar without pools or quotas")
	}
}

func TestReportHTMLUnknownFormat(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"report", "--format", "pdf", "x"}, nil, &stdout, &stderr); code != ExitUsage || stdout.Len() > 0 ||
		stderr.String() != "virtc report: unknown format \"pdf\" (text, markdown, json or html)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
