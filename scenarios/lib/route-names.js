// The names of the routes bench creates (routes.js, and long-lived's reload route:
// stream-disruptions.js), in a module of their own so the churn VU's code can name routes without
// loading the route experiments' probes and metrics.
'use strict';

// Every route a run creates carries ROUTE_LABEL=<run id>: teardown deletes exactly this run's
// routes, the next run's setup those an earlier run left (a killed runner).
const ROUTE_LABEL = 'bench/route-run';

const KINDS = {
  httproute: { api: 'HTTPRoute.gateway.networking.k8s.io', apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', letter: 'h' },
  ingress: { api: 'Ingress.networking.k8s.io', apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', letter: 'i' },
};

function routeName(kind, n) {
  return `bench-route-${KINDS[kind].letter}-${n}`;
}

// runLabel(cfg): the run id as a label value (labels must end with a letter or digit).
function runLabel(cfg) {
  return cfg.testid.replace(/[^A-Za-z0-9]+$/, '') || 'run';
}

module.exports = {
  KINDS,
  ROUTE_LABEL,
  routeName,
  runLabel,
};
