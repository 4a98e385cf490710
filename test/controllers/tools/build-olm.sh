#!/usr/bin/env bash
# Builds OLM for the controllers suite (issue 31) from the Go module proxy
# and caches it outside the work tree, keyed by version:
#
#   $VIRTC_TOOLS_CACHE/olm-$OLM_VERSION-opm-$OPM_VERSION/olm
#       operator-lifecycle-manager's olm-operator (cmd/olm): installs CSVs,
#       OperatorGroups, writes CSV phases
#   .../catalog
#       its catalog-operator (cmd/catalog): resolves Subscriptions against
#       CatalogSources and writes InstallPlans (pkg/controller/registry/
#       resolver), executes approved ones
#   .../opm
#       operator-registry's opm, whose `opm serve` serves a file-based
#       catalog over gRPC, as the registry pod of a CatalogSource does
#   .../crds/
#       OLM's CRDs (deploy/chart/crds of the same module)
#
# Versions: OpenShift 4.22 runs OLM v0.42.0 (openshift/operator-framework-olm
# release-4.22 vendors the upstream v0.42.0 tag) and operator-registry
# v1.65.0 (what OLM v0.42.0's go.mod requires). `go install pkg@version`
# refuses here (the module proxy does not list these modules, and go
# install asks for the list to look for deprecations), so the commands are
# built from a throw-away wrapper module that requires both at these
# versions, with OLM's go.sum.
#
# Usage: build-olm.sh   (prints the cache directory)
set -euo pipefail

OLM_VERSION="${OLM_VERSION:-v0.42.0}"
OPM_VERSION="${OPM_VERSION:-v1.65.0}"
. "$(dirname "$0")/../../tools/cache.sh"
GO="${GO:-go}"
out="$CACHE/olm-$OLM_VERSION-opm-$OPM_VERSION"

# -gcflags: the Makefile's TOOL_GCFLAGS_LIGHT (what each flag spares, and why)
export CGO_ENABLED=0 GOFLAGS="-mod=mod '-gcflags=${TOOL_GCFLAGS_LIGHT:-all=-N -l -dwarf=false}'" GOWORK=off

log() { echo "olm-tools: $*" >&2; }

complete() {
  [ -x "$out/olm" ] && [ -x "$out/catalog" ] && [ -x "$out/opm" ] && [ -d "$out/crds" ]
}

cached_or_lock "OLM $OLM_VERSION and opm $OPM_VERSION" "olm-$OLM_VERSION-opm-$OPM_VERSION"

dir="$(mktemp -d "${TMPDIR:-/tmp}/virtc-olm.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
start=$(date +%s)
log "building OLM $OLM_VERSION and opm $OPM_VERSION in $dir"
cd "$dir"
"$GO" mod init virtc.local/tools/olm >/dev/null 2>&1
cat >tools.go <<'GO'
//go:build tools

// Package tools pins the OLM commands built for the controllers suite.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
	_ "github.com/operator-framework/operator-registry/cmd/opm"
)
GO
"$GO" mod edit -require="github.com/operator-framework/operator-lifecycle-manager@$OLM_VERSION" \
  -require="github.com/operator-framework/operator-registry@$OPM_VERSION"
"$GO" mod download "github.com/operator-framework/operator-lifecycle-manager@$OLM_VERSION"
modcache="$("$GO" env GOMODCACHE)"
olmdir="$modcache/github.com/operator-framework/operator-lifecycle-manager@$OLM_VERSION"
cp "$olmdir/go.sum" go.sum
chmod u+w go.sum
"$GO" mod tidy
mkdir -p bin
ld="-s -w -X github.com/operator-framework/operator-lifecycle-manager/pkg/version.OLMVersion=${OLM_VERSION#v}"
"$GO" build -trimpath -ldflags "$ld" -o bin/ \
  github.com/operator-framework/operator-lifecycle-manager/cmd/olm \
  github.com/operator-framework/operator-lifecycle-manager/cmd/catalog
# containers_image_openpgp: the pure-Go signature code of containers/image
# instead of gpgme's cgo (operator-registry's Makefile builds opm with it);
# without cgo, go-sqlite3 builds its stub, and `opm serve` of a file-based
# catalog needs no SQLite.
"$GO" build -tags containers_image_openpgp -trimpath -ldflags "-s -w" -o bin/ \
  github.com/operator-framework/operator-registry/cmd/opm
rm -rf "$out.tmp"
mkdir -p "$out.tmp/crds"
mv bin/olm bin/catalog bin/opm "$out.tmp/"
cp "$olmdir/deploy/chart/crds/"*.yaml "$out.tmp/crds/"
chmod -R u+w "$out.tmp"
rm -rf "$out"
mv "$out.tmp" "$out"
log "built OLM $OLM_VERSION and opm $OPM_VERSION in $(( $(date +%s) - start ))s into $out"
echo "$out"
