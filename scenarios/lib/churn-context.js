// The `t` a churn function gets (experiment({churn: (k8s, t) => { ... }}), churn-experiment.js): the
// changes bench knows how to make, measure and undo, and a hold that keeps measuring. Pure (no k6
// imports): churn.js gives it the clock, the wait and the changes, and the unit tests give it fakes.
//
//   t.scale(replicas)   set the Deployment's spec.replicas (0-1000)      bench_scale_events{action=scale}
//   t.rollout()         a rolling restart (kubectl rollout restart)       {action=rollout}
//   t.killPod()         delete one Ready backend pod                      {action=podkill}
//   t.controllerPods()  the names of the controller's Ready pods (BENCH_CONTROLLER_SELECTOR in
//                       BENCH_CONTROLLER_NAMESPACE; controller-restart.js declares those settings)
//   t.killControllerPod(name)  delete that controller pod                {action=controller_podkill}
//   t.waitRecovered(duration)  hold until the last deleted controller pod is replaced and the path
//                       answers again (recovery.js), at most `duration`; returns whether it recovered
//   t.dataplaneReplicas()  the data plane's spec.replicas now (BENCH_DATAPLANE_DEPLOYMENT in
//                       BENCH_DATAPLANE_NAMESPACE; dataplane-scale.js declares those settings)
//   t.scaleDataplane(replicas)  set the data plane's spec.replicas (1-1000) {action=dataplane_scale}
//   t.waitDataplaneReady(duration)  hold until the data plane has exactly that many replicas, all
//                       Ready (dataplane.js), at most `duration`; returns whether it got there
//   t.rollController()  roll the controller's workload (BENCH_UPGRADE_* names it; controller-upgrade.js
//                       declares those settings): a new bench/restartedAt on its pod template, and
//                       BENCH_UPGRADE_IMAGE on container BENCH_UPGRADE_CONTAINER when set
//                                                                     {action=controller_rollout}; each
//                       old pod seen terminating and each new pod seen Ready is an event too
//                                                                     {action=controller_pod_terminating,
//                                                                      controller_pod_ready}
//   t.waitRolledOut(duration)  hold until that rollout is complete (rollout.js), at most `duration`;
//                       returns whether it completed
//   t.scaleStream(replicas)  long-lived: set the stream backend's spec.replicas (BENCH_STREAM_DEPLOYMENT;
//                       1-1000; long-lived.js declares that setting)              {action=stream_scale}
//   t.createReloadRoute() / t.deleteReloadRoute()  long-lived: one extra route on the test's host,
//                       created / deleted (stream-disruptions.js)     {action=reload_route_created,
//                                                                      reload_route_deleted}
//   t.mark(action, what)  record a change bench did not make but saw (backend-failover's flapping
//                       pod: backend_unhealthy, backend_healthy)                {action=<action>}
//   t.hold(duration)    wait '15s' (or a number of ms, as a setting of type duration holds),
//                       probing and polling all the while
//   t.settings          the script's own settings, validated (durations in ms); t.cfg: the whole run's
//   t.remainingMs()     time left until the load ends
//
// A change returns whether it changed anything. When the load ends the churn stops: the hold or
// change that reaches the end throws CHURN_OVER, which churn.js catches, so `for (;;)` loops end too.
'use strict';
const { parseDuration } = require('./duration.js');

// the events a churn script may record without making the change itself (t.mark)
const MARKS = ['backend_unhealthy', 'backend_healthy'];
const CHURN_OVER = new Error('bench: the load ended, so the churn stops (the backend is put back)');

function isChurnOver(err) {
  return err === CHURN_OVER;
}

// newChurnContext({cfg, endAt, now(), waitUntil(ms, stop), change(action, arg), controllerPods(),
// recovering(), dataplaneReplicas(), dataplaneReady(), rolledOut(), mark(action, what)}): endAt and waitUntil's argument are times in
// ms (now()'s clock), waitUntil stops early when stop() is true; change makes one change (arg:
// replicas, or a pod name) and returns whether it changed anything; recovering() says a deleted
// controller pod is still being measured; dataplaneReady() says the last data-plane step is Ready;
// rolledOut() says how the last rollout of the controller ended: null = still rolling, true =
// complete, false = given up (not complete within the timeout).
function msOf(what, duration) {
  const ms = typeof duration === 'number' ? duration : parseDuration(`${what}()`, duration);
  if (!(ms >= 0)) throw new Error(`${what}(${JSON.stringify(duration)}): expected a duration like '15s' or milliseconds`);
  return ms;
}

// waitFor(o, what, duration, done): measure until done() or `duration`; whether done() came true.
// Reaching the end of the load first ends the churn (CHURN_OVER).
function waitFor(o, what, duration, done) {
  const until = o.now() + msOf(what, duration);
  o.waitUntil(Math.min(until, o.endAt), done);
  if (done()) return true;
  if (until >= o.endAt) throw CHURN_OVER;
  return false;
}

function newChurnContext(o) {
  function stopAtEnd() {
    if (o.now() >= o.endAt) throw CHURN_OVER;
  }
  // t.<method>(replicas): the count checked (min to 1000; why: what a lower one would mean), then
  // the churn's action, unless the load is over
  function scaleBy(method, action, replicas, min, why = '') {
    if (!Number.isInteger(replicas) || replicas < min || replicas > 1000) {
      throw new Error(`t.${method}(${JSON.stringify(replicas)}): expected a whole number of replicas from ${min} to 1000${why}`);
    }
    stopAtEnd();
    return o.change(action, replicas);
  }
  return Object.freeze({
    cfg: o.cfg,
    settings: o.cfg.settings || {},
    scale(replicas) {
      return scaleBy('scale', 'scale', replicas, 0);
    },
    rollout() {
      stopAtEnd();
      return o.change('rollout');
    },
    killPod() {
      stopAtEnd();
      return o.change('podkill');
    },
    controllerPods() {
      return o.controllerPods();
    },
    killControllerPod(name) {
      if (typeof name !== 'string' || name === '') {
        throw new Error(`t.killControllerPod(${JSON.stringify(name)}): expected a pod name from t.controllerPods()`);
      }
      stopAtEnd();
      return o.change('controller_podkill', name);
    },
    dataplaneReplicas() {
      return o.dataplaneReplicas();
    },
    scaleDataplane(replicas) {
      return scaleBy('scaleDataplane', 'dataplane_scale', replicas, 1, ' (a data plane at zero replicas serves nothing)');
    },
    waitDataplaneReady(duration) {
      return waitFor(o, 't.waitDataplaneReady', duration, () => o.dataplaneReady());
    },
    scaleStream(replicas) {
      return scaleBy('scaleStream', 'stream_scale', replicas, 1);
    },
    createReloadRoute() {
      stopAtEnd();
      return o.change('reload_route_created');
    },
    // no stop at the end: the route a creation left must go, even when the load has just ended
    deleteReloadRoute() {
      return o.change('reload_route_deleted');
    },
    rollController() {
      stopAtEnd();
      return o.change('controller_rollout');
    },
    waitRolledOut(duration) {
      return waitFor(o, 't.waitRolledOut', duration, () => o.rolledOut() !== null) && o.rolledOut() === true;
    },
    mark(action, what) {
      if (!MARKS.includes(action)) {
        throw new Error(`t.mark(${JSON.stringify(action)}): expected one of ${MARKS.join(', ')}`);
      }
      o.mark(action, String(what || ''));
    },
    hold(duration) {
      const until = o.now() + msOf('t.hold', duration);
      o.waitUntil(Math.min(until, o.endAt));
      if (until >= o.endAt) throw CHURN_OVER;
    },
    waitRecovered(duration) {
      return waitFor(o, 't.waitRecovered', duration, () => !o.recovering());
    },
    remainingMs() {
      return Math.max(0, o.endAt - o.now());
    },
  });
}

module.exports = {
  isChurnOver,
  newChurnContext,
};
