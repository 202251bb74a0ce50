// Kubernetes calls for the churn scenarios, through xk6-kubernetes v0.9.0.
// v0.9.0 binds its client to the context of the iteration that created it: call connect() inside
// the iteration that uses the client, never in the init context or a previous iteration.
// It has no scale sub-resource call and no label-selector list: scale = get, set replicas, update
// (PUT with resourceVersion, retried on 409 Conflict); pods are listed and filtered here.
import { Kubernetes } from 'k6/x/kubernetes';
import { sleep } from 'k6';

const DEPLOYMENT = 'Deployment.apps';
const CONFLICT_RETRIES = 5;

export function connect(cfg) {
  // Empty config_path = the in-cluster service account (KUBECONFIG is not read by v0.9.0).
  return cfg.kubeconfig ? new Kubernetes({ config_path: cfg.kubeconfig }) : new Kubernetes();
}

function isConflict(err) {
  return /\b409\b|conflict|the object has been modified/i.test(String(err));
}

// updateDeployment(k8s, cfg, mutate): get, mutate(obj) -> changed?, update; retries on 409.
// Returns true if an update was written.
export function updateDeployment(k8s, cfg, mutate) {
  for (let attempt = 1; ; attempt++) {
    const obj = k8s.get(DEPLOYMENT, cfg.deployment, cfg.namespace);
    if (!mutate(obj)) return false;
    try {
      k8s.update(obj);
      return true;
    } catch (err) {
      if (!isConflict(err) || attempt >= CONFLICT_RETRIES) throw err;
      sleep(0.05 * attempt);
    }
  }
}

export function getDeployment(k8s, cfg) {
  return k8s.get(DEPLOYMENT, cfg.deployment, cfg.namespace);
}

// scaleDeployment sets spec.replicas; returns true if it changed.
export function scaleDeployment(k8s, cfg, replicas) {
  return updateDeployment(k8s, cfg, (obj) => {
    if (obj.spec.replicas === replicas) return false;
    obj.spec.replicas = replicas;
    return true;
  });
}

// restartDeployment starts a rolling restart the way `kubectl rollout restart` does: a new
// pod-template annotation.
export function restartDeployment(k8s, cfg, when) {
  return updateDeployment(k8s, cfg, (obj) => {
    // obj wraps Go maps: a JS object assigned into it is copied at assignment, so build the
    // annotations completely first, then assign (changes after the assignment would be lost).
    const meta = obj.spec.template.metadata || {};
    const annotations = Object.assign({}, meta.annotations || {});
    annotations['kubectl.kubernetes.io/restartedAt'] = new Date(when).toISOString();
    meta.annotations = annotations;
    obj.spec.template.metadata = meta;
    return true;
  });
}

export function matchesLabels(obj, selector) {
  const labels = (obj.metadata && obj.metadata.labels) || {};
  for (const key of Object.keys(selector)) {
    if (labels[key] !== selector[key]) return false;
  }
  return true;
}

export function isPodReady(pod) {
  if (pod.metadata.deletionTimestamp) return false;
  const conditions = (pod.status && pod.status.conditions) || [];
  for (const c of conditions) {
    if (c.type === 'Ready') return c.status === 'True';
  }
  return false;
}

// listBackendPods -> the pods matching BENCH_POD_SELECTOR in BENCH_NAMESPACE.
export function listBackendPods(k8s, cfg) {
  return k8s.list('Pod', cfg.namespace).filter((pod) => matchesLabels(pod, cfg.podSelector));
}

export function deletePod(k8s, cfg, name) {
  k8s.delete('Pod', name, cfg.namespace);
}

// describeApiError turns an API failure into a message that says what the runner needs.
export function describeApiError(cfg, what, err) {
  const where = cfg.kubeconfig ? `kubeconfig ${cfg.kubeconfig}` : 'the in-cluster service account';
  return `${what} failed using ${where}: ${err}. The runner needs get/list/update on deployments `
    + `and get/list/delete on pods in namespace ${cfg.namespace} (BENCH_NAMESPACE), and the Deployment `
    + `${cfg.deployment} (BENCH_DEPLOYMENT) must exist`;
}
