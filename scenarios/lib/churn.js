// Churn: one dedicated 1-VU scenario changes the backend through the Kubernetes API while the load
// scenarios run, so load VUs never wait on the API. With TestRun parallelism > 1 k6 gives the
// single churn VU to exactly one runner (execution segments); the others run load only.
//
// The churn VU also measures and publishes:
//   bench_scale_events{action}         each change it makes (scale, rollout, podkill)
//   bench_replicas_desired / _ready    the Deployment's spec.replicas and status.readyReplicas
//   bench_endpoint_convergence{event}  how fast the path follows endpoint changes (convergence.js):
//                                      it probes the target every PROBE_INTERVAL_MS with a few
//                                      requests on fresh connections and reads X-Bench-Pod
//   bench_controller_recovery{measure} controller-restart: per deleted controller pod, until it was
//                                      replaced and until the probes answered again (recovery.js)
//   bench_dataplane_*{step}            dataplane-scale: per scale step of the data plane's Deployment,
//                                      its replicas, until Ready, the probes failed (dataplane.js)
//   bench_upgrade_*                    controller-upgrade: per pod the rollout moved, until it was seen
//                                      terminating or Ready; until the rollout was complete (rollout.js)
//   bench_failover_flap{measure}       backend-failover: what the churn script (failover-poll.js)
//                                      saw of the flapping pod; its transitions go to
//                                      bench_scale_events through t.mark
'use strict';
const bench = require('k6/x/bench');
const exec = require('k6/execution');
const { sleep } = require('k6');
const {
  controllerRecovery, convergence, dataplaneProbeFailures, dataplaneReady, dataplaneReplicas, dataplaneStep,
  replicasDesired, replicasReady, scaleEvents, upgradePod, upgradeRollout,
} = require('./churn-metrics.js');
const { newConvergenceTracker } = require('./convergence.js');
const { newRecoveryTracker } = require('./recovery.js');
const { MAX_STEPS, newDataplaneTracker } = require('./dataplane.js');
const { newRolloutTracker } = require('./rollout.js');
const { newChurnContext, isChurnOver } = require('./churn-context.js');
const { k6Duration } = require('./request.js');
const { kubeCalls } = require('./kube.js');
const { createReloadRoute, deleteReloadRoute, disrupts, streamRun, streamTarget } = require('./stream-disruptions.js');

const POLL_INTERVAL_MS = 250; // API poll: resolution of the convergence start times
const PROBE_INTERVAL_MS = 100;
const PROBE_BATCH = 5; // requests per probe: about 50 req/s, tagged role=churn
const POLL_FAILURES_TOLERATED = 8; // consecutive failed polls (2 s) before the run aborts
const QUIET_MS = 1500; // after the last change: removed pods prove their silence
const RESTORE_MARGIN_MS = 10000; // the churn's own restore after the quiet time, API retries included
const RECOVERY_GIVE_UP_MS = 120000; // a deleted controller pod not recovered by then is unrecovered
const PARAMETERS_FOLLOW_MS = 10000; // setup: a parameters object's replicas reach the Deployment by then
const EVENT_TAGS = { added: { event: 'added' }, removed: { event: 'removed' } };
const MEASURE_TAGS = { replaced: { measure: 'replaced' }, recovered: { measure: 'recovered' } };
const UNKNOWN_DATAPLANE = 'the data plane is unknown: declare the settings BENCH_DATAPLANE_DEPLOYMENT and '
  + 'BENCH_DATAPLANE_NAMESPACE as scenarios/dataplane-scale.js does';
const UNKNOWN_UPGRADE = 'the controller\'s workload is unknown: declare the settings BENCH_UPGRADE_NAME and the other '
  + 'BENCH_UPGRADE_* as scenarios/controller-upgrade.js does';
const POD_EVENTS = { terminating: 'controller_pod_terminating', ready: 'controller_pod_ready' };
const STATE_TAGS = { desired: { state: 'desired' }, ready: { state: 'ready' }, start: { state: 'start' } };

// churnScenario: the single-VU, single-iteration scenario that runs the churn for the whole load
// duration (the iteration keeps one API client, as xk6-kubernetes v0.9.0 requires).
function churnScenario(cfg, startMs) {
  return {
    executor: 'per-vu-iterations',
    exec: 'churn',
    vus: 1,
    iterations: 1,
    startTime: k6Duration(startMs || 0),
    maxDuration: k6Duration(cfg.durationMs + 60000),
    gracefulStop: '30s',
    tags: { role: 'churn' },
  };
}

// churnCalls(): the churn's changes, restores and iteration, made when it is called. Every VU of a
// churn run loads this module, since k6 hands the churn scenario to a VU after init, but only the
// churn VU and VU 0 call churnCalls(), so the load VUs never create these functions (each kept
// function costs a VU about 0.75 KB: scenarios/calibrate/README.md, "Memory per VU").
function churnCalls() {
  const {
    connect, getDeployment, scaleDeployment, restartDeployment, restoreDeployment, readRestoreRecord, listBackendPods,
    deletePod, isPodReady, describeApiError, controllerOf, listControllerPods, deleteControllerPod, dataplaneOf,
    dataplaneTarget, parametersOf, scaledTarget, replicasOf, kindName, upgradeOf, upgradeTarget, rollWorkload, containerOf,
    workloadPods,
  } = kubeCalls();

  // controllerRun(cfg): the run deletes controller pods (controller-restart declares the settings).
  // (long-lived declares them too, and deletes controller pods only when its disruptions say so)
  function controllerRun(cfg) {
    return Boolean((cfg.settings || {}).BENCH_CONTROLLER_SELECTOR) && disrupts(cfg, 'controller');
  }

  // dataplaneRun(cfg): the run scales the controller's data plane (dataplane-scale declares the settings).
  function dataplaneRun(cfg) {
    return Boolean((cfg.settings || {}).BENCH_DATAPLANE_DEPLOYMENT);
  }

  // upgradeRun(cfg): the run rolls the controller's workload (controller-upgrade declares the settings).
  function upgradeRun(cfg) {
    return Boolean((cfg.settings || {}).BENCH_UPGRADE_NAME);
  }

  // readyControllerPods(k8s, cfg): the names of the controller's Ready pods, sorted. Refused without
  // a selector: an empty one would select every pod of the namespace.
  function readyControllerPods(k8s, cfg) {
    if (!controllerRun(cfg)) {
      throw new Error('the controller\'s pods are unknown: declare the settings BENCH_CONTROLLER_SELECTOR and '
        + 'BENCH_CONTROLLER_NAMESPACE as scenarios/controller-restart.js does');
    }
    return listControllerPods(k8s, cfg).filter(isPodReady).map((p) => p.metadata.name).sort();
  }

  // change(k8s, cfg, action, arg, until): one change a churn function asked for (churn-context.js
  // t.scale(arg replicas), t.rollout, t.killPod, t.killControllerPod(arg pod name)) -> {changed, what}.
  function change(k8s, cfg, action, arg, until) {
    if (action === 'scale') {
      return { changed: scaleDeployment(k8s, cfg, arg, until), what: `replicas=${arg}` };
    }
    if (action === 'dataplane_scale') {
      const d = dataplaneOf(cfg);
      const p = parametersOf(cfg);
      return { changed: scaleDeployment(k8s, scaledTarget(cfg), arg, until), what: `data plane ${d.namespace}/${d.name} replicas=${arg}`
        + (p ? ` through ${kindName(p)} ${p.namespace}/${p.name} ${p.replicas}` : '') };
    }
    if (action === 'controller_rollout') {
      const u = upgradeOf(cfg);
      return { changed: rollWorkload(k8s, upgradeTarget(cfg), u, Date.now(), until),
        what: `${u.kind} ${u.namespace}/${u.name}${u.image ? ` container ${u.container} image ${u.image}` : ''}` };
    }
    if (action === 'stream_scale') {
      return { changed: scaleDeployment(k8s, streamTarget(cfg), arg, until), what: `stream backend ${cfg.namespace}/${streamTarget(cfg).deployment} replicas=${arg}` };
    }
    if (action === 'reload_route_created') return { changed: createReloadRoute(k8s, cfg), what: 'extra route on the test\'s host' };
    if (action === 'reload_route_deleted') return { changed: deleteReloadRoute(k8s, cfg), what: 'extra route on the test\'s host' };
    if (action === 'rollout') return { changed: restartDeployment(k8s, cfg, Date.now(), until), what: 'rolling restart' };
    if (action === 'controller_podkill') {
      if (!readyControllerPods(k8s, cfg).includes(arg)) return { changed: false, what: `no Ready controller pod ${arg}` };
      deleteControllerPod(k8s, cfg, arg);
      return { changed: true, what: `deleted controller pod ${controllerOf(cfg).namespace}/${arg}` };
    }
    // podkill: prefer a Ready pod (the one that hurts); else any pod not already terminating.
    const pods = listBackendPods(k8s, cfg).filter((p) => !p.metadata.deletionTimestamp);
    const ready = pods.filter(isPodReady);
    const pool = ready.length > 0 ? ready : pods;
    if (pool.length === 0) return { changed: false, what: 'no pod to kill' };
    const victim = pool[Math.floor(Math.random() * pool.length)].metadata.name;
    deletePod(k8s, cfg, victim);
    return { changed: true, what: `deleted pod ${victim}` };
  }

  // restoreBackend(k8s, cfg, when): puts back what an earlier change recorded on the Deployment
  // (kube.js restoreDeployment) and logs it; `when` says which path restored (setup, teardown, ...).
  // In a dataplane-scale run the data plane's Deployment is put back the same way, after it.
  function restoreBackend(k8s, cfg, when) {
    let done = null;
    for (const target of changedBy(cfg)) done = restoreOne(k8s, target, when) || done;
    return done;
  }

  // changedBy(cfg): what the run may change, each as a cfg naming its object (kube.js): the backend,
  // the data plane's Deployment or its parameters object in a dataplane-scale run (scaledTarget), the
  // controller's workload in a controller-upgrade run.
  function changedBy(cfg) {
    return [cfg].concat(dataplaneRun(cfg) ? [scaledTarget(cfg)] : [], upgradeRun(cfg) ? [upgradeTarget(cfg)] : [],
      streamRun(cfg) ? [streamTarget(cfg)] : []);
  }

  // named(target): `Deployment ns/name` (or its kind) for messages.
  function named(target) {
    return `${kindName(target)} ${target.namespace}/${target.deployment}`;
  }

  function restoreOne(k8s, target, when) {
    const done = restoreDeployment(k8s, target);
    if (done) console.log(`churn: ${when}: restored ${named(target)}: ${done}`);
    return done;
  }

  // restoreLeftBehind(k8s, cfg): setup's restore of what an earlier run left (its runner killed
  // mid-run, say). A record of this same run (same testid) whose churn is still within its time
  // belongs to another runner of this run that started first: left alone (it restores at its end).
  function restoreLeftBehind(k8s, cfg) {
    let done = null;
    for (const target of changedBy(cfg)) {
      const record = readRestoreRecord(getDeployment(k8s, target));
      if (!record) continue;
      if (record.testid === cfg.testid && record.until && Date.now() < record.until) {
        console.log(`churn: setup: another runner of run ${cfg.testid} is churning ${named(target)} `
          + `until ${new Date(record.until).toISOString()}; its record stays`);
        continue;
      }
      done = restoreOne(k8s, target, 'setup (left by an earlier run)') || done;
    }
    return done;
  }

  // checkApi: setup() guard for churn scenarios; throws a message that names what is missing. It
  // first puts back a backend an earlier run left changed (restoreLeftBehind), so every run starts
  // from the recorded state.
  function checkApi(cfg) {
    let k8s;
    let d;
    try {
      k8s = connect(cfg);
      restoreLeftBehind(k8s, cfg);
      d = getDeployment(k8s, cfg);
      listBackendPods(k8s, cfg);
    } catch (err) {
      throw new Error(describeApiError(cfg, `reading Deployment ${cfg.namespace}/${cfg.deployment}`, err));
    }
    if (controllerRun(cfg)) checkController(k8s, cfg);
    if (dataplaneRun(cfg)) checkDataplane(k8s, cfg);
    if (streamRun(cfg)) checkStream(k8s, cfg);
    const out = { initialReplicas: d.spec.replicas };
    if (upgradeRun(cfg)) out.controllerUpgrade = checkUpgrade(k8s, cfg);
    return out;
  }

  // checkUpgrade: controller-upgrade's setup guard: the workload can be read (after restoreLeftBehind
  // put it back), has an available pod, its pods can be listed, and the container to upgrade exists.
  // Returns {image_from}: that container's image now (the summary's from), null with no image to set.
  function checkUpgrade(k8s, cfg) {
    const u = upgradeOf(cfg);
    const where = `${u.kind} ${u.namespace}/${u.name} (BENCH_UPGRADE_KIND/BENCH_UPGRADE_NAMESPACE/BENCH_UPGRADE_NAME)`;
    let w;
    try {
      w = getDeployment(k8s, upgradeTarget(cfg));
      workloadPods(k8s, cfg, w);
    } catch (err) {
      throw new Error(describeApiError(cfg, `reading the controller's ${where} and its pods`, err));
    }
    const st = w.status || {};
    if (!((u.kind === 'DaemonSet' ? st.numberAvailable : st.availableReplicas) > 0)) {
      throw new Error(`controller-upgrade: the controller's ${where} has no available pod; set the controller's workload `
        + 'in loadtest.controllerUpgrade (the presets do)');
    }
    if (!u.image) return { image_from: null };
    const c = containerOf(w, u.container);
    if (!c) {
      throw new Error(`controller-upgrade: the controller's ${where} has no container ${JSON.stringify(u.container)} `
        + `(BENCH_UPGRADE_CONTAINER, needed with BENCH_UPGRADE_IMAGE); it has ${w.spec.template.spec.containers.map((x) => x.name).join(', ')}`);
    }
    return { image_from: c.image };
  }

  // checkDataplane: dataplane-scale's setup guard: the data plane's Deployment can be read (after
  // restoreLeftBehind put it back) and has a Ready replica to start from; a parameters object, when
  // the steps go through one, too (checkParameters).
  function checkDataplane(k8s, cfg) {
    const dp = `Deployment ${dataplaneOf(cfg).namespace}/${dataplaneOf(cfg).name} (BENCH_DATAPLANE_NAMESPACE/BENCH_DATAPLANE_DEPLOYMENT)`;
    let d;
    try {
      d = getDeployment(k8s, dataplaneTarget(cfg));
    } catch (err) {
      throw new Error(describeApiError(cfg, `reading the data plane's ${dp}`, err));
    }
    if (!((d.status && d.status.readyReplicas) > 0)) {
      throw new Error(`dataplane-scale: the data plane's ${dp} has no Ready replica; set the data plane's Deployment `
        + 'in loadtest.dataplaneScale (the presets do)');
    }
    if (parametersOf(cfg)) checkParameters(k8s, cfg, d, dp);
  }

  // checkParameters: the parameters object can be read and holds the replicas the Deployment has, or
  // none: else it is not what sets them (another object overrides it, an autoscaler moves them) and
  // a step would wait for a Deployment that never follows. Its controller gets PARAMETERS_FOLLOW_MS
  // to catch up first (setup may just have put the object back: restoreLeftBehind).
  function checkParameters(k8s, cfg, d, dp) {
    const p = parametersOf(cfg);
    if (!p.name) {
      throw new Error('dataplane-scale: BENCH_DATAPLANE_PARAMETERS_NAME is empty: name the '
        + `${kindName(p)} whose ${p.replicas} the steps set (BENCH_DATAPLANE_PARAMETERS_KIND ${p.kind})`);
    }
    const target = scaledTarget(cfg);
    const giveUp = Date.now() + PARAMETERS_FOLLOW_MS;
    for (let deployment = d; ; deployment = getDeployment(k8s, dataplaneTarget(cfg))) {
      let obj;
      try {
        obj = getDeployment(k8s, target);
      } catch (err) {
        throw new Error(describeApiError(cfg, `reading the data plane's ${named(target)} (BENCH_DATAPLANE_PARAMETERS_*)`, err));
      }
      const replicas = replicasOf(obj, target);
      if (replicas === null || replicas === deployment.spec.replicas) return;
      if (Date.now() >= giveUp) {
        throw new Error(`dataplane-scale: ${named(target)} has ${p.replicas} ${replicas} but the data plane's ${dp} has `
          + `spec.replicas ${deployment.spec.replicas} ${PARAMETERS_FOLLOW_MS / 1000} s later: that object does not set the `
          + 'Deployment\'s replicas (another one overrides it, or an autoscaler moves them), so a step would never be Ready');
      }
      sleep(0.5);
    }
  }

  // checkStream: long-lived's setup guard with the backend disruption: the stream backend's
  // Deployment can be read (after restoreLeftBehind put it back).
  function checkStream(k8s, cfg) {
    try {
      getDeployment(k8s, streamTarget(cfg));
    } catch (err) {
      throw new Error(describeApiError(cfg, `reading the stream backend's Deployment ${cfg.namespace}/`
        + `${streamTarget(cfg).deployment} (BENCH_STREAM_DEPLOYMENT)`, err));
    }
  }

  // checkController: controller-restart's setup guard: the controller's pods can be listed and one
  // at least is Ready (else there is nothing to delete, or the selector names no pod).
  function checkController(k8s, cfg) {
    const c = controllerOf(cfg);
    const where = `pods matching BENCH_CONTROLLER_SELECTOR=${Object.keys(c.selector).map((k) => `${k}=${c.selector[k]}`).join(',')} `
      + `in namespace ${c.namespace} (BENCH_CONTROLLER_NAMESPACE)`;
    let ready;
    try {
      ready = readyControllerPods(k8s, cfg);
    } catch (err) {
      throw new Error(describeApiError(cfg, `listing the controller's ${where}`, err));
    }
    if (ready.length === 0) {
      throw new Error(`controller-restart: no Ready controller pod: none of the ${where} is Ready; set the controller's `
        + 'pods in loadtest.controllerRestart (the presets do)');
    }
  }

  // restoreInTeardown: the scenario's teardown, which k6 runs however the run ends short of the
  // runner being killed (normal end, threshold abort, test.abort on an API failure, stop). Each
  // runner of a TestRun runs its own teardown (k6-operator v1.5.0 calls setup/teardown centrally
  // only for cloud runs): a runner that ran its full duration leaves a record whose churn is still
  // within its time (record.until) to the runner that churns, which restores at its own end. A
  // failure is logged, not thrown: the record stays for the next run's setup.
  // setupData.startedAt: when this runner's setup ended (k6 gives teardown no run duration of its own);
  // the load ends a warm-up and a duration later.
  function restoreInTeardown(cfg, setupData) {
    for (const target of changedBy(cfg)) {
      try {
        const k8s = connect(cfg);
        const record = readRestoreRecord(getDeployment(k8s, target));
        if (!record) continue;
        const stoppedEarly = !setupData || Date.now() < setupData.startedAt + cfg.warmupMs + cfg.durationMs;
        if (!stoppedEarly && record.until && Date.now() < record.until) {
          console.log(`churn: teardown: the churn recorded on ${named(target)} runs until `
            + `${new Date(record.until).toISOString()}; its runner restores it`);
          continue;
        }
        restoreOne(k8s, target, 'teardown');
      } catch (err) {
        console.warn(`churn: teardown could not restore ${named(target)} `
          + `(the next run's setup will): ${describeApiError(cfg, 'restoring', err)}`);
      }
    }
  }

  // restoreIfInCluster: for scenarios without churn (static and the like). Where the API is
  // reachable (a runner pod, or BENCH_KUBECONFIG), put back a backend an earlier churn run left
  // changed; elsewhere (plain k6 against a URL) there is nothing to check. Never fails the run.
  function restoreIfInCluster(cfg) {
    if (!cfg.kubeconfig && !__ENV.KUBERNETES_SERVICE_HOST) return;
    try {
      restoreLeftBehind(connect(cfg), cfg);
    } catch (err) {
      console.warn(`bench: could not check Deployment ${cfg.namespace}/${cfg.deployment} for a change an earlier `
        + `run left: ${describeApiError(cfg, 'restoring', err)}`);
    }
  }

  function abortRun(cfg, k8s, what, err) {
    const msg = describeApiError(cfg, what, err);
    console.error(msg);
    if (k8s) {
      try { restoreBackend(k8s, cfg, 'abort'); } catch (e) { console.warn(`churn: restore before abort failed: ${e}`); }
    }
    exec.test.abort(msg);
  }

  function emitConvergence(tracker) {
    for (const m of tracker.take()) convergence.add(m.ms, EVENT_TAGS[m.event]);
  }

  // probe(tracker, probeTarget, recovery, dataplane): one batch of PROBE_BATCH probes on new
  // connections (k6/x/bench probe), each response's pod (X-Bench-Pod) fed to the tracker; the
  // recovery tracker (controller-restart) and the data-plane tracker (dataplane-scale) learn whether
  // every probe was answered by a backend pod.
  function probe(tracker, probeTarget, recovery, dataplane) {
    const pods = bench.probe(probeTarget.prepared, PROBE_BATCH);
    const t = Date.now();
    let ok = true;
    for (const pod of pods) {
      tracker.seen(pod, t);
      if (!pod) ok = false;
    }
    if (recovery) recovery.probed(ok, t);
    if (dataplane) dataplane.probed(ok, t);
  }

  function emitRecovery(recovery) {
    for (const m of recovery.take()) {
      controllerRecovery.add(m.replaced_ms, MEASURE_TAGS.replaced);
      controllerRecovery.add(m.recovered_ms, MEASURE_TAGS.recovered);
      console.log(`churn: controller pod replaced after ${m.replaced_ms} ms, the path answering again after ${m.recovered_ms} ms`);
    }
  }

  function emitDataplane(dataplane) {
    for (const m of dataplane.take()) {
      const tags = { step: String(m.step) };
      if (m.ready_ms !== null) dataplaneReady.add(m.ready_ms, tags);
      dataplaneProbeFailures.add(m.probe_failures, tags);
      console.log(`churn: data plane step ${m.step} (${m.from} -> ${m.to} replicas): `
        + `${m.ready_ms === null ? 'not Ready' : `Ready after ${m.ready_ms} ms`}, ${m.probe_failures} probe(s) failed`);
    }
  }

  // pollDataplane(k8s, cfg, dataplane): one poll of the data plane's Deployment -> its spec.replicas.
  function pollDataplane(k8s, cfg, dataplane) {
    const d = getDeployment(k8s, dataplaneTarget(cfg));
    dataplaneReplicas.add(d.spec.replicas || 0, STATE_TAGS.desired);
    dataplaneReplicas.add((d.status && d.status.readyReplicas) || 0, STATE_TAGS.ready);
    dataplane.deployment(d, Date.now());
    return d.spec.replicas || 0;
  }

  // pollRollout(k8s, cfg, rollout): one poll of the controller's workload and its pods.
  function pollRollout(k8s, cfg, rollout) {
    const w = getDeployment(k8s, upgradeTarget(cfg));
    const pods = workloadPods(k8s, cfg, w).map((p) => ({ name: p.metadata.name,
      terminating: Boolean(p.metadata.deletionTimestamp), ready: isPodReady(p) }));
    const t = Date.now();
    rollout.pods(pods, t);
    rollout.workload(w, t);
  }

  // currentPods(k8s, cfg): the names of the controller workload's pods not terminating.
  function currentPods(k8s, cfg) {
    const w = getDeployment(k8s, upgradeTarget(cfg));
    return workloadPods(k8s, cfg, w).filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name);
  }

  // emitRollout(rollout): each pod event as an event of its own (bench_scale_events: the report
  // attributes errors to it) and a time from the rollout's update call; the rollout's duration.
  function emitRollout(rollout) {
    for (const m of rollout.take()) {
      if (m.event === 'complete') {
        upgradeRollout.add(m.ms);
        console.log(`churn: controller rollout complete after ${m.ms} ms`);
        continue;
      }
      scaleEvents.add(1, { action: POD_EVENTS[m.event] });
      upgradePod.add(m.ms, { event: m.event, pod: String(m.n) });
      console.log(`churn: controller pod ${m.pod} ${m.event === 'ready' ? 'Ready' : 'terminating'} after ${m.ms} ms`);
    }
  }

  // tickAll({tracker, recovery, dataplane, rollout}): each tracker the run has closes what is due
  // and its measurements are published.
  function tickAll(o) {
    o.tracker.tick(Date.now());
    emitConvergence(o.tracker);
    if (o.recovery) {
      o.recovery.tick(Date.now());
      emitRecovery(o.recovery);
    }
    if (o.dataplane) {
      o.dataplane.tick(Date.now());
      emitDataplane(o.dataplane);
    }
    if (o.rollout) {
      o.rollout.tick(Date.now());
      emitRollout(o.rollout);
    }
  }

  // finishAll(trackers): the end of the run closes every tracker's books, and says what stayed open.
  function finishAll(o) {
    o.tracker.finish(Date.now());
    emitConvergence(o.tracker);
    if (o.tracker.unconverged > 0) console.warn(`churn: ${o.tracker.unconverged} endpoint change(s) did not converge before the end`);
    if (o.recovery) {
      o.recovery.finish(Date.now());
      emitRecovery(o.recovery);
      if (o.recovery.unrecovered > 0) console.warn(`churn: ${o.recovery.unrecovered} deleted controller pod(s) not recovered before the end`);
    }
    if (o.dataplane) {
      o.dataplane.finish();
      emitDataplane(o.dataplane);
    }
    if (o.rollout) {
      o.rollout.finish();
      emitRollout(o.rollout);
      if (o.rollout.incomplete > 0) console.warn(`churn: ${o.rollout.incomplete} controller rollout(s) not complete before the end`);
    }
  }

  // runChurn(cfg, script, probeTarget): the churn VU's iteration: script(k8s, t), the entry script's
  // churn function (churn-context.js says what t offers), runs while bench polls the Deployment and
  // pods every POLL_INTERVAL_MS and probes the path every PROBE_INTERVAL_MS; when it returns, bench
  // keeps measuring until the load ends. probeTarget: a target (request.js, not kept alive) of a
  // cheap URL on the path under test (X-Bench-Pod comes with every response, even a 404).
  // long: measure(), waitUntil() and t's callbacks are closures over the run's client, trackers and
  // clock; what needs none of them is in the functions above (tickAll, finishAll, the polls).
  function runChurn(cfg, script, probeTarget) {
    let k8s;
    try {
      k8s = connect(cfg);
      getDeployment(k8s, cfg);
    } catch (err) {
      abortRun(cfg, null, 'connecting to the API', err);
      return;
    }
    const tracker = newConvergenceTracker({ quietMs: 1500 });
    const recovery = controllerRun(cfg) ? newRecoveryTracker({ quietMs: QUIET_MS, giveUpMs: RECOVERY_GIVE_UP_MS }) : null;
    const dataplane = dataplaneRun(cfg) ? newDataplaneTracker({ giveUpMs: RECOVERY_GIVE_UP_MS }) : null;
    let dataplaneAt = null; // the data plane's spec.replicas, as last polled or set
    const rollout = upgradeRun(cfg) ? newRolloutTracker({ kind: upgradeOf(cfg).kind,
      giveUpMs: cfg.settings.BENCH_UPGRADE_READY_TIMEOUT || RECOVERY_GIVE_UP_MS }) : null;
    const start = Date.now();
    const end = start + cfg.durationMs;
    const until = end + QUIET_MS + RESTORE_MARGIN_MS;
    let nextPollAt = start;
    let pollFailures = 0;
    const trackers = { tracker, recovery, dataplane, rollout };

    // measure(): one round of the API poll (when due) and a probe batch, then a sleep to the next.
    function measure() {
      const now = Date.now();
      if (now >= nextPollAt) {
        nextPollAt = now + POLL_INTERVAL_MS;
        try {
          const d = getDeployment(k8s, cfg);
          replicasDesired.add(d.spec.replicas || 0);
          replicasReady.add((d.status && d.status.readyReplicas) || 0);
          const ready = listBackendPods(k8s, cfg).filter(isPodReady).map((p) => p.metadata.name);
          tracker.podsReady(ready, Date.now());
          if (recovery) {
            const pods = listControllerPods(k8s, cfg);
            recovery.controllerPods(pods.filter(isPodReady).map((p) => p.metadata.name), pods.map((p) => p.metadata.name), Date.now());
          }
          if (dataplane) dataplaneAt = pollDataplane(k8s, cfg, dataplane);
          if (rollout) pollRollout(k8s, cfg, rollout);
          pollFailures = 0;
        } catch (err) {
          pollFailures += 1;
          console.warn(`churn: API poll failed (${pollFailures}/${POLL_FAILURES_TOLERATED}): ${err}`);
          if (pollFailures >= POLL_FAILURES_TOLERATED) abortRun(cfg, k8s, 'polling the Deployment and pods', err);
        }
      }
      probe(tracker, probeTarget, recovery, dataplane);
      tickAll(trackers);
      const wait = PROBE_INTERVAL_MS - (Date.now() - now);
      if (wait > 0) sleep(wait / 1000);
    }
    // waitUntil(t, done): measures until t, or until done() says so.
    function waitUntil(t, done) {
      do measure(); while (Date.now() < t && !(done && done()));
    }
    const t = newChurnContext({
      cfg,
      endAt: end,
      now: Date.now,
      waitUntil,
      controllerPods: () => readyControllerPods(k8s, cfg),
      recovering: () => Boolean(recovery && recovery.busy()),
      dataplaneReplicas: () => {
        if (!dataplane) throw new Error(UNKNOWN_DATAPLANE);
        // no poll has answered yet: ask now (a failure is the script's, and stops the run)
        if (dataplaneAt === null) dataplaneAt = pollDataplane(k8s, cfg, dataplane);
        return dataplaneAt;
      },
      dataplaneReady: () => Boolean(dataplane && dataplane.ready()),
      rolledOut: () => {
        if (!rollout) throw new Error(UNKNOWN_UPGRADE);
        return rollout.ended();
      },
      mark(action, what) {
        scaleEvents.add(1, { action });
        console.log(`churn: ${action} ${what} at +${((Date.now() - start) / 1000).toFixed(1)}s`);
      },
      change(action, arg) {
        const at = Date.now();
        let r;
        if (action === 'dataplane_scale' && !dataplane) throw new Error(UNKNOWN_DATAPLANE);
        if (action === 'controller_rollout' && !rollout) throw new Error(UNKNOWN_UPGRADE);
        if (action === 'dataplane_scale' && dataplane.full()) {
          throw new Error(`t.scaleDataplane(${arg}): at most ${MAX_STEPS} data-plane steps per run (each is a metric tag)`);
        }
        try {
          // the controller's Ready pods before the delete: what its replacement must bring back
          const readyBefore = action === 'controller_podkill' ? readyControllerPods(k8s, cfg).length : 0;
          // the workload's pods before the roll: the old pods whose termination the rollout shows
          const old = action === 'controller_rollout' ? currentPods(k8s, cfg) : null;
          r = change(k8s, cfg, action, arg, until);
          if (action === 'controller_rollout' && r.changed) rollout.started(old, at);
          if (action === 'controller_podkill' && r.changed) recovery.deleted(arg, readyBefore, at);
          if (action === 'dataplane_scale' && r.changed) {
            const step = dataplane.scaled(dataplaneAt, arg, at);
            dataplaneStep.add(arg, { step: String(step) });
            dataplaneAt = arg;
          }
        } catch (err) {
          const which = action === 'dataplane_scale' ? scaledTarget(cfg) : action === 'controller_rollout' ? upgradeTarget(cfg)
            : action === 'stream_scale' ? streamTarget(cfg) : cfg;
          abortRun(cfg, k8s, `${action} of ${named(which)}`, err);
          throw err;
        }
        if (r.changed) scaleEvents.add(1, { action });
        console.log(`churn: ${action} ${r.what}${r.changed ? '' : ' (no change)'} at +${((at - start) / 1000).toFixed(1)}s`);
        return r.changed;
      },
    });
    measure(); // the state before the first change
    if (dataplane) dataplaneReplicas.add(dataplaneAt, STATE_TAGS.start);
    try {
      script(k8s, t);
    } catch (err) {
      if (!isChurnOver(err)) {
        // the script's own mistake (an API failure of a t.* change has aborted already)
        const msg = `churn: the script's churn function failed: ${err}`;
        console.error(msg);
        try { restoreBackend(k8s, cfg, 'abort'); } catch (e) { console.warn(`churn: restore before abort failed: ${e}`); }
        exec.test.abort(msg);
        return;
      }
    }
    if (Date.now() < end) waitUntil(end);
    // Let removed pods prove their silence, then close the books.
    const quietUntil = Date.now() + QUIET_MS;
    while (Date.now() < quietUntil) {
      probe(tracker, probeTarget, recovery, dataplane);
      sleep(PROBE_INTERVAL_MS / 1000);
    }
    finishAll(trackers);
    // Leave the Deployment as we found it (teardown tries again if this fails).
    try {
      restoreBackend(k8s, cfg, 'end of churn');
    } catch (err) {
      console.warn(`churn: could not restore the backend at the end of the churn: ${err}`);
    }
  }

  return {
    checkApi,
    restoreInTeardown,
    restoreIfInCluster,
    runChurn,
  };
}

module.exports = {
  churnScenario,
  churnCalls,
};
