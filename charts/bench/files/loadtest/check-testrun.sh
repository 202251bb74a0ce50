#!/bin/sh
# Run by the chart's `helm test` pod <release>-test-testrun (templates/tests/testrun-test.yaml): the
# TestRun is a post-install hook Helm does not wait for, so a run that never starts (no k6-operator,
# an image that cannot be pulled, a missing Secret) would be reported nowhere. This waits at most
# START_SECONDS for k6-operator to start the run and otherwise fails, naming the cause and the key
# to change. Env: TESTRUN_NAMESPACE, TESTRUN_NAME, START_SECONDS, CLEANUP (loadtest.cleanup),
# RUNNER_IMAGE, STARTER_IMAGE; no value is pasted into this script.
set -eu
. "$(dirname "$0")/api.sh"

TESTRUN_PATH="/apis/k6.io/v1alpha1/namespaces/$TESTRUN_NAMESPACE/testruns/$TESTRUN_NAME"
PODS_PATH="/api/v1/namespaces/$TESTRUN_NAMESPACE/pods?labelSelector=app%3Dk6%2Ck6_cr%3D$TESTRUN_NAME"
# waiting reasons that do not go away by waiting
FATAL='ImagePullBackOff|ErrImageNeverPull|InvalidImageName|CreateContainerConfigError'
# and those that may, reported when the time is up
SLOW='ErrImagePull|CreateContainerError|Unschedulable'

# key_of MESSAGE: the value to change for a waiting reason's message
key_of() {
  case $1 in
    *"\"$RUNNER_IMAGE\""*) echo "loadtest.runner.image (initializer and runners), loadtest.runner.imagePullSecrets" ;;
    *"\"$STARTER_IMAGE\""*) echo "loadtest.starter.image" ;;
    *secret*|*configmap*) echo "the Secret or ConfigMap named in loadtest.extraEnv valueFrom or loadtest.runner.envFrom" ;;
    *) echo "" ;;
  esac
}

# pod_problems REASONS: one line per container or pod of the TestRun waiting for one of REASONS,
# "<pod>: <reason>: <message>"; empty when there is none.
pod_problems() {
  status=$(call GET "$PODS_PATH")
  [ "$status" = 200 ] || { echo "listing the TestRun's pods: HTTP $status"; cat "$BODY"; return 0; }
  pod=""
  grep -oE "\"metadata\":\{\"name\":\"[^\"]*\"|\"reason\":\"($1)\",\"message\":\"([^\"\\\\]|\\\\.)*\"" "$BODY" |
    while read -r line; do
      case $line in
        '"metadata":'*) pod=${line#*\"name\":\"}; pod=${pod%\"} ;;
        *) reason=${line#\"reason\":\"}; reason=${reason%%\"*}
           message=$(printf '%s' "${line#*\"message\":\"}" | sed 's/"$//; s/\\"/"/g')
           key=$(key_of "$message")
           echo "$pod: $reason: $message${key:+ (set $key)}" ;;
      esac
    done
}

waited=0
stage=""
while :; do
  status=$(call GET "$TESTRUN_PATH")
  case $status in
    200) stage=$(sed 's/.*"status":{//' "$BODY" | grep -o '"stage":"[a-z]*"' | cut -d'"' -f4 || true) ;;
    404)
      if [ "$CLEANUP" = post ]; then
        echo "passed: TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME is gone: with loadtest.cleanup=post k6-operator deletes it when the run ends"
        exit 0
      fi
      echo "FAILED: TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME does not exist: the post-install hook did not create it (helm status, helm get hooks) or someone deleted it"
      exit 1 ;;
    *) echo "FAILED: reading TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME: HTTP $status"; cat "$BODY"; exit 1 ;;
  esac
  case $stage in
    started|stopped|finished)
      echo "passed: TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME is $stage (after $waited s here)"
      exit 0 ;;
    error)
      echo "FAILED: TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME: stage error, the initializer refused the script or its options:"
      echo "  kubectl -n $TESTRUN_NAMESPACE logs job/$TESTRUN_NAME-initializer"
      exit 1 ;;
  esac
  problems=$(pod_problems "$FATAL")
  if [ -n "$problems" ]; then
    echo "FAILED: TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME cannot start (stage ${stage:-none}):"
    echo "$problems" | sed 's/^/  /'
    exit 1
  fi
  [ "$waited" -lt "$START_SECONDS" ] || break
  [ $((waited % 10)) -ne 0 ] || echo "waiting for TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME to start (stage: ${stage:-none})"
  sleep 1
  waited=$((waited + 1))
done
if [ -z "$stage" ]; then
  echo "FAILED: TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME has no stage after $START_SECONDS s: no k6-operator handles it."
  echo "  With the bundled operator (loadtest.operator.enabled=true) see its pod: kubectl -n $TESTRUN_NAMESPACE get pods -l app.kubernetes.io/name=k6-operator"
  echo "  With one installed separately (loadtest.operator.enabled=false) it must run and watch namespace $TESTRUN_NAMESPACE."
  exit 1
fi
echo "FAILED: TestRun $TESTRUN_NAMESPACE/$TESTRUN_NAME is still at stage $stage after $START_SECONDS s (tests.testRun.startSeconds)"
problems=$(pod_problems "$FATAL|$SLOW")
[ -z "$problems" ] || echo "$problems" | sed 's/^/  /'
echo "  kubectl -n $TESTRUN_NAMESPACE get pods -l k6_cr=$TESTRUN_NAME; kubectl -n $TESTRUN_NAMESPACE describe pods -l k6_cr=$TESTRUN_NAME"
exit 1
