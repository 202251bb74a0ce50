"""What controller-restart and dataplane-scale move with each preset in values/ (loadtest.controllerRestart,
loadtest.dataplaneScale), against how the controllers' charts and controllers name and label those
objects at the chart versions charts/bench/README.md says they were checked against (its table under
"dataplane-scale", which this reads).

Values only: the dependency charts are not needed. The conventions below were read in those charts
and sources and seen in renders of each preset with them; what the test catches is a preset whose
selector, control plane or Deployment no longer follows them (a nameOverride, a kind, a deploy
mode, a Gateway class changed in the preset but not in its targets), and a Chart.yaml pin that moved
away from the checked version, which asks for the check again.
"""
import re

import pytest
import yaml

from conftest import CHART_SRC, ROOT, with_moved_pin

REL = "{{ .Release.Name }}"
NGF_CLASS = "nginx"  # NGINX Gateway Fabric's default GatewayClass
GATEWAY = '{{ include "bench.gateway.name" . }}'

PRESETS = {  # preset -> the files it is installed with: every controller preset, and Traefik's Gateway overlay
    p.stem: [p.name] for p in sorted((ROOT / "values").glob("*.yaml")) if "controller" in yaml.safe_load(p.read_text())
} | {"traefik-gateway": ["traefik.yaml", "traefik-gateway.yaml"]}
UNKNOWN = "{}: no chart conventions here yet: check its preset against its chart, then add them"
README = CHART_SRC / "README.md"
# a row of README's table: | presets | pods | Deployment | `chart` (version); source |
ROW = re.compile(r"^\| ([a-z, -]+) \|.*\| `([a-z-]+)` \((v?\d+\.\d+\.\d+)\)[^|]*\|$")


def checked(text):
    """{preset: (chart, version)} from the table in README's dataplane-scale section."""
    section = text[text.index("What the two experiments move with each preset"):]
    section = section[:section.index("\n\n", section.index("| preset |"))]
    return {name: (chart, version) for line in section.splitlines() if (m := ROW.match(line))
            for name, chart, version in [(n, m.group(2), m.group(3)) for n in m.group(1).split(", ")]}


def merge(base, over):
    out = dict(base)
    for key, value in over.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def preset(name):
    values = {}
    for f in PRESETS[name]:
        values = merge(values, yaml.safe_load((ROOT / "values" / f).read_text()))
    return values


def dig(values, *keys, default=None):
    for key in keys:
        values = values.get(key) if isinstance(values, dict) else None
    return default if values is None else values


def pod_labels(key, sub):
    """Labels the chart gives the pods controller-restart deletes. The key is the chart's name or its alias,
    which Helm makes the subchart's .Chart.Name, the default of its name label."""
    name = sub.get("nameOverride") or key
    if key == "ingress-nginx":
        return {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": REL,
                "app.kubernetes.io/component": "controller"}
    if key in ("nginx-inc", "haproxy"):
        return dig(sub, "controller", "selectorLabels") or {"app.kubernetes.io/name": name,
                                                             "app.kubernetes.io/instance": REL}
    if key == "traefik":
        return {"app.kubernetes.io/name": name,
                "app.kubernetes.io/instance": sub.get("instanceLabelOverride") or f"{REL}-{{{{ .Release.Namespace }}}}"}
    if key == "envoy-gateway":  # control-plane is written in its Deployment template
        return {"control-plane": "envoy-gateway", "app.kubernetes.io/instance": REL}
    if key == "nginx-gateway-fabric":
        return {"app.kubernetes.io/name": dig(sub, "nginxGateway", "name") or name, "app.kubernetes.io/instance": REL}
    if key == "istio":
        return {"app": "istiod"}
    raise AssertionError(UNKNOWN.format(key))


def control_plane(key, sub):
    """The control plane's object (pods: control-plane) as the chart names it; None: no separate one."""
    if key == "envoy-gateway":
        return "Deployment/envoy-gateway"
    if key == "nginx-gateway-fabric":
        name = dig(sub, "nginxGateway", "name") or sub.get("nameOverride") or key
        return f"Deployment/{sub.get('fullnameOverride') or f'{REL}-{name}'}"
    if key == "istio":
        return "Deployment/istiod" + (f"-{sub['revision']}" if sub.get("revision") else "")
    return None


def controller_workload(key, sub):
    """(kind, name) of the workload that runs an ingress controller's pods, where the chart takes the
    kind (Deployment or DaemonSet); None for the Gateway API controllers."""
    name = sub.get("nameOverride") or key
    where = {  # the values key of the kind, and the workload's name
        "ingress-nginx": (("controller", "kind"), f"{REL}-{name}-controller"),
        "nginx-inc": (("controller", "kind"), f"{REL}-{name}-controller"),
        "haproxy": (("controller", "kind"), f"{REL}-{name}"),
        "traefik": (("deployment", "kind"), f"{REL}-{name}"),
    }.get(key)
    if not where:
        return None
    kind = dig(sub, *where[0], default="Deployment")
    return ("DaemonSet" if kind.lower() == "daemonset" else "Deployment", where[1])


def data_plane(key, values):
    """The Deployment dataplane-scale scales (itself, or through parameters()), or None where it cannot
    (a DaemonSet, or an autoscaler that moves the replicas)."""
    sub = values[key]
    workload = controller_workload(key, sub)
    if workload:
        return None if workload[0] == "DaemonSet" else workload[1]
    if key == "envoy-gateway":  # GatewayNamespace: named after the Gateway; else a hash known only at runtime
        mode = dig(sub, "config", "envoyGateway", "provider", "kubernetes", "deploy", "type")
        return GATEWAY if mode == "GatewayNamespace" else None
    if key == "istio":  # <gateway>-<class>, no replicas in istiod's kube-gateway template
        return f"{GATEWAY}-{dig(values, 'routes', 'gateway', 'className')}"
    if key == "nginx-gateway-fabric":  # <gateway>-<class> (CreateNginxResourceName), unless a DaemonSet or autoscaled
        sub = values[key]
        if dig(sub, "nginx", "kind", default="deployment") != "deployment" or dig(sub, "nginx", "autoscaling", "enable"):
            return None
        # the class NGF's chart defaults to (its values.yaml: nginxGateway.gatewayClassName)
        cls = dig(values, "routes", "gateway", "className") or dig(sub, "nginxGateway", "gatewayClassName") or NGF_CLASS
        return f"{GATEWAY}-{cls}"
    raise AssertionError(UNKNOWN.format(key))


def parameters(key, values):
    """(via, namespace, name): how dataplane-scale sets the replicas. NGINX Gateway Fabric writes its NGINX
    Deployment's spec back on any change, replicas from the NginxProxy its chart makes for the
    GatewayClass (nginx-gateway.proxy-config-name: nginxGateway.name, else nameOverride, else the
    release, then -proxy-config): through that one. The others: the Deployment itself."""
    if key == "nginx-gateway-fabric":
        sub = values[key]
        name = dig(sub, "nginxGateway", "name") or sub.get("nameOverride") or REL
        return ("nginxproxy", "", f"{name}-proxy-config")
    return ("deployment", "", "")


def check_pins(table, chart_yaml):
    """Problems: a preset missing from the table, or checked against a chart Chart.yaml no longer pins."""
    pinned = {d.get("alias", d["name"]): (d["name"], d["version"]) for d in chart_yaml["dependencies"]}
    problems = [f"{name}: not in the table" for name in PRESETS if name not in table]
    for name, was in table.items():
        now = pinned.get(preset(name)["controller"])
        if now != was:
            problems.append(f"{name}: checked against {was}, Chart.yaml pins {now}: check its loadtest.controllerRestart "
                            "and dataplaneScale against that chart again and update the table")
    return problems


def test_the_checked_charts_are_the_pinned_ones():
    chart_yaml = yaml.safe_load((CHART_SRC / "Chart.yaml").read_text())
    table = checked(README.read_text())
    assert check_pins(table, chart_yaml) == []
    # and on a broken copy: a moved pin, a row gone
    moved = with_moved_pin(chart_yaml, "traefik")
    assert len(check_pins(table, moved)) == 2  # traefik and traefik-gateway
    assert check_pins({k: v for k, v in table.items() if k != "istio"}, chart_yaml) == ["istio: not in the table"]


@pytest.mark.parametrize("name", PRESETS)
def test_controller_restart_selects_the_chart_labels(name):
    values = preset(name)
    key, cr = values["controller"], values["loadtest"]["controllerRestart"]
    labels = pod_labels(key, values[key])
    assert cr["applies"] and cr["selector"], f"{name}: controller-restart applies to every controller preset"
    wrong = {k: v for k, v in cr["selector"].items() if labels.get(k) != v}
    assert not wrong, f"{name}: selector labels {wrong} are not on the controller's pods, which carry {labels}"


@pytest.mark.parametrize("name", PRESETS)
def test_control_plane_is_the_chart_deployment(name):
    values = preset(name)
    key, cr = values["controller"], values["loadtest"]["controllerRestart"]
    expected = control_plane(key, values[key])
    assert (cr["pods"], cr.get("controlPlane") or None) == (("control-plane", expected) if expected else
                                                            ("controller", None)), name


@pytest.mark.parametrize("name", [n for n in PRESETS if control_plane(preset(n)["controller"], {})])
def test_control_plane_selector_is_its_podmonitor_selector(name):
    """The presets' comments promise the same labels as the control plane's PodMonitor."""
    values = preset(name)
    selectors = [m["selector"] for m in values["monitoring"]["podMonitors"]]
    assert values["loadtest"]["controllerRestart"]["selector"] in selectors, (name, selectors)


@pytest.mark.parametrize("name", PRESETS)
def test_dataplane_scale_names_what_the_controller_creates(name):
    values = preset(name)
    key, dps = values["controller"], values["loadtest"]["dataplaneScale"]
    expected = data_plane(key, values)
    if expected is None:
        assert not dps["applies"] and dps["reason"] and not dps["deployment"], \
            f"{name}: dataplane-scale cannot move {key}'s data plane here; applies false, with a reason"
    else:
        got = (dps["applies"], dps["namespace"], dps["deployment"])
        assert got == (True, "", expected), f"{name}: applies, namespace, deployment are {got}, expected {expected!r}"
        via = (dps.get("via", "deployment"), dig(dps, "parameters", "namespace", default=""), dig(dps, "parameters", "name", default=""))
        assert via == parameters(key, values), f"{name}: via, parameters' namespace and name are {via}, expected {parameters(key, values)}"


@pytest.mark.parametrize("name", PRESETS)
def test_controller_upgrade_rolls_the_controllers_workload_or_its_control_plane(name):
    """An ingress controller's own Deployment or DaemonSet; for a Gateway API controller its control
    plane's Deployment (the data plane it manages keeps serving)."""
    values = preset(name)
    key, up = values["controller"], values["loadtest"]["controllerUpgrade"]
    expected = controller_workload(key, values[key]) or tuple(control_plane(key, values[key]).split("/"))
    got = (up["applies"], up["namespace"], up["kind"], up["name"])
    assert got == (True, "", *expected), f"{name}: applies, namespace, kind, name are {got}, expected {expected}"
