#!/usr/bin/env bash
# Builds a real Argo CD from the Go module proxy, the first piece of
# `make e2e-argocd` (issue 18), and caches it outside the work tree, keyed by
# version, so that later runs take seconds:
#
#   $VIRTC_TOOLS_CACHE/argocd-$ARGOCD_VERSION/argocd       one binary that acts
#       by argv[0], as argo-cd's cmd/main.go: the argocd CLI by its own
#       name; argocd-server, argocd-repo-server, argocd-cmp-server,
#       argocd-application-controller and argocd-applicationset-controller
#       are symlinks to it (the API server and the CLI for the restore
#       drills, which run virtc's restore scripts with `argocd app diff`
#       and `argocd app wait`)
#   $VIRTC_TOOLS_CACHE/argocd-$ARGOCD_VERSION/git-verify-wrapper.sh
#       (the repo-server needs it on its PATH; from the module's hack/)
#   $VIRTC_TOOLS_CACHE/argocd-$ARGOCD_VERSION/crds/        Application,
#       ApplicationSet, AppProject CRDs (the module's manifests/crds)
#
# `go install` refuses argo-cd (its go.mod has replace lines, one of them to
# its own ./gitops-engine), so a throw-away wrapper module requires
# github.com/argoproj/argo-cd/v3 and github.com/argoproj/argo-cd/gitops-engine/v3
# at the same version, copies argo-cd's other replace lines (the k8s.io
# modules) and has a main of its own that dispatches on argv[0] like
# argo-cd's cmd/main.go, for the commands the e2e needs (not dex, the
# notifications controller, the commit server, git-ask-pass, k8s-auth). argo-cd
# v3.6.1 needs Go 1.27 (GOTOOLCHAIN, fetched through the module proxy).
# Measured: 24m47s wall (4m56s CPU) with -p 1 under a load of 13 on 2 cores,
# cold; 6m35s with the build cache of that first build.
#
# Usage: build.sh   (prints the cache directory)
set -euo pipefail

ARGOCD_VERSION="${ARGOCD_VERSION:-v3.6.1}"
ARGOCD_GO="${ARGOCD_GO:-go1.27.3}"
CACHE="${VIRTC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virtc-tools}"
GO="${GO:-go}"
out="$CACHE/argocd-$ARGOCD_VERSION"

# -gcflags: the Makefile's TOOL_GCFLAGS (what each flag spares, and why)
export CGO_ENABLED=0 GOFLAGS="-mod=mod '-gcflags=${TOOL_GCFLAGS:-all=-dwarf=false}'" GOWORK=off GOTOOLCHAIN="$ARGOCD_GO"

log() { echo "argocd-tools: $*" >&2; }

# A cache is complete with every command the e2e runs (an older one without
# the API server and the CLI is rebuilt).
if [ -x "$out/argocd" ] && [ -L "$out/argocd-applicationset-controller" ] && [ -L "$out/argocd-server" ] &&
  [ -f "$out/git-verify-wrapper.sh" ] && [ -f "$out/crds/application-crd.yaml" ] && [ -x "$out/argocd-permits" ]; then
  log "Argo CD $ARGOCD_VERSION cached in $out"
  echo "$out"
  exit 0
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/virtc-argocd.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
start=$(date +%s)
log "building Argo CD $ARGOCD_VERSION with $ARGOCD_GO in $dir (cold: about 25 min on 2 cores)"
cd "$dir"
"$GO" mod init virtc.local/tools/argocd >/dev/null 2>&1
cat >main.go <<'GO'
// Command argocd is Argo CD's CLI, API server, repo-server, CMP server,
// application controller and ApplicationSet controller in one binary that
// acts by its name, as argo-cd's cmd/main.go (whose CLI error handling it
// keeps).
package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	appset "github.com/argoproj/argo-cd/v3/cmd/argocd-applicationset-controller/commands"
	cmpserver "github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	apiserver "github.com/argoproj/argo-cd/v3/cmd/argocd-server/commands"
	cli "github.com/argoproj/argo-cd/v3/cmd/argocd/commands"
	"github.com/argoproj/argo-cd/v3/util/grpc"
)

func main() {
	grpc.DisableSRVLookups()
	name := filepath.Base(os.Args[0])
	if v := os.Getenv("ARGOCD_BINARY_NAME"); v != "" {
		name = v
	}
	var c *cobra.Command
	isCLI := false
	switch name {
	case "argocd-server":
		c = apiserver.NewCommand()
	case "argocd-application-controller":
		c = appcontroller.NewCommand()
	case "argocd-applicationset-controller":
		c = appset.NewCommand()
	case "argocd-cmp-server":
		c = cmpserver.NewCommand()
		isCLI = true
	case "argocd-repo-server":
		c = reposerver.NewCommand()
	default:
		c = cli.NewCommand()
		isCLI = true
	}
	if isCLI {
		c.SilenceErrors = true
		c.SilenceUsage = true
	}
	if err := c.Execute(); err != nil {
		msg, perr := cli.NewDefaultPluginHandler().HandleCommandExecutionError(err, isCLI, os.Args)
		if perr != nil {
			os.Stdout.WriteString(msg)
			if exitErr, ok := errors.AsType[*exec.ExitError](perr); ok {
				os.Exit(exitErr.ExitCode())
			}
			os.Exit(1)
		}
	}
}
GO
"$GO" mod edit -require="github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION" -require="github.com/argoproj/argo-cd/gitops-engine/v3@$ARGOCD_VERSION"
"$GO" mod download "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION"
src="$("$GO" env GOMODCACHE)/github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION"
# argo-cd's replace lines with a module version (not its local gitops-engine).
awk '$2 == "=>" && $4 ~ /^v/ { print $1 "=" $3 "@" $4 }
     $1 == "replace" && $3 == "=>" && $5 ~ /^v/ { print $2 "=" $4 "@" $5 }' "$src/go.mod" |
  while read -r r; do "$GO" mod edit -replace="$r"; done
# argocd-permits: Argo CD's own AppProject code as a filter, for virtc's
# check of the tenants' projects (internal/appproject): it reads a JSON
# table of projects and kinds on stdin and writes it back with Argo CD's
# answers (test/argocd TestArgoCDPermits). Built with the binary above, it
# costs a link: the packages are the same.
mkdir -p permits
cat >permits/main.go <<'GO'
// Command argocd-permits answers, with argo-cd's
// AppProject.IsGroupKindNamePermitted (pkg/apis/application/v1alpha1),
// whether each project of a JSON table on stdin permits a namespaced
// kind, and writes the table back with the answers in "permitted".
package main

import (
	"encoding/json"
	"os"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type entry struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
}

type row struct {
	Project   string  `json:"project"`
	Whitelist []entry `json:"whitelist"`
	Blacklist []entry `json:"blacklist,omitempty"`
	Group     string  `json:"group"`
	Kind      string  `json:"kind"`
	Permitted bool    `json:"permitted"`
}

// list keeps an absent list nil: Argo CD tells an absent whitelist (every
// kind) from an empty one (none).
func list(l []entry) []metav1.GroupKind {
	if l == nil {
		return nil
	}
	out := make([]metav1.GroupKind, 0, len(l))
	for _, e := range l {
		out = append(out, metav1.GroupKind{Group: e.Group, Kind: e.Kind})
	}
	return out
}

func main() {
	var rows []row
	if err := json.NewDecoder(os.Stdin).Decode(&rows); err != nil {
		os.Stderr.WriteString("argocd-permits: " + err.Error() + "\n")
		os.Exit(2)
	}
	for i, r := range rows {
		p := v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{
			NamespaceResourceWhitelist: list(r.Whitelist),
			NamespaceResourceBlacklist: list(r.Blacklist),
		}}
		rows[i].Permitted = p.IsGroupKindNamePermitted(schema.GroupKind{Group: r.Group, Kind: r.Kind}, "x", true)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(rows); err != nil {
		os.Exit(1)
	}
}
GO
"$GO" mod tidy
# -s -w: no symbol table or DWARF (nothing here debugs Argo CD), which
# spares the link of a 200 MB binary most of its time.
"$GO" build -trimpath -ldflags "-s -w" -o argocd .
"$GO" build -trimpath -ldflags "-s -w" -o argocd-permits ./permits
mkdir -p "$out.tmp/crds"
cp argocd "$out.tmp/argocd"
cp argocd-permits "$out.tmp/argocd-permits"
for n in argocd-server argocd-repo-server argocd-cmp-server argocd-application-controller argocd-applicationset-controller; do
  ln -sf argocd "$out.tmp/$n"
done
install -m 0755 "$src/hack/git-verify-wrapper.sh" "$out.tmp/git-verify-wrapper.sh"
cp "$src/manifests/crds/application-crd.yaml" "$src/manifests/crds/applicationset-crd.yaml" \
  "$src/manifests/crds/appproject-crd.yaml" "$out.tmp/crds/"
chmod -R u+w "$out.tmp"
rm -rf "$out" && mv "$out.tmp" "$out"
log "built in $(( $(date +%s) - start ))s: $out"
echo "$out"
