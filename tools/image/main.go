// Command image builds virtc's container image without a container engine:
// one layer holding the static virtc binary, virtc-cmp (the Argo CD
// plugin's generate command, which runs virtc on a cache miss) beside it,
// and the passwd and group files
// of its users, a config that runs virtc as user 999 (Argo CD's plugin
// sidecars) with no shell, written as an OCI image layout (and, with
// --tarball, an archive `podman load` and `docker load` read). Every
// timestamp is the Unix epoch and every file's owner and mode fixed, so
// the same binary and version give the same digest (`make image`).
//
// It is a module of its own so that virtc does not depend on
// go-containerregistry.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Options describe the image.
type Options struct {
	// Binary is the static virtc executable.
	Binary string
	// CMP is the static virtc-cmp executable (cmd/virtc-cmp); default:
	// virtc-cmp beside Binary.
	CMP string
	// Version is virtc's version (org.opencontainers.image.version).
	Version string
	// Source is the repository (org.opencontainers.image.source).
	Source string
	// Arch is the platform's architecture (linux/ARCH).
	Arch string
}

// Paths in the image.
const (
	BinaryPath = "/usr/local/bin/virtc"
	// CMPPath is virtc-cmp, which finds virtc beside itself.
	CMPPath = "/usr/local/bin/virtc-cmp"
	User    = "999:999"
)

// passwd: virtc (999) runs the plugin sidecar; nobody is the user kustomize
// runs container functions as.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nvirtc:x:999:999:virtc:/tmp:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
	group  = "root:x:0:\nvirtc:x:999:\nnobody:x:65534:\n"
)

// BuildBinary compiles virtc from the repository at repo into file, and
// virtc-cmp beside it: static (CGO_ENABLED=0), for linux/arch, with
// -trimpath and without VCS stamping, so that the same source and Go
// release give the same bytes, and the version baked into virtc. `make
// image` and the tests build through here.
func BuildBinary(repo, file, version, arch string) error {
	file, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	for _, b := range []struct{ out, ldflags, pkg string }{
		{file, "-s -w -X github.com/virtc/virtc/internal/cli.Version=" + version, "./cmd/virtc"},
		{filepath.Join(filepath.Dir(file), "virtc-cmp"), "-s -w", "./cmd/virtc-cmp"},
	} {
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", b.ldflags, "-o", b.out, b.pkg)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOFLAGS=-mod=readonly", "GOWORK=off")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build %s: %v", b.pkg, err)
		}
	}
	return nil
}

// Build returns the image.
func Build(o Options) (v1.Image, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, err
	}
	if o.CMP == "" {
		o.CMP = filepath.Join(filepath.Dir(o.Binary), "virtc-cmp")
	}
	front, err := os.ReadFile(o.CMP)
	if err != nil {
		return nil, err
	}
	layerTar, err := layerBytes(bin, front)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.Arch
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config.User = User
	cf.Config.Entrypoint = []string{BinaryPath}
	cf.Config.Cmd = nil
	cf.Config.WorkingDir = "/tmp"
	cf.Config.Env = []string{"PATH=/usr/local/bin", "HOME=/tmp"}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":       "virtc",
		"org.opencontainers.image.description": "virtc: a GitOps manifest compiler for OpenShift Virtualization (Argo CD plugin sidecar, KRM function)",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.source":      o.Source,
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	cf.History = nil
	return mutate.ConfigFile(img, cf)
}

// layerBytes is the layer's tar: directories, /etc/passwd, /etc/group,
// /tmp (world-writable, sticky), virtc and virtc-cmp, in that order, owned
// by root, dated at the epoch.
func layerBytes(bin, front []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	add := func(h *tar.Header, body []byte) error {
		h.ModTime, h.AccessTime, h.ChangeTime = epoch, time.Time{}, time.Time{}
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "root", "root"
		h.Format = tar.FormatPAX
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	for _, d := range []string{"etc/", "tmp/", "usr/", "usr/local/", "usr/local/bin/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := add(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: mode}, nil); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		name string
		mode int64
		body []byte
	}{
		{"etc/group", 0o644, []byte(group)},
		{"etc/passwd", 0o644, []byte(passwd)},
		{BinaryPath[1:], 0o755, bin},
		{CMPPath[1:], 0o755, front},
	} {
		if err := add(&tar.Header{Name: f.name, Typeflag: tar.TypeReg, Mode: f.mode}, f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteLayout writes img as an OCI image layout in dir (replaced).
func WriteLayout(dir string, img v1.Image, version string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": version}))
}

// digestRef matches an image reference by digest of virtc in the examples.
var digestRef = regexp.MustCompile(`(virtc@)sha256:[0-9a-f]{64}`)

// Pin rewrites every virtc@sha256:… reference in files to digest; with
// check, it only reports the files whose references differ.
func Pin(files []string, digest string, check bool) error {
	var stale []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if !digestRef.Match(data) {
			return fmt.Errorf("%s: no virtc@sha256:… reference", f)
		}
		out := digestRef.ReplaceAll(data, []byte("${1}"+digest))
		if bytes.Equal(out, data) {
			continue
		}
		if check {
			stale = append(stale, f)
			continue
		}
		if err := os.WriteFile(f, out, 0o644); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("these files do not reference the image built here (%s): %v; run `make image-pin`", digest, stale)
	}
	return nil
}

func main() {
	var o Options
	flag.StringVar(&o.Binary, "binary", "", "the static virtc executable (default: built from --repo, with virtc-cmp beside it)")
	flag.StringVar(&o.CMP, "cmp", "", "the static virtc-cmp executable (default: virtc-cmp beside --binary)")
	repo := flag.String("repo", "../..", "virtc's repository, to build the binary from")
	flag.StringVar(&o.Version, "version", "dev", "virtc's version, for the label")
	flag.StringVar(&o.Source, "source", "https://github.com/virtc/virtc", "the source repository, for the label")
	flag.StringVar(&o.Arch, "arch", "amd64", "the architecture the binary was built for")
	out := flag.String("out", "bin/image", "directory of the OCI image layout (replaced)")
	tarFile := flag.String("tarball", "", "also write an image archive for `podman load` / `docker load` to this file")
	tag := flag.String("tag", "virtc", "the name the archive gives the image (the version is its tag)")
	pin := flag.Bool("pin", false, "rewrite the virtc@sha256:… references in the files named as arguments to this image's digest")
	check := flag.Bool("check", false, "fail unless the files named as arguments reference this image's digest")
	flag.Parse()
	if o.Binary == "" {
		o.Binary = filepath.Join(*out+".bin", "virtc")
		err := os.MkdirAll(filepath.Dir(o.Binary), 0o755)
		if err == nil {
			err = BuildBinary(*repo, o.Binary, o.Version, o.Arch)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "image: %v\n", err)
			os.Exit(1)
		}
	}
	if err := run(o, *out, *tarFile, *tag, *pin, *check, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

func run(o Options, out, tarFile, tag string, pin, check bool, files []string) error {
	if (pin || check) && len(files) == 0 {
		return errors.New("--pin and --check need the files to rewrite or check")
	}
	img, err := Build(o)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if out != "" {
		if err := WriteLayout(out, img, o.Version); err != nil {
			return err
		}
		if err := os.WriteFile(out+".digest", []byte(digest.String()+"\n"), 0o644); err != nil {
			return err
		}
	}
	if tarFile != "" {
		ref, err := name.NewTag(tag + ":" + o.Version)
		if err != nil {
			return err
		}
		if err := tarball.WriteToFile(tarFile, ref, img); err != nil {
			return err
		}
	}
	fmt.Printf("virtc image %s (version %s): %s\n", digest, o.Version, out)
	if pin || check {
		return Pin(files, digest.String(), check)
	}
	return nil
}
