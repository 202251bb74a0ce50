// Data-plane scale bookkeeping for dataplane-scale (pure: no k6 imports, unit-tested directly).
//
// The churn VU scales the controller's data-plane Deployment one step at a time (scaled()), itself or
// through the object its controller copies the replicas from (dataplane-scale.js), and feeds
// two streams:
//   deployment(d, t)   the Deployment as the API returned it, polled every few hundred ms
//   probed(ok, t)      one probe batch on the path under test: ok = every probe was answered by a
//                      backend pod (X-Bench-Pod), so the path worked
// and collects one record per step with take(): {step, from, to, ready_ms, probe_failures}:
//   step            its number, 1, 2, ... in the order made (at most MAX_STEPS: each is a metric tag)
//   ready_ms        ms from the scale call until the Deployment had caught up: it asks for `to`
//                   replicas, its controller saw that spec (status.observedGeneration) and exactly `to`
//                   replicas exist, all Ready (scaling down: the removed pods are gone from
//                   status.replicas); null = not Ready before the next step, the give-up time or the
//                   end of the run. Scaled through a parameters object (NGINX Gateway Fabric's
//                   NginxProxy), the Deployment gets its new replicas from that object's controller a
//                   little later: the generation to observe is the first one that asks for `to`
//   probe_failures  probes of the churn VU that were not answered by a backend pod from this step's
//                   scale call to the next step's (the load's own errors per step come from Prometheus:
//                   the report's errors by event)
//
'use strict';
const MAX_STEPS = 50;

// newDataplaneTracker(opts) declares the class when it is called: only the churn VU needs it
// (convergence.js says why).
function newDataplaneTracker(opts) {
  class DataplaneTracker {
    constructor(opts) {
      const o = opts || {};
      this.giveUpMs = o.giveUpMs || 120000;
      this.open = null; // the step being measured: one at a time
      this.done = [];
      this.steps = 0;
    }

    // scaled(from, to, t) -> the step's number: the Deployment's spec.replicas set from `from` to `to`
    // at t. A step still open is closed as it stands (not Ready when ready_ms is null).
    scaled(from, to, t) {
      this.close();
      this.steps += 1;
      this.open = { step: this.steps, from, to, t0: t, readyAt: null, failures: 0, generation: null };
      return this.steps;
    }

    // full(): no step can be added (MAX_STEPS made).
    full() {
      return this.steps >= MAX_STEPS;
    }

    // deployment(d, t): one poll of the Deployment (metadata.generation, spec.replicas, status).
    deployment(d, t) {
      const s = this.open;
      if (!s || s.readyAt !== null) return;
      if ((d.spec.replicas || 0) !== s.to) return; // not asked for yet (through a parameters object)
      const st = d.status || {};
      if (s.generation === null) s.generation = (d.metadata && d.metadata.generation) || 0;
      const observed = (st.observedGeneration || 0) >= s.generation;
      if (observed && (st.replicas || 0) === s.to && (st.readyReplicas || 0) === s.to) s.readyAt = t;
    }

    probed(ok, t) {
      if (this.open && !ok && t >= this.open.t0) this.open.failures += 1;
    }

    // ready(): the open step's Deployment is Ready (or no step is open).
    ready() {
      return this.open === null || this.open.readyAt !== null;
    }

    tick(t) {
      const s = this.open;
      if (s && s.readyAt === null && t - s.t0 >= this.giveUpMs) this.close();
    }

    close() {
      const s = this.open;
      if (!s) return;
      this.done.push({ step: s.step, from: s.from, to: s.to, ready_ms: s.readyAt === null ? null : s.readyAt - s.t0, probe_failures: s.failures });
      this.open = null;
    }

    finish() {
      this.close();
    }

    take() {
      const out = this.done;
      this.done = [];
      return out;
    }
  }

  return new DataplaneTracker(opts);
}

// dataplaneSteps(start, levels, mode): the replica counts the Deployment is scaled to, in order,
// from `start` through each of `levels`: gradual = one replica at a time, abrupt = straight to each
// level. A level equal to where it stands adds no step.
function dataplaneSteps(start, levels, mode) {
  if (mode !== 'gradual' && mode !== 'abrupt') {
    throw new Error(`dataplane mode ${JSON.stringify(mode)}: expected gradual or abrupt`);
  }
  const out = [];
  let at = start;
  for (const level of levels) {
    while (at !== level) {
      at = mode === 'abrupt' ? level : at + Math.sign(level - at);
      out.push(at);
    }
  }
  return out;
}

// scaledObject(cfg): what the steps change, for the summary: `Deployment <ns>/<name>`, or the
// parameters object and its field, `NginxProxy <ns>/<name> spec.kubernetes.deployment.replicas`
// (dataplane-scale.js's settings).
function scaledObject(cfg) {
  const s = cfg.settings;
  const ns = s.BENCH_DATAPLANE_NAMESPACE || cfg.namespace;
  if (!s.BENCH_DATAPLANE_PARAMETERS_KIND) return `Deployment ${ns}/${s.BENCH_DATAPLANE_DEPLOYMENT}`;
  return `${s.BENCH_DATAPLANE_PARAMETERS_KIND.split('.')[0]} ${s.BENCH_DATAPLANE_PARAMETERS_NAMESPACE || ns}/`
    + `${s.BENCH_DATAPLANE_PARAMETERS_NAME} ${s.BENCH_DATAPLANE_PARAMETERS_REPLICAS}`;
}

module.exports = {
  MAX_STEPS,
  newDataplaneTracker,
  dataplaneSteps,
  scaledObject,
};
