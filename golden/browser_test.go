package golden

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/virtc/virtc/test/conform"
)

// chromiumBin is Debian's chromium (apt-get install chromium), as .ci/run
// installs it.
const chromiumBin = "/usr/bin/chromium"

// ArtifactsEnv names the directory the browser check keeps its screenshot
// in (default: the test's temporary directory).
const ArtifactsEnv = "VIRTC_BROWSER_ARTIFACTS"

// consoleLine is a message of the page's console in chromium's log
// (--enable-logging=stderr): "[pid:tid:time:INFO:CONSOLE:1] "text", source: ...".
var consoleLine = regexp.MustCompile(`:CONSOLE[:(\]]`)

// chromium runs headless Chromium on a page file with args, with its own
// profile and nothing fetched besides the page, and returns stdout and the
// console messages of its log.
func chromium(t *testing.T, page string, args ...string) (string, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, args...)
	cmd := exec.CommandContext(ctx, chromiumBin, append(argv, "file://"+abs)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var console []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if consoleLine.MatchString(l) {
			console = append(console, l)
		}
	}
	return stdout.String(), console
}

// TestReportHTMLBrowser renders the HTML report's golden page
// (report-html/expected.txt) in headless Chromium: no console message
// (the page has no script, so any message is an error: a resource that
// did not load, a parse error), the DOM Chromium built has the page's
// sections, and a screenshot is kept in $VIRTC_BROWSER_ARTIFACTS. A page
// with a failing script shows the check catches console errors.
func TestReportHTMLBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumBin); err != nil {
		conform.Skip(t, fmt.Errorf("no headless browser: %s not found (apt-get install chromium)", chromiumBin))
	}
	page := filepath.Join("report-html", expectedTextFile)
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// self-contained: nothing for the browser to fetch, no script
	for _, ref := range []string{"<script", "<link", "src=", "href=", "url(", "@import"} {
		if bytes.Contains(data, []byte(ref)) {
			t.Errorf("%s holds %q: the page must be self-contained", page, ref)
		}
	}
	// Chromium reads the page from a file named .html.
	html := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(html, data, 0o644); err != nil {
		t.Fatal(err)
	}

	artifacts := os.Getenv(ArtifactsEnv)
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artifacts, "report-html.png")
	os.Remove(shot)
	_, console := chromium(t, html, "--window-size=1280,2400", "--screenshot="+shot)
	if len(console) > 0 {
		t.Errorf("the page logged to the console:\n%s", strings.Join(console, "\n"))
	}
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("no PNG screenshot at %s: %v", shot, err)
	} else {
		t.Logf("screenshot: %s", shot)
	}

	dom, console := chromium(t, html, "--dump-dom")
	if len(console) > 0 {
		t.Errorf("the page logged to the console:\n%s", strings.Join(console, "\n"))
	}
	for _, want := range []struct {
		what string
		n    int
	}{{`<section class="pool"`, 2}, {`<tr class="tenant"`, 3}, {`<tr class="vm"`, 6}, {`<div class="bar"`, 12}, {`<h2 `, 4}} {
		if got := strings.Count(dom, want.what); got != want.n {
			t.Errorf("the DOM has %d %s, want %d", got, want.what, want.n)
		}
	}

	// the check itself: a page whose script fails is caught
	bad := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, console := chromium(t, bad, "--dump-dom"); len(console) == 0 {
		t.Error("a page with a failing script logged nothing: the console check does not work")
	}
}
