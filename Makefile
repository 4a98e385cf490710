# virtc: build, test and tools. Tool versions are pinned here; `make tools`
# installs them with `go install` into .tools/bin.

GO            ?= go
TOOLS         := $(CURDIR)/.tools/bin
KUBECONFORM_VERSION := v0.8.0
KUSTOMIZE_VERSION   := v5.8.2
# promtool of Prometheus 3.16 (the Go module's v0.316.0: Prometheus 3.x
# modules are tagged v0.3xx.y), the newest the module proxy serves: it
# checks and unit-tests the alerting rules virtc generates.
PROMTOOL_VERSION    := v0.316.0
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT        ?= $(shell git rev-parse HEAD 2>/dev/null)
MODIFIED      ?= $(shell test -n "$$(git status --porcelain 2>/dev/null)" && echo true)
LDFLAGS       := -s -w -X github.com/virtc/virtc/internal/cli.Version=$(VERSION) -X github.com/virtc/virtc/internal/cli.Commit=$(COMMIT) -X github.com/virtc/virtc/internal/cli.Modified=$(MODIFIED)
export VIRTC_SCHEMAS ?= $(abspath $(CURDIR)/../shared/schemas-upstream)
export PATH   := $(TOOLS):$(PATH)

.PHONY: all build test demo tools generate vet clean fuzz fuzz-short
.PHONY: conformance conformance-tools admission

# Fuzz targets: package and function.
FUZZ_TARGETS := ./internal/compile:FuzzCompile ./internal/decode:FuzzDecode ./internal/emit:FuzzScalarRoundTrip ./internal/source:FuzzFastParse ./internal/emit:FuzzNeedsQuotes ./internal/decode:FuzzNameChecks ./internal/emit:FuzzDecodeGeneric ./internal/importer:FuzzMarshalGeneric
FUZZTIME ?= 2m

all: build

## build: the virtc binary in bin/, and beside it virtc-cmp, the Argo CD
## plugin's generate command (answers cached calls, else runs virtc cmp)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/virtc ./cmd/virtc
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o bin/virtc-cmp ./cmd/virtc-cmp

## demo: compile examples/quickstart with the embedded default catalog
demo:
	@$(GO) run ./cmd/virtc build examples/quickstart

## test: unit, golden and validation tests (race detector on), then each
## fuzz target briefly; at the end of the tests, every test that was
## skipped and why (a missing tool or the upstream schemas: see README.md)
SKIP_LOG := $(CURDIR)/bin/test-skipped.txt
test:
	@echo "make test: go vet ./... (a minute or two on a cold build cache)"
	@$(MAKE) --no-print-directory vet
	@mkdir -p bin && rm -f $(SKIP_LOG)
	@echo "make test: go test -race over $$($(GO) list ./... | wc -l) packages (about 10 minutes cold on 2 cores; each package prints a line when it is done)"
	@# test/internal/vap evaluates the policies' CEL thousands of times on one
	@# goroutine: the race detector finds nothing there and makes it 10x slower.
	@# -timeout 30m: in CI this lane runs niced beside the tool builds, and a
	@# package's wall time is not its work.
	@status=0; \
	VIRTC_SKIP_LOG=$(SKIP_LOG) $(GO) test -race -count=1 -timeout 30m $$($(GO) list ./... | grep -v '/test/internal/vap$$') || status=1; \
	VIRTC_SKIP_LOG=$(SKIP_LOG) $(GO) test -count=1 -timeout 30m ./test/internal/vap || status=1; \
	if [ -s $(SKIP_LOG) ]; then \
	  echo; echo "make test: $$(wc -l < $(SKIP_LOG)) tests SKIPPED, not run (go test shows skips only with -v):"; \
	  sort $(SKIP_LOG) | sed 's/^/  /'; \
	  echo "  (upstream schemas: set VIRTC_SCHEMAS to a schemas-upstream folder, see README.md; tools: make tools)"; echo; \
	fi; \
	exit $$status
	@echo "make test: each fuzz target for 20000 executions"
	@$(MAKE) --no-print-directory fuzz-short

## fuzz: each fuzz target for $(FUZZTIME) (a duration, or a count such as 20000x)
fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  echo "fuzz $$t ($(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}" || exit 1; \
	done

# fuzz-short counts executions instead of seconds: with a wall-clock -fuzztime,
# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline
# exceeded" and no crasher when a loaded machine starves its workers at the
# deadline (golang/go#75804, fixed in Go 1.27); a count has no deadline.
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=20000x

vet:
	$(GO) vet ./...

## generate: the JSON Schemas in schemas/, from the Go types of api, and
## the builtin sizes and preferences in catalog/common-instancetypes.yaml,
## from the common-instancetypes bundle of KubeVirt (go mod download), and
## prometheus-operator's PrometheusRule and AlertmanagerConfig CRDs in
## test/schemas/prometheus-operator, from its module (go mod download)
generate:
	$(GO) run ./cmd/schemagen -api api -out schemas
	$(GO) run ./cmd/instancetypegen -out catalog/common-instancetypes.yaml
	$(GO) run ./cmd/promcrdgen -out test/schemas/prometheus-operator
	$(GO) run ./cmd/promcrdgen -vendored test/schemas/argocd-operator

.PHONY: e2e
## e2e: every kustomization under examples/ with the real kustomize, and the
## Argo CD plugin contract (also part of `make test`, where missing tools skip)
e2e: tools
	VIRTC_REQUIRE_TOOLS=1 $(GO) test -count=1 ./e2e/...

## browser: the HTML report's golden page (golden/report-html) in headless
## Chromium (Debian's chromium package): no console message, the DOM has
## the page's sections; the screenshot is kept in $(VIRTC_BROWSER_ARTIFACTS)
.PHONY: browser
export VIRTC_BROWSER_ARTIFACTS ?= $(CURDIR)/bin/browser
browser:
	VIRTC_REQUIRE_TOOLS=1 $(GO) test -count=1 -run TestReportHTMLBrowser -v ./golden

## tools: pinned kubeconform, kustomize and promtool in .tools/bin (built
## without DWARF or a symbol table, as the suites' tools: TOOL_GCFLAGS)
tools: $(TOOLS)/kubeconform $(TOOLS)/kustomize $(TOOLS)/promtool

$(TOOLS)/kubeconform:
	GOBIN=$(TOOLS) $(GO) install -ldflags '-s -w' -gcflags '$(TOOL_GCFLAGS)' github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)

$(TOOLS)/kustomize:
	GOBIN=$(TOOLS) $(GO) install -ldflags '-s -w' -gcflags '$(TOOL_GCFLAGS)' sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

# remove_all_sd: Prometheus's build tag that leaves its service-discovery
# plugins out (prometheus plugins/plugin_*.go; the cloud SDKs are most of
# its compile): the tests run only `promtool check rules` and `promtool
# test rules`, which discover nothing.
$(TOOLS)/promtool:
	GOBIN=$(TOOLS) $(GO) install -ldflags '-s -w' -gcflags '$(TOOL_GCFLAGS)' -tags remove_all_sd github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION)

.PHONY: release
## release: the release artifacts of VERSION in bin/release (tools/release):
## virtc for linux and darwin on amd64 and arm64 as tar.gz, an SPDX SBOM
## and SHA256SUMS. The same commit, Go release and VERSION give the same
## checksums (the archives and the SBOM carry the commit's time). A release
## is a tag: git tag vX.Y.Z && make release (the release workflow,
## .github/workflows/release.yaml, does this and pushes the image).
release:
	$(GO) run ./tools/release --repo . --out bin/release --version $(VERSION) --commit $(COMMIT) \
	  --source-date-epoch $$(git log -1 --format=%ct)

.PHONY: image image-test image-pin
# The version baked into the image whose digest the examples reference.
EXAMPLE_IMAGE_VERSION := example
PINNED_FILES := examples/argocd/repo-server-patch.yaml \
  examples/argocd/repo-server-kustomize-patch.yaml \
  examples/argocd/openshift-gitops.yaml \
  examples/kustomize-transformer/compiler-container.yaml

## image: virtc's container image without a container engine
## (tools/image, go-containerregistry): static virtc for linux/amd64, user
## 999, no shell; an OCI layout in bin/image (its digest in
## bin/image.digest) and bin/virtc-image.tar for `podman load`. The same
## source, Go release and VERSION give the same digest.
image:
	cd tools/image && $(GO) run . --repo ../.. --version $(VERSION) --out ../../bin/image --tarball ../../bin/virtc-image.tar

## image-test: build the image, check its config and files, run the binary
## taken out of it, build twice for the same digest, and check that the
## examples reference the image of this tree (make image-pin)
image-test:
	cd tools/image && $(GO) test -count=1 ./...

## image-pin: rewrite the examples' virtc@sha256 references to the image of
## this tree built with VERSION=$(EXAMPLE_IMAGE_VERSION)
image-pin:
	cd tools/image && $(GO) run . --repo ../.. --version $(EXAMPLE_IMAGE_VERSION) --out ../../bin/image-example --pin $(addprefix ../../,$(PINNED_FILES))

## bench: time virtc build, kustomize with virtc as a function, and kustomize
## passing virtc's output through, on fleets of 1 to 100,000 VMs; prints one
## table (about 15 minutes on 2 cores; BENCHFLAGS passes flags to cmd/benchrun)
bench: build tools
	$(GO) run ./cmd/benchrun --virtc bin/virtc --kustomize $(TOOLS)/kustomize $(BENCHFLAGS)

## bench-stages: Go benchmarks of each pipeline stage, with allocations, and
## of each faster second path beside the library path it replaces
## (BenchmarkSecondPath: YAML parsing, YAML encoding, the KRM protocol)
bench-stages:
	$(GO) test -run '^$$' -bench . -benchmem ./bench ./internal/source ./internal/emit ./internal/krm

.PHONY: bench bench-stages

clean:
	rm -rf bin

## admission: every golden output, example output and gen-fleet fleet through
## KubeVirt's and CDI's own admission code (test/internal/admission, a separate Go
## module; cold build about 3 minutes on 2 cores). VIRTC_ADMISSION_REPORT=FILE
## writes every denial and unresolved reference, grouped by message.
# KUBEVIRT_BUILD: the build flags of controllers-tools' KubeVirt build
# (CGO_ENABLED=0, -trimpath, TOOL_GCFLAGS). test/internal/admission and test/boot require KubeVirt
# at the same version with the same replace lines, so with the same flags
# the packages both compile are compiled once (the Go build cache keys a
# package by its flags too): on a cold machine the second of them skips
# most of KubeVirt's and client-go's compile.
KUBEVIRT_BUILD  = CGO_ENABLED=0 GOFLAGS='-trimpath -gcflags=$(TOOL_GCFLAGS)'
admission: build
	cd test/internal/admission && $(KUBEVIRT_BUILD) VIRTC_BIN=$(CURDIR)/bin/virtc $(GO) test -count=1 -timeout 30m ./...

## conformance-tools: etcd, kube-apiserver and kubectl built from the Go
## module proxy, cached by version in ${XDG_CACHE_HOME:-~/.cache}/virtc-tools
## (cold: 13-19 minutes on 2 cores; cached: seconds)
## kcm-tools: kube-controller-manager of the same Kubernetes, for the
## suites with controllers (after conformance-tools, whose build cache it
## shares: about 5 minutes more), not make conformance
KUBE_VERSION  := v1.37.2
ETCD_VERSION  := v3.7.3
# The tool builds run niced, beside whatever else runs (the unit suites in
# .ci/run: measured cold, that beat building them first at the default
# priority, TOOL_NICE=0).
TOOL_NICE     ?= 15
# The tool builds' compiler flags (-gcflags of every package, std included).
# -dwarf=false: their links drop DWARF anyway (-s -w); not writing it spares
# about 14% of the compile's CPU-seconds. TOOL_GCFLAGS_LIGHT adds -N -l (no
# optimisation, no inlining: about 14% more) for the tools whose work in the
# suites is light: Velero with its plugin and S3 server, CDI's controller,
# OLM and opm. kube-apiserver, etcd, kube-controller-manager, Argo CD and
# KubeVirt (whose packages test/internal/admission and test/boot share, KUBEVIRT_BUILD)
# stay optimised. Measured on a client-go and controller-runtime build with an
# empty build cache: 183 CPU-s, 158 without DWARF, 132 also without -N -l.
export TOOL_GCFLAGS       := all=-dwarf=false
export TOOL_GCFLAGS_LIGHT := all=-N -l -dwarf=false
export KUBE_VERSION ETCD_VERSION

.PHONY: kcm-tools
conformance-tools:
	GO=$(GO) nice -n $(TOOL_NICE) test/conformance/tools/build.sh control-plane
kcm-tools:
	GO=$(GO) nice -n $(TOOL_NICE) test/conformance/tools/build.sh kcm

## argocd-tools: a real Argo CD (CLI, API server, repo-server, CMP server,
## application controller, ApplicationSet controller in one binary) built from the Go module proxy with Go 1.27,
## cached by version in ${XDG_CACHE_HOME:-~/.cache}/virtc-tools (cold: about
## 25 minutes on 2 cores)
ARGOCD_VERSION := v3.6.1
export ARGOCD_VERSION
.PHONY: argocd-tools e2e-argocd
argocd-tools:
	GO=$(GO) nice -n $(TOOL_NICE) test/argocd/tools/build.sh

## e2e-argocd: that Argo CD (with redis-server and the pinned kustomize)
## syncing a git copy of examples/ through plugin.yaml, kustomize and the
## ApplicationSet into three conformance control planes, each with
## kube-controller-manager, in-cluster and east with KubeVirt's virt-api and
## virt-controller and CDI's cdi-controller (test/argocd; a few minutes once
## the tools are cached)
# ARGOCD_RUN picks scenarios, e.g. ARGOCD_RUN='TestArgoCD$$/^(first_sync|snapshotBefore.*)$$'
ARGOCD_RUN ?= TestArgoCD$$|TestArgoCDPermits$$
e2e-argocd: tools conformance-tools kcm-tools argocd-tools controllers-tools olm-tools cdi-tools boot-launcher
	VIRTC_E2E_ARGOCD=1 $(GO) test -count=1 -timeout 45m -v -run '$(ARGOCD_RUN)' ./test/argocd/

## e2e-drills: virtc's restore plans run as a person runs them (bash, with
## the argocd CLI logged in to the real Argo CD API server, kubectl and the
## velero CLI) against that Argo CD and the real Velero of e2e-velero, on
## one cluster with KubeVirt and CDI: the VM back from a backup of its Schedule with
## its identity, Argo CD paused and handed back Synced with nothing
## recreated; the same for the tenant's plan and, from a second cluster's
## backup, the other-cluster plan; the plans without their pause or
## tracking step fail the checks
## (test/argocd TestRestoreDrill; about 6 minutes once the tools are cached)
.PHONY: e2e-drills
e2e-drills: tools conformance-tools kcm-tools argocd-tools controllers-tools olm-tools cdi-tools velero-tools
	VIRTC_E2E_ARGOCD=1 $(GO) test -count=1 -timeout 25m -v -run 'TestRestoreDrill$$' ./test/argocd/

## controllers-tools: KubeVirt's real virt-controller and virt-api built from
## the Go module proxy, cached by version in
## ${XDG_CACHE_HOME:-~/.cache}/virtc-tools (test/controllers/tools/build.sh)
KUBEVIRT_VERSION := v1.8.4
export KUBEVIRT_VERSION
.PHONY: controllers-tools e2e-controllers
controllers-tools:
	GO=$(GO) nice -n $(TOOL_NICE) test/controllers/tools/build.sh

## olm-tools: OLM's olm-operator and catalog-operator and operator-registry's
## opm, built from the Go module proxy at the versions OpenShift 4.22 ships,
## cached by version in ${XDG_CACHE_HOME:-~/.cache}/virtc-tools
## (test/controllers/tools/build-olm.sh)
OLM_VERSION := v0.42.0
OPM_VERSION := v1.65.0
export OLM_VERSION OPM_VERSION
.PHONY: olm-tools
olm-tools:
	GO=$(GO) nice -n $(TOOL_NICE) test/controllers/tools/build-olm.sh

## cdi-tools: CDI's real cdi-controller built from the Go module proxy,
## cached by version in ${XDG_CACHE_HOME:-~/.cache}/virtc-tools
## (test/controllers/tools/build-cdi.sh)
CDI_VERSION := v1.65.0
export CDI_VERSION
.PHONY: cdi-tools
cdi-tools:
	GO=$(GO) nice -n $(TOOL_NICE) test/controllers/tools/build-cdi.sh

## monitoring-tools: prometheus-operator, Prometheus and Alertmanager built
## from the Go module proxy, cached by version in
## ${XDG_CACHE_HOME:-~/.cache}/virtc-tools (test/controllers/tools/build-monitoring.sh)
PROMETHEUS_OPERATOR_VERSION := v0.85.0
ALERTMANAGER_VERSION := v0.31.1
export PROMETHEUS_OPERATOR_VERSION ALERTMANAGER_VERSION
export PROMETHEUS_VERSION := $(PROMTOOL_VERSION)
.PHONY: monitoring-tools
monitoring-tools:
	GO=$(GO) nice -n $(TOOL_NICE) test/controllers/tools/build-monitoring.sh

## velero-tools: Velero (server and CLI), velero-plugin-for-aws and gofakes3
## (an S3 server) built from the Go module proxy, cached by version in
## ${XDG_CACHE_HOME:-~/.cache}/virtc-tools (test/internal/velero/tools/build-velero.sh)
VELERO_VERSION := v1.18.3
AWS_PLUGIN_VERSION := v1.14.3
GOFAKES3_VERSION := v1.2.0
export VELERO_VERSION AWS_PLUGIN_VERSION GOFAKES3_VERSION
.PHONY: velero-tools e2e-velero
velero-tools:
	GO=$(GO) nice -n $(TOOL_NICE) test/internal/velero/tools/build-velero.sh

## e2e-velero: virtc's OADP objects taken and restored by the real Velero
## and its AWS plugin against a conformance control plane, with an S3
## object store on loopback: the DPA's location Available, a backup from
## virtc's Schedule holding what it selects, the restore plan's Restore
## (test/internal/velero)
e2e-velero: conformance-tools kcm-tools velero-tools
	VIRTC_E2E_VELERO=1 $(GO) test -count=1 -timeout 15m -v -skip '$(ALERTS_TESTS)' ./test/internal/velero/

## e2e-controllers: virtc's output handled by the real controllers beside a
## conformance control plane: launcher pods rendered by virt-controller,
## admitted or refused under virtc's ResourceQuota; golden-image imports,
## DataSources and the VMs' DataVolumes decided by cdi-controller, and its
## clones' upload pods admitted or refused under virtc's ResourceQuota
## (test/controllers); the Platform installed and upgraded by OLM's own
## resolver and InstallPlans from a catalog generated from virtc's version
## table, approved by virtc's approver (test/internal/olm)
e2e-controllers: conformance-tools kcm-tools controllers-tools olm-tools cdi-tools
	VIRTC_E2E_CONTROLLERS=1 $(GO) test -count=1 -timeout 20m -v -skip '$(ALERTS_TESTS)' ./test/controllers/ ./test/internal/olm/

## e2e-alerts: a tenant's VM alerts end to end on real parts: virtc's
## PrometheusRule and AlertmanagerConfig rendered by the real
## prometheus-operator as OpenShift's user-workload monitoring configures
## it, evaluated by a real Prometheus on what the real virt-controller
## exports while a VM crash-loops, routed by a real Alertmanager to the
## tenant's webhook (test/controllers TestAlertsOnTheRealSeries); and the
## backup alerts on the real Velero's metrics, scraped through virtc's
## ServiceMonitor as the real operator renders it for the platform's
## Prometheus (test/internal/velero TestBackupAlertsOnVeleroMetrics); and
## an update of OpenShift Virtualization made by the real OLM's
## InstallPlan, which pages no platform rule while olm-operator's series
## show it (test/internal/olm TestDeclaredUpgradeDoesNotPage). One package
## at a time: their timings are the tests' subject.
ALERTS_TESTS := TestAlertsOnTheRealSeries|TestBackupAlertsOnVeleroMetrics|TestDeclaredUpgradeDoesNotPage
.PHONY: e2e-alerts
e2e-alerts: conformance-tools kcm-tools controllers-tools olm-tools cdi-tools velero-tools monitoring-tools
	VIRTC_E2E_CONTROLLERS=1 $(GO) test -count=1 -timeout 15m -v -run '$(ALERTS_TESTS)' ./test/controllers/
	VIRTC_E2E_VELERO=1 $(GO) test -count=1 -timeout 15m -v -run '$(ALERTS_TESTS)' ./test/internal/velero/
	VIRTC_E2E_CONTROLLERS=1 $(GO) test -count=1 -timeout 15m -v -run '$(ALERTS_TESTS)' ./test/internal/olm/

## conformance: every golden output and example output applied to a real
## kube-apiserver with the real CRDs, per platform version; and the tenants'
## guardrails policies there: a tenant's direct bypasses refused, every
## output and what the controllers write admitted (TestGuardrailPolicies);
## and each golden import's build applied over its live export with
## Argo CD's client-side apply, changing no adopted VM (TestImportAdoption)
conformance: conformance-tools
	VIRTC_CONFORMANCE=1 $(GO) test -count=1 -timeout 80m -parallel 7 -v -run 'TestConformance$$|TestGuardrailPolicies$$|TestImportAdoption$$' ./test/conformance/

## boot-image: the Debian 12 guest image the boot suite boots, built by
## debootstrap from Debian packages (signed shim/grub, grub-pc, cloud-init,
## qemu-guest-agent, a kernel) and cached by its recipe's hash in
## ${XDG_CACHE_HOME:-~/.cache}/virtc-tools/boot-image-<hash>
## (test/boot/tools/build-image.sh; needs root)
.PHONY: boot-image boot boot-launcher
## boot-launcher: the end-to-end suite's virt-launcher (test/boot/cmd/
## virt-launcher: KubeVirt v1.8.4's launcher code booting one VMI of the
## cluster with its own libvirtd), which e2e-argocd's node agent runs for
## the VM whose guest boots
boot-launcher:
	cd test/boot && GOWORK=off $(KUBEVIRT_BUILD) $(GO) build -o $(CURDIR)/bin/virt-launcher ./cmd/virt-launcher

boot-image:
	nice -n 10 test/boot/tools/build-image.sh

## boot: virtc's VMs boot (issue 30): KubeVirt v1.8.4's own steps to the
## VMI and virt-launcher's converter to the libvirt domain, only the
## pod-provided changes applied (test/boot/internal/launcher/domain.go podChanges), booted
## by a libvirtd the suite starts on a private socket; asserts virtc's
## cloud-init user data ran and the guest agent answers (test/boot)
boot: build boot-image
	cd test/boot && GOWORK=off $(KUBEVIRT_BUILD) VIRTC_BIN=$(CURDIR)/bin/virtc nice -n 10 $(GO) test -count=1 -timeout 50m -v ./...
