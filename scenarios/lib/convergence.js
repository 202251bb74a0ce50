// Endpoint convergence bookkeeping (pure: no k6 imports, so it is unit-tested directly).
//
// The churn VU feeds it two streams:
//   podsReady(names, t)   the backend pods the API reports Ready (polled every few hundred ms)
//   seen(name, t)         the pod that served a probe request (the X-Bench-Pod response header)
// and collects finished measurements with take():
//   added    a pod turned Ready at t0 -> first response it served at t1: t1 - t0 (0 if it served
//            before the poll noticed it was Ready)
//   removed  a Ready pod left the Ready set (deleted, terminating or failing readiness) at t0 -> the
//            last response it served at t1 >= t0: t1 - t0 (0 if it served none), final once the
//            pod has been silent for quietMs; a pod removed before it ever answered is an
//            unconverged add, not a removal
// Pods are tracked by name in JS maps: no pod name ever becomes a metric tag.
//
// newConvergenceTracker(opts) declares the class when it is called: every VU of a churn run loads
// this module, and only the churn VU needs the class (a class and its methods cost each VU that
// creates them about 0.75 KB a function: scenarios/calibrate/README.md, "Memory per VU").
'use strict';
function newConvergenceTracker(opts) {
  class ConvergenceTracker {
    constructor(opts) {
      const o = opts || {};
      this.quietMs = o.quietMs || 1000; // silence that proves a removed pod gets no more traffic
      this.giveUpMs = o.giveUpMs || 60000; // an added pod never seen after this is reported unconverged
      this.ready = null; // Set of pod names Ready at the last poll; null before the first poll
      this.lastPollT = 0;
      this.lastSeen = new Map(); // pod name -> last time it served a probe
      this.pendingAdded = new Map(); // pod name -> t0
      this.pendingRemoved = new Map(); // pod name -> t0
      this.done = [];
      this.unconverged = 0;
    }

    podsReady(names, t) {
      const now = new Set(names);
      const previousPollT = this.lastPollT;
      this.lastPollT = t;
      if (this.ready === null) { // baseline: pods Ready before the first poll are not events
        this.ready = now;
        return;
      }
      for (const name of now) {
        if (this.ready.has(name)) continue;
        if (this.pendingRemoved.has(name)) this.pendingRemoved.delete(name); // flapped back
        const seenAt = this.lastSeen.get(name);
        if (seenAt !== undefined && seenAt > previousPollT) {
          this.done.push({ event: 'added', ms: 0 }); // served between two polls: faster than we resolve
        } else {
          this.pendingAdded.set(name, t);
        }
      }
      for (const name of this.ready) {
        if (now.has(name)) continue;
        // Removed before it ever answered: its add never converged, and a removal measured from
        // no traffic would read 0 ms, as if the data plane had been quick.
        if (this.pendingAdded.delete(name)) {
          this.unconverged += 1;
          continue;
        }
        this.pendingRemoved.set(name, t);
      }
      this.ready = now;
    }

    seen(name, t) {
      if (!name) return;
      this.lastSeen.set(name, t);
      const t0 = this.pendingAdded.get(name);
      if (t0 !== undefined) {
        this.pendingAdded.delete(name);
        this.done.push({ event: 'added', ms: Math.max(0, t - t0) });
      }
    }

    // tick(t) finalises removed pods that stayed silent for quietMs and added pods past giveUpMs.
    tick(t) {
      for (const [name, t0] of this.pendingRemoved) {
        const last = this.lastSeen.get(name);
        const lastAfter = last !== undefined && last >= t0 ? last : t0;
        if (t - lastAfter >= this.quietMs) {
          this.pendingRemoved.delete(name);
          this.done.push({ event: 'removed', ms: lastAfter - t0 });
        }
      }
      for (const [name, t0] of this.pendingAdded) {
        if (t - t0 >= this.giveUpMs) {
          this.pendingAdded.delete(name);
          this.unconverged += 1;
        }
      }
    }

    // finish(t): end of the run. Removed pods silent for quietMs are final; the rest are unconverged.
    finish(t) {
      this.tick(t);
      this.unconverged += this.pendingAdded.size + this.pendingRemoved.size;
      this.pendingAdded.clear();
      this.pendingRemoved.clear();
    }

    take() {
      const out = this.done;
      this.done = [];
      return out;
    }
  }

  return new ConvergenceTracker(opts);
}

module.exports = {
  newConvergenceTracker,
};
