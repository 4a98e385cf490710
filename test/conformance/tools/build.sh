#!/usr/bin/env bash
# Builds the local control plane for the conformance tests from the Go
# module proxy and caches the binaries outside the work tree, keyed by
# version, so that later runs take seconds:
#
#   $VIRTC_TOOLS_CACHE/kube-$KUBE_VERSION/{kube-apiserver,kubectl}
#   $VIRTC_TOOLS_CACHE/kcm-$KUBE_VERSION/kube-controller-manager
#   $VIRTC_TOOLS_CACHE/etcd-$ETCD_VERSION/etcd
#
# `go install k8s.io/kubernetes/cmd/kube-apiserver@vX` refuses because
# kubernetes' go.mod replaces its staging modules with local directories, so
# each binary is built from a throw-away wrapper module that requires
# k8s.io/kubernetes and replaces every staging module (read from
# kubernetes' own go.mod in the module cache) with its published version.
#
# Usage: build.sh [kube|kcm|etcd|control-plane|all]   (default all;
# control-plane is etcd and kube; prints the cache dirs)
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"
CACHE="${VIRTC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virtc-tools}"
GO="${GO:-go}"
what="${1:-all}"

# -gcflags: the Makefile's TOOL_GCFLAGS (what each flag spares, and why)
export CGO_ENABLED=0 GOFLAGS="-mod=mod '-gcflags=${TOOL_GCFLAGS:-all=-dwarf=false}'" GOWORK=off

log() { echo "conformance-tools: $*" >&2; }

# Wrapper module directories, removed on exit whatever happens.
tmpdirs=()
trap 'rm -rf "${tmpdirs[@]}"' EXIT

# wrapper makes a fresh module directory in $dir.
wrapper() {
  dir="$(mktemp -d "${TMPDIR:-/tmp}/virtc-$1.XXXXXX")"
  tmpdirs+=("$dir")
  (cd "$dir" && "$GO" mod init "virtc.local/tools/$1" >/dev/null 2>&1)
}

# kube_wrapper makes a wrapper module in $dir that requires k8s.io/kubernetes
# at $KUBE_VERSION and builds the given commands of it into $dir/bin.
kube_wrapper() {
  local name="$1"
  shift
  wrapper "$name"
  {
    printf '//go:build tools\n\n// Package tools pins the Kubernetes commands built for the tests.\npackage tools\n\nimport (\n'
    local c
    for c in "$@"; do printf '\t_ "%s"\n' "$c"; done
    printf ')\n'
  } >"$dir/tools.go"
  (
    cd "$dir"
    "$GO" mod edit -require="k8s.io/kubernetes@$KUBE_VERSION"
    "$GO" mod download "k8s.io/kubernetes@$KUBE_VERSION"
    local gomod staging_version
    gomod="$("$GO" env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$KUBE_VERSION.mod"
    # Staging modules are published as v0.<minor>.<patch> for v1.<minor>.<patch>.
    staging_version="v0.${KUBE_VERSION#v1.}"
    local mods
    # Both forms: inside a replace ( ... ) block and single-line replace.
    mods="$(awk '$2 == "=>" && $3 ~ /^\.\/staging\/src\// { print $1 }
                 $1 == "replace" && $3 == "=>" && $4 ~ /^\.\/staging\/src\// { print $2 }' "$gomod" | sort -u)"
    if [ -z "$mods" ]; then
      log "no staging replace directives found in $gomod"
      exit 1
    fi
    local n=0 m
    for m in $mods; do
      "$GO" mod edit -replace="$m=$m@$staging_version"
      n=$((n + 1))
    done
    log "$n staging modules replaced with $staging_version"
    "$GO" mod tidy
    local minor="${KUBE_VERSION#v1.}"
    minor="${minor%%.*}"
    local ld="-s -w" p
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ld="$ld -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    mkdir -p "$dir/bin"
    "$GO" build -trimpath -ldflags "$ld" -o "$dir/bin/" "$@"
  )
}

build_kube() {
  local out="$CACHE/kube-$KUBE_VERSION"
  if [ -x "$out/kube-apiserver" ] && [ -x "$out/kubectl" ]; then
    log "kube-apiserver and kubectl $KUBE_VERSION cached in $out"
    return
  fi
  local dir start
  start=$(date +%s)
  log "building kube-apiserver and kubectl $KUBE_VERSION (cold: 13-19 min on 2 cores)"
  kube_wrapper kube k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
  mkdir -p "$out"
  mv "$dir/bin/kube-apiserver" "$dir/bin/kubectl" "$out/"
  log "built kube-apiserver and kubectl $KUBE_VERSION in $(( $(date +%s) - start ))s into $out"
}

# build_kcm builds kube-controller-manager from the same Kubernetes module
# as kube-apiserver, into a directory of its own so that adding it did not
# invalidate caches of kube-apiserver and kubectl built before it.
build_kcm() {
  local out="$CACHE/kcm-$KUBE_VERSION"
  if [ -x "$out/kube-controller-manager" ]; then
    log "kube-controller-manager $KUBE_VERSION cached in $out"
    return
  fi
  local dir start
  start=$(date +%s)
  log "building kube-controller-manager $KUBE_VERSION (after kube-apiserver: about 5 min on 2 cores)"
  kube_wrapper kcm k8s.io/kubernetes/cmd/kube-controller-manager
  mkdir -p "$out"
  mv "$dir/bin/kube-controller-manager" "$out/"
  log "built kube-controller-manager $KUBE_VERSION in $(( $(date +%s) - start ))s into $out"
}

build_etcd() {
  local out="$CACHE/etcd-$ETCD_VERSION"
  if [ -x "$out/etcd" ]; then
    log "etcd $ETCD_VERSION cached in $out"
    return
  fi
  local dir start
  start=$(date +%s)
  wrapper etcd
  log "building etcd $ETCD_VERSION in $dir"
  (
    cd "$dir"
    "$GO" mod edit -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION"
    "$GO" mod download "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
    mkdir -p "$dir/bin"
    "$GO" build -trimpath -ldflags "-s -w" -o "$dir/bin/etcd" go.etcd.io/etcd/server/v3
  )
  mkdir -p "$out"
  mv "$dir/bin/etcd" "$out/"
  log "built etcd $ETCD_VERSION in $(( $(date +%s) - start ))s into $out"
}

mkdir -p "$CACHE"
# One build at a time per cache, across concurrent runs.
exec 9>"$CACHE/.build.lock"
flock 9

case "$what" in
  kube) build_kube ;;
  kcm) build_kcm ;;
  etcd) build_etcd ;;
  control-plane) build_etcd; build_kube ;;
  all) build_etcd; build_kube; build_kcm ;;
  *) echo "usage: $0 [kube|kcm|etcd|control-plane|all]" >&2; exit 2 ;;
esac
