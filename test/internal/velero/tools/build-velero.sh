#!/usr/bin/env bash
# Builds the real Velero for the restore suite (issue 26) from the Go module
# proxy and caches it outside the work tree, keyed by version, beside the
# other suites' tools:
#
#   $VIRTC_TOOLS_CACHE/velero-$VELERO_VERSION-aws-$AWS_PLUGIN_VERSION-s3-$GOFAKES3_VERSION/
#     velero                   github.com/vmware-tanzu/velero: the server
#                              (`velero server`) and the CLI in one program
#     plugins/velero-plugin-for-aws
#                              the object store plugin OADP installs for an
#                              S3 BackupStorageLocation (provider aws)
#     gofakes3                 github.com/johannesboyne/gofakes3/cmd/gofakes3:
#                              an S3 server on loopback, the object store
#     crds/                    Velero's CRDs, one per file, as its module
#                              ships them (config/crd/v1 and v2alpha1 bases)
#
# Velero v1.18 is the release OADP 1.6 ships (OpenShift Virtualization
# 4.22's OADP). `go install velero@v1.18.3` refuses because Velero's go.mod
# has a replace line (kopia => project-velero/kopia), so it is built from a
# throw-away wrapper module that requires it and copies that line and its
# go.sum, as build-cdi.sh does for CDI.
#
# Usage: build-velero.sh   (prints the cache directory)
set -euo pipefail

VELERO_VERSION="${VELERO_VERSION:-v1.18.3}"
AWS_PLUGIN_VERSION="${AWS_PLUGIN_VERSION:-v1.14.3}"
GOFAKES3_VERSION="${GOFAKES3_VERSION:-v1.2.0}"
. "$(dirname "$0")/../../../tools/cache.sh"
GO="${GO:-go}"
key="velero-$VELERO_VERSION-aws-$AWS_PLUGIN_VERSION-s3-$GOFAKES3_VERSION"
out="$CACHE/$key"

# -gcflags: the Makefile's TOOL_GCFLAGS_LIGHT (what each flag spares, and why)
export CGO_ENABLED=0 GOFLAGS="-mod=mod '-gcflags=${TOOL_GCFLAGS_LIGHT:-all=-N -l -dwarf=false}'" GOWORK=off

log() { echo "velero-tools: $*" >&2; }

complete() {
  [ -x "$out/velero" ] && [ -x "$out/plugins/velero-plugin-for-aws" ] &&
    [ -x "$out/gofakes3" ] && [ -f "$out/crds/velero.io_backups.yaml" ]
}

cached_or_lock "Velero $VELERO_VERSION" "$key"

start=$(date +%s)
mkdir -p "$out/plugins" "$out/crds"
modcache="$("$GO" env GOMODCACHE)"

# the S3 server: a plain module, go install takes it as it is
if [ ! -x "$out/gofakes3" ]; then
  GOBIN="$out" "$GO" install -trimpath -ldflags "-s -w" "github.com/johannesboyne/gofakes3/cmd/gofakes3@$GOFAKES3_VERSION"
fi

# the AWS object store plugin: a plain module too
if [ ! -x "$out/plugins/velero-plugin-for-aws" ]; then
  GOBIN="$out/plugins" "$GO" install -trimpath -ldflags "-s -w" \
    "github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws@$AWS_PLUGIN_VERSION"
fi

if [ ! -x "$out/velero" ]; then
  dir="$(mktemp -d "${TMPDIR:-/tmp}/virtc-velero.XXXXXX")"
  trap 'rm -rf "$dir"' EXIT
  log "building Velero $VELERO_VERSION in $dir"
  cd "$dir"
  "$GO" mod init virtc.local/tools/velero >/dev/null 2>&1
  cat >tools.go <<'GO'
//go:build tools

// Package tools pins the Velero command built for the restore suite.
package tools

import (
	_ "github.com/vmware-tanzu/velero/cmd/velero"
)
GO
  "$GO" mod edit -require="github.com/vmware-tanzu/velero@$VELERO_VERSION"
  "$GO" mod download "github.com/vmware-tanzu/velero@$VELERO_VERSION"
  src="$modcache/github.com/vmware-tanzu/velero@$VELERO_VERSION"
  cp "$src/go.sum" go.sum
  chmod u+w go.sum
  reps="$(awk '$1 == "replace" && $3 == "=>" && NF >= 5 { print $2 "=" $4 "@" $5 }' "$src/go.mod")"
  for r in $reps; do "$GO" mod edit -replace="$r"; done
  # The Go module proxy refuses k8s.io/cli-runtime v0.33.12, Velero's
  # requirement ("This module version is not available"); v0.33.13, the
  # next patch release of the same minor, is served, and minimal version
  # selection then takes the v0.33.13 of the k8s.io modules it requires.
  "$GO" mod edit -require="k8s.io/cli-runtime@${CLI_RUNTIME_VERSION:-v0.33.13}"
  "$GO" mod tidy
  # the version the CLI and server report (velero's Makefile sets it the
  # same way: pkg/buildinfo)
  "$GO" build -trimpath -ldflags "-s -w -X github.com/vmware-tanzu/velero/pkg/buildinfo.Version=$VELERO_VERSION" \
    -o "$out/velero" github.com/vmware-tanzu/velero/cmd/velero
fi

"$GO" mod download "github.com/vmware-tanzu/velero@$VELERO_VERSION"
src="$modcache/github.com/vmware-tanzu/velero@$VELERO_VERSION"
rm -f "$out"/crds/*.yaml
cp "$src"/config/crd/v1/bases/*.yaml "$src"/config/crd/v2alpha1/bases/*.yaml "$out/crds/"
chmod u+w "$out"/crds/*.yaml
log "built Velero $VELERO_VERSION, velero-plugin-for-aws $AWS_PLUGIN_VERSION and gofakes3 $GOFAKES3_VERSION in $(( $(date +%s) - start ))s into $out"
echo "$out"
