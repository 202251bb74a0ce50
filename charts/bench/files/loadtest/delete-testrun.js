// Run by the chart's pre-delete hook with the runner image: the TestRun is a Helm hook, which
// `helm uninstall` would leave behind with its runner Jobs and pods. Deleting it lets the garbage
// collector remove what k6-operator created for it; this waits until those pods are gone too.
import exec from 'k6/execution';
import { sleep } from 'k6';
import { Kubernetes } from 'k6/x/kubernetes';

export const options = { vus: 1, iterations: 1 };

const TESTRUN_KIND = 'TestRun.k6.io';
const NAME = __ENV.TESTRUN_NAME;
const NAMESPACE = __ENV.TESTRUN_NAMESPACE;
const RELEASE = __ENV.RELEASE_NAME;
const WAIT_SECONDS = 90;

function isAbsent(error) {
  // "not found": already deleted; "no matches for kind": the k6-operator CRD is gone with it.
  return /not found|no matches for kind/i.test(String(error));
}

function testRunExists(k8s) {
  try {
    k8s.get(TESTRUN_KIND, NAME, NAMESPACE);
    return true;
  } catch (error) {
    if (isAbsent(error)) return false;
    throw error;
  }
}

function runnerPods(k8s) {
  return k8s.list('Pod', NAMESPACE).filter((pod) => {
    const labels = pod.metadata.labels || {};
    return labels['app.kubernetes.io/instance'] === RELEASE && labels['app.kubernetes.io/component'] === 'loadtest';
  }).map((pod) => pod.metadata.name);
}

export default function () {
  const k8s = new Kubernetes();
  try {
    k8s.delete(TESTRUN_KIND, NAME, NAMESPACE);
    console.log(`deleted TestRun ${NAMESPACE}/${NAME}`);
  } catch (error) {
    if (!isAbsent(error)) exec.test.abort(`deleting TestRun ${NAMESPACE}/${NAME}: ${error}`);
    console.log(`TestRun ${NAMESPACE}/${NAME} already absent`);
  }
  for (let waited = 0; waited < WAIT_SECONDS; waited++) {
    const pods = testRunExists(k8s) ? ['(TestRun still there)'] : runnerPods(k8s);
    if (pods.length === 0) return;
    if (waited % 10 === 0) console.log(`waiting for ${pods.join(' ')}`);
    sleep(1);
  }
  exec.test.abort(`TestRun ${NAMESPACE}/${NAME} or its runner pods still there after ${WAIT_SECONDS} s`);
}
