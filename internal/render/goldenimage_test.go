package render

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/virtc/virtc/api"
)

// A golden image's DataVolume is named after its spec because CDI refuses
// any change of a DataVolume's spec (containerized-data-importer v1.65.0,
// pkg/apiserver/webhooks/datavolume-validate.go): whatever changes what is
// imported must change the name, and nothing else may.
func TestGoldenImageVolumeName(t *testing.T) {
	spec := func(img api.ImageSpec) cdiv1.DataVolumeSpec {
		return cdiv1.DataVolumeSpec{Source: goldenImageSource(img), Storage: &cdiv1.StorageSpec{Resources: storageRequest(img.MinRootDisk)}}
	}
	registry := func(digest, size string) api.ImageSpec {
		return api.ImageSpec{Registry: &api.RegistrySource{URL: "docker://registry.example.com/os/ubuntu@sha256:" + strings.Repeat(digest, 64)}, MinRootDisk: resource.MustParse(size)}
	}
	http := func(checksum string) api.ImageSpec {
		return api.ImageSpec{HTTP: &api.HTTPSource{URL: "https://images.example.com/os.qcow2", Checksum: "sha256:" + strings.Repeat(checksum, 64)}, MinRootDisk: resource.MustParse("20Gi")}
	}
	base := goldenImageVolumeName("ubuntu", spec(registry("a", "20Gi")))
	if again := goldenImageVolumeName("ubuntu", spec(registry("a", "20Gi"))); again != base {
		t.Errorf("same spec, two names: %s, %s", base, again)
	}
	if !strings.HasPrefix(base, "ubuntu-") || len(base) != len("ubuntu-")+goldenVolumeHashLen {
		t.Errorf("name %q, want ubuntu-<%d hex digits>", base, goldenVolumeHashLen)
	}
	for what, name := range map[string]string{
		"new digest":       goldenImageVolumeName("ubuntu", spec(registry("b", "20Gi"))),
		"new minimum size": goldenImageVolumeName("ubuntu", spec(registry("a", "30Gi"))),
		"other image name": goldenImageVolumeName("ubuntu-lts", spec(registry("a", "20Gi"))),
	} {
		if name == base {
			t.Errorf("%s: same name %s", what, name)
		}
	}
	if goldenImageVolumeName("os", spec(http("a"))) == goldenImageVolumeName("os", spec(http("b"))) {
		t.Error("a new HTTP checksum keeps the DataVolume's name")
	}
	long := strings.Repeat("a", 50) + "-" + strings.Repeat("b", 12)
	name := goldenImageVolumeName(long, spec(registry("a", "20Gi")))
	if len(name) > 63 || strings.Contains(name, "--") {
		t.Errorf("a 63-character image name gives %q (%d characters), want a DNS label", name, len(name))
	}
}

// A pinned registry image imports its URL as it is: CDI's DataImportCron
// would append "@<digest>" to it (dataimportcron-controller.go
// newSourceDataVolume), so virtc sets the URL on a DataVolume, and only
// the URL (no pullMethod, secretRef or certConfigMap: the catalog has none).
func TestGoldenImageSourceRegistry(t *testing.T) {
	url := "docker://registry.example.com/os/ubuntu@sha256:" + strings.Repeat("c", 64)
	src := goldenImageSource(api.ImageSpec{Registry: &api.RegistrySource{URL: url}})
	if src == nil || src.Registry == nil || src.Registry.URL == nil || *src.Registry.URL != url {
		t.Fatalf("source %+v, want registry.url %s", src, url)
	}
	r := src.Registry
	if r.PullMethod != nil || r.SecretRef != nil || r.CertConfigMap != nil || r.ImageStream != nil || r.Platform != nil {
		t.Errorf("registry source sets more than the URL: %+v", r)
	}
	if goldenImageSource(api.ImageSpec{DataSource: &api.DataSourceRef{Name: "rhel9"}}) != nil {
		t.Error("an image that names a DataSource is imported")
	}
}
