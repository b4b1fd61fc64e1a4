# Hermes: build, test, benchmark, install, demo.
GO      ?= go
BIN     := bin
GOBIN   ?= $(shell $(GO) env GOBIN)
PREFIX  ?= $(if $(GOBIN),$(GOBIN),$(HOME)/.local/bin)

BINARIES := hermes hermes-transport-stdio hermes-stdio-launcher hermes-stdio-proxy hermes-transport-http hermes-auth-oauth hermes-auth-exec hermes-bridge-messaging hermes-testserver

# The module folders, read from go.work: a module added there (a `use` line) is
# vetted and tidy-checked without editing this file. "." is the root module.
MODULES = $(patsubst $(CURDIR)/%,%,$(patsubst $(CURDIR),.,$(shell $(GO) list -m -f '{{.Dir}}')))
# Every package of every module: ./... ./sdk/... ./plugins/stdio/... and so on.
ALL_PKGS = $(foreach m,$(MODULES),$(if $(filter .,$(m)),./...,./$(m)/...))
# The copies of libraries in third_party/ that hermes builds against (go.work's
# replace lines), tested with the rest.
THIRD_PARTY_PKGS = github.com/hashicorp/go-plugin

# How long `make fuzz` runs each fuzz target.
FUZZTIME ?= 20s

.PHONY: build test test-go npm-deps bench hostile install demo conformance fuzz vet lint clean chart-check chart-tools image loadtest

# The commit stamped into hermes (the toolchain records none in workspace mode).
COMMIT  := $(shell git rev-parse HEAD 2>/dev/null)

# Shipped binaries are stripped of the symbol table and DWARF (-s -w): about
# 30 % smaller, the same code. Panics still print file:line (that table is
# not DWARF). `make build LDFLAGS=` keeps the symbols for a debugger; the
# tests build their own binaries and never use these.
LDFLAGS ?= -s -w

# Shipped binaries are static: no cgo (the net resolver and os/user are Go's
# own), so they run in a container image without a C library. make lint
# checks it (scripts/check-static.sh). Only the builds: go test -race needs
# cgo.
GOBUILD = CGO_ENABLED=0 $(GO) build

# The binaries make install ships (bin/ also holds the test server and the
# conformance client, which are not shipped). hermes-stdio-launcher goes
# beside hermes-transport-stdio, which starts every server through it; it
# is built with -trimpath as well (shorter file names in its line table: it
# stays resident beside every server, docs/BENCHMARKS.md, Sandbox).
# hermes-stdio-proxy goes there too: the filtering proxy the plugin starts
# for a sandboxed server with a hosts list (network: [hosts]), a binary of
# its own so that its HTTP code is not paged into every plugin.
# hermes-gateway is `hermes mcp gateway` (docs/GATEWAY.md), a binary of its
# own so that its libraries are not loaded by every hermes command.
SHIPPED := hermes hermes-gateway hermes-model-openai hermes-transport-stdio hermes-stdio-launcher hermes-stdio-proxy hermes-transport-http hermes-auth-oauth hermes-auth-exec hermes-bridge-messaging

build:
	@mkdir -p $(BIN)
	$(GOBUILD) -ldflags "$(LDFLAGS) -X github.com/hermes-agent/hermes/host/cli.buildCommit=$(COMMIT)" -o $(BIN)/hermes ./cmd/hermes
	$(GOBUILD) -ldflags "$(LDFLAGS)" -o $(BIN)/hermes-model-openai ./cmd/hermes-model-openai
	$(GOBUILD) -ldflags "$(LDFLAGS)" -o $(BIN)/hermes-gateway ./cmd/hermes-gateway
	$(GOBUILD) -ldflags "$(LDFLAGS)" -o $(BIN)/hermes-transport-stdio ./plugins/stdio
	$(GOBUILD) -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/hermes-stdio-launcher ./plugins/stdio/cmd/hermes-stdio-launcher
	$(GOBUILD) -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/hermes-stdio-proxy ./plugins/stdio/cmd/hermes-stdio-proxy
	@if ls plugins/http/*.go >/dev/null 2>&1; then $(GOBUILD) -ldflags "$(LDFLAGS)" -o $(BIN)/hermes-transport-http ./plugins/http; fi
	@if ls plugins/oauth/*.go >/dev/null 2>&1; then $(GOBUILD) -ldflags "$(LDFLAGS)" -o $(BIN)/hermes-auth-oauth ./plugins/oauth; fi
	@if ls plugins/exec/*.go >/dev/null 2>&1; then $(GOBUILD) -ldflags "$(LDFLAGS)" -o $(BIN)/hermes-auth-exec ./plugins/exec; fi
	$(GOBUILD) -ldflags "$(LDFLAGS)" -o $(BIN)/hermes-bridge-messaging ./plugins/bridge
	$(GOBUILD) -o $(BIN)/hermes-testserver ./internal/testserver/cmd/hermes-testserver

# Node packages the tests use (pinned), into the git-ignored .npm-deps/.
npm-deps:
	./scripts/npm-deps.sh

# go vet in every module of go.work.
vet:
	@set -e; for m in $(MODULES); do echo "go vet ($$m)"; (cd $$m && $(GO) vet ./...); done

# Everything CI checks besides the tests: vet, formatting, tidy go.mod/go.sum in
# every module, no large files tracked by git, and every binary make build
# ships statically linked.
lint: vet build
	GO=$(GO) ./scripts/check-static.sh $(addprefix $(BIN)/,$(SHIPPED))
	@files=$$(git ls-files -co --exclude-standard -- '*.go' | while IFS= read -r f; do [ -f "$$f" ] && echo "$$f"; done | xargs -r gofmt -l); \
	if [ -n "$$files" ]; then echo "not gofmt-formatted (run gofmt -w on them):"; echo "$$files"; exit 1; fi
	@status=0; for m in $(MODULES); do \
	  (cd $$m && $(GO) mod tidy -diff) || { echo "go.mod/go.sum in $$m are not tidy: run (cd $$m && go mod tidy)"; status=1; }; \
	done; exit $$status
	./scripts/check-large-files.sh
	@echo "go build for darwin (hermes and its plugins build on every unix)"; \
	for m in $(MODULES); do (cd $$m && GOOS=darwin $(GO) build ./...) || exit 1; done

# The whole suite: every module, with the race detector. The binaries the
# tests run are built once into a temporary folder that every test process
# uses (internal/testbin), instead of once per test process.
test: npm-deps build vet
	@d=$$(mktemp -d "$${TMPDIR:-/tmp}/hermes-maketest-bin-XXXXXX") && trap 'rm -rf "$$d"' EXIT && \
	echo "go run ./internal/testbin/cmd/buildtestbin $$d" && $(GO) run ./internal/testbin/cmd/buildtestbin "$$d" && \
	echo "HERMES_TESTBIN_DIR=$$d $(GO) test -race -count=1 -timeout 20m $(ALL_PKGS) $(THIRD_PARTY_PKGS)" && \
	HERMES_TESTBIN_DIR="$$d" $(GO) test -race -count=1 -timeout 20m $(ALL_PKGS) $(THIRD_PARTY_PKGS)

# Figures go to docs/BENCHMARKS.md; ratios matter more than absolute numbers.
# Each ratio is measured against its floor in the same run (package
# internal/benchfloor), and each invocation ends with a "floors" summary (met,
# NOT MET, or no floor); a floor never fails a step, a broken harness does.
# The benchmarks build what they run themselves; the one-shot and lazy
# benchmarks need the npm test servers (make npm-deps). Iterations are sized
# for the whole target to take under 10 minutes on 2 cores.
bench: npm-deps
	$(GO) test -run '^$$' -bench 'CallTool$$|CallToolParallel' -benchtime 1000x -count 3 ./host/bench/ ./host/session/
	$(GO) test -run '^$$' -bench 'CallTool1MiB' -benchtime 10x -count 3 ./host/bench/ ./host/session/
	$(GO) test -run '^$$' -bench 'PluginStart' -benchtime 100x -count 3 ./host/bench/
	$(GO) test -run '^$$' -bench 'PluginRSS|OneShot|ToolsCommand|WarmTools|Discovery' -benchtime 10x -count 1 ./host/bench/
	$(GO) test -run '^$$' -bench 'WarmStart' -benchtime 100x -count 3 ./host/registry/
	$(GO) test -run '^$$' -bench 'BenchmarkLazy' -benchtime 2x -count 1 ./host/bench/
	$(GO) test -run '^$$' -bench 'ToolSearchTokens' -benchtime 1x ./host/toolview/
	$(GO) test -run '^$$' -bench 'ServeCallTool' -benchtime 1000x -count 3 ./host/serve/
	$(GO) test -run '^$$' -bench 'SandboxStart' -benchtime 10x -count 3 ./host/bench/
	$(GO) test -run '^$$' -bench 'LoopToolRound' -benchtime 1000x -count 3 ./host/agent/
	$(GO) test -run '^$$' -bench 'ChatToolRound' -benchtime 100x -count 3 ./host/agent/
	$(GO) test -run '^$$' -bench 'ModelCall' -benchtime 20x -count 3 ./host/model/
	$(GO) test -run '^$$' -bench 'LauncherRSS|Startup' -benchtime 10x -count 1 ./host/bench/
	$(GO) test -run '^$$' -bench 'BridgeCall' -benchtime 1000x -count 1 ./host/serve/
	$(GO) test -run '^$$' -bench 'Gateway' -benchtime 1000x -count 1 ./host/gateway/
	$(GO) test -run '^$$' -bench . -benchtime 200x -count 1 ./host/gateway/policy/ ./host/gateway/identity/ ./host/gateway/telemetry/ ./host/config/ ./host/elicit/ ./host/offered/ ./host/project/ ./host/screening/ ./statedb/ ./sdk/logfile/ ./sdk/sandboxpath/
	$(GO) test -run '^$$' -bench . -benchtime 10x -count 1 ./plugins/stdio/ ./plugins/stdio/cmd/hermes-stdio-launcher/
	$(GO) test -run '^$$' -bench . -benchtime 20x -count 1 ./plugins/bridge/internal/events/

# The hostile-server figures of docs/HOSTILE.md: each attack of a hostile
# test server against a host of its own, beside a server that must stay
# served; fails when an attack is not stopped with a clear error. With
# HOSTILE_DOC=docs/HOSTILE.md the table there is rewritten.
hostile:
	$(GO) test -count=1 -timeout 10m -run '^TestHostile$$' -v ./host/bench/ -hostile $(if $(HOSTILE_DOC),-hostile.doc $(CURDIR)/$(HOSTILE_DOC))

# Every fuzz target in every module, FUZZTIME each; found by scripts/fuzz.sh,
# so new fuzzers need no change here.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

conformance: npm-deps build
	./conformance/run.sh

# The gateway's Helm chart (deploy/helm/hermes-gateway) checked offline:
# helm lint and helm template of every example values file, the rendered
# manifests validated by kubeconform -strict against JSON schemas generated
# from the OpenAPI spec of a pinned Kubernetes release (tools/k8sschema; a
# misspelt field fails), then the Go tests of deploy/helm/charttest (a
# planted typo refused, values.schema.json refusing an unknown key, each
# example's config.yaml loaded by hermes's own config loader). helm and
# kubeconform are built from their Go modules into the git-ignored .tools/
# once and reused; the first helm build takes minutes (docs/DEPLOY.md).
HELM_VERSION        := v4.3.2
KUBECONFORM_VERSION := v0.8.0
K8S_VERSION         := v1.37.2
SERVICEMONITOR_CRD  := github.com/prometheus-operator/prometheus-operator@v0.85.0/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml
TOOLS       := $(CURDIR)/.tools
HELM        := $(TOOLS)/helm-$(HELM_VERSION)/helm
KUBECONFORM := $(TOOLS)/kubeconform-$(KUBECONFORM_VERSION)/kubeconform
K8S_SCHEMAS := $(TOOLS)/k8s-schemas-$(K8S_VERSION)-strict
CHART       := deploy/helm/hermes-gateway

$(HELM):
	@mkdir -p $(@D)
	@echo "go install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION) into $(@D) (once: minutes on 2 cores)"
	@start=$$(date +%s); \
	GOWORK=off GOBIN=$(@D) CGO_ENABLED=0 $(GO) install -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$(HELM_VERSION)" helm.sh/helm/v4/cmd/helm@$(HELM_VERSION) && \
	echo "helm $(HELM_VERSION) built in $$(( $$(date +%s) - start ))s"

$(KUBECONFORM):
	@mkdir -p $(@D)
	GOWORK=off GOBIN=$(@D) CGO_ENABLED=0 $(GO) install -trimpath -ldflags "-s -w" github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)

$(K8S_SCHEMAS)/.complete: tools/k8sschema/main.go
	$(GO) run ./tools/k8sschema -k8s-version $(K8S_VERSION) -crd $(SERVICEMONITOR_CRD) -out $(K8S_SCHEMAS)

# chart-tools builds helm and kubeconform only (CI starts it in the
# background while the tests run).
chart-tools: $(HELM) $(KUBECONFORM)

chart-check: SHELL := /bin/bash
chart-check: .SHELLFLAGS := -o pipefail -ec
chart-check: $(HELM) $(KUBECONFORM) $(K8S_SCHEMAS)/.complete
	@for f in $(CHART)/examples/*.yaml; do \
	  echo "helm lint --strict $(CHART) -f $$f"; \
	  $(HELM) lint --strict --quiet $(CHART) -f $$f --kube-version $(K8S_VERSION); \
	  echo "helm template $(CHART) -f $$f | kubeconform -strict"; \
	  $(HELM) template hermes $(CHART) -f $$f --namespace mcp --kube-version $(K8S_VERSION) | \
	    $(KUBECONFORM) -strict -summary -schema-location '$(K8S_SCHEMAS)/{{ .ResourceKind }}{{ .KindSuffix }}.json'; \
	done
	HERMES_CHART_HELM=$(HELM) HERMES_CHART_KUBECONFORM=$(KUBECONFORM) HERMES_CHART_SCHEMAS=$(K8S_SCHEMAS) HERMES_CHART_KUBE_VERSION=$(K8S_VERSION) \
	  $(GO) test -count=1 ./deploy/helm/charttest/

install: build
	@mkdir -p $(PREFIX)
	install -m 0755 $(BIN)/hermes $(BIN)/hermes-gateway $(BIN)/hermes-transport-stdio $(BIN)/hermes-stdio-launcher $(BIN)/hermes-stdio-proxy $(PREFIX)/
	@for p in hermes-transport-http hermes-auth-oauth hermes-auth-exec hermes-bridge-messaging hermes-model-openai; do \
	  if [ -f $(BIN)/$$p ]; then install -m 0755 $(BIN)/$$p $(PREFIX)/; fi; \
	done
	@echo "installed hermes and its plugins into $(PREFIX)"

# The gateway's container image, written without a container engine or a
# registry (tools/imagebuild, go-containerregistry): an OCI image layout in
# dist/oci and a `docker save` tarball, dist/hermes-gateway.tar, of the
# shipped binaries on a distroless-style base of our own (non-root 65532,
# CA certificates, /tmp; no shell), entrypoint `hermes mcp gateway --http
# :8080`. The binaries are built again into dist/bin with -trimpath, so the
# image holds no folder of the machine that built it, and the commit's time
# is the creation time: two builds of one commit give the same digest.
# Push it with crane or skopeo (docs/DEPLOY.md).
IMAGE_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE_TAG     ?= hermes-gateway:$(IMAGE_VERSION)
image:
	$(MAKE) --no-print-directory build BIN=dist/bin GOBUILD="CGO_ENABLED=0 $(GO) build -trimpath"
	GO=$(GO) ./scripts/check-static.sh $(addprefix dist/bin/,$(SHIPPED))
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || echo 0) $(GO) run ./tools/imagebuild/cmd/hermes-image \
	  -bin dist/bin -out dist -tag $(IMAGE_TAG) -version $(IMAGE_VERSION) -revision "$(COMMIT)" $(SHIPPED)

# The gateway under load, as a Deployment of three replicas of make image's
# image (host/gateway/replicas): N clients × M calls through a round-robin
# balancer on loopback in each revision (vegeta as a library), p50/p99,
# errors (0 expected), memory per replica and per session, then the same
# load beside a slow upstream and a crashing one. Figures go to
# docs/BENCHMARKS.md (Gateway: replicas and load). About a minute.
LOADTEST_CLIENTS ?= 16
LOADTEST_CALLS   ?= 300
loadtest: image
	$(GO) test -count=1 -timeout 5m -run '^TestLoad$$' ./host/gateway/replicas/ -v \
	  -loadtest -image $(CURDIR)/dist/oci -loadtest.clients $(LOADTEST_CLIENTS) -loadtest.calls $(LOADTEST_CALLS)

# The demo installs only the one npm server it runs.
demo: build
	./scripts/npm-deps.sh demo
	./scripts/demo.sh

clean:
	rm -rf $(BIN) dist
