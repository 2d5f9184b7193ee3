# Builds both binaries into one small image; docker-compose.yml picks the command.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/eventbridge ./cmd/eventbridge && CGO_ENABLED=0 go build -o /out/worker ./cmd/worker

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/eventbridge /out/worker /usr/local/bin/
ENTRYPOINT []
