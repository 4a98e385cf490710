#!/usr/bin/env bash
# Builds KubeVirt's real virt-controller and virt-api for the controllers
# end-to-end suite (issue 31) from the Go module proxy and caches them
# outside the work tree, keyed by version, so that later runs take seconds:
#
#   $VIRTC_TOOLS_CACHE/kubevirt-$KUBEVIRT_VERSION/virt-controller
#   $VIRTC_TOOLS_CACHE/kubevirt-$KUBEVIRT_VERSION/virt-api
#   $VIRTC_TOOLS_CACHE/kubevirt-$KUBEVIRT_VERSION/common-instancetypes/
#       the cluster instancetype and preference bundles virt-operator
#       installs (pkg/virt-operator/resource/generate/components/data)
#   $VIRTC_TOOLS_CACHE/kubevirt-$KUBEVIRT_VERSION/crds/kubevirt/
#       KubeVirt's CRDs as virt-operator generates them at install
#       (pkg/virt-operator/resource/generate/install/strategy.go
#       GenerateCurrentInstallStrategy, and components.NewKubeVirtCrd)
#   $VIRTC_TOOLS_CACHE/kubevirt-$KUBEVIRT_VERSION/crds/cdi/
#       the CDI CRDs virt-controller watches beside DataVolumes and
#       DataSources (CDI, CDIConfig, StorageProfile), from CDI
#       $CDI_VERSION's pkg/operator/resources/crds_generated.go
#
# `go install kubevirt.io/kubevirt/cmd/virt-controller@vX` refuses because
# kubevirt's go.mod has replace lines (two of them to its own staging
# directories), so the commands are built from a throw-away wrapper module
# that requires kubevirt.io/kubevirt, kubevirt.io/api and
# kubevirt.io/client-go at the same version and copies kubevirt's other
# replace lines (read from its go.mod in the module cache), as
# test/internal/admission/go.mod does, with kubevirt's go.sum.
#
# Usage: build.sh   (prints the cache directory)
set -euo pipefail

KUBEVIRT_VERSION="${KUBEVIRT_VERSION:-v1.8.4}"
CDI_VERSION="${CDI_VERSION:-v1.65.0}"
. "$(dirname "$0")/../../tools/cache.sh"
GO="${GO:-go}"
out="$CACHE/kubevirt-$KUBEVIRT_VERSION"

# -gcflags: the Makefile's TOOL_GCFLAGS (what each flag spares, and why)
export CGO_ENABLED=0 GOFLAGS="-mod=mod '-gcflags=${TOOL_GCFLAGS:-all=-dwarf=false}'" GOWORK=off

log() { echo "controllers-tools: $*" >&2; }

complete() {
  [ -x "$out/virt-controller" ] && [ -x "$out/virt-api" ] && [ -d "$out/common-instancetypes" ] &&
    [ -d "$out/crds/kubevirt" ] && [ -d "$out/crds/cdi" ]
}

cached_or_lock "KubeVirt $KUBEVIRT_VERSION" "kubevirt-$KUBEVIRT_VERSION"

dir="$(mktemp -d "${TMPDIR:-/tmp}/virtc-kubevirt.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
start=$(date +%s)
log "building KubeVirt $KUBEVIRT_VERSION tools in $dir"
cd "$dir"
"$GO" mod init virtc.local/tools/kubevirt >/dev/null 2>&1
cat >tools.go <<'GO'
//go:build tools

// Package tools pins the KubeVirt commands built for the controllers suite.
package tools

import (
	_ "kubevirt.io/kubevirt/cmd/virt-api"
	_ "kubevirt.io/kubevirt/cmd/virt-controller"
)
GO
mkdir crdgen
cat >crdgen/main.go <<'GO'
// Command crdgen writes KubeVirt's CRDs as virt-operator generates them
// (install/strategy.go GenerateCurrentInstallStrategy; the KubeVirt CRD
// itself from components.NewKubeVirtCrd), one file per CRD, into os.Args[1].
package main

import (
	"os"
	"path/filepath"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"
)

func main() {
	for _, f := range []func() (*extv1.CustomResourceDefinition, error){
		components.NewKubeVirtCrd,
		components.NewVirtualMachineInstanceCrd, components.NewPresetCrd, components.NewReplicaSetCrd,
		components.NewVirtualMachineCrd, components.NewVirtualMachineInstanceMigrationCrd,
		components.NewVirtualMachineSnapshotCrd, components.NewVirtualMachineSnapshotContentCrd,
		components.NewVirtualMachineRestoreCrd, components.NewVirtualMachineInstancetypeCrd,
		components.NewVirtualMachineClusterInstancetypeCrd, components.NewVirtualMachinePoolCrd,
		components.NewMigrationPolicyCrd, components.NewVirtualMachinePreferenceCrd,
		components.NewVirtualMachineClusterPreferenceCrd, components.NewVirtualMachineExportCrd,
		components.NewVirtualMachineCloneCrd, components.NewVirtualMachineBackupCrd,
		components.NewVirtualMachineBackupTrackerCrd,
	} {
		crd, err := f()
		if err != nil {
			panic(err)
		}
		crd.APIVersion, crd.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
		data, err := yaml.Marshal(crd)
		if err != nil {
			panic(err)
		}
		if err := os.WriteFile(filepath.Join(os.Args[1], crd.Name+".yaml"), data, 0o644); err != nil {
			panic(err)
		}
	}
}
GO
"$GO" mod edit -require="kubevirt.io/kubevirt@$KUBEVIRT_VERSION" \
  -require="kubevirt.io/api@$KUBEVIRT_VERSION" \
  -require="kubevirt.io/client-go@$KUBEVIRT_VERSION"
"$GO" mod download "kubevirt.io/kubevirt@$KUBEVIRT_VERSION"
modcache="$("$GO" env GOMODCACHE)"
gomod="$modcache/cache/download/kubevirt.io/kubevirt/@v/$KUBEVIRT_VERSION.mod"
# kubevirt's own go.sum: the checksum database does not serve every module
# kubevirt pins (github.com/rhobs/operator-observability-toolkit v0.0.30
# answers 404), and these are the sums kubevirt was built and tested with.
cp "$modcache/kubevirt.io/kubevirt@$KUBEVIRT_VERSION/go.sum" go.sum
chmod u+w go.sum
# Every replace line but the local ./staging ones, in both forms (inside a
# replace ( ... ) block and single-line).
reps="$(awk '$2 == "=>" && $3 !~ /^\.\// && NF >= 4 { print $1 "=" $3 "@" $4 }
             $1 == "replace" && $3 == "=>" && $4 !~ /^\.\// && NF >= 5 { print $2 "=" $4 "@" $5 }' "$gomod" | sort -u)"
if [ -z "$reps" ]; then
  log "no replace directives found in $gomod"
  exit 1
fi
n=0
for r in $reps; do
  "$GO" mod edit -replace="$r"
  n=$((n + 1))
done
log "$n replace lines copied from kubevirt's go.mod"
"$GO" mod tidy
mkdir -p bin "$out"
if [ ! -x "$out/virt-controller" ] || [ ! -x "$out/virt-api" ]; then
  ld="-s -w"
  for v in gitVersion=$KUBEVIRT_VERSION gitTreeState=clean buildDate=1970-01-01T00:00:00Z; do
    ld="$ld -X kubevirt.io/client-go/version.$v"
  done
  "$GO" build -trimpath -ldflags "$ld" -o bin/ kubevirt.io/kubevirt/cmd/virt-controller kubevirt.io/kubevirt/cmd/virt-api
  mv bin/virt-controller bin/virt-api "$out/"
fi
rm -rf "$out/common-instancetypes" "$out/crds"
mkdir -p "$out/common-instancetypes" "$out/crds/kubevirt" "$out/crds/cdi"
cp "$modcache/kubevirt.io/kubevirt@$KUBEVIRT_VERSION/pkg/virt-operator/resource/generate/components/data/common-instancetypes/"*.yaml "$out/common-instancetypes/"
chmod -R u+w "$out/common-instancetypes"
"$GO" run ./crdgen "$out/crds/kubevirt"
# CDI's generated CRDs are Go raw strings keyed by name in
# crds_generated.go; the module is only downloaded, not built.
cdi="$(GOFLAGS=-mod=mod "$GO" mod download -json "kubevirt.io/containerized-data-importer@$CDI_VERSION" | awk -F'"' '$2 == "Dir" { print $4 }')"
for name in cdi cdiconfig storageprofile; do
  awk -v key="$name" '
    $0 ~ "^\t\"" key "\": `" { on = 1; sub(/^[^`]*`/, ""); print; next }
    on && /^`,/ { exit }
    on { print }' "$cdi/pkg/operator/resources/crds_generated.go" >"$out/crds/cdi/$name.yaml"
  if ! grep -q "kind: CustomResourceDefinition" "$out/crds/cdi/$name.yaml"; then
    log "CRD $name not found in CDI $CDI_VERSION crds_generated.go"
    exit 1
  fi
done
log "built KubeVirt $KUBEVIRT_VERSION tools in $(( $(date +%s) - start ))s into $out"
echo "$out"
