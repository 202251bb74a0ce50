#!/bin/sh
# Run by the chart's pre-delete hook after delete-testrun.sh, when the release runs a route experiment
# (route-propagation, route-change, route-scale): deletes the HTTPRoutes and Ingresses the runners
# created, those labelled bench/route-run (scenarios/lib/routes.js ROUTE_LABEL), in ROUTES_NAMESPACE.
# A runner deletes its routes in teardown; this covers a run stopped before it (uninstall mid-run,
# a killed runner). Names are read from the list and used only when they have the runners' shape
# (bench-route-h-<n>, bench-route-i-<n>). Everything comes from the environment; nothing is pasted in.
set -eu

SA=/var/run/secrets/kubernetes.io/serviceaccount
case $KUBERNETES_SERVICE_HOST in
  *:*) API="https://[$KUBERNETES_SERVICE_HOST]:$KUBERNETES_SERVICE_PORT" ;;
  *) API="https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT" ;;
esac
BODY=/tmp/routes.json
# labelSelector=bench/route-run: every object carrying the label, whatever the run id
SELECTOR='labelSelector=bench%2Froute-run'

call() {
  curl -sS -o "$BODY" -w '%{http_code}' --max-time 10 --cacert "$SA/ca.crt" \
    -H "Authorization: Bearer $(cat "$SA/token")" -X "$1" "$API$2"
}

# delete_kind COLLECTION_PATH KIND: delete every labelled object of one kind.
delete_kind() {
  collection=$1 kind=$2
  status=$(call GET "$collection?$SELECTOR")
  case $status in
    200) ;;
    # the kind's API is not served (no Gateway API CRDs): nothing of it to delete
    404) echo "$kind: not served here, nothing to delete"; return 0 ;;
    *) echo "listing $kind: HTTP $status"; cat "$BODY"; return 1 ;;
  esac
  names=$(tr -d ' \t\r\n' < "$BODY" | grep -o '"name":"bench-route-[hi]-[0-9]*"' | sed 's/^"name":"//; s/"$//' | sort -u)
  count=0
  for name in $names; do
    status=$(call DELETE "$collection/$name")
    case $status in
      200|202|404) count=$((count + 1)) ;;
      *) echo "deleting $kind $name: HTTP $status"; cat "$BODY"; return 1 ;;
    esac
  done
  echo "$kind: deleted $count labelled bench/route-run in $ROUTES_NAMESPACE"
}

delete_kind "/apis/gateway.networking.k8s.io/v1/namespaces/$ROUTES_NAMESPACE/httproutes" HTTPRoutes
delete_kind "/apis/networking.k8s.io/v1/namespaces/$ROUTES_NAMESPACE/ingresses" Ingresses
