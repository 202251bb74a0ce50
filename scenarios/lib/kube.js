// Kubernetes calls for the churn scenarios, through xk6-kubernetes v0.9.0.
// xk6-kubernetes v0.9.0 binds its client to the context of the iteration that created it: call connect() inside
// the iteration that uses the client, never in the init context or a previous iteration.
// It has no scale sub-resource call and no label-selector list: scale = get, set replicas, update
// (PUT with resourceVersion, retried on 409 Conflict); pods are listed and filtered here.
// The permissions these calls need are stated once, in scenarios/contract.json runnerRole (scenarios/README.md).
//
// Putting the backend back: the first change a run makes also writes, in the same update, an
// annotation RESTORE_ANNOTATION on the Deployment holding the starting state (spec.replicas and the
// pod template's restartedAt) and what the churn last set. It survives the runner: the scenario's
// teardown, the next run's setup or a person (scenarios/README.md) restores from it and removes it.
// The calls that change and put back a Deployment take a target, cfg naming the object: `deployment`
// its name, `namespace`, `kind` (default a Deployment) and `replicas`, the dotted field that holds its
// replicas (default spec.replicas): dataplane-scale also scales a parameters object that way
// (NGINX Gateway Fabric's NginxProxy, spec.kubernetes.deployment.replicas).
'use strict';
const { Kubernetes } = require('k6/x/kubernetes');
const { sleep } = require('k6');

const DEPLOYMENT = 'Deployment.apps';
// the controller's workload controller-upgrade rolls: kind -> the API's kind
const WORKLOAD_KINDS = Object.freeze({ Deployment: DEPLOYMENT, DaemonSet: 'DaemonSet.apps' });
const CONFLICT_RETRIES = 5;
const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';
const RESTORE_ANNOTATION = 'bench/churn-restore';
const { ROLLED_AT } = require('./rollout.js');

// connect(cfg): an API client (also for the route experiments, routes.js).
function connect(cfg) {
  // Empty config_path = the in-cluster service account (xk6-kubernetes v0.9.0 reads no KUBECONFIG:
  // config.js's kubernetesApi falls back to it).
  return cfg.kubeconfig ? new Kubernetes({ config_path: cfg.kubeconfig }) : new Kubernetes();
}

// kubeCalls(): the other calls, made when it is called. Every VU of a churn run loads this module (k6
// picks the churn VU after init), but only the churn VU and VU 0 call kubeCalls(), so the other VUs
// never create these functions (each kept function costs a VU about 0.75 KB: scenarios/calibrate/
// README.md, "Memory per VU").
function kubeCalls() {
  function isConflict(err) {
    return /\b409\b|conflict|the object has been modified/i.test(String(err));
  }

  // updateDeployment(k8s, cfg, mutate): get, mutate(obj) -> changed?, update; retries on 409.
  // Returns true if an update was written. cfg.kind: the API's kind (default a Deployment; the
  // controller's workload may be a DaemonSet: upgradeTarget).
  function updateDeployment(k8s, cfg, mutate) {
    for (let attempt = 1; ; attempt++) {
      const obj = k8s.get(cfg.kind || DEPLOYMENT, cfg.deployment, cfg.namespace);
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

  function getDeployment(k8s, cfg) {
    return k8s.get(cfg.kind || DEPLOYMENT, cfg.deployment, cfg.namespace);
  }

  // obj wraps Go maps: a JS object assigned into it is copied at assignment, so build a map
  // completely first, then assign (changes after the assignment would be lost).
  function setAnnotation(meta, key, value) {
    const annotations = Object.assign({}, meta.annotations || {});
    if (value === null || value === undefined) delete annotations[key];
    else annotations[key] = value;
    meta.annotations = annotations;
  }

  // restartedAt(obj): its pod template's restartedAt; null too for an object without a pod template.
  function restartedAt(obj) {
    const meta = (obj.spec && obj.spec.template && obj.spec.template.metadata) || {};
    return (meta.annotations && meta.annotations[RESTARTED_AT]) || null;
  }

  function replicasPath(cfg) {
    return (cfg.replicas || 'spec.replicas').split('.');
  }

  // replicasOf(obj, cfg): the replicas the field cfg.replicas holds, null when it is absent.
  function replicasOf(obj, cfg) {
    let node = obj;
    for (const key of replicasPath(cfg)) node = node === undefined || node === null ? undefined : node[key];
    return node === undefined ? null : node;
  }

  // setReplicas(obj, cfg, value): the field cfg.replicas set (null: removed), its missing parents made.
  // A map assigned into obj is copied (setAnnotation), so each one is read back after it is made.
  function setReplicas(obj, cfg, value) {
    const keys = replicasPath(cfg);
    let node = obj;
    for (const key of keys.slice(0, -1)) {
      if (!node[key]) node[key] = {};
      node = node[key];
    }
    if (value === null) delete node[keys[keys.length - 1]];
    else node[keys[keys.length - 1]] = value;
  }

  // kindName(cfg): the kind of cfg's object, for messages (Deployment, NginxProxy).
  function kindName(cfg) {
    return (cfg.kind || DEPLOYMENT).split('.')[0];
  }

  function setRestartedAt(obj, value) {
    const meta = obj.spec.template.metadata || {};
    setAnnotation(meta, RESTARTED_AT, value);
    obj.spec.template.metadata = meta;
  }

  // readRestoreRecord(obj) -> {replicas, restartedAt, set: {replicas, restartedAt}, testid, at} or
  // null; controller-upgrade's record holds the image instead: {image: {container, from}, set: {image}}.
  function readRestoreRecord(obj) {
    const raw = obj.metadata.annotations && obj.metadata.annotations[RESTORE_ANNOTATION];
    if (!raw) return null;
    try {
      const record = JSON.parse(raw);
      // replicas null: a parameters object that had no replicas field (it is removed again)
      if (typeof record.replicas === 'number' || record.replicas === null
        || (record.image && typeof record.image.from === 'string')) return record;
    } catch (err) { /* reported below */ }
    throw new Error(`annotation ${RESTORE_ANNOTATION} on ${obj.kind || 'Deployment'} ${obj.metadata.namespace}/${obj.metadata.name} `
      + `is not a bench restore record: ${raw}`);
  }

  // changeDeployment(k8s, cfg, change, until): updateDeployment for the churn's own changes. The
  // update that makes the first change also records the state before it (RESTORE_ANNOTATION), and
  // every change notes what it set, so a restore can tell the churn's values from someone else's
  // later edit. until (ms since the epoch) = when the churn will have ended and restored itself:
  // other runners' teardowns leave the record alone until then (churn.js restoreInTeardown).
  function changeDeployment(k8s, cfg, change, until) {
    return updateDeployment(k8s, cfg, (obj) => {
      const record = readRestoreRecord(obj)
        || { replicas: replicasOf(obj, cfg), restartedAt: restartedAt(obj), testid: cfg.testid, at: new Date().toISOString() };
      if (!change(obj)) return false;
      record.set = { replicas: replicasOf(obj, cfg), restartedAt: restartedAt(obj) };
      if (until) record.until = until;
      const meta = obj.metadata;
      setAnnotation(meta, RESTORE_ANNOTATION, JSON.stringify(record));
      obj.metadata = meta;
      return true;
    });
  }

  // restoreDeployment(k8s, cfg): puts back the state RESTORE_ANNOTATION recorded and removes it.
  // A field someone else changed after the churn's last write (a helm upgrade, a person) is left
  // as they set it. Returns what it did, or null when there was no record (nothing to restore).
  function restoreDeployment(k8s, cfg) {
    let done = null;
    updateDeployment(k8s, cfg, (obj) => {
      const record = readRestoreRecord(obj);
      done = null;
      if (!record) return false;
      const notes = record.image ? restoreImage(obj, record) : restoreReplicas(obj, record, cfg);
      const meta = obj.metadata;
      setAnnotation(meta, RESTORE_ANNOTATION, null);
      obj.metadata = meta;
      done = `${notes.join(', ') || 'nothing to change'} (recorded by ${record.testid || 'an earlier run'} at ${record.at})`;
      return true;
    });
    return done;
  }

  // restoreReplicas(obj, record, cfg): restoreDeployment's part for the backend and the data plane
  // (its Deployment or its parameters object: cfg.replicas) -> notes.
  function restoreReplicas(obj, record, cfg) {
    const set = record.set || {};
    const notes = [];
    const now = replicasOf(obj, cfg);
    if (now === set.replicas) {
      if (set.replicas !== record.replicas) notes.push(`replicas ${set.replicas} -> ${record.replicas}`);
      setReplicas(obj, cfg, record.replicas);
    } else {
      notes.push(`replicas left at ${now} (changed since the churn set ${set.replicas})`);
    }
    const current = restartedAt(obj);
    if (current === (set.restartedAt || null)) {
      if (current !== record.restartedAt) {
        setRestartedAt(obj, record.restartedAt);
        notes.push(`pod template restartedAt ${current} -> ${record.restartedAt}`);
      }
    } else {
      notes.push(`pod template restartedAt left at ${current} (changed since the churn)`);
    }
    return notes;
  }

  // restoreImage(obj, record): restoreDeployment's part for controller-upgrade's image -> notes. The
  // container's image goes back (another rollout, after the load) unless someone set another since.
  function restoreImage(obj, record) {
    const { container, from } = record.image;
    const set = (record.set || {}).image;
    const c = containerOf(obj, container);
    if (!c) return [`container ${container} is gone; nothing to put back`];
    if (c.image !== set) return [`container ${container}'s image left at ${c.image} (changed since the churn set ${set})`];
    if (c.image === from) return [];
    setImage(obj, container, from);
    return [`container ${container}'s image ${set} -> ${from}`];
  }

  function containerOf(obj, name) {
    return ((obj.spec.template.spec || {}).containers || []).find((c) => c.name === name) || null;
  }

  // setImage(obj, name, image): the containers list rebuilt and assigned whole (Go maps: setAnnotation).
  function setImage(obj, name, image) {
    const spec = obj.spec.template.spec;
    spec.containers = spec.containers.map((c) => (c.name === name ? Object.assign({}, c, { image }) : c));
    obj.spec.template.spec = spec;
  }

  // rollWorkload(k8s, target, u, when, until): controller-upgrade's change: a new ROLLED_AT on the pod
  // template, and u.image on container u.container when one is set. Only an image change is recorded
  // for the restore (an annotation alone is left, as `kubectl rollout restart` leaves it: scenarios/
  // controller-upgrade.js says why). target: upgradeTarget(cfg); u: upgradeOf(cfg).
  function rollWorkload(k8s, target, u, when, until) {
    return updateDeployment(k8s, target, (obj) => {
      const meta = obj.spec.template.metadata || {};
      setAnnotation(meta, ROLLED_AT, new Date(when).toISOString());
      obj.spec.template.metadata = meta;
      if (!u.image) return true;
      const c = containerOf(obj, u.container);
      if (!c) throw new Error(`${u.kind} ${u.namespace}/${u.name} has no container ${u.container} (BENCH_UPGRADE_CONTAINER)`);
      if (c.image === u.image) return true;
      const record = readRestoreRecord(obj)
        || { image: { container: u.container, from: c.image }, testid: target.testid, at: new Date().toISOString() };
      setImage(obj, u.container, u.image);
      record.set = { image: u.image };
      if (until) record.until = until;
      const m = obj.metadata;
      setAnnotation(m, RESTORE_ANNOTATION, JSON.stringify(record));
      obj.metadata = m;
      return true;
    });
  }

  // scaleDeployment sets the replicas (spec.replicas, or cfg.replicas); returns true if it changed.
  function scaleDeployment(k8s, cfg, replicas, until) {
    return changeDeployment(k8s, cfg, (obj) => {
      if (replicasOf(obj, cfg) === replicas) return false;
      setReplicas(obj, cfg, replicas);
      return true;
    }, until);
  }

  // restartDeployment starts a rolling restart the way `kubectl rollout restart` does: a new
  // pod-template annotation.
  function restartDeployment(k8s, cfg, when, until) {
    return changeDeployment(k8s, cfg, (obj) => {
      setRestartedAt(obj, new Date(when).toISOString());
      return true;
    }, until);
  }

  function matchesLabels(obj, selector) {
    const labels = (obj.metadata && obj.metadata.labels) || {};
    for (const key of Object.keys(selector)) {
      if (labels[key] !== selector[key]) return false;
    }
    return true;
  }

  function isPodReady(pod) {
    if (pod.metadata.deletionTimestamp) return false;
    const conditions = (pod.status && pod.status.conditions) || [];
    for (const c of conditions) {
      if (c.type === 'Ready') return c.status === 'True';
    }
    return false;
  }

  // listBackendPods -> the pods matching BENCH_POD_SELECTOR in BENCH_NAMESPACE.
  function listBackendPods(k8s, cfg) {
    return k8s.list('Pod', cfg.namespace).filter((pod) => matchesLabels(pod, cfg.podSelector));
  }

  function deletePod(k8s, cfg, name) {
    k8s.delete('Pod', name, cfg.namespace);
  }

  // controllerOf(cfg) -> {namespace, selector}: the controller's pods controller-restart deletes, from
  // its settings BENCH_CONTROLLER_NAMESPACE (empty = BENCH_NAMESPACE) and BENCH_CONTROLLER_SELECTOR.
  function controllerOf(cfg) {
    const s = cfg.settings || {};
    return { namespace: s.BENCH_CONTROLLER_NAMESPACE || cfg.namespace, selector: s.BENCH_CONTROLLER_SELECTOR || {} };
  }

  // listControllerPods -> the controller's pods (controllerOf), terminating ones included.
  function listControllerPods(k8s, cfg) {
    const c = controllerOf(cfg);
    return k8s.list('Pod', c.namespace).filter((pod) => matchesLabels(pod, c.selector));
  }

  function deleteControllerPod(k8s, cfg, name) {
    k8s.delete('Pod', name, controllerOf(cfg).namespace);
  }

  // dataplaneOf(cfg) -> {namespace, name}: the data-plane Deployment dataplane-scale scales, from its
  // settings BENCH_DATAPLANE_NAMESPACE (empty = BENCH_NAMESPACE) and BENCH_DATAPLANE_DEPLOYMENT.
  function dataplaneOf(cfg) {
    const s = cfg.settings || {};
    return { namespace: s.BENCH_DATAPLANE_NAMESPACE || cfg.namespace, name: s.BENCH_DATAPLANE_DEPLOYMENT || '' };
  }

  // dataplaneTarget(cfg): cfg with the data-plane Deployment in place of the backend's, for the calls
  // that change a Deployment and put it back (getDeployment, scaleDeployment, restoreDeployment,
  // readRestoreRecord): the data plane is changed, recorded and restored as the backend is.
  function dataplaneTarget(cfg) {
    const d = dataplaneOf(cfg);
    return Object.assign({}, cfg, { namespace: d.namespace, deployment: d.name });
  }

  // parametersOf(cfg) -> {kind, namespace, name, replicas} or null: the object dataplane-scale sets the
  // replicas on instead of the Deployment (BENCH_DATAPLANE_PARAMETERS_*; its namespace empty = the
  // Deployment's), whose controller copies them onto the Deployment (NGINX Gateway Fabric's NginxProxy).
  function parametersOf(cfg) {
    const s = cfg.settings || {};
    if (!s.BENCH_DATAPLANE_PARAMETERS_KIND) return null;
    return { kind: s.BENCH_DATAPLANE_PARAMETERS_KIND, namespace: s.BENCH_DATAPLANE_PARAMETERS_NAMESPACE || dataplaneOf(cfg).namespace,
      name: s.BENCH_DATAPLANE_PARAMETERS_NAME || '', replicas: s.BENCH_DATAPLANE_PARAMETERS_REPLICAS || 'spec.replicas' };
  }

  // scaledTarget(cfg): cfg naming what dataplane-scale's steps change, record and put back: the
  // parameters object when there is one (parametersOf), else the data plane's Deployment.
  function scaledTarget(cfg) {
    const p = parametersOf(cfg);
    if (!p) return dataplaneTarget(cfg);
    return Object.assign({}, cfg, { namespace: p.namespace, deployment: p.name, kind: p.kind, replicas: p.replicas });
  }

  // upgradeOf(cfg) -> {kind, namespace, name, container, image}: the controller's workload
  // controller-upgrade rolls, from its settings BENCH_UPGRADE_* (namespace empty = BENCH_NAMESPACE;
  // image empty = the annotation alone).
  function upgradeOf(cfg) {
    const s = cfg.settings || {};
    return { kind: s.BENCH_UPGRADE_KIND || 'Deployment', namespace: s.BENCH_UPGRADE_NAMESPACE || cfg.namespace,
      name: s.BENCH_UPGRADE_NAME || '', container: s.BENCH_UPGRADE_CONTAINER || '', image: s.BENCH_UPGRADE_IMAGE || '' };
  }

  // upgradeTarget(cfg): cfg naming the controller's workload (kind included) for the calls that read,
  // change and put back a Deployment (dataplaneTarget says why).
  function upgradeTarget(cfg) {
    const u = upgradeOf(cfg);
    return Object.assign({}, cfg, { namespace: u.namespace, deployment: u.name, kind: WORKLOAD_KINDS[u.kind] });
  }

  // workloadPods(k8s, cfg, w): the pods of workload W (its spec.selector.matchLabels) in its namespace,
  // terminating ones included. Refused without matchLabels: an empty selector would take every pod.
  function workloadPods(k8s, cfg, w) {
    const labels = (w.spec.selector && w.spec.selector.matchLabels) || {};
    if (Object.keys(labels).length === 0) {
      throw new Error(`${w.metadata.namespace}/${w.metadata.name} has no spec.selector.matchLabels to find its pods by`);
    }
    return k8s.list('Pod', w.metadata.namespace).filter((pod) => matchesLabels(pod, labels));
  }

  // describeApiError turns an API failure into a message that says what the runner needs.
  function describeApiError(cfg, what, err) {
    const c = (cfg.settings || {}).BENCH_CONTROLLER_SELECTOR ? controllerOf(cfg) : null;
    const d = (cfg.settings || {}).BENCH_DATAPLANE_DEPLOYMENT ? dataplaneOf(cfg) : null;
    const p = parametersOf(cfg);
    const u = (cfg.settings || {}).BENCH_UPGRADE_NAME ? upgradeOf(cfg) : null;
    return `${what} failed using ${cfg.apiSource}: ${err}. The runner needs get and update on Deployment `
      + `${cfg.namespace}/${cfg.deployment} (BENCH_NAMESPACE/BENCH_DEPLOYMENT, which must exist), list on `
      + 'pods there, and delete on pods for podkill'
      + (c ? `; for controller-restart list and delete on pods in namespace ${c.namespace} (BENCH_CONTROLLER_NAMESPACE)` : '')
      + (d && !p ? `; for dataplane-scale get and update on Deployment ${d.namespace}/${d.name} (BENCH_DATAPLANE_NAMESPACE/`
        + 'BENCH_DATAPLANE_DEPLOYMENT, which must exist)' : '')
      + (d && p ? `; for dataplane-scale get on Deployment ${d.namespace}/${d.name} (BENCH_DATAPLANE_NAMESPACE/`
        + `BENCH_DATAPLANE_DEPLOYMENT) and get and update on ${p.kind} ${p.namespace}/${p.name} `
        + '(BENCH_DATAPLANE_PARAMETERS_KIND/_NAMESPACE/_NAME), which must exist' : '')
      + (u ? `; for controller-upgrade get and update on ${u.kind} ${u.namespace}/${u.name} (BENCH_UPGRADE_KIND/`
        + `BENCH_UPGRADE_NAMESPACE/BENCH_UPGRADE_NAME, which must exist) and list on pods in namespace ${u.namespace}` : '')
      + ' (scenarios/contract.json, runnerRole)';
  }

  return {
    connect,
    updateDeployment,
    getDeployment,
    readRestoreRecord,
    changeDeployment,
    restoreDeployment,
    scaleDeployment,
    restartDeployment,
    matchesLabels,
    isPodReady,
    listBackendPods,
    deletePod,
    controllerOf,
    listControllerPods,
    deleteControllerPod,
    dataplaneOf,
    dataplaneTarget,
    parametersOf,
    scaledTarget,
    replicasOf,
    kindName,
    upgradeOf,
    upgradeTarget,
    rollWorkload,
    containerOf,
    workloadPods,
    describeApiError,
  };
}

module.exports = {
  RESTORE_ANNOTATION,
  connect,
  kubeCalls,
};
