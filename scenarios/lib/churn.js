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
import bench from 'k6/x/bench';
import exec from 'k6/execution';
import { sleep } from 'k6';
import { convergence, replicasDesired, replicasReady, scaleEvents } from './churn-metrics.js';
import { newConvergenceTracker } from './convergence.js';
import { newChurnContext, isChurnOver } from './churn-context.js';
import { k6Duration } from './request.js';
import { kubeCalls } from './kube.js';

const POLL_INTERVAL_MS = 250; // API poll: resolution of the convergence start times
const PROBE_INTERVAL_MS = 100;
const PROBE_BATCH = 5; // requests per probe: about 50 req/s, tagged role=churn
const POLL_FAILURES_TOLERATED = 8; // consecutive failed polls (2 s) before the run aborts
const QUIET_MS = 1500; // after the last change: removed pods prove their silence
const RESTORE_MARGIN_MS = 10000; // the churn's own restore after the quiet time, API retries included
const EVENT_TAGS = { added: { event: 'added' }, removed: { event: 'removed' } };

// churnScenario: the single-VU, single-iteration scenario that runs the churn for the whole load
// duration (the iteration keeps one API client, as xk6-kubernetes v0.9.0 requires).
export function churnScenario(cfg, startMs) {
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
export function churnCalls() {
  const {
    connect, getDeployment, scaleDeployment, restartDeployment, restoreDeployment, readRestoreRecord, listBackendPods,
    deletePod, isPodReady, describeApiError,
  } = kubeCalls();

  // change(k8s, cfg, action, replicas, until): one change a churn function asked for (churn-context.js
  // t.scale, t.rollout, t.killPod) -> {changed, what}.
  function change(k8s, cfg, action, replicas, until) {
    if (action === 'scale') {
      return { changed: scaleDeployment(k8s, cfg, replicas, until), what: `replicas=${replicas}` };
    }
    if (action === 'rollout') return { changed: restartDeployment(k8s, cfg, Date.now(), until), what: 'rolling restart' };
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
  function restoreBackend(k8s, cfg, when) {
    const done = restoreDeployment(k8s, cfg);
    if (done) console.log(`churn: ${when}: restored Deployment ${cfg.namespace}/${cfg.deployment}: ${done}`);
    return done;
  }

  // restoreLeftBehind(k8s, cfg): setup's restore of what an earlier run left (its runner killed
  // mid-run, say). A record of this same run (same testid) whose churn is still within its time
  // belongs to another runner of this run that started first: left alone (it restores at its end).
  function restoreLeftBehind(k8s, cfg) {
    const record = readRestoreRecord(getDeployment(k8s, cfg));
    if (!record) return null;
    if (record.testid === cfg.testid && record.until && Date.now() < record.until) {
      console.log(`churn: setup: another runner of run ${cfg.testid} is churning Deployment ${cfg.namespace}/`
        + `${cfg.deployment} until ${new Date(record.until).toISOString()}; its record stays`);
      return null;
    }
    return restoreBackend(k8s, cfg, 'setup (left by an earlier run)');
  }

  // checkApi: setup() guard for churn scenarios; throws a message that names what is missing. It
  // first puts back a backend an earlier run left changed (restoreLeftBehind), so every run starts
  // from the recorded state.
  function checkApi(cfg) {
    let k8s;
    try {
      k8s = connect(cfg);
      restoreLeftBehind(k8s, cfg);
      const d = getDeployment(k8s, cfg);
      listBackendPods(k8s, cfg);
      return { initialReplicas: d.spec.replicas };
    } catch (err) {
      throw new Error(describeApiError(cfg, `reading Deployment ${cfg.namespace}/${cfg.deployment}`, err));
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
    try {
      const k8s = connect(cfg);
      const record = readRestoreRecord(getDeployment(k8s, cfg));
      if (!record) return;
      const stoppedEarly = !setupData || Date.now() < setupData.startedAt + cfg.warmupMs + cfg.durationMs;
      if (!stoppedEarly && record.until && Date.now() < record.until) {
        console.log(`churn: teardown: the churn recorded on Deployment ${cfg.namespace}/${cfg.deployment} runs until `
          + `${new Date(record.until).toISOString()}; its runner restores the backend`);
        return;
      }
      restoreBackend(k8s, cfg, 'teardown');
    } catch (err) {
      console.warn(`churn: teardown could not restore Deployment ${cfg.namespace}/${cfg.deployment} `
        + `(the next run's setup will): ${describeApiError(cfg, 'restoring', err)}`);
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

  // probe(tracker, probeTarget): one batch of PROBE_BATCH probes on new connections (k6/x/bench
  // probe), each response's pod (X-Bench-Pod) fed to the tracker.
  function probe(tracker, probeTarget) {
    for (const pod of bench.probe(probeTarget.prepared, PROBE_BATCH)) tracker.seen(pod, Date.now());
  }

  // runChurn(cfg, script, probeTarget): the churn VU's iteration: script(k8s, t), the entry script's
  // churn function (churn-context.js says what t offers), runs while bench polls the Deployment and
  // pods every POLL_INTERVAL_MS and probes the path every PROBE_INTERVAL_MS; when it returns, bench
  // keeps measuring until the load ends. probeTarget: a target (request.js, not kept alive) of a
  // cheap URL on the path under test (X-Bench-Pod comes with every response, even a 404).
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
    const start = Date.now();
    const end = start + cfg.durationMs;
    const until = end + QUIET_MS + RESTORE_MARGIN_MS;
    let nextPollAt = start;
    let pollFailures = 0;

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
          pollFailures = 0;
        } catch (err) {
          pollFailures += 1;
          console.warn(`churn: API poll failed (${pollFailures}/${POLL_FAILURES_TOLERATED}): ${err}`);
          if (pollFailures >= POLL_FAILURES_TOLERATED) abortRun(cfg, k8s, 'polling the Deployment and pods', err);
        }
      }
      probe(tracker, probeTarget);
      tracker.tick(Date.now());
      emitConvergence(tracker);
      const wait = PROBE_INTERVAL_MS - (Date.now() - now);
      if (wait > 0) sleep(wait / 1000);
    }
    function waitUntil(t) {
      do measure(); while (Date.now() < t);
    }
    const t = newChurnContext({
      cfg,
      endAt: end,
      now: Date.now,
      waitUntil,
      change(action, replicas) {
        const at = Date.now();
        let r;
        try {
          r = change(k8s, cfg, action, replicas, until);
        } catch (err) {
          abortRun(cfg, k8s, `${action} of Deployment ${cfg.namespace}/${cfg.deployment}`, err);
          throw err;
        }
        if (r.changed) scaleEvents.add(1, { action });
        console.log(`churn: ${action} ${r.what}${r.changed ? '' : ' (no change)'} at +${((at - start) / 1000).toFixed(1)}s`);
        return r.changed;
      },
    });
    measure(); // the state before the first change
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
      probe(tracker, probeTarget);
      sleep(PROBE_INTERVAL_MS / 1000);
    }
    tracker.finish(Date.now());
    emitConvergence(tracker);
    if (tracker.unconverged > 0) console.warn(`churn: ${tracker.unconverged} endpoint change(s) did not converge before the end`);
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
