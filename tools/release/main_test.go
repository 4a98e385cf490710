package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestRelease builds the release for this machine's platform twice, into
// two directories, and requires the same bytes: the archive holds virtc
// (which runs and says the release's version) and README.md, the SBOM
// lists virtc's modules, and SHA256SUMS is right. make release builds
// all four platforms the same way.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds virtc twice")
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	var sums []string
	var dirs []string
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "release")
		files, err := Release(Options{Repo: "../..", Out: out, Version: "v1.4.2", Commit: "0123456789abcdef0123456789abcdef01234567", Time: at, Platforms: []string{platform}})
		if err != nil {
			t.Fatal(err)
		}
		name := "virtc_1.4.2_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
		if want := []string{"virtc_1.4.2.spdx.json", name, "SHA256SUMS"}; strings.Join(files, " ") != strings.Join(want, " ") && i == 0 {
			t.Fatalf("files %q, want %q", files, want)
		}
		data, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, string(data))
		dirs = append(dirs, out)
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			sum, file, _ := strings.Cut(line, "  ")
			b, err := os.ReadFile(filepath.Join(out, file))
			if err != nil {
				t.Fatal(err)
			}
			if got := sha256.Sum256(b); sum != hex.EncodeToString(got[:]) {
				t.Errorf("SHA256SUMS: %s is %s, file has %x", file, sum, got)
			}
		}
	}
	if sums[0] != sums[1] {
		t.Fatalf("two builds of the same release differ:\n%s\n%s", sums[0], sums[1])
	}

	// The archive: virtc runs and names its release; README.md.
	f, err := os.Open(filepath.Join(dirs[0], "virtc_1.4.2_"+runtime.GOOS+"_"+runtime.GOARCH+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(at) || h.Uid != 0 || h.Uname != "" {
			t.Errorf("%s: mtime %v, owner %d %q; want the commit's time and none", h.Name, h.ModTime, h.Uid, h.Uname)
		}
		if h.Name == "virtc" {
			bin := filepath.Join(t.TempDir(), "virtc")
			data, _ := io.ReadAll(tr)
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
			info, err := buildinfo.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range info.Settings {
				if s.Key == "-trimpath" && s.Value != "true" {
					t.Error("virtc is not built with -trimpath")
				}
			}
		}
	}
	if strings.Join(names, " ") != "virtc README.md" {
		t.Errorf("archive holds %q, want virtc and README.md", names)
	}

	// The SBOM: SPDX 2.3, virtc described, its dependencies listed.
	var sbom struct {
		SPDXVersion  string `json:"spdxVersion"`
		CreationInfo struct {
			Created string `json:"created"`
		} `json:"creationInfo"`
		Packages []struct {
			Name        string `json:"name"`
			VersionInfo string `json:"versionInfo"`
		} `json:"packages"`
	}
	data, err := os.ReadFile(filepath.Join(dirs[0], "virtc_1.4.2.spdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sbom); err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, p := range sbom.Packages {
		found[p.Name] = p.VersionInfo
	}
	if sbom.SPDXVersion != "SPDX-2.3" || sbom.CreationInfo.Created != "2026-12-06T10:00:00Z" || found["github.com/virtc/virtc"] != "v1.4.2" || found["kubevirt.io/api"] == "" || found["go"] == "" {
		t.Errorf("SBOM: %s, created %s, packages %v", sbom.SPDXVersion, sbom.CreationInfo.Created, found)
	}
}

// TestArchiveDeterministic: the same files give the same bytes (no time
// of packing, no owner, no gzip name).
func TestArchiveDeterministic(t *testing.T) {
	at := time.Unix(1796624331, 0)
	files := []File{{"virtc", []byte("binary"), 0o755}, {"README.md", []byte("# virtc\n"), 0o644}}
	a, err := Archive(at, files)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Archive(at, files)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two archives of the same files differ")
	}
}
