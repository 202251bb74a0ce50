#!/bin/sh
# Run by the chart's pre-delete hook (templates/loadtest/cleanup-hook.yaml), once per object that
# uninstall must see gone before Helm deletes the rest: `delete-and-wait.sh testrun`, then, for the
# controllers that provision a data plane per Gateway, `delete-and-wait.sh gateway`. Deletes the
# object in the foreground and waits until it and the pods labelled with its selector are gone, at
# most WAIT_SECONDS. The argument is a fixed word the chart writes; every name comes from the
# environment; no value is pasted into this script.
# - testrun: the TestRun (a Helm hook, which uninstall would keep with its Jobs, pods and
#   Services); its pods (initializer, starter, runners) are labelled app=k6,k6_cr=<name>. Gone
#   before the k6-operator, possibly deleted by the same uninstall next, has nothing left to do.
#   Env: TESTRUN_NAMESPACE, TESTRUN_NAME.
# - gateway: `helm uninstall` deletes the controller before the Gateway (custom resources last); a
#   controller gone first leaves what only it removes (NGINX Gateway Fabric's NGINX Deployment,
#   Service, ConfigMaps and Secret, no owner references; Envoy Gateway's finalizer on the
#   GatewayClass). So the Gateway goes here, while its controller runs. Env: GATEWAY_NAMESPACE,
#   GATEWAY_NAME, DATA_PLANE_SELECTOR (URL-encoded).
set -eu
. "$(dirname "$0")/api.sh"

case ${1:-} in
  testrun)
    what="TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME" dependents="its pods"
    OBJECT_PATH="/apis/k6.io/v1alpha1/namespaces/$TESTRUN_NAMESPACE/testruns/$TESTRUN_NAME"
    PODS_PATH="/api/v1/namespaces/$TESTRUN_NAMESPACE/pods?labelSelector=app%3Dk6%2Ck6_cr%3D$TESTRUN_NAME" ;;
  gateway)
    what="Gateway $GATEWAY_NAMESPACE/$GATEWAY_NAME" dependents="its data-plane pods"
    OBJECT_PATH="/apis/gateway.networking.k8s.io/v1/namespaces/$GATEWAY_NAMESPACE/gateways/$GATEWAY_NAME"
    PODS_PATH="/api/v1/namespaces/$GATEWAY_NAMESPACE/pods?labelSelector=$DATA_PLANE_SELECTOR" ;;
  *) echo "usage: $0 testrun|gateway"; exit 2 ;;
esac

# 404 also when the kind is not served (no CRD): nothing to delete either way.
status=$(call DELETE "$OBJECT_PATH" '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}')
case $status in
  200|202) echo "deleting $what" ;;
  404) echo "$what already absent" ;;
  *) echo "deleting $what: HTTP $status"; cat "$BODY"; exit 1 ;;
esac

waited=0
while [ "$waited" -lt "$WAIT_SECONDS" ]; do
  object=$(call GET "$OBJECT_PATH")
  if [ "$object" = 404 ]; then
    pods=$(call GET "$PODS_PATH")
    [ "$pods" = 200 ] || { echo "listing $dependents: HTTP $pods"; cat "$BODY"; exit 1; }
    if empty_list; then
      echo "$what and $dependents are gone after $waited s"
      exit 0
    fi
  fi
  [ $((waited % 10)) -ne 0 ] || echo "waiting for $what and $dependents to go (object: HTTP $object)"
  sleep 1
  waited=$((waited + 1))
done
echo "$what or $dependents still there after $WAIT_SECONDS s (loadtest.cleanupHook.waitSeconds)"
exit 1
