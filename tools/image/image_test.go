package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ExampleVersion is the version baked into the image whose digest the
// examples reference (examples/argocd, examples/kustomize-transformer/compiler-container.yaml):
// `make image-pin` builds with it and rewrites them.
const ExampleVersion = "example"

// pinnedFiles are the files that reference the image by digest.
var pinnedFiles = []string{
	"../../examples/argocd/repo-server-patch.yaml",
	"../../examples/argocd/openshift-gitops.yaml",
	"../../examples/argocd/repo-server-kustomize-patch.yaml",
	"../../examples/kustomize-transformer/compiler-container.yaml",
}

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "virtc-image-test-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "virtc")
	if err := BuildBinary("../..", binary, ExampleVersion, runtime.GOARCH); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestImage builds the image as `make image` does, reads it back from the
// OCI layout, and checks its config, its files, that the binary in it
// runs, and that a second build gives the same digest.
func TestImage(t *testing.T) {
	o := Options{Binary: binary, Version: ExampleVersion, Source: "https://github.com/virtc/virtc", Arch: runtime.GOARCH}
	dir := t.TempDir()
	var digests []string
	for i := range 2 {
		out := filepath.Join(dir, "image"+string(rune('a'+i)))
		if err := run(o, out, filepath.Join(dir, "virtc.tar"), "virtc", false, false, nil); err != nil {
			t.Fatal(err)
		}
		d, err := os.ReadFile(out + ".digest")
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, strings.TrimSpace(string(d)))
	}
	if digests[0] != digests[1] {
		t.Fatalf("two builds of the same binary gave %s and %s", digests[0], digests[1])
	}

	p, err := layout.FromPath(filepath.Join(dir, "imagea"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("index: %v, %d manifests", err, len(im.Manifests))
	}
	if got := im.Manifests[0].Digest.String(); got != digests[0] {
		t.Errorf("the layout's manifest is %s, the digest file says %s", got, digests[0])
	}
	if im.Manifests[0].MediaType != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s, want OCI", im.Manifests[0].MediaType)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != "999:999" {
		t.Errorf("user %q, want 999:999 (Argo CD's plugin sidecar user)", c.User)
	}
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/usr/local/bin/virtc" || len(c.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q, want [/usr/local/bin/virtc] and none", c.Entrypoint, c.Cmd)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version": ExampleVersion,
		"org.opencontainers.image.source":  "https://github.com/virtc/virtc",
		"org.opencontainers.image.title":   "virtc",
	} {
		if c.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], want)
		}
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH || cf.Created.Unix() != 0 {
		t.Errorf("platform %s/%s created %v", cf.OS, cf.Architecture, cf.Created)
	}

	// The files: no shell, the users, and the binary, which runs.
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %v, %d", err, len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string][]byte{}
	modes := map[string]int64{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		files[h.Name], modes[h.Name] = body, h.Mode
		if h.ModTime.Unix() != 0 || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: mtime %v owner %d:%d, want the epoch and root", h.Name, h.ModTime, h.Uid, h.Gid)
		}
	}
	for _, sh := range []string{"bin/sh", "bin/busybox", "usr/bin/sh"} {
		if _, ok := files[sh]; ok {
			t.Errorf("the image has %s; it must not need a shell", sh)
		}
	}
	if !bytes.Contains(files["etc/passwd"], []byte(":999:999:")) || !bytes.Contains(files["etc/passwd"], []byte("nobody:")) {
		t.Errorf("/etc/passwd lacks user 999 or nobody:\n%s", files["etc/passwd"])
	}
	if modes["tmp/"] != 0o1777 {
		t.Errorf("/tmp mode %o, want 1777", modes["tmp/"])
	}
	bin := files["usr/local/bin/virtc"]
	if modes["usr/local/bin/virtc"] != 0o755 || len(bin) == 0 {
		t.Fatalf("/usr/local/bin/virtc: mode %o, %d bytes", modes["usr/local/bin/virtc"], len(bin))
	}
	extracted := filepath.Join(t.TempDir(), "virtc")
	if err := os.WriteFile(extracted, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// virtc-cmp, plugin.yaml's generate command, beside virtc: it runs
	// virtc cmp for a call the cache cannot answer (here: help).
	front := files["usr/local/bin/virtc-cmp"]
	if modes["usr/local/bin/virtc-cmp"] != 0o755 || len(front) == 0 {
		t.Fatalf("/usr/local/bin/virtc-cmp: mode %o, %d bytes", modes["usr/local/bin/virtc-cmp"], len(front))
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(extracted), "virtc-cmp"), front, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(filepath.Join(filepath.Dir(extracted), "virtc-cmp"), "-h").CombinedOutput(); err != nil || !strings.Contains(string(out), "Usage: virtc cmp") {
		t.Errorf("virtc-cmp -h from the image: %v\n%s", err, out)
	}
	out, err := exec.Command(extracted, "version", "-o", "json").CombinedOutput()
	var v struct {
		Version, Platform string
	}
	if err == nil {
		err = json.Unmarshal(out, &v)
	}
	if err != nil || v.Version != ExampleVersion || v.Platform != "linux/amd64" {
		t.Errorf("virtc version -o json from the image: %q (%v), want version %q on linux/amd64", out, err, ExampleVersion)
	}
	// As the kustomize container function: a ResourceList in, one out.
	cmd := exec.Command(extracted)
	cmd.Stdin = strings.NewReader("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: virtc.dev/v1alpha1\n  kind: Compiler\n  metadata: {name: virtc}\n  spec: {paths: [quickstart]}\n")
	cmd.Dir = "../../examples"
	out, err = cmd.Output()
	if err != nil || !bytes.Contains(out, []byte("kind: VirtualMachine")) {
		t.Errorf("virtc from the image as a KRM function: %v\n%s", err, out)
	}
	// The tarball for podman/docker load holds the same config.
	arch, err := tarball.ImageFromPath(filepath.Join(dir, "virtc.tar"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ac, err := arch.ConfigFile(); err != nil || ac.Config.User != c.User || ac.Config.Labels["org.opencontainers.image.version"] != ExampleVersion {
		t.Errorf("the image archive's config: %v %+v", err, ac)
	}
}

// TestExamplesPinned: the examples reference the image built from this
// tree with ExampleVersion. The digest depends on every byte of the
// binary, so any change to virtc's code changes it: after such a change
// run `make image-pin` (it rewrites the references) and commit them.
func TestExamplesPinned(t *testing.T) {
	img, err := Build(Options{Binary: binary, Version: ExampleVersion, Source: "https://github.com/virtc/virtc", Arch: runtime.GOARCH})
	if err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if err := Pin(pinnedFiles, d.String(), true); err != nil {
		t.Error(err)
	}
}

// TestPin rewrites references and reports stale ones.
func TestPin(t *testing.T) {
	f := filepath.Join(t.TempDir(), "patch.yaml")
	old := "image: registry.example.com/virtc@sha256:" + strings.Repeat("0", 64) + "\n"
	if err := os.WriteFile(f, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	d := "sha256:" + strings.Repeat("a", 64)
	if err := Pin([]string{f}, d, true); err == nil {
		t.Error("a stale reference passed the check")
	}
	if err := Pin([]string{f}, d, false); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(f)
	if string(got) != "image: registry.example.com/virtc@"+d+"\n" {
		t.Errorf("rewritten to %q", got)
	}
	if err := Pin([]string{f}, d, true); err != nil {
		t.Error(err)
	}
	none := filepath.Join(t.TempDir(), "none.yaml")
	os.WriteFile(none, []byte("image: virtc\n"), 0o644)
	if err := Pin([]string{none}, d, false); err == nil {
		t.Error("a file without a reference passed")
	}
}
