#!/usr/bin/env bash
# Makes testdata/secrets-v1.tar.gz: the data directory of the release whose secrets are sealed enc:v1 (the master key
# alone, bound to nothing; commit 'Secret headers: ...' of issue 16), with a secret of every kind: a connection's API
# key used by an api-destination target, an http target's Authorization header, a webhook source's signing secret,
# an mqtt target's password, an eventbus source's NATS password, and a connector made through the worker REST API
# with a password. TestSecretsUpgrade starts the current control plane on a copy. Run from the repository root with
# that release's binary built (make build, then cp bin/eventbridge /tmp/eb-v1):
#   bash cmd/eventbridge/testdata/make-v1-secrets-fixture.sh /tmp/eb-v1
set -euo pipefail
bin=${1:?the eventbridge binary of the release with enc:v1 secrets}
out=$(cd "$(dirname "$0")" && pwd)/secrets-v1.tar.gz
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin" --http-addr 127.0.0.1:18480 --worker-addr 127.0.0.1:18483 --data-dir "$work/data" --allow-private-targets --log-level warn &
pid=$!
until curl -sf localhost:18480/readyz >/dev/null; do sleep 0.2; done
key=$(cat "$work/data/admin-api-key") token=$(cat "$work/data/cluster-token")
call() { # method path body
  local code
  code=$(curl -s -o /dev/stderr -w '%{http_code}' -X "$1" "localhost:18480$2" -H "Authorization: Bearer $key" \
    -H 'Content-Type: application/json' ${3:+-d "$3"})
  echo " <- $1 $2 $code" >&2
  [ "$code" -lt 300 ]
}
call POST /api/v1/buses '{"name": "orders"}'
call POST /api/v1/buses '{"name": "upstream"}'
call POST /api/v1/buses/orders/rules '{"name": "all", "eventPattern": {"source": ["shop"]}}'
call POST /api/v1/connections '{"name": "crm", "authorizationType": "API_KEY", "authParameters": {"apiKeyAuthParameters": {"apiKeyName": "X-Api-Key", "apiKeyValue": "crm-api-key-v1"}, "invocationHttpParameters": {"headerParameters": [{"key": "X-Secret-Param", "value": "param-v1", "isValueSecret": true}]}}}'
call POST /api/v1/api-destinations '{"name": "crm", "connection": "crm", "invocationEndpoint": "http://127.0.0.1:9/crm", "httpMethod": "POST"}'
call PUT /api/v1/buses/orders/rules/all/targets/crm '{"type": "api-destination", "config": {"apiDestination": "crm"}}'
call PUT /api/v1/buses/orders/rules/all/targets/hook '{"type": "http", "config": {"url": "http://127.0.0.1:9/hook", "headers": {"Authorization": "Bearer header-v1"}}}'
call PUT /api/v1/buses/orders/rules/all/targets/broker '{"type": "mqtt", "config": {"mqtt.url": "tcp://127.0.0.1:1883", "mqtt.topic": "eb/fixture", "mqtt.username": "u", "mqtt.password": "mqtt-v1"}}'
call POST /api/v1/buses/orders/sources '{"name": "gh", "type": "http", "config": {"http.signature.scheme": "github", "http.signature.secret": "webhook-v1"}}'
call POST /api/v1/buses/orders/sources '{"name": "feed", "type": "eventbus", "config": {"bus": "upstream", "nats.password": "nats-v1"}}'
# A connector made through the worker REST API, not the control plane's: its secret is sealed by the worker.
curl -sf -X POST localhost:18483/connectors -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"name": "ops-mirror",
  "config": {"connector.class": "eventbus-source", "nats.url": "nats://127.0.0.1:1", "nats.password": "ops-v1", "source.stream": "S",
             "output.subject": "x.in", "output.stream": "X"}, "initial_state": "STOPPED"}' >&2
until [ "$(curl -s -H "Authorization: Bearer $token" 'localhost:18483/connectors?expand=status' | grep -o '"state":"RUNNING"' | wc -l)" -ge 12 ]; do sleep 0.5; done
curl -s -H "Authorization: Bearer $token" 'localhost:18483/connectors' >&2; echo >&2
kill -TERM $pid; wait $pid || true
tar -C "$work" -czf "$out" data
echo "wrote $out ($(du -h "$out" | cut -f1))"
