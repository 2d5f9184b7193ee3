#!/usr/bin/env bash
# Makes testdata/upgrade-b8e94d3.tar.gz: the data directory of the release before identities (commit b8e94d3, when
# accounts were whatever X-Account-Id said and no call was authenticated), with buses, rules, targets, a paused
# target, a source, a connection and an API destination in two accounts, and the connectors running. TestUpgrade
# starts the current control plane on a copy of it. Run from the repository root with the old binary built:
#   git worktree add /tmp/prev b8e94d3 && (cd /tmp/prev && go build -o /tmp/prev-eventbridge ./cmd/eventbridge)
#   bash cmd/eventbridge/testdata/make-upgrade-fixture.sh /tmp/prev-eventbridge
set -euo pipefail
bin=${1:?the eventbridge binary of commit b8e94d3}
out=$(cd "$(dirname "$0")" && pwd)/upgrade-b8e94d3.tar.gz
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin" --http-addr 127.0.0.1:18480 --worker-addr 127.0.0.1:18483 --data-dir "$work/data" --allow-private-targets --log-level warn &
pid=$!
until curl -sf localhost:18480/readyz >/dev/null; do sleep 0.2; done
call() { # account method path [body]
  local code
  code=$(curl -s -o /dev/stderr -w '%{http_code}' -X "$2" "localhost:18480$3" -H "X-Account-Id: $1" \
    -H 'Content-Type: application/json' ${4:+-d "$4"})
  echo " <- $2 $3 $code" >&2
  [ "$code" -lt 300 ]
}
call default POST /api/v1/buses '{"name": "orders", "description": "shop orders"}'
call default POST /api/v1/buses/orders/rules '{"name": "created", "eventPattern": {"type": ["order.created"]}}'
call default PUT /api/v1/buses/orders/rules/created/targets/printer '{"type": "http", "config": {"url": "http://127.0.0.1:9/hook"}}'
call acme POST /api/v1/buses '{"name": "billing"}'
call acme POST /api/v1/buses/billing/rules '{"name": "paid", "eventPattern": {"source": ["billing"]}}'
call acme PUT /api/v1/buses/billing/rules/paid/targets/ledger '{"type": "http", "config": {"url": "http://127.0.0.1:9/ledger", "headers": {"X-Token": "s3cret"}}}'
call acme PUT /api/v1/buses/billing/rules/paid/targets/audit '{"type": "http", "config": {"url": "http://127.0.0.1:9/audit"}}'
call acme POST /api/v1/buses/billing/sources '{"name": "hook", "type": "http"}'
call acme POST /api/v1/connections '{"name": "crm", "authorizationType": "API_KEY", "authParameters": {"apiKeyAuthParameters": {"apiKeyName": "X-Api-Key", "apiKeyValue": "k"}}}'
call acme POST /api/v1/api-destinations '{"name": "crm", "connection": "crm", "invocationEndpoint": "https://crm.example.com/orders", "httpMethod": "POST"}'
# Wait for the runtime to run every connector, then pause one target's.
until [ "$(curl -s 'localhost:18483/connectors?expand=status' | grep -o '"state":"RUNNING"' | wc -l)" -ge 10 ]; do sleep 0.5; done
call acme POST /api/v1/runtime/connectors/eb.acme.billing.paid.audit/pause
curl -sf -X POST localhost:18480/api/v1/buses/orders/events -H 'Content-Type: application/cloudevents-batch+json' \
  -d '[{"specversion": "1.0", "id": "before-upgrade", "source": "shop", "type": "order.created"}]' >&2
sleep 2
curl -s 'localhost:18483/connectors' >&2; echo >&2
kill -TERM $pid; wait $pid || true
tar -C "$work" -czf "$out" data
echo "wrote $out ($(du -h "$out" | cut -f1))"
