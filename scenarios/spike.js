// spike: constant load while the backend goes 5 -> 10 -> 5, once; 4 KB responses.
import { experiment } from './lib/churn-experiment.js';

export const { options, setup, load, churn, teardown, handleSummary } = experiment({
  name: 'spike',
  defaults: { BENCH_PATH: '/bytes/4k', BENCH_DURATION: '60s' },
  settings: {
    BENCH_SPIKE_REPLICAS: { type: 'count', default: 10, max: 1000 }, // replicas at the peak
    BENCH_SPIKE_HOLD: { type: 'duration', default: '20s' }, // how long each level holds
  },
  churn: (k8s, t) => {
    t.scale(5);
    t.hold(t.settings.BENCH_SPIKE_HOLD);
    t.scale(t.settings.BENCH_SPIKE_REPLICAS);
    t.hold(t.settings.BENCH_SPIKE_HOLD);
    t.scale(5); // then bench measures until the load ends and puts the backend back
  },
});
