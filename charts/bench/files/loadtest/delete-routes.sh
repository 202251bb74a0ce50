#!/bin/sh
# Run by the chart's pre-delete hook after `delete-and-wait.sh testrun`, when the release runs a route experiment
# (route-propagation, route-change, route-scale) or long-lived with its reload disruption (one route,
# bench-route-h-reload or bench-route-i-reload): deletes the HTTPRoutes and Ingresses the runners
# created for this release's run, those labelled bench/route-run=<its run id> (scenarios/lib/routes.js
# ROUTE_LABEL; ROUTES_SELECTOR, URL-encoded), in ROUTES_NAMESPACE: never another release's routes.
# A runner deletes its routes in teardown; this covers a run stopped before it (uninstall mid-run,
# a killed runner). Names are read from the list and used only when they have the runners' shape
# (bench-route-h-<n>, bench-route-i-<n>, or reload for <n>). Everything comes from the environment;
# nothing is pasted in.
set -eu

. "$(dirname "$0")/api.sh"

# delete_kind COLLECTION_PATH KIND: delete every labelled object of one kind.
delete_kind() {
  collection=$1 kind=$2
  status=$(call GET "$collection?labelSelector=$ROUTES_SELECTOR")
  case $status in
    200) ;;
    # the kind's API is not served (no Gateway API CRDs): nothing of it to delete
    404) echo "$kind: not served here, nothing to delete"; return 0 ;;
    *) echo "listing $kind: HTTP $status"; cat "$BODY"; return 1 ;;
  esac
  names=$(tr -d ' \t\r\n' < "$BODY" | grep -oE '"name":"bench-route-[hi]-([0-9]+|reload)"' | sed 's/^"name":"//; s/"$//' | sort -u)
  count=0
  for name in $names; do
    status=$(call DELETE "$collection/$name")
    case $status in
      200|202|404) count=$((count + 1)) ;;
      *) echo "deleting $kind $name: HTTP $status"; cat "$BODY"; return 1 ;;
    esac
  done
  echo "$kind: deleted $count of this run in $ROUTES_NAMESPACE"
}

delete_kind "/apis/gateway.networking.k8s.io/v1/namespaces/$ROUTES_NAMESPACE/httproutes" HTTPRoutes
delete_kind "/apis/networking.k8s.io/v1/namespaces/$ROUTES_NAMESPACE/ingresses" Ingresses
