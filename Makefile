# Build, run and test EventBridge-Go. Everything runs offline once the Go modules are downloaded; tools such as
# swag are pinned in go.mod and run with `go tool`.
GO        ?= go
BIN       := bin
# `make run` is for local development: it lets targets reach loopback addresses so the README's walk-through
# can deliver to a receiver on 127.0.0.1. Production leaves --allow-private-targets off.
RUN_FLAGS ?= --allow-private-targets
# Modest parallelism: CI machines have 2 cores.
TEST_FLAGS ?= -race -p 2 -timeout 25m

.PHONY: all build run test test-slow bench docs lint clean

all: build

build:
	$(GO) build -o $(BIN)/eventbridge ./cmd/eventbridge
	$(GO) build -o $(BIN)/worker ./cmd/worker

run: build
	./$(BIN)/eventbridge $(RUN_FLAGS)

test:
	$(GO) test $(TEST_FLAGS) ./...

# Fault-injection runs: processes killed under load. Built from the same packages with the `slow` tag.
test-slow:
	$(GO) test -tags slow -p 1 -timeout 30m -run 'Slow' ./cmd/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./...

docs:
	$(GO) tool swag init --quiet --generalInfo router.go --dir ./web,./domain --output ./docs --outputTypes go,json,yaml --parseInternal

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf $(BIN)
