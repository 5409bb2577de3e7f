# lab: the two commands a newcomer needs are `make up` (build, create the cluster, start a scenario) and
# `make test` (install and start what the tests need, then unit tests, lint (lab's scenario lint and
# golangci-lint), a short fuzz and the e2e suite).
SHELL := /bin/bash
GO ?= go
BIN := bin/lab
SCENARIO ?= taint-dedicated-node
E2E_TIMEOUT ?= 80m
# Parallel e2e processes, each on a cluster of its own.
E2E_PROCS ?= 2
# Each run's JUnit report and its failed specs' evidence, one folder per run.
ifndef E2E_ARTIFACTS
E2E_ARTIFACTS := $(CURDIR)/bin/e2e/$(shell date -u +%Y%m%dT%H%M%SZ)
endif
export E2E_ARTIFACTS
GINKGO := bin/ginkgo
GOLANGCI_VERSION := v2.15.0
GOLANGCI := bin/golangci-lint-$(GOLANGCI_VERSION)
# Helm for the scenarios that install with it (internal/tools.HelmVersion): lab copies it onto the node.
HELM_VERSION := v4.3.2
HELM := bin/helm-$(HELM_VERSION)
# etcdutl for the etcd restore scenario (internal/tools.EtcdutlVersion), the version of the node image's etcd,
# whose image lacks it: lab copies it onto the node.
ETCDUTL_VERSION := v3.6.6
ETCDUTL := bin/etcdutl-$(ETCDUTL_VERSION)
# metrics-server for the autoscaling scenarios (internal/tools.MetricsServerVersion): lab packs it into an image.
METRICS_SERVER_VERSION := v0.8.0
METRICS_SERVER := bin/metrics-server-$(METRICS_SERVER_VERSION)
# Traefik, the Gateway API and Ingress controller (internal/tools.TraefikVersion), packed into an image like it.
TRAEFIK_VERSION := v3.7.13
TRAEFIK := bin/traefik-$(TRAEFIK_VERSION)
# Where lab finds the tools it copies onto nodes or packs into images.
TOOLS_ENV := LAB_HELM="$$PWD/$(HELM)" LAB_ETCDUTL="$$PWD/$(ETCDUTL)" LAB_METRICS_SERVER="$$PWD/$(METRICS_SERVER)" LAB_TRAEFIK="$$PWD/$(TRAEFIK)"
FUZZTIME ?= 15s
export CGO_ENABLED := 0
# xterm.js for the exam page's terminal (internal/examweb), fetched from npm by `make web`, never committed.
XTERM_VERSION := 6.0.0
XTERM_FIT_VERSION := 0.11.0
WEB_VENDOR := internal/examweb/web/vendor

.PHONY: build up test prereqs vet unit lint fuzz fuzz-long e2e e2e-all e2e-seeds bench clean web helm etcdutl metrics-server traefik

# `lab version` says which checkout a binary came from.
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X github.com/cka-lab/lab/internal/version.gitVersion=$(VERSION)

# Static and stripped: the webhook image is this binary, loaded into every node.
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/lab

# The exam page's terminal: xterm.js and its fit addon from npm, unpacked without running any package script,
# their minified files copied where `make build` embeds them. A build without them runs; its page says to run this.
web:
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	  (cd "$$d" && npm pack --silent @xterm/xterm@$(XTERM_VERSION) @xterm/addon-fit@$(XTERM_FIT_VERSION) >/dev/null && \
	   mkdir xterm fit && tar -xzf xterm-xterm-$(XTERM_VERSION).tgz -C xterm && tar -xzf xterm-addon-fit-$(XTERM_FIT_VERSION).tgz -C fit) && \
	  cp "$$d/xterm/package/lib/xterm.js" "$$d/xterm/package/css/xterm.css" "$$d/fit/package/lib/addon-fit.js" $(WEB_VENDOR)/ && \
	  cp "$$d/xterm/package/LICENSE" $(WEB_VENDOR)/xterm-LICENSE && cp "$$d/fit/package/LICENSE" $(WEB_VENDOR)/addon-fit-LICENSE && \
	  sed -i '/^\/\/# sourceMappingURL=/d' $(WEB_VENDOR)/xterm.js $(WEB_VENDOR)/addon-fit.js && \
	  echo "xterm.js $(XTERM_VERSION) and addon-fit $(XTERM_FIT_VERSION) in $(WEB_VENDOR); now: make build"

# The main job: a lab cluster with a scenario started, its task printed.
up: build $(HELM) $(ETCDUTL) $(METRICS_SERVER) $(TRAEFIK)
	@KUBECTL_DIR=$$(hack/prereqs.sh) && export PATH="$$PWD/bin:$$KUBECTL_DIR:$$PATH" $(TOOLS_ENV) && \
	  $(BIN) cluster create && $(BIN) start $(SCENARIO) && \
	  echo "Now: export KUBECONFIG=$$($(BIN) cluster status -o json | sed -n 's/.*\"kubeconfig\":\"\([^\"]*\)\".*/\1/p'); fix it; then: $(BIN) check"

# Everything CI runs (.ci/run calls exactly this); prereqs first: the unit tests need Chromium.
test: prereqs vet unit lint fuzz cross e2e

prereqs:
	@hack/prereqs.sh >/dev/null

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

unit:
	$(GO) test -count=1 $$($(GO) list ./... | grep -v '/e2e$$')

lint: build $(GOLANGCI)
	$(BIN) scenario lint
	$(GOLANGCI) run --allow-parallel-runners ./...

fuzz:
	$(GO) test ./scenarios -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)

fuzz-long:
	$(GO) test ./scenarios -run '^$$' -fuzz FuzzParse -fuzztime 10m

# The e2e suite on real kind clusters: every core spec, the extras of this checkout's slice of the rotation
# and of the scenarios its last commits changed (E2E_SLICE=N|all|none chooses; e2e/rotation says how).
# E2E_KEEP_CLUSTER=1 keeps the clusters, E2E_SEED=N replays a variant.
e2e: $(GINKGO) $(HELM) $(ETCDUTL) $(METRICS_SERVER) $(TRAEFIK)
	@KUBECTL_DIR=$$(hack/prereqs.sh) && export KUBECTL="$$KUBECTL_DIR/kubectl" $(TOOLS_ENV) && \
	  $(GINKGO) -v --procs $(E2E_PROCS) --timeout $(E2E_TIMEOUT) --show-node-events=false $(E2E_FLAGS) ./e2e

# Built from the Go module proxy (no release download needed), once per version.
$(GOLANGCI):
	GOBIN=$$PWD/bin/.golangci $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
	mv bin/.golangci/golangci-lint $@ && rmdir bin/.golangci

# Static (CGO_ENABLED=0 above), so the same binary runs inside a kind node.
helm: $(HELM)
$(HELM):
	GOBIN=$$PWD/bin/.helm $(GO) install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION)
	mv bin/.helm/helm $@ && rmdir bin/.helm

# `go install` refuses etcdutl's module for its replace directives; built as a dependency of a scratch module,
# they do not apply and the versions its go.mod requires are used.
etcdutl: $(ETCDUTL)
$(ETCDUTL):
	d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && (cd "$$d" && $(GO) mod init lab.local/etcdutl && \
		$(GO) get go.etcd.io/etcd/etcdutl/v3@$(ETCDUTL_VERSION) && \
		$(GO) build -trimpath -ldflags "-s -w" -o "$(CURDIR)/$@" go.etcd.io/etcd/etcdutl/v3)

# Static like helm: lab packs it alone into an image that every node loads, as it does its own binary.
metrics-server: $(METRICS_SERVER)
$(METRICS_SERVER):
	GOBIN=$$PWD/bin/.metrics-server $(GO) install -ldflags "-s -w" sigs.k8s.io/metrics-server/cmd/metrics-server@$(METRICS_SERVER_VERSION)
	mv bin/.metrics-server/metrics-server $@ && rmdir bin/.metrics-server

# From a copy of its module: `go install` refuses one with replace directives (the script says what it changes).
traefik: $(TRAEFIK)
$(TRAEFIK): hack/build-traefik.sh
	hack/build-traefik.sh $(TRAEFIK_VERSION) $@

$(GINKGO): go.mod
	GOBIN=$$PWD/bin $(GO) install github.com/onsi/ginkgo/v2/ginkgo@$$($(GO) list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)

# Every spec of every scenario, one run: what to run before resolving an issue that changes grading.
e2e-all:
	@E2E_SLICE=all E2E_EXTRAS_DEADLINE=24h $(MAKE) e2e E2E_TIMEOUT=$${E2E_TIMEOUT:-180m}

# Every scenario with several seeds (not part of `make test`).
e2e-seeds:
	@for s in $${SEEDS:-11 22 33}; do E2E_SEED=$$s E2E_KEEP_CLUSTER=1 E2E_SLICE=all E2E_EXTRAS_DEADLINE=24h $(MAKE) e2e E2E_FLAGS="--label-filter=scenarios" || exit 1; done

bench: build $(HELM) $(ETCDUTL) $(METRICS_SERVER) $(TRAEFIK)
	@KUBECTL_DIR=$$(hack/prereqs.sh) && export PATH="$$PWD/bin:$$KUBECTL_DIR:$$PATH" $(TOOLS_ENV) && $(BIN) bench $(BENCH_FLAGS)

# The platforms `make dist` ships; lab is pure Go (CGO_ENABLED=0 above), so each is a plain cross-compile.
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
DIST := bin/dist

.PHONY: cross dist

# Every shipped platform still compiles; part of `make test`, cheap once the build cache is warm.
cross:
	@set -e; for p in $(PLATFORMS); do echo "cross: $$p"; GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -o /dev/null ./cmd/lab; done

# Release archives in bin/dist: lab-<version>-<os>-<arch>.tar.gz (.zip for Windows, which Explorer opens), each
# holding the binary and the README, and SHA256SUMS to verify them with `sha256sum -c`.
dist:
	rm -rf $(DIST) && mkdir -p $(DIST)
	@set -e; for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; name=lab-$(VERSION)-$$os-$$arch; exe=lab; \
	  if [ $$os = windows ]; then exe=lab.exe; fi; \
	  echo "dist: $$name"; mkdir -p $(DIST)/$$name; \
	  GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(DIST)/$$name/$$exe ./cmd/lab; \
	  cp README.md $(DIST)/$$name/; \
	  if [ $$os = windows ]; then (cd $(DIST) && zip -qr $$name.zip $$name); \
	  else tar -C $(DIST) --owner=0 --group=0 -czf $(DIST)/$$name.tar.gz $$name; fi; \
	  rm -rf $(DIST)/$$name; \
	done
	cd $(DIST) && sha256sum *.tar.gz *.zip > SHA256SUMS

clean:
	rm -rf bin
