# function-tenant-gateway
#
# Every target:
#   make render      render every user example (examples/<name>) against the
#                    function into _output/render/<name>.yaml (no cluster)
#   make test        vet, unit tests, golden render tests, offline schema
#                    validation, Envoy Gateway's translator judging the
#                    Gateways (test/envoy), the repository check (test/tracked)
#                    and the fuzz targets for FUZZTIME executions each
#   make vet         go vet over the module, the e2e module (test/e2e, build
#                    tag e2e) and the CLI tools module
#   make lint        vet and golangci-lint
#   make golden      rewrite the expected.yaml of every user example and test
#                    scenario (test/render/scenarios/) from the current function
#   make generate    regenerate deepcopy code, the XRDs and the input CRD from
#                    apis/, and docs/reference.md from them, the platform
#                    settings and the function's flags
#   make build       build the function and the operators' commands (fn/cmd)
#                    into $(OUT)/bin
#   make xpkg        build the Function package for linux/amd64 and linux/arm64
#                    and the Configuration packages (no Docker), and the
#                    operators' commands for both architectures beside them
#   make xpkg-check  build them twice and check the digests are identical
#   make bench       benchmarks of a full RunFunction against the do-nothing floor
#   make tools       build the Crossplane CLI and core (render, test, golden need them)
#   make e2e-tools   build every tool of the end-to-end control plane
#   make e2e         the end-to-end tests on a loopback control plane (test/e2e)
#   make e2e-up      bring that control plane up and leave it running
#   make e2e-down    stop it and wipe its directory
#   make faults      the fault test alone on a control plane of its own
#   make scale       N Tenants on a control plane; rewrites its section of docs/benchmarks.md
#   make clean       remove $(OUT)
#
# Tools are built from the Go module proxy at the versions pinned in the tools
# modules under package/tools/ and test/e2e/tools/, into a cache outside the
# clone that is reused across runs and clones. A binary's name carries its
# version and a hash of its module's go.sum, so a version bump rebuilds it.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := render

CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/function-tenant-gateway
OUT   ?= _output
export GOFLAGS ?= -buildvcs=false

pin = $(shell awk '$$1=="$(1)"{print $$2} $$1=="require" && $$2=="$(1)"{print $$3}' $(2))
sum = $(shell sha256sum $(1) | cut -c1-8)
# One hash over several files, for tools built from our own sources: their
# cached binary must change name when the sources do, not only go.sum.
sums = $(shell cat $(sort $(1)) | sha256sum | cut -c1-8)

CLI_MOD        := package/tools/cli
CORE_MOD       := package/tools/core
CLI_VERSION    := $(call pin,github.com/crossplane/cli/v2,$(CLI_MOD)/go.mod)
CORE_VERSION   := $(call pin,github.com/crossplane/crossplane/v2,$(CORE_MOD)/go.mod)
CROSSPLANE      := $(CACHE)/bin/crossplane-$(CLI_VERSION)-$(call sum,$(CLI_MOD)/go.sum)
CROSSPLANE_CORE := $(CACHE)/bin/crossplane-core-$(CORE_VERSION)-$(call sum,$(CORE_MOD)/go.sum)
CLI_SRC         := $(CLI_MOD)/go.sum $(wildcard $(CLI_MOD)/internal/*/*.go)
RUNTIME_IMAGE   := $(CACHE)/bin/runtime-image-$(call sums,$(CLI_SRC) $(CLI_MOD)/cmd/runtime-image/main.go)
XPKG_INDEX      := $(CACHE)/bin/xpkg-index-$(call sums,$(CLI_SRC) $(CLI_MOD)/cmd/xpkg-index/main.go)
GOLANGCI_VERSION := v2.15.0
GOLANGCI_LINT   := $(CACHE)/bin/golangci-lint-$(GOLANGCI_VERSION)
VERSION_PKG     := github.com/crossplane/crossplane-runtime/v2/pkg/version.version

FUNCTION_BIN := $(OUT)/bin/function
# Fuzz budgets are execution counts, not durations: a duration-based
# -fuzztime races Go 1.26's fuzz coordinator at the deadline on a loaded
# machine and fails with a bare "context deadline exceeded" and no input
# (go.dev/issue/75804, fixed in Go 1.27).
FUZZTIME     ?= 40000x

# The package reference the Configuration depends on; `make xpkg` records it
# in the Function package's runtime image.
FUNCTION_REF ?= ghcr.io/cozystack/function-tenant-gateway
# The version the packages are named and tagged with: the version tag on HEAD
# when there is one (a release build), else v0.1.0. Only a tag on HEAD itself
# counts (--exact-match): plain `git describe` would give v0.1.0-3-gabc1234,
# which is no release. CI clones may carry no tags and a source tarball no
# .git; both get the default. Computed once, so a run sees one value.
ifeq ($(origin VERSION),undefined)
VERSION := $(or $(shell git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null),v0.1.0)
endif
# The Function package is built once per architecture, each embedding a
# runtime image of its own binary; `crossplane xpkg push -f` with the files
# comma-separated publishes them as one multi-platform index (see docs/development.md).
XPKG_ARCHS   ?= amd64 arm64

RENDER_ENV = CROSSPLANE=$(abspath $(CROSSPLANE)) CROSSPLANE_CORE=$(abspath $(CROSSPLANE_CORE)) FUNCTION_BIN=$(abspath $(FUNCTION_BIN))

.PHONY: render test vet golden generate xpkg xpkg-check lint bench tools e2e e2e-tools e2e-up e2e-down scale faults build clean

$(CROSSPLANE):
	@mkdir -p $(dir $@)
	@echo "building the Crossplane CLI $(CLI_VERSION) into $@ (cold: several minutes)"
	cd $(CLI_MOD) && go build -trimpath -ldflags "-s -w -X $(VERSION_PKG)=$(CLI_VERSION)" -o $@.tmp github.com/crossplane/cli/v2/cmd/crossplane
	mv $@.tmp $@

# Core is the render engine (`crossplane internal render`) that the CLI runs
# through --crossplane-binary, since no Docker daemon is available.
$(CROSSPLANE_CORE):
	@mkdir -p $(dir $@)
	@echo "building Crossplane core $(CORE_VERSION) into $@ (cold: several minutes)"
	cd $(CORE_MOD) && go build -trimpath -ldflags "-s -w -X $(VERSION_PKG)=$(CORE_VERSION)" -o $@.tmp github.com/crossplane/crossplane/v2/cmd/crossplane
	mv $@.tmp $@

$(RUNTIME_IMAGE):
	@mkdir -p $(dir $@)
	cd $(CLI_MOD) && go build -trimpath -o $@.tmp ./cmd/runtime-image
	mv $@.tmp $@

$(XPKG_INDEX):
	@mkdir -p $(dir $@)
	cd $(CLI_MOD) && go build -trimpath -o $@.tmp ./cmd/xpkg-index
	mv $@.tmp $@

$(GOLANGCI_LINT):
	@mkdir -p $(dir $@)
	GOBIN=$(CACHE)/golangci-$(GOLANGCI_VERSION) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
	mv $(CACHE)/golangci-$(GOLANGCI_VERSION)/golangci-lint $@

tools: $(CROSSPLANE) $(CROSSPLANE_CORE)

# The end-to-end control plane: kube-apiserver and
# kube-controller-manager v1.35.8 and provider-kubernetes, built from the Go
# module proxy into the same cache.
K8S_MOD      := test/e2e/tools/k8s
PKUBE_MOD    := test/e2e/tools/provider-kubernetes
K8S_VERSION  := $(call pin,k8s.io/kubernetes,$(K8S_MOD)/go.mod)
PKUBE_VERSION := $(call pin,github.com/crossplane-contrib/provider-kubernetes,$(PKUBE_MOD)/go.mod)
K8S_LDFLAGS  := -s -w -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) -X k8s.io/component-base/version.gitTreeState=clean
KUBE_APISERVER := $(CACHE)/bin/kube-apiserver-$(K8S_VERSION)-$(call sum,$(K8S_MOD)/go.sum)
KUBE_CONTROLLER_MANAGER := $(CACHE)/bin/kube-controller-manager-$(K8S_VERSION)-$(call sum,$(K8S_MOD)/go.sum)
KUBECTL      := $(CACHE)/bin/kubectl-$(K8S_VERSION)-$(call sum,$(K8S_MOD)/go.sum)
PROVIDER_KUBERNETES := $(CACHE)/bin/provider-kubernetes-$(PKUBE_VERSION)-$(call sum,$(PKUBE_MOD)/go.sum)
REGISTRY_MOD := test/e2e/tools/registry
REGISTRY     := $(CACHE)/bin/registry-$(call sum,$(REGISTRY_MOD)/go.sum)-$(call sum,$(REGISTRY_MOD)/main.go)
E2E_DIR      ?= $(abspath $(OUT))/e2e

$(KUBE_APISERVER):
	@mkdir -p $(dir $@)
	cd $(K8S_MOD) && go build -trimpath -ldflags "$(K8S_LDFLAGS)" -o $@.tmp k8s.io/kubernetes/cmd/kube-apiserver
	mv $@.tmp $@

$(KUBE_CONTROLLER_MANAGER):
	@mkdir -p $(dir $@)
	cd $(K8S_MOD) && go build -trimpath -ldflags "$(K8S_LDFLAGS)" -o $@.tmp k8s.io/kubernetes/cmd/kube-controller-manager
	mv $@.tmp $@

$(KUBECTL):
	@mkdir -p $(dir $@)
	cd $(K8S_MOD) && go build -trimpath -ldflags "$(K8S_LDFLAGS)" -o $@.tmp k8s.io/kubernetes/cmd/kubectl
	mv $@.tmp $@

$(PROVIDER_KUBERNETES):
	@mkdir -p $(dir $@)
	cd $(PKUBE_MOD) && go build -trimpath -ldflags "-s -w" -o $@.tmp github.com/crossplane-contrib/provider-kubernetes/cmd/provider
	mv $@.tmp $@

$(REGISTRY):
	@mkdir -p $(dir $@)
	cd $(REGISTRY_MOD) && go build -trimpath -o $@.tmp .
	mv $@.tmp $@

# Envoy Gateway v1.9.1, a real Gateway API implementation that judges the
# Gateways the function composes. egctl runs its translator
# offline for test/envoy (`make test`); the envoy-gateway controller runs in
# the e2e control plane (test/e2e/hack/envoy-gateway.sh). Both come from one
# tools module and share most packages, so the second builds quickly after
# the first.
EG_MOD        := test/e2e/tools/envoy-gateway
EG_VERSION    := $(call pin,github.com/envoyproxy/gateway,$(EG_MOD)/go.mod)
EG_LDFLAGS    := -s -w -X github.com/envoyproxy/gateway/internal/cmd/version.envoyGatewayVersion=$(EG_VERSION)
# In a pod the controller has a network namespace of its own; as a process of
# the loopback control plane it shares one with provider-kubernetes, whose
# controller-runtime metrics server takes :8080 as Envoy Gateway's would, and
# neither has a flag to move it. So the controller is linked with
# controller-runtime's default metrics address "0" (off): the default of a
# package variable, no source changed. The binary's name carries a hash of
# this flag.
EG_SERVER_LDFLAGS := -X sigs.k8s.io/controller-runtime/pkg/metrics/server.DefaultBindAddress=0
EGCTL         := $(CACHE)/bin/egctl-$(EG_VERSION)-$(call sum,$(EG_MOD)/go.sum)
ENVOY_GATEWAY := $(CACHE)/bin/envoy-gateway-$(EG_VERSION)-$(call sum,$(EG_MOD)/go.sum)-$(shell echo '$(EG_SERVER_LDFLAGS)' | sha256sum | cut -c1-8)

$(EGCTL):
	@mkdir -p $(dir $@)
	@echo "building egctl $(EG_VERSION) into $@ (cold: several minutes)"
	cd $(EG_MOD) && go build -trimpath -ldflags "$(EG_LDFLAGS)" -o $@.tmp github.com/envoyproxy/gateway/cmd/egctl
	mv $@.tmp $@

$(ENVOY_GATEWAY):
	@mkdir -p $(dir $@)
	cd $(EG_MOD) && go build -trimpath -ldflags "$(EG_LDFLAGS) $(EG_SERVER_LDFLAGS)" -o $@.tmp github.com/envoyproxy/gateway/cmd/envoy-gateway
	mv $@.tmp $@

# A real issuer: cert-manager v1.21.2's ACME controllers, started
# by our own wiring (test/e2e/tools/cert-manager/main.go; its cmd/controller
# module is not served by the proxy), and Pebble v2.10.3, the ACME test
# server. BIND 9 (Debian's bind9) is the authoritative DNS server of the
# test apex.
CM_MOD        := test/e2e/tools/cert-manager
CM_VERSION    := $(call pin,github.com/cert-manager/cert-manager,$(CM_MOD)/go.mod)
CERT_MANAGER  := $(CACHE)/bin/cert-manager-controllers-$(CM_VERSION)-$(call sums,$(CM_MOD)/go.sum $(CM_MOD)/main.go)
PEBBLE_MOD    := test/e2e/tools/pebble
PEBBLE_VERSION := $(call pin,github.com/letsencrypt/pebble/v2,$(PEBBLE_MOD)/go.mod)
PEBBLE        := $(CACHE)/bin/pebble-$(PEBBLE_VERSION)-$(call sum,$(PEBBLE_MOD)/go.sum)

$(CERT_MANAGER):
	@mkdir -p $(dir $@)
	@echo "building cert-manager $(CM_VERSION)'s controllers into $@ (cold: several minutes)"
	cd $(CM_MOD) && go build -trimpath -ldflags "-s -w" -o $@.tmp .
	mv $@.tmp $@

$(PEBBLE):
	@mkdir -p $(dir $@)
	cd $(PEBBLE_MOD) && go build -trimpath -ldflags "-s -w" -o $@.tmp github.com/letsencrypt/pebble/v2/cmd/pebble
	mv $@.tmp $@

# Helm v4: the migration test (TestMigration, docs/migration.md)
# installs the Cozystack-shaped releases with it (the TenantGateway CRD a
# template of a cozystack-controller chart, the tenants' TenantGateways and
# namespaces) and upgrades the old release after the takeover. The CLI, as
# Flux's helm-controller and an operator run Helm, not its Go SDK: the
# operator's commands in the guide are the ones tested.
HELM_MOD      := test/e2e/tools/helm
HELM_VERSION  := $(call pin,helm.sh/helm/v4,$(HELM_MOD)/go.mod)
HELM          := $(CACHE)/bin/helm-$(HELM_VERSION)-$(call sum,$(HELM_MOD)/go.sum)

$(HELM):
	@mkdir -p $(dir $@)
	@echo "building Helm $(HELM_VERSION) into $@"
	cd $(HELM_MOD) && go build -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$(HELM_VERSION)" -o $@.tmp helm.sh/helm/v4/cmd/helm
	mv $@.tmp $@

e2e-tools: tools $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBECTL) $(PROVIDER_KUBERNETES) $(REGISTRY) $(XPKG_INDEX) $(ENVOY_GATEWAY) $(EGCTL) $(CERT_MANAGER) $(PEBBLE) $(HELM)

# The end-to-end tests (test/e2e, build tag e2e) against a loopback control
# plane: etcd, kube-apiserver, kube-controller-manager, a registry, Crossplane,
# the function, provider-kubernetes and Envoy Gateway's controller as plain
# processes (test/e2e/hack; Envoy Gateway's needs root, see docs/development.md).
# Needs Debian's etcd-server (etcd, etcdctl), openssl and curl; kubectl is
# built with the control plane, at its version. `make e2e` brings it up, runs the
# tests and tears it down whatever happens; e2e-up/e2e-down keep it up for
# poking at by hand (export KUBECONFIG=$(E2E_DIR)/pki/kubeconfig).
E2E_ENV = E2E_DIR=$(E2E_DIR) KUBE_APISERVER=$(KUBE_APISERVER) KUBE_CONTROLLER_MANAGER=$(KUBE_CONTROLLER_MANAGER) KUBECTL=$(KUBECTL) \
	CROSSPLANE_CORE=$(abspath $(CROSSPLANE_CORE)) CROSSPLANE=$(abspath $(CROSSPLANE)) REGISTRY=$(REGISTRY) \
	PROVIDER_KUBERNETES=$(PROVIDER_KUBERNETES) FUNCTION_BIN=$(abspath $(FUNCTION_BIN)) \
	XPKG_DIR=$(abspath $(OUT))/xpkg VERSION=$(VERSION) XPKG_ARCHS='$(XPKG_ARCHS)' XPKG_INDEX=$(XPKG_INDEX) ENVOY_GATEWAY=$(ENVOY_GATEWAY) EGCTL=$(EGCTL) CERT_MANAGER=$(CERT_MANAGER) PEBBLE=$(PEBBLE) HELM=$(HELM) \
	E2E_BEFORE_INSTALL=$(E2E_BEFORE_INSTALL)
E2E_RUN ?= .
# Run by up.sh before our packages are installed in the migration pass
# (test/e2e/hack/run.sh): seeds what the Cozystack controller leaves, for
# TestMigration (docs/migration.md). The other pass installs on a clean
# control plane.
E2E_BEFORE_INSTALL ?= $(abspath test/e2e/hack/reference-seed.sh)

e2e: e2e-tools build xpkg
	$(E2E_ENV) E2E_RUN='$(E2E_RUN)' bash test/e2e/hack/run.sh

# A platform of N Tenants on the same control plane (docs/benchmarks.md),
# in neither `make test` nor `make e2e`: TestScale runs only when SCALE_N is
# set. It measures convergence from empty, the steady state's API requests,
# CPU and memory, function calls and a route change's latency, then rewrites
# docs/benchmarks.md and docs/scale.png from every run recorded in docs/scale/.
# SETTINGS picks what the steady state costs: harness (up.sh's short periods,
# those of make e2e) or quiet (the 5m periods of docs/benchmarks.md, at
# periods short enough to measure: function TTL, provider poll and Crossplane
# poll 5m). Crossplane and the function run without --debug, as in production.
# Hold the e2e lock: flock /tmp/e2e.lock make scale N=100.
N             ?= 100
SETTINGS      ?= harness
SCALE_TIMEOUT ?= 60m
SCALE_SETTINGS_harness :=
SCALE_SETTINGS_quiet   := FUNCTION_TTL=5m PROVIDER_POLL=5m PROVIDER_SYNC=1h CROSSPLANE_POLL=5m

scale: e2e-tools build xpkg
	$(if $(filter $(SETTINGS),harness quiet),,$(error SETTINGS=$(SETTINGS): allowed values are harness and quiet))
	$(E2E_ENV) E2E_BEFORE_INSTALL= E2E_DEBUG= E2E_RUN='^TestScale$$' E2E_TIMEOUT=$(SCALE_TIMEOUT) \
	  SCALE_N=$(N) SCALE_SETTINGS=$(SETTINGS) SCALE_OUT=$(abspath docs) $(SCALE_SETTINGS_$(SETTINGS)) bash test/e2e/hack/run.sh

# The fault test (docs/operations.md#faults) alone on a control
# plane of its own: it restarts the function, Crossplane,
# provider-kubernetes, the API server and Envoy Gateway, and upgrades and
# rolls back the Configuration, each three times. `make e2e` (and CI) runs
# it as a pass of its own after the coexist pass (run.sh; E2E_FAULTS=0
# leaves it out); this target runs that pass alone, so another make e2e can run beside it in
# another network namespace (with another OUT). E2E_FAULT_ROUNDS and
# E2E_FAULT_OUTAGE change its rounds (3) and the function's outage (15s).
faults: e2e-tools build xpkg
	$(E2E_ENV) E2E_BEFORE_INSTALL= E2E_FAULTS=1 E2E_RUN='^TestFaults$$' E2E_TIMEOUT=45m bash test/e2e/hack/run.sh

e2e-up: e2e-tools build xpkg
	$(E2E_ENV) bash test/e2e/hack/up.sh

e2e-down:
	E2E_DIR=$(E2E_DIR) bash test/e2e/hack/down.sh --wipe

# The operators' commands beside the function (fn/cmd): the migration
# pre-flight and the plan of an upgrade. Built with it, and released per
# architecture with the packages.
COMMANDS := preflight plan

build:
	@mkdir -p $(OUT)/bin
	CGO_ENABLED=0 go build -trimpath -o $(FUNCTION_BIN) ./fn/cmd/function
	for c in $(COMMANDS); do CGO_ENABLED=0 go build -trimpath -o $(OUT)/bin/$$c ./fn/cmd/$$c; done

render: tools build
	$(RENDER_ENV) go run ./test/render/cmd/render -out $(OUT)/render

# Every package of the module; the e2e tests (build tag e2e), a module of
# their own (test/e2e/go.mod) so that what only they import stays out of
# the product's go.mod, vetted so they compile without a control plane; and
# the CLI tools module, which has its own go.mod.
E2E_MOD := test/e2e

vet:
	go vet ./...
	cd $(E2E_MOD) && go vet -tags e2e ./...
	cd $(CLI_MOD) && go vet ./cmd/... ./internal/...

test: vet tools build $(EGCTL)
	$(RENDER_ENV) EGCTL=$(EGCTL) FTG_REQUIRE_RENDER=1 go test -count=1 -timeout 30m ./...
	cd $(CLI_MOD) && go test -count=1 ./cmd/... ./internal/...
	go test -run '^$$' -fuzz '^FuzzRunFunction$$' -fuzztime $(FUZZTIME) ./fn
	go test -run '^$$' -fuzz '^FuzzDecodeRequest$$' -fuzztime $(FUZZTIME) ./fn
	go test -run '^$$' -fuzz '^FuzzObservedLazy$$' -fuzztime $(FUZZTIME) ./fn
	go test -run '^$$' -fuzz '^FuzzHostKey$$' -fuzztime $(FUZZTIME) ./fn/gateway
	go test -run '^$$' -fuzz '^FuzzIsolation$$' -fuzztime $(FUZZTIME) ./fn/gateway

golden: tools build
	$(RENDER_ENV) FTG_REQUIRE_RENDER=1 go test -count=1 ./test/render -update

generate:
	go tool controller-gen object paths=./apis/...
	go tool controller-gen crd:crdVersions=v1 paths=./apis/... output:crd:stdout | go run ./apis/internal/xrdgen/cmd/xrdgen -root .
	go run ./apis/internal/refgen/cmd/refgen -root .

# Reproducible packages: a static binary built with -trimpath, a runtime
# layer with fixed metadata, and xpkg build, which adds no timestamps.
# runtime-image reads each binary's architecture from its ELF header into the
# image config, which is what `xpkg push` files each package under in the
# index. Earlier packages are removed first so that the listing, and a push
# of $(OUT)/xpkg, holds only this build's.
xpkg: $(CROSSPLANE) $(RUNTIME_IMAGE)
	@mkdir -p $(OUT)/xpkg
	rm -f $(OUT)/xpkg/*.xpkg $(addprefix $(OUT)/xpkg/,$(addsuffix -*,$(COMMANDS)))
	for arch in $(XPKG_ARCHS); do \
	  mkdir -p $(OUT)/xpkg/$$arch; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch go build -trimpath -ldflags "-s -w" -o $(OUT)/xpkg/$$arch/function ./fn/cmd/function; \
	  for c in $(COMMANDS); do \
	    CGO_ENABLED=0 GOOS=linux GOARCH=$$arch go build -trimpath -ldflags "-s -w" -o $(OUT)/xpkg/$$c-$(VERSION)-linux-$$arch ./fn/cmd/$$c; \
	  done; \
	  $(RUNTIME_IMAGE) --binary=$(OUT)/xpkg/$$arch/function --arch=$$arch --out=$(OUT)/xpkg/$$arch/runtime.tar --tag=$(FUNCTION_REF):$(VERSION); \
	  $(CROSSPLANE) xpkg build --package-root=package/function --examples-root=package/function/examples \
	    --embed-runtime-image-tarball=$(OUT)/xpkg/$$arch/runtime.tar --package-file=$(OUT)/xpkg/function-tenant-gateway-$(VERSION)-$$arch.xpkg; \
	done
	$(CROSSPLANE) xpkg build --package-root=package/configuration --examples-root=package/configuration/examples \
		--package-file=$(OUT)/xpkg/configuration-tenant-gateway-$(VERSION).xpkg
	$(CROSSPLANE) xpkg build --package-root=package/configuration-tenant --examples-root=package/configuration-tenant/examples \
		--package-file=$(OUT)/xpkg/configuration-tenant-gateway-tenant-$(VERSION).xpkg
	cd $(OUT)/xpkg && sha256sum *.xpkg $(addsuffix -$(VERSION)-linux-*,$(COMMANDS))

# Builds every package twice into separate folders and fails unless the
# digests are identical. Both builds get this run's VERSION, so a tag made
# in between cannot make them differ.
xpkg-check:
	rm -rf $(OUT)/xpkg-a $(OUT)/xpkg-b
	$(MAKE) --no-print-directory xpkg OUT=$(OUT)/xpkg-a VERSION=$(VERSION) >/dev/null
	$(MAKE) --no-print-directory xpkg OUT=$(OUT)/xpkg-b VERSION=$(VERSION) >/dev/null
	cd $(OUT)/xpkg-a/xpkg && sha256sum *.xpkg > ../../xpkg-a.sha256
	cd $(OUT)/xpkg-b/xpkg && sha256sum *.xpkg > ../../xpkg-b.sha256
	cat $(OUT)/xpkg-a.sha256
	diff $(OUT)/xpkg-a.sha256 $(OUT)/xpkg-b.sha256
	@echo "xpkg: reproducible"

# One full RunFunction (decode, compute, encode) against the do-nothing floor,
# at 100 to 10,000 routes; see docs/benchmarks.md for the figures.
BENCHTIME ?= 3s
bench:
	go test ./test/bench -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 30m

lint: vet $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...
	cd $(E2E_MOD) && $(abspath $(GOLANGCI_LINT)) run --config $(abspath .golangci.yml) ./...

clean:
	rm -rf $(OUT)
