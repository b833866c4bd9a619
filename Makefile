# Custody's build. Every version the build needs is pinned in hack/tools/go.mod (the control
# plane and code generator), hack/tools/prometheus/go.mod (promtool), hack/tools/kwok/go.mod
# (kwok, which plays the test bed's nodes) and go.mod (the libraries).

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen
# Test packages run two at a time: each starts several API servers on a two-core machine.
TEST_PARALLEL ?= 2
TEST_TIMEOUT ?= 40m
TEST_FLAGS ?= -count=1
# The images config/ deploys.
CONTROLLER_IMG ?= custody-controller:latest
SYNCER_IMG ?= custody-syncer:latest

.PHONY: all
all: build

##@ Tools

.PHONY: tools
tools: ## Build the pinned control plane, controller-gen, promtool and kwok into bin/ (cached by pin).
	hack/tools.sh

##@ Generation

.PHONY: generate
generate: tools ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...

# The controller's role (config/rbac/role.yaml) comes from the +kubebuilder:rbac markers of the
# hub's controllers. The syncer's two roles (config/rbac/syncer-hub-role.yaml and
# config/syncer/syncer-member-role.yaml) are written by hand, as markers cannot tell the hub
# from the member; the syncer suite runs the syncers with exactly those roles.
.PHONY: manifests
manifests: tools ## Generate CRDs and RBAC under config/.
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=custody-controller paths=./controllers/... output:rbac:artifacts:config=config/rbac

.PHONY: verify-gen
verify-gen: generate manifests ## Fail when generated files are not up to date.
	@if [ -n "$$(git status --porcelain -- api config)" ]; then \
		git status --porcelain -- api config; git --no-pager diff --stat -- api config; \
		echo "generated files are stale: run 'make generate manifests' and commit the result"; exit 1; \
	fi

##@ Images

.PHONY: docker-build
docker-build: ## Build the controller and syncer images (CONTROLLER_IMG, SYNCER_IMG); needs a Docker engine.
	docker build -f cmd/controller/Dockerfile -t $(CONTROLLER_IMG) .
	docker build -f cmd/syncer/Dockerfile -t $(SYNCER_IMG) .

##@ Build and test

.PHONY: build
build: plugin ## Build every package, and the kubectl plugin into bin/.
	go build ./...

.PHONY: run
run: tools plugin ## Run Custody locally: a hub, 2 Locations of 2 members, the controller and the syncers. ARGS="--help" for flags.
	go build -o $(BIN)/custody-dev ./cmd/custody-dev
	$(BIN)/custody-dev $(ARGS)

.PHONY: plugin
plugin: ## Build the kubectl plugin into bin/kubectl-custody; with bin/ on PATH, kubectl custody runs it.
	go build -o $(BIN)/kubectl-custody ./cmd/kubectl-custody

.PHONY: vet
vet: ## Check formatting, run go vet, and check that no controller package imports another.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	go vet ./...
	bash hack/check-imports.sh

.PHONY: test
test: tools verify-gen vet ## Run every test: unit, envtest and multi-cluster suites, then a batch of fault schedules.
	go test ./... -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $(TEST_FLAGS)
	$(MAKE) --no-print-directory faults N=$(FAULTS_BATCH) SEED=0
	$(MAKE) --no-print-directory faults N=$(FAULTS_BATCH) SEED=0 HUB_SITES=3 FAULTS_BUDGET=$(FAULTS_SITES_BUDGET)

# The fault schedules run alone, after the other tests: they measure how many fit in a minute.
# make test runs FAULTS_BATCH of them from a seed drawn from the clock, printed first, then
# as many as FAULTS_SITES_BUDGET allows on a hub across three sites, where a lost hub site
# is drawn in place of a restarted hub.
FAULTS_BATCH ?= 100
FAULTS_SITES_BUDGET ?= 4m
HUB_SITES ?= 1
N ?= 100
SEED ?= 0
FAULTS_BUDGET ?= 9m
FAULTS_TIMEOUT ?= 30m
# More flags of the harness, e.g. -keep-going (run every schedule after one failed) or -at-once=4.
FAULTS_FLAGS ?=
.PHONY: faults
faults: tools ## Run N fault schedules (default 100) on one bed from SEED (default: from the clock), its hub across HUB_SITES; the soak: N=10000 FAULTS_BUDGET=0 FAULTS_TIMEOUT=0 FAULTS_FLAGS=-keep-going.
	go test -tags faults ./test/faults -run '^TestFaults$$' -count=1 -v -timeout $(FAULTS_TIMEOUT) \
		-args -n=$(N) -seed=$(SEED) -budget=$(FAULTS_BUDGET) -hub-sites=$(HUB_SITES) $(if $(filter 1,$(N)),-steps) $(FAULTS_FLAGS)

.PHONY: bench
bench: tools ## Run the benchmarks once each and print their figures.
	go test ./... -run '^$$' -bench . -benchtime 1x -timeout $(TEST_TIMEOUT)

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-12s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
