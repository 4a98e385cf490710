#!/usr/bin/env bash
# Builds the monitoring stack the alerts suite runs (issue 45) from the Go
# module proxy and caches it outside the work tree, keyed by version, beside
# the other suites' tools:
#
#   $VIRTC_TOOLS_CACHE/monitoring-op-$PROMETHEUS_OPERATOR_VERSION-prom-$PROMETHEUS_VERSION-k8s-sd-am-$ALERTMANAGER_VERSION/
#     prometheus-operator  github.com/prometheus-operator/prometheus-operator
#                          cmd/operator: renders the PrometheusRules and
#                          AlertmanagerConfigs virtc emits into rule files
#                          and Alertmanager's configuration
#     prometheus           github.com/prometheus/prometheus cmd/prometheus:
#                          scrapes the real components and evaluates the rules
#     alertmanager         github.com/prometheus/alertmanager cmd/alertmanager:
#                          routes the alerts to the tenants' receivers
#     crds/                the operator's CRDs as its module ships them
#                          (example/prometheus-operator-crd)
#
# prometheus-operator v0.85.0 is the only version of its root module the
# proxy serves (cmd/promcrdgen vendors the CRDs of the same version).
# `go install` refuses it: its go.mod replaces its two API submodules with
# their directories, so it is built from a wrapper module that requires the
# three modules at that version. Prometheus is promtool's version (the
# Makefile's PROMTOOL_VERSION, one module download for both), built with
# Kubernetes service discovery only (the ServiceMonitors' scrape
# configurations the operator renders discover their targets through the
# API server's Endpoints; the other mechanisms are dead weight here,
# plugins/plugin_kubernetes.go); Alertmanager is the
# version OpenShift 4.22's user-workload Alertmanager runs
# (cluster-monitoring-operator release-4.22
# assets/alertmanager-user-workload/alertmanager.yaml, version 0.31.1).
#
# Usage: build-monitoring.sh   (prints the cache directory)
set -euo pipefail

PROMETHEUS_OPERATOR_VERSION="${PROMETHEUS_OPERATOR_VERSION:-v0.85.0}"
PROMETHEUS_VERSION="${PROMETHEUS_VERSION:-v0.316.0}"
ALERTMANAGER_VERSION="${ALERTMANAGER_VERSION:-v0.31.1}"
. "$(dirname "$0")/../../tools/cache.sh"
GO="${GO:-go}"
key="monitoring-op-$PROMETHEUS_OPERATOR_VERSION-prom-$PROMETHEUS_VERSION-k8s-sd-am-$ALERTMANAGER_VERSION"
out="$CACHE/$key"

# -gcflags: the Makefile's TOOL_GCFLAGS_LIGHT (what each flag spares, and why)
export CGO_ENABLED=0 GOFLAGS="-mod=mod '-gcflags=${TOOL_GCFLAGS_LIGHT:-all=-N -l -dwarf=false}'" GOWORK=off

log() { echo "monitoring-tools: $*" >&2; }

complete() {
  [ -x "$out/prometheus-operator" ] && [ -x "$out/prometheus" ] && [ -x "$out/alertmanager" ] &&
    [ -f "$out/crds/monitoring.coreos.com_thanosrulers.yaml" ]
}

cached_or_lock "monitoring stack" "$key"

start=$(date +%s)
mkdir -p "$out/crds"
modcache="$("$GO" env GOMODCACHE)"
op=github.com/prometheus-operator/prometheus-operator

if [ ! -x "$out/prometheus" ]; then
  GOBIN="$out" "$GO" install -trimpath -ldflags "-s -w" -tags remove_all_sd,enable_kubernetes_sd \
    "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_VERSION"
fi
if [ ! -x "$out/alertmanager" ]; then
  GOBIN="$out" "$GO" install -trimpath -ldflags "-s -w" \
    "github.com/prometheus/alertmanager/cmd/alertmanager@$ALERTMANAGER_VERSION"
fi
if [ ! -x "$out/prometheus-operator" ]; then
  dir="$(mktemp -d "${TMPDIR:-/tmp}/virtc-promop.XXXXXX")"
  trap 'rm -rf "$dir"' EXIT
  cd "$dir"
  "$GO" mod init virtc.local/tools/prometheus-operator >/dev/null 2>&1
  cat >tools.go <<'GO'
//go:build tools

// Package tools pins the operator built for the alerts suite.
package tools

import (
	_ "github.com/prometheus-operator/prometheus-operator/cmd/operator"
)
GO
  "$GO" mod edit -require="$op@$PROMETHEUS_OPERATOR_VERSION" \
    -require="$op/pkg/apis/monitoring@$PROMETHEUS_OPERATOR_VERSION" \
    -require="$op/pkg/client@$PROMETHEUS_OPERATOR_VERSION"
  "$GO" mod tidy
  "$GO" build -trimpath -ldflags "-s -w" -o "$out/prometheus-operator" "$op/cmd/operator"
fi

"$GO" mod download "$op@$PROMETHEUS_OPERATOR_VERSION"
src="$modcache/$op@$PROMETHEUS_OPERATOR_VERSION"
rm -f "$out"/crds/*.yaml
cp "$src"/example/prometheus-operator-crd/*.yaml "$out/crds/"
chmod u+w "$out"/crds/*.yaml
log "built prometheus-operator $PROMETHEUS_OPERATOR_VERSION, Prometheus $PROMETHEUS_VERSION and Alertmanager $ALERTMANAGER_VERSION in $(( $(date +%s) - start ))s into $out"
echo "$out"
