#!/usr/bin/env bash
# Builds CDI's real cdi-controller for the controllers end-to-end suite
# (issue 31) from the Go module proxy and caches it outside the work tree,
# keyed by version, beside KubeVirt's tools (build.sh):
#
#   $VIRTC_TOOLS_CACHE/cdi-$CDI_VERSION/cdi-controller
#       kubevirt.io/containerized-data-importer/cmd/cdi-controller: the
#       DataVolume, DataSource, DataImportCron, StorageProfile, import,
#       clone, upload and populator controllers in one manager
#       (cmd/cdi-controller/controller.go)
#   $VIRTC_TOOLS_CACHE/cdi-$CDI_VERSION/crds/
#       every CRD CDI's operator installs, from
#       pkg/operator/resources/crds_generated.go
#   $VIRTC_TOOLS_CACHE/cdi-$CDI_VERSION/install/controller.yaml
#       what cdi-operator creates for cdi-controller in openshift-cnv, from
#       its own factories: the ClusterRole "cdi" and its binding to
#       ServiceAccount cdi-sa (pkg/operator/resources/cluster/controller.go),
#       the ServiceAccount, Role and RoleBinding "cdi-deployment" and the
#       Deployment whose environment the suite starts the program with
#       (pkg/operator/resources/namespaced/controller.go)
#
# As for kubevirt, `go install ...@vX` refuses because CDI's go.mod has
# replace lines (one of them to its own staging directory, the
# containerized-data-importer-api module, published under the same tag), so
# the command is built from a throw-away wrapper module that requires both
# modules at CDI_VERSION and copies CDI's other replace lines and its go.sum.
#
# Usage: build-cdi.sh   (prints the cache directory)
set -euo pipefail

CDI_VERSION="${CDI_VERSION:-v1.65.0}"
. "$(dirname "$0")/../../tools/cache.sh"
GO="${GO:-go}"
out="$CACHE/cdi-$CDI_VERSION"

# -gcflags: the Makefile's TOOL_GCFLAGS_LIGHT (what each flag spares, and why)
export CGO_ENABLED=0 GOFLAGS="-mod=mod '-gcflags=${TOOL_GCFLAGS_LIGHT:-all=-N -l -dwarf=false}'" GOWORK=off

log() { echo "cdi-tools: $*" >&2; }

complete() { [ -x "$out/cdi-controller" ] && [ -d "$out/crds" ] && [ -f "$out/install/controller.yaml" ]; }

cached_or_lock "CDI $CDI_VERSION" "cdi-$CDI_VERSION"

dir="$(mktemp -d "${TMPDIR:-/tmp}/virtc-cdi.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
start=$(date +%s)
log "building CDI $CDI_VERSION cdi-controller in $dir"
cd "$dir"
"$GO" mod init virtc.local/tools/cdi >/dev/null 2>&1
cat >tools.go <<'GO'
//go:build tools

// Package tools pins the CDI command built for the controllers suite.
package tools

import (
	_ "kubevirt.io/containerized-data-importer/cmd/cdi-controller"
)
GO
mkdir installgen
cat >installgen/main.go <<'GO'
// Command installgen writes what cdi-operator creates for cdi-controller
// (its cluster RBAC and its namespaced resources, from the operator's own
// factories) into namespace os.Args[1], as one YAML stream on stdout.
package main

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"kubevirt.io/containerized-data-importer/pkg/operator/resources/cluster"
	"kubevirt.io/containerized-data-importer/pkg/operator/resources/namespaced"
)

func main() {
	ns := os.Args[1]
	objs, err := cluster.CreateStaticResourceGroup("controller-rbac", &cluster.FactoryArgs{Namespace: ns})
	if err != nil {
		panic(err)
	}
	// The images of OpenShift Virtualization 4.22's CDI: no image is
	// pulled here, the names are what the pods CDI creates carry.
	img := func(c string) string { return "registry.redhat.io/container-native-virtualization/virt-cdi-" + c + "-rhel9:v4.22" }
	more, err := namespaced.CreateResourceGroup("controller", &namespaced.FactoryArgs{
		OperatorVersion: os.Args[2], ControllerImage: img("controller"), DeployClusterResources: "true",
		ImporterImage: img("importer"), ClonerImage: img("cloner"), OvirtPopulatorImage: img("ovirt-populator"),
		APIServerImage: img("apiserver"), UploadProxyImage: img("uploadproxy"), UploadServerImage: img("uploadserver"),
		Verbosity: "1", PullPolicy: "IfNotPresent", Namespace: ns, ControllerReplicas: 1,
	})
	if err != nil {
		panic(err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	for _, o := range append(objs, more...) {
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			panic(err)
		}
		o.GetObjectKind().SetGroupVersionKind(gvk)
		data, err := yaml.Marshal(o.(client.Object))
		if err != nil {
			panic(err)
		}
		fmt.Printf("---\n%s", data)
	}
}
GO
"$GO" mod edit -require="kubevirt.io/containerized-data-importer@$CDI_VERSION" \
  -require="kubevirt.io/containerized-data-importer-api@$CDI_VERSION"
"$GO" mod download "kubevirt.io/containerized-data-importer@$CDI_VERSION"
modcache="$("$GO" env GOMODCACHE)"
src="$modcache/kubevirt.io/containerized-data-importer@$CDI_VERSION"
gomod="$modcache/cache/download/kubevirt.io/containerized-data-importer/@v/$CDI_VERSION.mod"
cp "$src/go.sum" go.sum
chmod u+w go.sum
# Every replace line but the local ./staging one, in both forms. CDI
# v1.65.0 has one malformed line, k8s.io/dynamic-resource-allocation =>
# dynamic-resource-allocation v0.31.5 (no module path; nothing CDI builds
# imports it): lines whose target has no dot in its first path element are
# left out.
reps="$(awk '$2 == "=>" && $3 !~ /^\.\// && NF >= 4 { print $1 "=" $3 "@" $4 }
             $1 == "replace" && $3 == "=>" && $4 !~ /^\.\// && NF >= 5 { print $2 "=" $4 "@" $5 }' "$gomod" |
  awk -F= '{ split($2, t, "@"); split(t[1], p, "/"); if (p[1] ~ /\./) print; else print "cdi-tools: skipped replace " $0 > "/dev/stderr" }' | sort -u)"
if [ -z "$reps" ]; then
  log "no replace directives found in $gomod"
  exit 1
fi
n=0
for r in $reps; do
  "$GO" mod edit -replace="$r"
  n=$((n + 1))
done
log "$n replace lines copied from CDI's go.mod"
"$GO" mod tidy
mkdir -p bin "$out"
if [ ! -x "$out/cdi-controller" ]; then
  "$GO" build -trimpath -ldflags "-s -w" -o bin/ kubevirt.io/containerized-data-importer/cmd/cdi-controller
  mv bin/cdi-controller "$out/"
fi
rm -rf "$out/install"
mkdir -p "$out/install"
# the namespace where OpenShift Virtualization runs CDI (HCO into the
# namespace of its Subscription: openshift-cnv)
"$GO" run ./installgen openshift-cnv "$CDI_VERSION" >"$out/install/controller.yaml"
rm -rf "$out/crds"
mkdir -p "$out/crds"
# CDI's generated CRDs are Go raw strings keyed by name in
# crds_generated.go.
names="$(sed -n 's/^\t"\([a-z]*\)": `apiVersion: apiextensions.k8s.io\/v1$/\1/p' "$src/pkg/operator/resources/crds_generated.go")"
for name in $names; do
  awk -v key="$name" '
    $0 ~ "^\t\"" key "\": `" { on = 1; sub(/^[^`]*`/, ""); print; next }
    on && /^`,/ { exit }
    on { print }' "$src/pkg/operator/resources/crds_generated.go" >"$out/crds/$name.yaml"
  if ! grep -q "kind: CustomResourceDefinition" "$out/crds/$name.yaml"; then
    log "CRD $name not found in CDI $CDI_VERSION crds_generated.go"
    exit 1
  fi
done
log "built CDI $CDI_VERSION cdi-controller in $(( $(date +%s) - start ))s into $out"
echo "$out"
