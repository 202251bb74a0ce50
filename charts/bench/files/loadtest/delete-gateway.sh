#!/bin/sh
# Run by the chart's pre-delete hook (templates/loadtest/cleanup-hook.yaml) for the controllers that
# provision a data plane per Gateway (Envoy Gateway, NGINX Gateway Fabric, Istio). `helm uninstall`
# deletes the controller before the Gateway (Helm deletes custom resources last); a controller gone
# first leaves what only it removes: NGINX Gateway Fabric's NGINX Deployment, Service, ConfigMaps and
# Secret (no owner references), Envoy Gateway's finalizer on the GatewayClass (left Terminating).
# So the Gateway goes here, while the controller still runs, and the hook waits until the Gateway
# and the data-plane pods labelled DATA_PLANE_SELECTOR are gone, at most WAIT_SECONDS.
# Everything comes from the environment (GATEWAY_NAMESPACE, GATEWAY_NAME, DATA_PLANE_SELECTOR
# URL-encoded, WAIT_SECONDS); no value is pasted into this script.
set -eu

SA=/var/run/secrets/kubernetes.io/serviceaccount
case $KUBERNETES_SERVICE_HOST in
  *:*) API="https://[$KUBERNETES_SERVICE_HOST]:$KUBERNETES_SERVICE_PORT" ;;
  *) API="https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT" ;;
esac
GATEWAY_PATH="/apis/gateway.networking.k8s.io/v1/namespaces/$GATEWAY_NAMESPACE/gateways/$GATEWAY_NAME"
PODS_PATH="/api/v1/namespaces/$GATEWAY_NAMESPACE/pods?labelSelector=$DATA_PLANE_SELECTOR"
BODY=/tmp/gateway.json

call() {
  curl -sS -o "$BODY" -w '%{http_code}' --max-time 10 --cacert "$SA/ca.crt" \
    -H "Authorization: Bearer $(cat "$SA/token")" -X "$1" "$API$2"
}

# 404 also when the Gateway API is not served: nothing to delete either way.
status=$(call DELETE "$GATEWAY_PATH")
case $status in
  200|202) echo "deleting Gateway $GATEWAY_NAMESPACE/$GATEWAY_NAME while its controller runs" ;;
  404) echo "Gateway $GATEWAY_NAMESPACE/$GATEWAY_NAME already absent" ;;
  *) echo "deleting Gateway $GATEWAY_NAMESPACE/$GATEWAY_NAME: HTTP $status"; cat "$BODY"; exit 1 ;;
esac

waited=0
while [ "$waited" -lt "$WAIT_SECONDS" ]; do
  gateway=$(call GET "$GATEWAY_PATH")
  if [ "$gateway" = 404 ]; then
    pods=$(call GET "$PODS_PATH")
    [ "$pods" = 200 ] || { echo "listing the data-plane pods: HTTP $pods"; cat "$BODY"; exit 1; }
    # an empty list; the API server pretty-prints JSON for curl, so whitespace goes first
    if tr -d ' \t\r\n' < "$BODY" | grep -q '"items":\[\]'; then
      echo "Gateway $GATEWAY_NAMESPACE/$GATEWAY_NAME and its data-plane pods are gone after $waited s"
      exit 0
    fi
  fi
  [ $((waited % 10)) -ne 0 ] || echo "waiting for the Gateway's data plane to go (Gateway: HTTP $gateway)"
  sleep 1
  waited=$((waited + 1))
done
echo "Gateway $GATEWAY_NAMESPACE/$GATEWAY_NAME or its data-plane pods still there after $WAIT_SECONDS s"
exit 1
