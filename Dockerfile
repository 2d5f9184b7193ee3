# syntax=docker/dockerfile:1
# One image for the control plane and the worker: docker-compose.yml picks the binary with its command
# (/usr/local/bin/eventbridge or /usr/local/bin/worker). Build: docker build -t eventbridge-go/eventbridge .
# cmd/eventbridge/compose_test.go parses this file: keep the stage names and binary paths in step with it.

# 1. The console: `npm ci && npm run build` makes frontend/dist, which frontend/embed.go embeds (all:dist*/*).
#    Without a package.json the stage makes an empty dist, so the image builds either way and its binary says on /
#    that it has no console. npm install when npm ci refuses a lock that leaves out an optional dependency the
#    registry lacks (npm/cli#9846), as the Makefile does.
FROM node:24-alpine AS console
WORKDIR /src/frontend
COPY frontend/ ./
RUN if [ -f package.json ]; then \
      (npm ci --no-audit --no-fund || npm install --no-audit --no-fund) && npm run build; \
    else mkdir -p dist; fi

# 2. Both binaries, static (the SQLite driver is pure Go), with the console's dist in place for frontend/embed.go.
FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
COPY --from=console /src/frontend/dist ./frontend/dist
ENV CGO_ENABLED=0
# What --version prints: docker build --build-arg VERSION=$(git describe --always) .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w -X=main.version=${VERSION}" -o /out/eventbridge ./cmd/eventbridge && \
    go build -trimpath -ldflags="-s -w -X=main.version=${VERSION}" -o /out/worker ./cmd/worker

# 3. The runtime: Alpine rather than distroless, because the health checks of docker-compose.yml run wget in the
#    container and the secrets service runs a shell (distroless has neither; its :debug variant would, through
#    busybox, but is meant for debugging). ca-certificates for HTTPS targets, tzdata for time zones in logs.
FROM alpine:3.22 AS runtime
RUN apk add --no-cache ca-certificates tzdata && \
    addgroup -S -g 10001 eventbridge && \
    adduser -S -D -H -u 10001 -G eventbridge -h /var/lib/eventbridge eventbridge && \
    mkdir -p /var/lib/eventbridge /etc/eventbridge/keys /etc/eventbridge/nats && \
    chown eventbridge:eventbridge /var/lib/eventbridge /etc/eventbridge/keys /etc/eventbridge/nats && \
    chmod 0700 /var/lib/eventbridge /etc/eventbridge/keys /etc/eventbridge/nats
COPY --from=build /out/eventbridge /out/worker /usr/local/bin/
USER 10001:10001
WORKDIR /var/lib/eventbridge
# The control plane's API and console; the worker's REST API (Kafka Connect style).
EXPOSE 8080 8083
# The control plane's --data-dir: the SQLite database, JetStream files and master key of the embedded mode.
VOLUME ["/var/lib/eventbridge"]
# Alone, the image runs the embedded mode: docker run -p 8080:8080 -v eb:/var/lib/eventbridge eventbridge-go/eventbridge
CMD ["/usr/local/bin/eventbridge", "--http-addr", "0.0.0.0:8080", "--data-dir", "/var/lib/eventbridge"]
