// Rollout bookkeeping for controller-upgrade (pure: no k6 imports, unit-tested directly).
//
// The churn VU changes the controller's pod template (started(), after the update) and feeds two
// streams, polled every few hundred ms:
//   workload(w, t)  the Deployment or DaemonSet as the API returned it
//   pods(list, t)   its pods now: [{name, terminating, ready}] (the workload's selector)
// and collects what happened with take(): one record per pod event, in the order seen,
//   {event: 'terminating', n, pod, ms}  an old pod (there when the rollout started) seen with a
//                                       deletionTimestamp, or already gone; n = 1, 2, ... in order
//   {event: 'ready', n, pod, ms}        a new pod (not there when it started) seen Ready
//   {event: 'complete', ms}             the rollout is over: the workload's controller saw the new
//                                       template (status.observedGeneration), every replica runs it
//                                       and is available, and every old pod is terminating or gone
// ms: from the update call. At most MAX_STEPS of each pod event (each number is a metric tag).
// A rollout not complete after giveUpMs, or at the end of the run, is not complete.
//
'use strict';
const { MAX_STEPS } = require('./dataplane.js');

// controller-upgrade's pod-template annotation: a new value rolls the workload, as kubectl's
// restartedAt does; a name of bench's own, so the admission policy can allow this one change
const ROLLED_AT = 'bench/restartedAt';

// rolledOut(w, kind): the workload's status (kind Deployment or DaemonSet) says every replica runs
// the current template and is available, as `kubectl rollout status` reads it (a Deployment's
// status.replicas leaves out the old pods once they are terminating).
function rolledOut(w, kind) {
  const st = w.status || {};
  const generation = (w.metadata && w.metadata.generation) || 0;
  if ((st.observedGeneration || 0) < generation) return false;
  if (kind === 'DaemonSet') {
    const want = st.desiredNumberScheduled || 0;
    return (st.updatedNumberScheduled || 0) === want && (st.numberAvailable || 0) === want;
  }
  const want = (w.spec && w.spec.replicas) || 0;
  return (st.updatedReplicas || 0) === want && (st.replicas || 0) === want && (st.availableReplicas || 0) === want;
}

// newRolloutTracker(opts) declares the class when it is called: only the churn VU needs it
// (convergence.js says why).
function newRolloutTracker(opts) {
  class RolloutTracker {
    constructor(opts) {
      const o = opts || {};
      this.giveUpMs = o.giveUpMs || 120000;
      this.kind = o.kind || 'Deployment';
      this.open = null; // the rollout being followed: one at a time
      this.out = [];
      this.terminated = 0;
      this.readied = 0;
      this.incomplete = 0;
      this.lastComplete = false;
    }

    // started(oldPods, t): the pod template was changed at t, when the workload's pods not yet
    // terminating were oldPods (names). A rollout still open is closed as not complete.
    started(oldPods, t) {
      this.close();
      this.open = { t0: t, old: new Set(oldPods), gone: new Set(), seen: new Set(oldPods), complete: false };
    }

    pods(list, t) {
      const r = this.open;
      if (!r) return;
      for (const name of r.old) {
        const p = list.find((x) => x.name === name);
        if (!r.gone.has(name) && (!p || p.terminating)) this.podEvent(r, 'terminating', name, t);
      }
      for (const p of list) {
        if (!r.seen.has(p.name) && p.ready && !p.terminating) {
          r.seen.add(p.name);
          this.podEvent(r, 'ready', p.name, t);
        }
      }
    }

    podEvent(r, event, pod, t) {
      if (event === 'terminating') r.gone.add(pod);
      const n = event === 'terminating' ? ++this.terminated : ++this.readied;
      if (n <= MAX_STEPS) this.out.push({ event, n, pod, ms: t - r.t0 });
    }

    workload(w, t) {
      const r = this.open;
      if (!r || r.complete) return;
      if (rolledOut(w, this.kind) && r.gone.size === r.old.size) {
        r.complete = true;
        this.lastComplete = true;
        this.out.push({ event: 'complete', ms: t - r.t0 });
        this.open = null;
      }
    }

    // ended(): how the last rollout ended: null = still open, true = complete, false = given up.
    ended() {
      return this.open !== null ? null : this.lastComplete;
    }

    tick(t) {
      if (this.open && t - this.open.t0 >= this.giveUpMs) this.close();
    }

    close() {
      if (this.open && !this.open.complete) {
        this.incomplete += 1;
        this.lastComplete = false;
      }
      this.open = null;
    }

    finish() {
      this.close();
    }

    take() {
      const out = this.out;
      this.out = [];
      return out;
    }
  }

  return new RolloutTracker(opts);
}

module.exports = {
  ROLLED_AT,
  rolledOut,
  newRolloutTracker,
};
