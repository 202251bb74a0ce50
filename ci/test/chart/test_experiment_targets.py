"""What each experiment aims at with each preset in values/: the TestRun's target URLs (their Services and
ports), controller-upgrade's workload and container, controller-restart's selector and dataplane-scale's
Deployment, against how the controllers' charts name those objects at the versions charts/bench/README.md
says were checked (its table "What each experiment aims at, per preset", which this reads).

The dependency charts are absent here (conftest.py): the controllers' conventions below were read in their
charts at those versions and seen in renders with them. The Service paths are this chart's own: looked up
in the same render. With BENCH_DEPENDENCY_CHARTS naming a folder that holds the real charts (one folder
per chart, as `helm pull --untar` leaves them) the last test renders with them and looks every target up
among the rendered objects.
"""
import os
import re
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from conftest import CHART_SRC, Case, KUBE_VERSION, NAMESPACE, RELEASE, ROOT, load_docs, output_of, run, with_moved_pin
from test_preset_targets import PRESETS, control_plane, controller_workload, data_plane, dig, pod_labels, preset

README = CHART_SRC / "README.md"
GATEWAY_CONTROLLERS = ("envoy-gateway", "nginx-gateway-fabric", "istio")
# An image for controller-upgrade, so the container reaches the runner's env and the admission policy.
UPGRADE = ["--set", "loadtest.controllerUpgrade.image=registry.example/controller:next",
           "--set", "loadtest.controllerUpgrade.currentImage=registry.example/controller:now"]
EXPERIMENTS = {  # experiment -> extra arguments
    "static": [],
    "paths": [],
    "controller-restart": [],
    "controller-upgrade": UPGRADE,
    "dataplane-scale": [],
    "long-lived": ["--set", "loadtest.longLived.image.repository=registry.example/bench/stream"],
}


def fill(text, values):
    """The placeholders the presets may write, as the chart replaces them for release bench in bench."""
    gateway = dig(values, "routes", "gateway", "name") or RELEASE
    return (text.replace("{{ .Release.Name }}", RELEASE).replace("{{ .Release.Namespace }}", NAMESPACE)
            .replace('{{ include "bench.gateway.name" . }}', gateway))


def fullname(key, sub):
    """The usual fullname helper (traefik, ingress-nginx, nginx-ingress, kubernetes-ingress, NGF)."""
    name = sub.get("nameOverride") or key
    return sub.get("fullnameOverride") or (RELEASE if name in RELEASE else f"{RELEASE}-{name}")


def ingress_service(key, sub):
    """(Service, TLS port, plain port) through which the controller serves Ingresses; None: its chart makes
    none (a Gateway API controller's Services are its control plane's: xDS, agent, webhook ports)."""
    if key in GATEWAY_CONTROLLERS:
        return None
    if key in ("ingress-nginx", "nginx-inc"):  # <fullname>-controller, ports http 80 and https 443
        return (f"{fullname(key, sub)}-controller", 443, 80)
    if key == "traefik":  # websecure and web exposed on 443 and 80
        ports = sub.get("ports") or {}
        return (fullname(key, sub), dig(ports, "websecure", "exposedPort", default=443), dig(ports, "web", "exposedPort", default=80))
    if key == "haproxy":  # controller.service.ports https 443, http 80
        return (fullname(key, sub), 443, 80)
    raise AssertionError(f"{key}: no chart conventions here yet")


def gateway_service(key, values):
    """(Service, port) of the Gateway's data plane (bench's Gateway, listener on 443): traefik's own
    Service; the others create it at run time (README's "Gateway API" table)."""
    gateway = dig(values, "routes", "gateway", "name") or RELEASE
    if key == "traefik":
        return ingress_service(key, values[key])[:2]
    if key == "envoy-gateway":  # GatewayNamespace mode: named after the Gateway
        return (gateway, 443)
    cls = dig(values, "routes", "gateway", "className") or dig(values[key], "nginxGateway", "gatewayClassName") or "nginx"
    return (f"{gateway}-{cls}", 443)


def upgrade_container(key, sub):
    """The container of the workload controller-upgrade rolls, as the chart names it."""
    name = sub.get("nameOverride") or key
    return {
        "ingress-nginx": dig(sub, "controller", "containerName", default="controller"),
        "nginx-inc": name,  # nginx-ingress.name: the chart's name, the alias here
        "traefik": fullname(key, sub),  # traefik.fullname
        "haproxy": f"{name}-{dig(sub, 'controller', 'name', default='controller')}",
        "envoy-gateway": "envoy-gateway",  # written in its Deployment template
        "nginx-gateway-fabric": "nginx-gateway",
        "istio": "discovery",
    }[key]


def url(scheme, service, port):
    return f"{scheme}://{service}.{NAMESPACE}.svc" + ("" if port == {"https": 443, "http": 80}[scheme] else f":{port}")


def expected_urls(name):
    """{BENCH_URL_INGRESS, BENCH_URL_GATEWAY}: "" where the preset has no such path."""
    values = preset(name)
    key = values["controller"]
    tls = dig(values, "routes", "ingress", "tls", "enabled", default=True)
    scheme = "https" if tls else "http"
    ingress = ingress_service(key, values[key])
    gateway = gateway_service(key, values) if dig(values, "routes", "gateway", "enabled") else None
    return {"BENCH_URL_INGRESS": url(scheme, ingress[0], ingress[1 if tls else 2]) if ingress else "",
            "BENCH_URL_GATEWAY": url(scheme, *gateway) if gateway else ""}


# ---- the README table ----

def table(text):
    """{preset: (container, chart, version)} from README's "What each experiment aims at, per preset"."""
    section = text[text.index("### What each experiment aims at, per preset"):]
    section = section[section.index("| preset |"):]
    section = section[:section.index("\n\n")]
    rows = {}
    for line in section.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        container = re.search(r"\(`([^`]+)`\)$", cells[3])
        chart = re.fullmatch(r"`([a-z-]+)` \((v?\d+\.\d+\.\d+)\)", cells[4])
        assert container and chart, f"README row not understood: {line}"
        rows[cells[0]] = (container.group(1), chart.group(1), chart.group(2))
    return rows


def table_problems(rows, chart_yaml):
    """A preset missing from the table, a container other than the convention's, a chart Chart.yaml no
    longer pins (which asks for the check again)."""
    pinned = {d.get("alias", d["name"]): (d["name"], d["version"]) for d in chart_yaml["dependencies"]}
    problems = [f"{name}: not in the table" for name in PRESETS if name not in rows]
    for name, (container, chart, version) in rows.items():
        values = preset(name)
        key = values["controller"]
        if container != upgrade_container(key, values[key]):
            problems.append(f"{name}: the table says container {container}, the chart's is {upgrade_container(key, values[key])}")
        if pinned.get(key) != (chart, version):
            problems.append(f"{name}: checked against {chart} ({version}), Chart.yaml pins {pinned.get(key)}: render the "
                            "presets with that chart again, check every target and update the table")
    return problems


def test_the_table_is_the_pinned_charts_and_their_containers():
    chart_yaml = yaml.safe_load((CHART_SRC / "Chart.yaml").read_text())
    rows = table(README.read_text())
    assert table_problems(rows, chart_yaml) == []
    # and on broken copies: a moved pin, a wrong container, a row gone
    moved = with_moved_pin(chart_yaml, "istiod")
    assert table_problems(rows, moved) == [table_problems(rows, moved)[0]] and "istio:" in table_problems(rows, moved)[0]
    assert len(table_problems({**rows, "traefik": ("traefik", *rows["traefik"][1:])}, chart_yaml)) == 1
    assert table_problems({k: v for k, v in rows.items() if k != "haproxy"}, chart_yaml) == ["haproxy: not in the table"]


# ---- the renders ----

def applies(name, experiment):
    values = preset(name)
    if experiment == "dataplane-scale":
        return bool(values["loadtest"]["dataplaneScale"]["applies"])
    return True


CASES = [(name, experiment) for name in PRESETS for experiment in EXPERIMENTS if applies(name, experiment)]


def render(helm, name, experiment, *extra):
    case = Case(f"values/{name}", tuple(f"values/{f}" for f in PRESETS[name]))
    api = [a for v in case.api_versions() for a in ("--api-versions", v)]
    return helm.template(*helm.values_args(case), *api, "--set", f"loadtest.scenario={experiment}", *EXPERIMENTS[experiment], *extra)


def env_of(objects):
    runs = [d for d in objects if d["kind"] == "TestRun"]
    assert len(runs) == 1, f"{len(runs)} TestRuns"
    return {e["name"]: e.get("value") for e in runs[0]["spec"]["runner"]["env"]}


def own_service_problems(env, objects):
    """The Service paths against this chart's Services of the same render."""
    services = {d["metadata"]["name"]: d for d in objects if d["kind"] == "Service"}
    problems = []
    for key in ("BENCH_URL_CLUSTERIP", "BENCH_URL_POD"):
        u = urlparse(env[key])
        service = services.get(u.hostname.split(".")[0])
        port = u.port or 80
        if not service or port not in [p["port"] for p in service["spec"]["ports"]]:
            problems.append(f"{key} {env[key]}: no Service with port {port} in the render")
    node_port = urlparse(env["BENCH_URL_NODEPORT"].replace("$(NODE_IP)", "node")).port
    if node_port not in [p.get("nodePort") for s in services.values() for p in s["spec"]["ports"]]:
        problems.append(f"BENCH_URL_NODEPORT {env['BENCH_URL_NODEPORT']}: no Service has that node port")
    return problems


def controller_problems(name, experiment, env, objects):
    """Every controller target of the render against the charts' conventions."""
    values = preset(name)
    key = values["controller"]
    sub = values[key]
    problems = []
    for var, want in expected_urls(name).items():
        if env[var] != want:
            problems.append(f"{var} is {env[var]!r}, the controller's chart serves that path at {want!r}")
    target = values["loadtest"]["target"]
    if env["BENCH_TARGET_URL"] != env[f"BENCH_URL_{target.upper()}"]:
        problems.append(f"BENCH_TARGET_URL {env['BENCH_TARGET_URL']} is not the {target} path's")
    if env["BENCH_URL_INGRESS"] and key != "traefik" and env["BENCH_URL_INGRESS"] == env["BENCH_URL_GATEWAY"]:
        problems.append(f"BENCH_URL_INGRESS is the Gateway's URL {env['BENCH_URL_GATEWAY']}: paths would label it ingress")
    if experiment == "controller-upgrade":
        up = values["loadtest"]["controllerUpgrade"]
        workload = tuple(fill(x, values) for x in controller_workload(key, sub) or control_plane(key, sub).split("/"))
        got = (env["BENCH_UPGRADE_KIND"], env["BENCH_UPGRADE_NAME"], env["BENCH_UPGRADE_CONTAINER"])
        if got != (*workload, upgrade_container(key, sub)):
            problems.append(f"controller-upgrade rolls {got}, the chart's workload and container are {(*workload, upgrade_container(key, sub))}")
        policies = [d for d in objects if d["kind"] == "ValidatingAdmissionPolicy" and d["metadata"]["name"].endswith("-upgrade")]
        if f"c.name == '{upgrade_container(key, sub)}'" not in yaml.safe_dump(policies, width=10**6):
            problems.append(f"the upgrade admission policy does not name container {upgrade_container(key, sub)} ({up})")
    if experiment in ("controller-restart", "long-lived") and "BENCH_CONTROLLER_SELECTOR" in env:
        labels = {k: fill(v, values) for k, v in pod_labels(key, sub).items()}
        selector = dict(p.split("=", 1) for p in env["BENCH_CONTROLLER_SELECTOR"].split(","))
        if any(labels.get(k) != v for k, v in selector.items()):
            problems.append(f"controller-restart selects {selector}, the controller's pods carry {labels}")
    if experiment == "dataplane-scale":
        want = fill(data_plane(key, values), values)
        if env["BENCH_DATAPLANE_DEPLOYMENT"] != want:
            problems.append(f"dataplane-scale scales {env['BENCH_DATAPLANE_DEPLOYMENT']}, the controller's data plane is {want}")
    return problems


@pytest.mark.parametrize(("name", "experiment"), CASES, ids=[f"{n}-{e}" for n, e in CASES])
def test_targets_are_the_charts_objects(helm, name, experiment):
    result = render(helm, name, experiment)
    assert result.returncode == 0, result.stderr
    objects = load_docs(result.stdout)
    env = env_of(objects)
    assert own_service_problems(env, objects) + controller_problems(name, experiment, env, objects) == []


def test_a_broken_preset_fails(helms, offline_copy):
    """The checks above on a preset that names the wrong container and a Gateway preset whose ingress URL
    would name the control plane's Service: both are reported."""
    helm = helms[3]
    result = render(helm, "traefik", "controller-upgrade", "--set", "loadtest.controllerUpgrade.container=traefik")
    env = env_of(load_docs(result.stdout))
    problems = controller_problems("traefik", "controller-upgrade", env, load_docs(result.stdout))
    assert [p for p in problems if "controller-upgrade rolls" in p], problems
    assert [p for p in problems if "does not name container" in p], problems
    result = render(helm, "nginx-gateway-fabric", "paths", "--set", "loadtest.ingressUrl=https://bench-nginx-gateway-fabric.bench.svc")
    problems = controller_problems("nginx-gateway-fabric", "paths", env_of(load_docs(result.stdout)), load_docs(result.stdout))
    assert problems == ["BENCH_URL_INGRESS is 'https://bench-nginx-gateway-fabric.bench.svc', the controller's chart serves "
                        "that path at ''"], problems


@pytest.mark.parametrize("name", [n for n in PRESETS if preset(n)["controller"] in GATEWAY_CONTROLLERS])
def test_ingress_target_is_refused_without_an_ingress_service(helm, name):
    result = render(helm, name, "static", "--set", "loadtest.target=ingress")
    assert result.returncode != 0 and "loadtest.target is ingress" in result.stderr, output_of(result)
    # with a class but no Service to reach it: the URL is asked for
    result = render(helm, name, "static", "--set", "loadtest.target=ingress", "--set", "routes.ingress.className=other")
    assert result.returncode != 0 and "loadtest.ingressUrl" in result.stderr, output_of(result)


def test_an_image_without_a_container_is_refused(helm):
    result = render(helm, "istio", "controller-upgrade", "--set", "loadtest.controllerUpgrade.container=")
    assert result.returncode != 0, result.stdout[:200]
    assert "loadtest.controllerUpgrade.image \"registry.example/controller:next\" needs loadtest.controllerUpgrade.container" \
        in result.stderr, result.stderr


# ---- with the real dependency charts ----

DEPENDENCY_CHARTS = os.environ.get("BENCH_DEPENDENCY_CHARTS", "")


def real_chart(work, charts_dir):
    """charts/bench with the real dependency charts of charts_dir in its charts/ (by name and version)."""
    bench = work / "with-real-dependencies" / "bench"
    if bench.exists():
        return bench
    shutil.copytree(CHART_SRC, bench, symlinks=False)
    shutil.rmtree(bench / "charts", ignore_errors=True)
    (bench / "Chart.lock").unlink(missing_ok=True)
    found = {}
    for chart_yaml in Path(charts_dir).glob("*/Chart.yaml"):
        meta = yaml.safe_load(chart_yaml.read_text())
        found[(meta["name"], str(meta["version"]))] = chart_yaml.parent
    wanted = [(d["name"], str(d["version"])) for d in yaml.safe_load((CHART_SRC / "Chart.yaml").read_text())["dependencies"]]
    missing = [f"{n} {v}" for n, v in wanted if (n, v) not in found]
    assert not missing, f"BENCH_DEPENDENCY_CHARTS={charts_dir} lacks {', '.join(missing)}"
    for n, v in wanted:
        shutil.copytree(found[(n, v)], bench / "charts" / n, symlinks=False)
    return bench


def looked_up_problems(env, objects, experiment):
    """Every target of the TestRun among the objects of the same render (those the controller makes at
    run time, the Gateway's data plane, are the conventions' part)."""
    services = {d["metadata"]["name"]: d for d in objects if d["kind"] == "Service"}
    problems = own_service_problems(env, objects)
    for key in ("BENCH_URL_INGRESS", "K6_PROMETHEUS_RW_SERVER_URL"):
        if env.get(key):
            u = urlparse(env[key])
            port = u.port or {"https": 443, "http": 80}[u.scheme]
            service = services.get(u.hostname.split(".")[0])
            if not service or port not in [p["port"] for p in service["spec"]["ports"] if p.get("protocol", "TCP") == "TCP"]:
                problems.append(f"{key} {env[key]}: no Service with TCP port {port} in the render")
    if experiment == "controller-upgrade":
        workloads = {(d["kind"], d["metadata"]["name"]): d for d in objects if d["kind"] in ("Deployment", "DaemonSet")}
        workload = workloads.get((env["BENCH_UPGRADE_KIND"], env["BENCH_UPGRADE_NAME"]))
        containers = [c["name"] for c in workload["spec"]["template"]["spec"]["containers"]] if workload else []
        if env["BENCH_UPGRADE_CONTAINER"] not in containers:
            problems.append(f"controller-upgrade: {env['BENCH_UPGRADE_KIND']} {env['BENCH_UPGRADE_NAME']} with container "
                            f"{env['BENCH_UPGRADE_CONTAINER']} is not in the render (containers: {containers})")
    if "BENCH_CONTROLLER_SELECTOR" in env:
        selector = dict(p.split("=", 1) for p in env["BENCH_CONTROLLER_SELECTOR"].split(","))
        if not [d for d in objects if d["kind"] in ("Deployment", "DaemonSet")
                and all(d["spec"]["template"]["metadata"].get("labels", {}).get(k) == v for k, v in selector.items())]:
            problems.append(f"controller-restart: no workload's pods carry {selector}")
    if env.get("BENCH_DATAPLANE_PARAMETERS_NAME"):
        if env["BENCH_DATAPLANE_PARAMETERS_NAME"] not in [d["metadata"]["name"] for d in objects if d["kind"] == "NginxProxy"]:
            problems.append(f"dataplane-scale: no NginxProxy {env['BENCH_DATAPLANE_PARAMETERS_NAME']} in the render")
    return problems


@pytest.mark.skipif(not DEPENDENCY_CHARTS, reason="BENCH_DEPENDENCY_CHARTS is unset: no folder of the real dependency "
                    "charts to render with (charts/bench/README.md, \"What each experiment aims at, per preset\")")
def test_targets_with_the_real_dependency_charts(helms, runner_values, work):
    helm = helms[3]
    chart = real_chart(work, DEPENDENCY_CHARTS)
    problems = []
    for name, experiment in CASES:
        # nginx-ingress's schema loads $refs from the internet (README, "Air-gapped")
        skip_schema = ["--skip-schema-validation"] if preset(name)["controller"] == "nginx-inc" else []
        files = [a for f in PRESETS[name] for a in ("-f", ROOT / "values" / f)]
        result = run([helm.binary, "template", RELEASE, chart, "-n", NAMESPACE, "--kube-version", KUBE_VERSION,
                      "--api-versions", "gateway.networking.k8s.io/v1", "--api-versions", "monitoring.coreos.com/v1",
                      *skip_schema, "-f", runner_values, *files, "--set", f"loadtest.scenario={experiment}", *EXPERIMENTS[experiment]])
        if result.returncode != 0:
            problems.append(f"{name} {experiment}: {result.stderr.strip()}")
            continue
        objects = load_docs(result.stdout)
        env = env_of(objects)
        problems += [f"{name} {experiment}: {p}" for p in looked_up_problems(env, objects, experiment)
                     + controller_problems(name, experiment, env, objects)]
    assert problems == [], "\n".join(problems)
