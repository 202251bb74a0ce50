#!/bin/sh
# Run by the chart's pre-delete hook (templates/loadtest/cleanup-hook.yaml) with a public curl image:
# uninstall must never depend on the custom runner image, which may be the very thing that failed.
# The TestRun is a Helm hook, which `helm uninstall` would leave behind with its Jobs, pods and
# Services. This deletes it in the foreground (its dependents go first) and waits until its pods are
# gone, so the k6-operator (possibly deleted by the same uninstall next) has nothing left to do.
# Everything comes from the environment (TESTRUN_NAME, TESTRUN_NAMESPACE, WAIT_SECONDS); no value is
# pasted into this script.
set -eu

SA=/var/run/secrets/kubernetes.io/serviceaccount
case $KUBERNETES_SERVICE_HOST in
  *:*) API="https://[$KUBERNETES_SERVICE_HOST]:$KUBERNETES_SERVICE_PORT" ;;
  *) API="https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT" ;;
esac
TESTRUN_PATH="/apis/k6.io/v1alpha1/namespaces/$TESTRUN_NAMESPACE/testruns/$TESTRUN_NAME"
# k6-operator labels every pod of a TestRun (initializer, starter, runners) app=k6,k6_cr=<name>
PODS_PATH="/api/v1/namespaces/$TESTRUN_NAMESPACE/pods?labelSelector=app%3Dk6%2Ck6_cr%3D$TESTRUN_NAME"
BODY=/tmp/response.json

# call METHOD PATH [JSON]: prints the HTTP status; the response body is in $BODY.
call() {
  method=$1 path=$2
  shift 2
  [ $# -eq 0 ] || set -- --data "$1"
  curl -sS -o "$BODY" -w '%{http_code}' --max-time 10 --cacert "$SA/ca.crt" \
    -H "Authorization: Bearer $(cat "$SA/token")" -H 'Content-Type: application/json' \
    -X "$method" "$@" "$API$path"
}

# 404 also when the testruns CRD is not there at all: nothing to delete either way.
status=$(call DELETE "$TESTRUN_PATH" '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}')
case $status in
  200|202) echo "deleting TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME" ;;
  404) echo "TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME already absent" ;;
  *) echo "deleting TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME: HTTP $status"; cat "$BODY"; exit 1 ;;
esac

waited=0
while [ "$waited" -lt "$WAIT_SECONDS" ]; do
  testrun=$(call GET "$TESTRUN_PATH")
  if [ "$testrun" = 404 ]; then
    pods=$(call GET "$PODS_PATH")
    [ "$pods" = 200 ] || { echo "listing the TestRun's pods: HTTP $pods"; cat "$BODY"; exit 1; }
    # an empty list; the API server pretty-prints JSON for curl, so whitespace goes first
    if tr -d ' \t\r\n' < "$BODY" | grep -q '"items":\[\]'; then
      echo "TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME and its pods are gone after $waited s"
      exit 0
    fi
  fi
  [ $((waited % 10)) -ne 0 ] || echo "waiting for the TestRun's dependents (TestRun: HTTP $testrun)"
  sleep 1
  waited=$((waited + 1))
done
echo "TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME or its pods still there after $WAIT_SECONDS s"
exit 1
