// Controller recovery bookkeeping for controller-restart (pure: no k6 imports, unit-tested directly).
//
// The churn VU deletes one controller pod at a time (deleted()) and feeds two streams:
//   controllerPods(ready, all, t)  the controller's pods the API lists (Ready ones, and all of them,
//                                  terminating included), polled every few hundred ms
//   probed(ok, t)                  one probe batch on the path under test: ok = every probe was
//                                  answered by a backend pod (X-Bench-Pod), so the path worked
// and collects one measurement per deletion with take(): {replaced_ms, recovered_ms}, times from the
// delete call:
//   replaced   the controller has as many Ready pods as before the delete again, the deleted one not
//              among them (its replacement is Ready)
//   recovered  the path answered again: the first all-answered probe batch after the last batch with
//              a failure (0 when no probe failed)
// A measurement is final once the pod is replaced, the deleted pod has left the API (its termination,
// which may break connections, is over) and the probes have answered for quietMs since recovering.
// A deletion still open after giveUpMs, or at the end of the run, is unrecovered.
//
// newRecoveryTracker(opts) declares the class when it is called: only the churn VU needs it
// (convergence.js says why).
'use strict';
function newRecoveryTracker(opts) {
  class RecoveryTracker {
    constructor(opts) {
      const o = opts || {};
      this.quietMs = o.quietMs || 1000;
      this.giveUpMs = o.giveUpMs || 60000;
      this.open = null; // the deletion being measured: one at a time
      this.done = [];
      this.unrecovered = 0;
    }

    // deleted(name, readyBefore, t): pod NAME deleted at t, when the controller had readyBefore
    // Ready pods. A deletion still open is given up (unrecovered).
    deleted(name, readyBefore, t) {
      if (this.open) this.unrecovered += 1;
      this.open = { name, need: readyBefore, t0: t, replacedAt: null, gone: false, lastFailAt: null, recoveredAt: null };
    }

    controllerPods(ready, all, t) {
      const d = this.open;
      if (!d) return;
      if (d.replacedAt === null && ready.filter((n) => n !== d.name).length >= d.need) d.replacedAt = t;
      if (!all.includes(d.name)) d.gone = true;
    }

    probed(ok, t) {
      const d = this.open;
      if (!d) return;
      if (!ok) {
        d.lastFailAt = t;
        d.recoveredAt = null;
      } else if (d.lastFailAt !== null && d.recoveredAt === null) {
        d.recoveredAt = t;
      }
    }

    // busy(): a deletion is still being measured (the churn waits for it before the next).
    busy() {
      return this.open !== null;
    }

    tick(t) {
      const d = this.open;
      if (!d) return;
      const clearSince = d.lastFailAt === null ? d.t0 : d.recoveredAt;
      if (d.replacedAt !== null && d.gone && clearSince !== null && t - clearSince >= this.quietMs) {
        this.done.push({ replaced_ms: d.replacedAt - d.t0, recovered_ms: d.lastFailAt === null ? 0 : d.recoveredAt - d.t0 });
        this.open = null;
      } else if (t - d.t0 >= this.giveUpMs) {
        this.unrecovered += 1;
        this.open = null;
      }
    }

    finish(t) {
      this.tick(t);
      if (this.open) this.unrecovered += 1;
      this.open = null;
    }

    take() {
      const out = this.done;
      this.done = [];
      return out;
    }
  }

  return new RecoveryTracker(opts);
}

module.exports = {
  newRecoveryTracker,
};
