"""One contract between chart and scenarios: every value scenarios/lib/config.js refuses, helm
refuses too. Each case feeds the same value to `helm template` (through values) and to real k6
loading config.js (through BENCH_*); a valid value per variable is accepted by both, so the check
can fail either way."""
import json
import shutil

import pytest
import yaml

from conftest import output_of, run

# (name, values key, BENCH variable, value, valid)
PARITY_CASES = [
    ('duration 0s', 'loadtest.duration', 'BENCH_DURATION', '0s', False),
    ('duration 0.0m', 'loadtest.duration', 'BENCH_DURATION', '0.0m', False),
    ('duration 90s', 'loadtest.duration', 'BENCH_DURATION', '90s', True),
    ('duration bare 90', 'loadtest.duration', 'BENCH_DURATION', '90', False),
    ('timeout 250us', 'loadtest.timeout', 'BENCH_TIMEOUT', '250us', True),
    ('churn hold 1m30s', 'loadtest.churn.pattern', 'BENCH_CHURN_PATTERN', '3:1m30s', True),
    ('churn bare hold 12', 'loadtest.churn.pattern', 'BENCH_CHURN_PATTERN', '5:12', False),
    ('timeout 0ms', 'loadtest.timeout', 'BENCH_TIMEOUT', '0ms', False),
    ('timeout 1500ms', 'loadtest.timeout', 'BENCH_TIMEOUT', '1500ms', True),
    ('churn hold 0s', 'loadtest.churn.pattern', 'BENCH_CHURN_PATTERN', '5:0s', False),
    ('churn 1001 replicas', 'loadtest.churn.pattern', 'BENCH_CHURN_PATTERN', '1001:1s', False),
    ('churn second step 0ms', 'loadtest.churn.pattern', 'BENCH_CHURN_PATTERN', '5:12s,7:0ms', False),
    ('churn 1000:1s,0:2s', 'loadtest.churn.pattern', 'BENCH_CHURN_PATTERN', '1000:1s,0:2s', True),
    ('pod-kill period 0s', 'loadtest.churn.podkillInterval', 'BENCH_PODKILL_INTERVAL', '0s', False),
    ('roll period 0h', 'loadtest.churn.rollInterval', 'BENCH_ROLL_INTERVAL', '0h', False),
    ('roll period 45s', 'loadtest.churn.rollInterval', 'BENCH_ROLL_INTERVAL', '45s', True),
    ('run id starting with -', 'loadtest.runId', 'BENCH_TESTID', '-run', False),
    ('run id of 64 characters', 'loadtest.runId', 'BENCH_TESTID', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', False),
    ('run id with a space', 'loadtest.runId', 'BENCH_TESTID', 'run 1', False),
    ('run id run-2.b_c', 'loadtest.runId', 'BENCH_TESTID', 'run-2.b_c', True),
    ('rate 0', 'loadtest.rate', 'BENCH_RATE', 0, False),
    ('rate 1000001', 'loadtest.rate', 'BENCH_RATE', 1000001, False),
    ('rate 50', 'loadtest.rate', 'BENCH_RATE', 50, True),
    ('connections 0', 'loadtest.connections', 'BENCH_CONNECTIONS', 0, False),
    ('connections 100001', 'loadtest.connections', 'BENCH_CONNECTIONS', 100001, False),
    ('max connections below connections', 'loadtest.maxConnections', 'BENCH_MAX_CONNECTIONS', 50, False),
    ('max connections 100001', 'loadtest.maxConnections', 'BENCH_MAX_CONNECTIONS', 100001, False),
    ('max connections 300', 'loadtest.maxConnections', 'BENCH_MAX_CONNECTIONS', 300, True),
    ('path without /', 'loadtest.path', 'BENCH_PATH', 'bytes/1k', False),
    ('path with #', 'loadtest.path', 'BENCH_PATH', '/a#b', False),
    ('path /bytes/4k', 'loadtest.path', 'BENCH_PATH', '/bytes/4k', True),
    ('keep-alive maybe', 'loadtest.keepalive', 'BENCH_KEEPALIVE', 'maybe', False),
    ('environment key with a space', 'loadtest.environment', 'BENCH_ENVIRONMENT', {'Node Type': 'c6i'}, False),
    ('environment node_type', 'loadtest.environment', 'BENCH_ENVIRONMENT', {'node_type': 'c6i'}, True),
    ('gateway name with a capital', 'routes.gateway.name', 'BENCH_GATEWAY_NAME', 'Edge', False),
    ('gateway name ending with -', 'routes.gateway.name', 'BENCH_GATEWAY_NAME', 'edge-', False),
    ('gateway name edge.gw-1', 'routes.gateway.name', 'BENCH_GATEWAY_NAME', 'edge.gw-1', True),
    ('gateway namespace with a space', 'routes.gateway.namespace', 'BENCH_GATEWAY_NAMESPACE', 'edge ns', False),
    ('gateway namespace edge', 'routes.gateway.namespace', 'BENCH_GATEWAY_NAMESPACE', 'edge', True),
    ('gateway listener with a dot', 'routes.gateway.listener.name', 'BENCH_GATEWAY_LISTENER', 'web.tls', False),
    ('gateway listener of 64 characters', 'routes.gateway.listener.name', 'BENCH_GATEWAY_LISTENER', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', False),
    ('gateway listener web-tls', 'routes.gateway.listener.name', 'BENCH_GATEWAY_LISTENER', 'web-tls', True),
    ('gateway URL without a scheme', 'loadtest.gatewayUrl', 'BENCH_URL_GATEWAY', 'bench.bench.svc', False),
    ('gateway URL with a query', 'loadtest.gatewayUrl', 'BENCH_URL_GATEWAY', 'https://bench.bench.svc/?a=1', False),
    ('gateway URL https://bench.bench.svc:8443', 'loadtest.gatewayUrl', 'BENCH_URL_GATEWAY', 'https://bench.bench.svc:8443', True),
    ('route kind grpcroute', 'loadtest.routes.kind', 'BENCH_ROUTE_KIND', 'grpcroute', False),
    ('route kind both', 'loadtest.routes.kind', 'BENCH_ROUTE_KIND', 'both', True),
    ('route count 0', 'loadtest.routes.count', 'BENCH_ROUTE_COUNT', 0, False),
    ('route count 10001', 'loadtest.routes.count', 'BENCH_ROUTE_COUNT', 10001, False),
    ('route count 500', 'loadtest.routes.count', 'BENCH_ROUTE_COUNT', 500, True),
    ('route count "0" as text', 'loadtest.routes.count', 'BENCH_ROUTE_COUNT', '0', False),
    ('route count "750" as text', 'loadtest.routes.count', 'BENCH_ROUTE_COUNT', '750', True),
    ('route interval 0s', 'loadtest.routes.interval', 'BENCH_ROUTE_INTERVAL', '0s', False),
    ('route interval 500ms', 'loadtest.routes.interval', 'BENCH_ROUTE_INTERVAL', '500ms', True),
    ('route timeout 0ms', 'loadtest.routes.timeout', 'BENCH_ROUTE_TIMEOUT', '0ms', False),
    ('route timeout 1m30s', 'loadtest.routes.timeout', 'BENCH_ROUTE_TIMEOUT', '1m30s', True),
    ('route domain with capitals', 'loadtest.routes.domain', 'BENCH_ROUTE_DOMAIN', 'Routes.Example', False),
    ('route domain routes.example.com', 'loadtest.routes.domain', 'BENCH_ROUTE_DOMAIN', 'routes.example.com', True),
    ('route backend without a port', 'loadtest.routes.backends', 'BENCH_ROUTE_BACKENDS', 'svc', False),
    ('route backend port 70000', 'loadtest.routes.backends', 'BENCH_ROUTE_BACKENDS', 'svc:70000', False),
    ('route backend port 0', 'loadtest.routes.backends', 'BENCH_ROUTE_BACKENDS', 'a:80,svc:0', False),
    ('route backends a:80,b-headless:8080', 'loadtest.routes.backends', 'BENCH_ROUTE_BACKENDS', 'a:80,b-headless:8080', True),
    ('routes listener Web_1', 'routes.gateway.routesListener.name', 'BENCH_GATEWAY_LISTENER', 'Web_1', False),
    ('routes listener plain-http', 'routes.gateway.routesListener.name', 'BENCH_GATEWAY_LISTENER', 'plain-http', True),
]
CASES = [pytest.param(*case, id=case[0]) for case in PARITY_CASES]

# loadConfig gets each case's variable as its environment (the same object shape as __ENV); the
# verdict is printed as "<n> ok" or "<n> refused: <message>".
PROBE = """
import { loadConfig } from './lib/config.js';
JSON.parse(__ENV.PARITY_CASES).forEach(([n, name, value]) => {
  try {
    loadConfig({ [name]: value });
    console.log(`${n} ok`);
  } catch (e) {
    console.log(`${n} refused: ${e.message}`);
  }
});
export default function () {}
"""


def as_env_text(value):
    """The text the chart puts in the BENCH_* variable for this value."""
    return json.dumps(value) if isinstance(value, dict) else str(value)


@pytest.fixture(scope="session")
def scenario_verdicts(k6, chart, work):
    """{case name: "ok" or "refused: <message>"} from one k6 process loading scenarios/lib/config.js."""
    probe = work / "parity"
    shutil.copytree(chart / "scenarios" / "lib", probe / "lib")
    (probe / "probe.js").write_text(PROBE)
    cases = [[n, var, as_env_text(value)] for n, (_, _, var, value, _) in enumerate(PARITY_CASES)]
    result = run([k6, "inspect", "--log-format", "raw", "-e", f"PARITY_CASES={json.dumps(cases)}", "probe.js"],
                 cwd=probe)
    assert result.returncode == 0, f"k6 did not load the probe:\n{output_of(result)}"
    verdicts = {}
    for line in result.stderr.splitlines():
        n, _, verdict = line.partition(" ")
        if n.isdigit() and verdict.startswith(("ok", "refused: ")):
            verdicts.setdefault(PARITY_CASES[int(n)][0], verdict)
    return verdicts


def values_setting(key, value):
    for part in reversed(key.split(".")):
        value = {part: value}
    return value


@pytest.mark.parametrize("name, key, var, value, valid", CASES)
def test_helm_verdict(helm, work, name, key, var, value, valid):
    values = work / f"parity-v{helm.major}-{PARITY_CASES.index((name, key, var, value, valid))}.yaml"
    values.write_text(yaml.safe_dump(values_setting(key, value)))
    result = helm.template("-f", helm.runner_values, "-f", values)
    if valid:
        assert result.returncode == 0, f"helm refused {key}={value!r}:\n{result.stderr}"
    else:
        assert result.returncode != 0, f"helm accepted {key}={value!r}"


@pytest.mark.parametrize("name, key, var, value, valid", CASES)
def test_scenarios_verdict(scenario_verdicts, name, key, var, value, valid):
    verdict = scenario_verdicts.get(name)
    assert verdict, f"no verdict from k6 for {var}={as_env_text(value)!r}"
    if valid:
        assert verdict == "ok", f"config.js refused {var}={as_env_text(value)!r}: {verdict}"
    else:
        assert verdict != "ok", f"config.js accepted {var}={as_env_text(value)!r}"
