// The churn VU's metrics (churn.js): in a module of their own, since every VU of a churn run loads
// the churn code (any VU may become the churn VU) and every metric object costs each VU about
// 1.5 KB of memory; the rest of bench's metrics (metrics.js) stay out of those VUs.
// Remote write adds the k6_ prefix, _total to counters and _seconds to time trends.
import { Counter, Gauge, Trend } from 'k6/metrics';

// Endpoint convergence in ms (convergence.js), tag event = added | removed.
export const convergence = new Trend('bench_endpoint_convergence', true);
// The backend Deployment's spec.replicas and status.readyReplicas, as the churn VU polls them.
export const replicasDesired = new Gauge('bench_replicas_desired');
export const replicasReady = new Gauge('bench_replicas_ready');
// One per change the churn VU makes, tag action = scale | rollout | podkill | controller_podkill.
export const scaleEvents = new Counter('bench_scale_events');
// controller-restart: per deleted controller pod, ms from the delete call until its replacement was
// Ready (measure = replaced) and until the path answered again (measure = recovered): recovery.js.
export const controllerRecovery = new Trend('bench_controller_recovery', true);
