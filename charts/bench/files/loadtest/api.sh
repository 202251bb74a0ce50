#!/bin/sh
# Sourced by the chart's API scripts (the pre-delete hook's steps, the `helm test` TestRun check):
# the API server's address and `call`, with the pod's own ServiceAccount token. BENCH_SA_DIR and
# BENCH_API_URL exist for the scripts' tests (ci/test/chart/test_api_scripts.py); the chart sets
# neither. The user agent is not curl's, so the API server answers compact JSON, one line.

SA=${BENCH_SA_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}
if [ -n "${BENCH_API_URL:-}" ]; then
  API=$BENCH_API_URL
else
  case $KUBERNETES_SERVICE_HOST in
    *:*) API="https://[$KUBERNETES_SERVICE_HOST]:$KUBERNETES_SERVICE_PORT" ;;
    *) API="https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT" ;;
  esac
fi
BODY=${BODY:-/tmp/response.json}

# call METHOD PATH [JSON]: prints the HTTP status; the response body is in $BODY.
call() {
  method=$1 path=$2
  shift 2
  [ $# -eq 0 ] || set -- --data "$1"
  curl -sS -A bench -o "$BODY" -w '%{http_code}' --max-time 10 --cacert "$SA/ca.crt" \
    -H "Authorization: Bearer $(cat "$SA/token")" -H 'Content-Type: application/json' \
    -X "$method" "$@" "$API$path"
}

# empty_list: whether $BODY is a list with no items
empty_list() {
  tr -d ' \t\r\n' < "$BODY" | grep -q '"items":\[\]'
}
