#!/usr/bin/env bash
# Refreshes spanner/pricing/prices.yaml from the Cloud Billing Catalog API
# (services.skus.list for Cloud Spanner, service CC63-0873-48FD), which
# serves Google's public list prices. Run it by hand, where the network
# reaches cloudbilling.googleapis.com; never in tests or CI. It needs an
# API key of a project with the Cloud Billing API enabled, in
# SPANBENCH_BILLING_API_KEY (never on the command line, so it stays out of
# the process list and the shell history).
#
#   SPANBENCH_BILLING_API_KEY=... hack/refresh-prices.sh [CURRENCY]
#
# It writes the new catalog to spanner/pricing/prices.yaml.new and the SKUs
# it could not map to stderr; review both (docs/cost.md, "Refreshing"),
# then move the file over prices.yaml and commit it with the date.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${SPANBENCH_BILLING_API_KEY:-}" ]; then
  echo "refresh-prices: SPANBENCH_BILLING_API_KEY is not set; refusing to run (see docs/cost.md, Refreshing)" >&2
  exit 2
fi
currency=${1:-USD}
service=CC63-0873-48FD
url="https://cloudbilling.googleapis.com/v1/services/$service/skus"
taken_on=$(date -u +%F)
pages=$(mktemp)
page=$(mktemp)
trap 'rm -f "$pages" "$page"' EXIT

token=""
for _ in $(seq 1 200); do # bounded: the Spanner listing is a few pages
  # The key travels in a header read from stdin, not in argv or the URL.
  printf 'header = "X-Goog-Api-Key: %s"\n' "$SPANBENCH_BILLING_API_KEY" |
    curl --fail --silent --show-error --max-time 60 --config - \
      --get "$url" --data-urlencode "currencyCode=$currency" \
      --data-urlencode "pageSize=5000" ${token:+--data-urlencode "pageToken=$token"} >"$page"
  cat "$page" >>"$pages"
  token=$(go run ./spanner/pricing/refresh -next-page-token <"$page")
  [ -n "$token" ] || break
done
if [ -n "$token" ]; then
  echo "refresh-prices: more than 200 pages; refusing a partial catalog" >&2
  exit 1
fi

go run ./spanner/pricing/refresh -currency "$currency" -taken-on "$taken_on" <"$pages" >spanner/pricing/prices.yaml.new
echo "refresh-prices: wrote spanner/pricing/prices.yaml.new ($taken_on, $currency); review it against prices.yaml" >&2
