// The churn VU's metrics (churn.js): in a module of their own, since every VU of a churn run loads
// the churn code (any VU may become the churn VU) and every metric object costs each VU about
// 1.5 KB of memory; the rest of bench's metrics (metrics.js) stay out of those VUs.
// Remote write adds the k6_ prefix, _total to counters and _seconds to time trends.
'use strict';
const { Counter, Gauge, Trend } = require('k6/metrics');

// Endpoint convergence in ms (convergence.js), tag event = added | removed.
const convergence = new Trend('bench_endpoint_convergence', true);
// The backend Deployment's spec.replicas and status.readyReplicas, as the churn VU polls them.
const replicasDesired = new Gauge('bench_replicas_desired');
const replicasReady = new Gauge('bench_replicas_ready');
// One per change the churn VU makes, tag action = scale | rollout | podkill | controller_podkill |
// dataplane_scale | controller_rollout, and per pod a controller rollout moved:
// controller_pod_terminating (an old pod seen terminating) | controller_pod_ready (a new pod Ready).
// backend-failover adds the flapping pod's own transitions it sees, backend_unhealthy and
// backend_healthy (failover.js). long-lived: stream_scale (the stream backend's Deployment),
// reload_route_created and reload_route_deleted (its extra route; stream-disruptions.js).
const scaleEvents = new Counter('bench_scale_events');
// controller-restart: per deleted controller pod, ms from the delete call until its replacement was
// Ready (measure = replaced) and until the path answered again (measure = recovered): recovery.js.
const controllerRecovery = new Trend('bench_controller_recovery', true);
// dataplane-scale (dataplane.js), tag step = the step's number (1, 2, ... in the order made; at most
// dataplane.js MAX_STEPS): the replicas the step set, ms from its scale call until the data plane was
// Ready at that level, and the churn VU's probes that failed from that step's scale call to the next.
const dataplaneStep = new Gauge('bench_dataplane_step');
const dataplaneReady = new Trend('bench_dataplane_ready', true);
const dataplaneProbeFailures = new Counter('bench_dataplane_probe_failures');
// The data plane's spec.replicas (state = desired) and status.readyReplicas (state = ready) as polled,
// and its spec.replicas when the churn started (state = start).
const dataplaneReplicas = new Gauge('bench_dataplane_replicas');
// controller-upgrade (rollout.js): ms from the rollout's update call until the n-th old pod was seen
// terminating (event = terminating, pod = n) and the n-th new pod Ready (event = ready, pod = n), n =
// 1, 2, ... in the order seen (at most dataplane.js MAX_STEPS); until the rollout was complete.
const upgradePod = new Trend('bench_upgrade_pod', true);
const upgradeRollout = new Trend('bench_upgrade_rollout', true);
// backend-failover (failover.js): per flap of the flapping pod, ms it failed (unhealthy: 503s, or in
// mode close connections closed unanswered), and ms from its first failure until the API showed it
// not Ready (not_ready; readiness mode).
const failoverFlap = new Trend('bench_failover_flap', true);
// backend-failover: the gate's error budget, tag mode = errors | readiness | close (for the merge from Prometheus).
const failoverBudget = new Gauge('bench_failover_budget');

module.exports = {
  convergence,
  replicasDesired,
  replicasReady,
  scaleEvents,
  controllerRecovery,
  dataplaneStep,
  dataplaneReady,
  dataplaneProbeFailures,
  dataplaneReplicas,
  upgradePod,
  upgradeRollout,
  failoverFlap,
  failoverBudget,
};
