# Build, run and test EventBridge-Go. Everything runs offline once the Go modules are downloaded; tools such as
# swag are pinned in go.mod and run with `go tool`.
GO        ?= go
BIN       := bin
# The version both binaries print with --version: the commit (and "-dirty" for uncommitted changes).
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
# `make run` is for local development: it lets targets reach loopback addresses so the README's walk-through
# can deliver to a receiver on 127.0.0.1. Production leaves --allow-private-targets off.
RUN_FLAGS ?= --allow-private-targets
# Modest parallelism: CI machines have 2 cores.
TEST_FLAGS ?= -race -p 2 -timeout 25m

.PHONY: all build run test test-slow bench bench-side bench-scale docs client lint clean console console-test

# The console (frontend/): React + TypeScript + Vite. `make build` builds frontend/dist when a source of the
# console is newer than the last build, and the Go build embeds it (frontend/embed.go). Until frontend/package.json
# exists every console step is skipped with a message, and the binary says on / that it has no console.
NPM          ?= npm
CONSOLE      := frontend
CONSOLE_PKG  := $(wildcard $(CONSOLE)/package.json)
# What a build of the console depends on: its sources, its static files, and its build configuration. Folders are
# listed too: deleting or renaming a file changes its folder's time.
CONSOLE_SRC  := $(shell find $(CONSOLE)/src $(CONSOLE)/public 2>/dev/null) \
                $(wildcard $(CONSOLE)/package.json $(CONSOLE)/package-lock.json $(CONSOLE)/index.html \
                           $(CONSOLE)/vite.config.* $(CONSOLE)/tsconfig*.json)
# npm writes node_modules/.package-lock.json on every install: its age is that of node_modules.
CONSOLE_DEPS := $(CONSOLE)/node_modules/.package-lock.json
CONSOLE_DIST := $(CONSOLE)/dist/index.html
NPM_FLAGS    ?= --no-audit --no-fund
# The browser of the end-to-end tests: the Debian chromium package (.ci/run installs it).
CHROMIUM     ?= /usr/bin/chromium

all: build

build: console
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/eventbridge ./cmd/eventbridge
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/worker ./cmd/worker

ifneq ($(CONSOLE_PKG),)
console: $(CONSOLE_DIST)

# npm ci when node_modules is missing or older than package-lock.json (package.json while there is no lock).
# npm 11.16 and newer refuse a lock that leaves out an optional dependency the registry does not have, a lock
# their own npm install writes (npm/cli#9846; here vite's napi-windows-process-start-time): then npm install, which
# installs the locked versions and must leave package-lock.json as it is, else the lock was really out of date.
$(CONSOLE_DEPS): $(or $(wildcard $(CONSOLE)/package-lock.json),$(CONSOLE)/package.json)
	cd $(CONSOLE) && if [ ! -f package-lock.json ]; then $(NPM) install $(NPM_FLAGS); \
	elif ! $(NPM) ci $(NPM_FLAGS); then \
	  echo "npm ci refused package-lock.json; npm install instead, which must leave it unchanged (npm/cli#9846)"; \
	  sum=$$(cksum <package-lock.json) && $(NPM) install $(NPM_FLAGS) && \
	  if [ "$$(cksum <package-lock.json)" != "$$sum" ]; then \
	    echo "npm install changed frontend/package-lock.json: it was out of step with package.json"; exit 1; fi; \
	fi
	touch $@

# vite build rewrites dist/index.html, so its age is that of the build.
$(CONSOLE_DIST): $(CONSOLE_DEPS) $(CONSOLE_SRC)
	cd $(CONSOLE) && $(NPM) run build
	touch $@

# The console's unit tests (Vitest), then its end-to-end tests in headless Chromium against bin/eventbridge,
# which `make test` builds with the console embedded first.
console-test: $(CONSOLE_DEPS)
	cd $(CONSOLE) && $(NPM) test
	cd $(CONSOLE) && EB_BINARY=$(abspath $(BIN)/eventbridge) CHROMIUM_PATH=$(CHROMIUM) $(NPM) run e2e
else
console console-test:
	@echo "$(CONSOLE)/package.json not found: skipping $@ (a binary built now has no console)"
endif

run: build
	./$(BIN)/eventbridge $(RUN_FLAGS)

# The Go tests, then the console's (Vitest, then end to end in Chromium against the binary built here).
test: build
	$(GO) test $(TEST_FLAGS) ./...
	$(MAKE) --no-print-directory console-test

# Fault-injection runs: processes killed under load. Built from the same packages with the `slow` tag.
test-slow:
	$(GO) test -tags slow -p 1 -timeout 30m -run 'Slow' ./cmd/... ./worker/

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./...

# The side-by-side goals of docs/benchmarks.md alone (also part of `make bench`): each line reports the product's
# figure, the bare baseline's, measured one after the other in the same benchmark (both warmed for 12 s first), and
# their ratio: the medians over seven such pairs, with the range of the goal's figure. About 9 minutes.
BENCH_COUNT ?= 3
bench-side:
	$(GO) test -run '^$$' -bench 'SideBySide' -benchtime 1x -count $(BENCH_COUNT) ./cmd/eventbridge/

# The scale runs of docs/benchmarks.md, not in CI (about 15 and 30 minutes): 2,000 buses of 1 MiB, each with a rule
# and an http target, on one embedded worker, then 10 minutes idle; then the bare baseline of that idle (JetStream
# alone with the same streams, consumers and subscriptions, BenchmarkScaleIdleFloor); then a simulated cluster of three workers in
# one process on one embedded JetStream with 10,000 buses and 30,000 targets (handover, failover), creation
# capped at 25 minutes (the run goes on with the buses made by then). Their figures are
# logged as `figure | ...` lines. `make test-slow` runs the same tests with 300 and 200 buses.
SCALE_BUSES  ?= 2000
SCALE_IDLE_S ?= 600
SCALE_CLUSTER_BUSES  ?= 10000
SCALE_CLUSTER_IDLE_S ?= 120
SCALE_CLUSTER_CREATE_S ?= 1500
bench-scale:
	EB_SCALE_BUSES=$(SCALE_BUSES) EB_SCALE_IDLE_S=$(SCALE_IDLE_S) $(GO) test -tags slow -count=1 -timeout 60m \
	  -run 'TestSlowScaleIdle' -v ./cmd/eventbridge/
	EB_SCALE_BUSES=$(SCALE_BUSES) EB_SCALE_IDLE_S=$(SCALE_IDLE_S) $(GO) test -tags slow -count=1 -timeout 60m \
	  -run '^$$' -bench 'ScaleIdleFloor' -benchtime 1x ./cmd/eventbridge/
	EB_SCALE_CLUSTER_BUSES=$(SCALE_CLUSTER_BUSES) EB_SCALE_CLUSTER_IDLE_S=$(SCALE_CLUSTER_IDLE_S) \
	  EB_SCALE_CLUSTER_CREATE_S=$(SCALE_CLUSTER_CREATE_S) $(GO) test -tags slow -count=1 -timeout 90m -run 'TestSlowScaleCluster' -v ./worker/

# The OpenAPI spec from the handlers' annotations, then from it the OpenAPI 3 form (docs/openapi3.json) and the Go
# client (docs/client), then the console's TypeScript types (npm run gen:api reads docs/openapi3.json).
docs:
	$(GO) tool swag init --quiet --generalInfo router.go --dir ./web,./web/rest,./web/rocketmq,./domain --output ./docs --outputTypes go,json,yaml --parseInternal
	$(GO) generate ./docs/client
ifneq ($(CONSOLE_PKG),)
	$(MAKE) --no-print-directory $(CONSOLE_DEPS)
	cd $(CONSOLE) && $(NPM) run gen:api
else
	@echo "$(CONSOLE)/package.json not found: no TypeScript types to generate"
endif

# docs/openapi3.json and the Go client generated by oapi-codegen from the committed spec (docs/client); make docs
# runs it too.
client:
	$(GO) generate ./docs/client

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf $(BIN) $(CONSOLE)/dist
