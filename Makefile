# Hermes: build, test, benchmark, install, demo.
GO      ?= go
BIN     := bin
GOBIN   ?= $(shell $(GO) env GOBIN)
PREFIX  ?= $(if $(GOBIN),$(GOBIN),$(HOME)/.local/bin)

BINARIES := hermes hermes-transport-stdio hermes-transport-http hermes-testserver

.PHONY: build test test-go npm-deps bench install demo conformance fuzz vet clean

build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/hermes ./cmd/hermes
	$(GO) build -o $(BIN)/hermes-transport-stdio ./plugins/stdio
	@if ls plugins/http/*.go >/dev/null 2>&1; then $(GO) build -o $(BIN)/hermes-transport-http ./plugins/http; fi
	$(GO) build -o $(BIN)/hermes-testserver ./internal/testserver/cmd/hermes-testserver

# Node packages the tests use (pinned), into the git-ignored .npm-deps/.
npm-deps:
	./scripts/npm-deps.sh

vet:
	$(GO) vet ./... ./sdk/... ./plugins/stdio/... ./plugins/http/...

# The whole suite: every module, with the race detector.
test: npm-deps build vet
	$(GO) test -race -count=1 -timeout 20m ./... ./sdk/... ./plugins/stdio/... ./plugins/http/...

# Figures go to docs/BENCHMARKS.md; ratios matter more than absolute numbers.
bench: build
	$(GO) test -run '^$$' -bench 'CallTool' -benchtime 3000x -count 5 ./host/bench/ ./host/session/
	$(GO) test -run '^$$' -bench 'PluginStart' -benchtime 200x -count 3 ./host/bench/
	$(GO) test -run '^$$' -bench 'Discovery' -benchtime 5x -count 1 ./host/bench/

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzInterpolate -fuzztime 30s ./host/config/
	$(GO) test -run '^$$' -fuzz FuzzLoad -fuzztime 30s ./host/config/
	$(GO) test -run '^$$' -fuzz FuzzNormalizeInputSchema -fuzztime 30s ./host/registry/

conformance: npm-deps build
	./conformance/run.sh

install: build
	@mkdir -p $(PREFIX)
	install -m 0755 $(BIN)/hermes $(BIN)/hermes-transport-stdio $(PREFIX)/
	@if [ -f $(BIN)/hermes-transport-http ]; then install -m 0755 $(BIN)/hermes-transport-http $(PREFIX)/; fi
	@echo "installed hermes and its plugins into $(PREFIX)"

demo: npm-deps build
	./scripts/demo.sh

clean:
	rm -rf $(BIN)
