// Command release builds virtc's release artifacts (make release): for
// linux and darwin on amd64 and arm64, a tar.gz with the static virtc
// binary and README.md; an SPDX 2.3 SBOM of the Go modules built in; and
// SHA256SUMS over all of them. The same source, Go release, version and
// commit give the same bytes: the builds are -trimpath with no build id,
// the archives carry the commit's time and no owner, and the SBOM's time
// is the commit's (SOURCE_DATE_EPOCH).
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Platforms are the ones released.
var Platforms = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"}

// Options are one release's.
type Options struct {
	Repo    string    // the repository's top
	Out     string    // the directory the artifacts go to
	Version string    // vX.Y.Z (or a development version)
	Commit  string    // the commit built
	Time    time.Time // the commit's time: archive entries and the SBOM
	// Platforms to build (default Platforms).
	Platforms []string
}

func main() {
	var o Options
	var epoch string
	flag.StringVar(&o.Repo, "repo", ".", "the repository's top")
	flag.StringVar(&o.Out, "out", "bin/release", "the directory to write the artifacts to (emptied first)")
	flag.StringVar(&o.Version, "version", "", "the version: a release tag vX.Y.Z (required)")
	flag.StringVar(&o.Commit, "commit", "", "the commit built (git rev-parse HEAD)")
	flag.StringVar(&epoch, "source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "the commit's time in seconds since 1970 (git log -1 --format=%ct)")
	platforms := flag.String("platforms", strings.Join(Platforms, ","), "GOOS/GOARCH pairs, comma-separated")
	flag.Parse()
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		fail(fmt.Errorf("--source-date-epoch %q: not a number of seconds (git log -1 --format=%%ct)", epoch))
	}
	o.Time = time.Unix(sec, 0).UTC()
	o.Platforms = strings.Split(*platforms, ",")
	files, err := Release(o)
	if err != nil {
		fail(err)
	}
	for _, f := range files {
		fmt.Println(filepath.Join(o.Out, f))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "release:", err)
	os.Exit(1)
}

// Release builds the artifacts into o.Out and returns their names.
func Release(o Options) ([]string, error) {
	if o.Version == "" || strings.ContainsAny(o.Version, "/ \t\n") {
		return nil, fmt.Errorf("--version %q: name the release (vX.Y.Z)", o.Version)
	}
	if len(o.Platforms) == 0 {
		o.Platforms = Platforms
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	readme, err := os.ReadFile(filepath.Join(o.Repo, "README.md"))
	if err != nil {
		return nil, err
	}
	var names []string
	var sbomOf string
	for _, p := range o.Platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok {
			return nil, fmt.Errorf("platform %q: not GOOS/GOARCH", p)
		}
		bin := filepath.Join(o.Out, "virtc-"+goos+"-"+goarch)
		if err := build(o, goos, goarch, bin); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		archive, err := Archive(o.Time, []File{{"virtc", data, 0o755}, {"README.md", readme, 0o644}})
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("virtc_%s_%s_%s.tar.gz", strings.TrimPrefix(o.Version, "v"), goos, goarch)
		if err := os.WriteFile(filepath.Join(o.Out, name), archive, 0o644); err != nil {
			return nil, err
		}
		names = append(names, name)
		if sbomOf == "" {
			sbomOf = bin
		} else if err := os.Remove(bin); err != nil {
			return nil, err
		}
	}
	// The modules are the same for every platform (no build tags select
	// dependencies): one SBOM, read from a binary's own build information.
	info, err := buildinfo.ReadFile(sbomOf)
	if err != nil {
		return nil, err
	}
	os.Remove(sbomOf)
	sbom, err := SBOM(info, o.Version, o.Time)
	if err != nil {
		return nil, err
	}
	sbomName := fmt.Sprintf("virtc_%s.spdx.json", strings.TrimPrefix(o.Version, "v"))
	if err := os.WriteFile(filepath.Join(o.Out, sbomName), sbom, 0o644); err != nil {
		return nil, err
	}
	names = append(names, sbomName)
	slices.Sort(names)
	var sums strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(o.Out, n))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	if err := os.WriteFile(filepath.Join(o.Out, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	return append(names, "SHA256SUMS"), nil
}

// build compiles virtc for one platform, reproducibly.
func build(o Options, goos, goarch, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	ldflags := "-s -w -buildid= -X github.com/virtc/virtc/internal/cli.Version=" + o.Version +
		" -X github.com/virtc/virtc/internal/cli.Commit=" + o.Commit
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", abs, "./cmd/virtc")
	cmd.Dir = o.Repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s/%s: %v", goos, goarch, err)
	}
	return nil
}

// File is one entry of an archive.
type File struct {
	Name string
	Data []byte
	Mode int64
}

// Archive is a tar.gz of files, in their order, with mtime t, no owner,
// and a gzip header with no name or time: the same files give the same
// bytes.
func Archive(t time.Time, files []File) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: f.Name, Mode: f.Mode, Size: int64(len(f.Data)), ModTime: t, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SBOM is an SPDX 2.3 document (JSON) of the Go modules a binary was
// built from: virtc's module, each dependency with its version and
// package URL, and the Go toolchain.
func SBOM(info *buildinfo.BuildInfo, version string, t time.Time) ([]byte, error) {
	type ref struct {
		Category string `json:"referenceCategory"`
		Type     string `json:"referenceType"`
		Locator  string `json:"referenceLocator"`
	}
	type pkg struct {
		Name             string `json:"name"`
		SPDXID           string `json:"SPDXID"`
		VersionInfo      string `json:"versionInfo"`
		DownloadLocation string `json:"downloadLocation"`
		FilesAnalyzed    bool   `json:"filesAnalyzed"`
		ExternalRefs     []ref  `json:"externalRefs,omitempty"`
	}
	type rel struct {
		Element string `json:"spdxElementId"`
		Type    string `json:"relationshipType"`
		Related string `json:"relatedSpdxElement"`
	}
	id := func(path string) string {
		return "SPDXRef-Package-" + notIDChar.ReplaceAllString(path, "-")
	}
	main := pkg{Name: info.Main.Path, SPDXID: id(info.Main.Path), VersionInfo: version,
		DownloadLocation: "https://" + info.Main.Path, ExternalRefs: []ref{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + info.Main.Path + "@" + version}}}
	pkgs := []pkg{main}
	rels := []rel{{"SPDXRef-DOCUMENT", "DESCRIBES", main.SPDXID}}
	goVersion := strings.TrimPrefix(info.GoVersion, "go")
	gopkg := pkg{Name: "go", SPDXID: "SPDXRef-Package-go", VersionInfo: goVersion, DownloadLocation: "https://go.dev/dl/",
		ExternalRefs: []ref{{"PACKAGE-MANAGER", "purl", "pkg:golang/stdlib@" + goVersion}}}
	pkgs = append(pkgs, gopkg)
	rels = append(rels, rel{main.SPDXID, "DEPENDS_ON", gopkg.SPDXID})
	deps := slices.Clone(info.Deps)
	slices.SortFunc(deps, func(a, b *debugModule) int { return strings.Compare(a.Path, b.Path) })
	for _, d := range deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		p := pkg{Name: m.Path, SPDXID: id(m.Path), VersionInfo: m.Version, DownloadLocation: "https://proxy.golang.org/" + escape(m.Path) + "/@v/" + escape(m.Version) + ".zip",
			ExternalRefs: []ref{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + m.Path + "@" + m.Version}}}
		pkgs = append(pkgs, p)
		rels = append(rels, rel{main.SPDXID, "DEPENDS_ON", p.SPDXID})
	}
	doc := map[string]any{
		"spdxVersion":       "SPDX-2.3",
		"dataLicense":       "CC0-1.0",
		"SPDXID":            "SPDXRef-DOCUMENT",
		"name":              "virtc-" + version,
		"documentNamespace": "https://github.com/virtc/virtc/releases/" + version + "/sbom",
		"creationInfo": map[string]any{
			"created":  t.UTC().Format(time.RFC3339),
			"creators": []string{"Tool: virtc tools/release"},
		},
		"packages":      pkgs,
		"relationships": rels,
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// notIDChar is what an SPDX identifier may not hold.
var notIDChar = regexp.MustCompile(`[^A-Za-z0-9.-]`)

// debugModule is a module of a binary's build information.
type debugModule = debug.Module

// escape is the module proxy's case encoding of a module path or version
// (golang.org/x/mod/module.EscapePath): an upper-case letter is "!" and
// the letter in lower case.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
