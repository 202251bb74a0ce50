"""The runner's rights under attack: a platform team's review of the chart sent 50 requests as the runner's
ServiceAccount and counted those the policies let through that they should not. This module sends those
requests, and the runner's own, to a real kube-apiserver (etcd + kube-apiserver v1.34, harness/apiserver.py;
no controllers) holding the chart's rendered policies, bindings and Roles for four releases at once:

- bench in namespace bench: a route experiment on Traefik's Ingress and Gateway (routes, backend policies);
- bench-up in namespace up: controller-upgrade of Deployment ctl in namespace up-ctl to ctl:v2 from ctl:v1,
  rendered for Kubernetes 1.30 (the policy's floor: a field newer than that must be compared too);
- bench-dp in namespace dp: dataplane-scale of Envoy Gateway's data plane (the Deployment itself);
- bench-ngf in namespace ngf: dataplane-scale through NGINX Gateway Fabric's NginxProxy (its stand-in CRD).

Each row is one request made as that release's runner, from a fixed starting state an admin puts back
before it: (id, release, what the admin sets up first, the request, expected verdict). The closing test
counts the rows whose verdict differs: 0 allowed that should be denied, 0 denied that the run needs."""
import copy
import json
import subprocess
import time
import urllib.error
from pathlib import Path

import pytest
import yaml

from harness.admission import set_at as at
from harness.apiserver import BareApiServer, ensure_kube_binaries

ROOT = Path(__file__).resolve().parents[3]
NGINXPROXY_CRD = ROOT / "ci" / "test" / "harness" / "nginxproxy-crd.yaml"
# an IngressClass that is not the run's (a name, not the nginx program)
OTHER_CLASS = "nginx"
RESTORE = "bench/churn-restore"
POLICY_API = ["--api-versions", "gateway.networking.k8s.io/v1"]
ONLY = ["-s", "templates/loadtest/admission-policy.yaml", "-s", "templates/loadtest/rbac.yaml"]

# release -> (namespace, values files of the offline copy, --set values, kube version or None)
RELEASES = {
    "bench": ("bench", ["values/traefik.yaml", "values/traefik-gateway.yaml"],
              ["loadtest.scenario=route-propagation", "loadtest.routes.kind=both", "loadtest.runId=run-1"], None),
    "bench-up": ("up", [], ["loadtest.scenario=controller-upgrade", "loadtest.controllerUpgrade.applies=true",
                            "loadtest.controllerUpgrade.namespace=up-ctl", "loadtest.controllerUpgrade.name=ctl",
                            "loadtest.controllerUpgrade.container=controller", "loadtest.controllerUpgrade.image=ctl:v2",
                            "loadtest.controllerUpgrade.currentImage=ctl:v1", "loadtest.experimentNamespaces={up-ctl}"], "1.30.0"),
    "bench-dp": ("dp", ["values/envoy-gateway.yaml"], ["loadtest.scenario=dataplane-scale"], None),
    "bench-ngf": ("ngf", ["values/nginx-gateway-fabric.yaml"], ["loadtest.scenario=dataplane-scale"], None),
}


def runner(release):
    return f"system:serviceaccount:{RELEASES[release][0]}:{release}-loadtest"


def deployment(name, ns, containers, replicas=1, labels=None):
    labels = labels or {"app.kubernetes.io/name": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels, "annotations": {"keep": "me"}},
                                  "spec": {"containers": containers}}}}


BACKEND = deployment("bench-backend", "bench", [{"name": "nginx", "image": "bench/backend:1"}], replicas=5,
                     labels={"app.kubernetes.io/name": "bench", "app.kubernetes.io/instance": "bench",
                             "app.kubernetes.io/component": "backend"})
CTL = deployment("ctl", "up-ctl", [{"name": "proxy", "image": "proxy:v1"},
                                   {"name": "controller", "image": "ctl:v1", "args": ["--serve"]}])
DATAPLANE = deployment("bench-dp", "dp", [{"name": "envoy", "image": "envoy:v1"}])
PROXY = {"apiVersion": "gateway.nginx.org/v1alpha2", "kind": "NginxProxy",
         "metadata": {"name": "bench-ngf-proxy-config", "namespace": "ngf"},
         "spec": {"logging": {"errorLevel": "info"},
                  "kubernetes": {"deployment": {"replicas": 1, "container": {"image": {"repository": "nginx"}}}}}}
PATHS = {"backend": "/apis/apps/v1/namespaces/bench/deployments/bench-backend",
         "ctl": "/apis/apps/v1/namespaces/up-ctl/deployments/ctl",
         "dataplane": "/apis/apps/v1/namespaces/dp/deployments/bench-dp",
         "proxy": "/apis/gateway.nginx.org/v1alpha2/namespaces/ngf/nginxproxies/bench-ngf-proxy-config"}
BASELINES = {"backend": BACKEND, "ctl": CTL, "dataplane": DATAPLANE, "proxy": PROXY}
HTTPROUTES = "/apis/gateway.networking.k8s.io/v1/namespaces/bench/httproutes"
INGRESSES = "/apis/networking.k8s.io/v1/namespaces/bench/ingresses"
RUN = {"bench/route-run": "run-1"}


# ---- the requests ----

def put(target, change, release, setup=None):
    """An update of TARGET as RELEASE's runner: GET, change(obj), PUT; setup(obj) first as the admin."""
    return ("put", target, change, release, setup)


def create(path, obj, release="bench"):
    return ("create", path, obj, release, None)


def delete(path, obj, release="bench"):
    """OBJ created by the admin, then deleted by the runner."""
    return ("delete", path, obj, release, None)


def both(*changes):
    def change(obj):
        for c in changes:
            c(obj)
    return change


def container(name):
    return lambda d: next(c for c in d["spec"]["template"]["spec"]["containers"] if c["name"] == name)


def record(**image):
    """controller-upgrade's restore record as kube.js writes it (JSON.stringify: no spaces), or RAW text."""
    return json.dumps({"image": {"container": "controller", **image}, "testid": "t", "at": "now",
                       "set": {"image": "ctl:v2"}}, separators=(",", ":"))


ROLL = at(["spec", "template", "metadata", "annotations", "bench/restartedAt"], "2026-12-07T00:00:00Z")
IMAGE = container("controller")
TEMPLATE_ANN = ["spec", "template", "metadata", "annotations"]


def route(name, host="h-1.routes.bench.local", backend=("bench-backend", 80), labels=RUN, parent=None, **extra):
    parent = parent or {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "bench", "namespace": "bench",
                        "sectionName": "routes"}
    obj = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
           "metadata": {"name": name, "namespace": "bench", "labels": dict(labels)},
           "spec": {"parentRefs": [parent], "hostnames": [host] if host else [],
                    "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                               "backendRefs": [{"group": "", "kind": "Service", "name": backend[0], "port": backend[1]}]}]}}
    if not host:
        del obj["spec"]["hostnames"]
    for key, value in extra.items():
        obj["spec"][key] = value
    return obj


def ingress(name, host="i-1.routes.bench.local", backend=("bench-backend", 80), labels=RUN, cls="traefik", **extra):
    obj = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": {"name": name, "namespace": "bench", "labels": dict(labels)},
           "spec": {"ingressClassName": cls,
                    "rules": [{"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
                        "service": {"name": backend[0], "port": {"number": backend[1]}}}}]}}]}}
    obj["spec"].update(extra)
    return obj


def with_meta(obj, **meta):
    obj = copy.deepcopy(obj)
    obj["metadata"].update(meta)
    return obj


def with_rule(obj, **rule):
    obj = copy.deepcopy(obj)
    obj["spec"]["rules"][0].update(rule)
    return obj


A, D = "allowed", "denied"
REQUESTS = [
    # controller-upgrade (finding 1: images only as literals the installer wrote)
    ("upgrade: roll annotation alone", put("ctl", ROLL, "bench-up"), A),
    ("upgrade: to ctl:v2 with its record", put("ctl", both(ROLL, lambda d: IMAGE(d).update(image="ctl:v2"),
                                                           at(["metadata", "annotations", RESTORE], record(**{"from": "ctl:v1"}))), "bench-up"), A),
    ("upgrade: back to ctl:v1", put("ctl", lambda d: IMAGE(d).update(image="ctl:v1"), "bench-up",
                                    setup=lambda d: IMAGE(d).update(image="ctl:v2")), A),
    ("upgrade: another image", put("ctl", lambda d: IMAGE(d).update(image="evil.example/pwn:1"), "bench-up"), D),
    ("upgrade: a record naming the current image and another from, then that image",
     put("ctl", lambda d: IMAGE(d).update(image="evil.example/pwn:1"), "bench-up",
         setup=at(["metadata", "annotations", RESTORE],
                  '{"image":{"container":"controller","from":"ctl:v1"},"x":{"from":"evil.example/pwn:1"}}')), D),
    ("upgrade: a record with two from keys, then restore to the last",
     put("ctl", lambda d: IMAGE(d).update(image="evil.example/pwn:1"), "bench-up",
         setup=both(lambda d: IMAGE(d).update(image="ctl:v2"), at(["metadata", "annotations", RESTORE],
                    '{"image":{"container":"controller","from":"ctl:v1","from":"evil.example/pwn:1"},"set":{"image":"ctl:v2"}}'))), D),
    ("upgrade: a record naming the evil image alone, then that image",
     put("ctl", lambda d: IMAGE(d).update(image="evil.example/pwn:1"), "bench-up",
         setup=at(["metadata", "annotations", RESTORE], record(**{"from": "evil.example/pwn:1"}))), D),
    ("upgrade: the other container's image", put("ctl", lambda d: container("proxy")(d).update(image="ctl:v2"), "bench-up"), D),
    ("upgrade: the container's args", put("ctl", lambda d: IMAGE(d).update(args=["--evil"]), "bench-up"), D),
    ("upgrade: a container added", put("ctl", lambda d: d["spec"]["template"]["spec"]["containers"].append(
        {"name": "x", "image": "ctl:v1"}), "bench-up"), D),
    ("upgrade: the ServiceAccount", put("ctl", at(["spec", "template", "spec", "serviceAccountName"], "k6-operator"), "bench-up"), D),
    ("upgrade: another pod-template annotation", put("ctl", at(TEMPLATE_ANN + ["keep"], "not"), "bench-up"), D),
    ("upgrade: the replicas", put("ctl", at(["spec", "replicas"], 3), "bench-up"), D),
    ("upgrade: a label", put("ctl", at(["metadata", "labels"], {"evil": "yes"}), "bench-up"), D),
    ("upgrade: pod-template finalizers", put("ctl", at(["spec", "template", "metadata", "finalizers"], ["bench/stuck"]), "bench-up"), D),
    ("upgrade: pod-template labels", put("ctl", at(["spec", "template", "metadata", "labels", "evil"], "yes"), "bench-up"), D),
    ("upgrade: a pod-spec field newer than Kubernetes 1.30 (pod-level resources)",
     put("ctl", at(["spec", "template", "spec", "resources"], {"limits": {"cpu": "8"}}), "bench-up"), D),
    ("upgrade: the deployment.kubernetes.io/revision annotation",
     put("ctl", at(["metadata", "annotations", "deployment.kubernetes.io/revision"], "99"), "bench-up"), D),
    # the backend (findings 3 and 5)
    ("backend: replicas 7", put("backend", at(["spec", "replicas"], 7), "bench"), A),
    ("backend: rollout restart", put("backend", at(TEMPLATE_ANN + ["kubectl.kubernetes.io/restartedAt"], "now"), "bench"), A),
    ("backend: restore record", put("backend", at(["metadata", "annotations", RESTORE], '{"replicas":5}'), "bench"), A),
    ("backend: replicas 2147483647", put("backend", at(["spec", "replicas"], 2147483647), "bench"), D),
    ("backend: replicas 1000", put("backend", at(["spec", "replicas"], 1000), "bench"), D),
    ("backend: image", put("backend", lambda d: container("nginx")(d).update(image="evil.example/pwn:1"), "bench"), D),
    ("backend: ServiceAccount", put("backend", at(["spec", "template", "spec", "serviceAccountName"], "bench-k6-operator-controller"), "bench"), D),
    ("backend: pod-template finalizers", put("backend", at(["spec", "template", "metadata", "finalizers"], ["bench/stuck"]), "bench"), D),
    ("backend: pod-template labels", put("backend", at(["spec", "template", "metadata", "labels", "evil"], "yes"), "bench"), D),
    ("backend: another pod-template annotation", put("backend", at(TEMPLATE_ANN + ["keep"], "not"), "bench"), D),
    ("backend: the revision annotation", put("backend", at(["metadata", "annotations", "deployment.kubernetes.io/revision"], "9"), "bench"), D),
    ("backend: Deployment finalizers", put("backend", at(["metadata", "finalizers"], ["bench/stuck"]), "bench"), D),
    ("backend: strategy", put("backend", at(["spec", "strategy"], {"type": "Recreate"}), "bench"), D),
    # the data plane and NGINX Gateway Fabric's NginxProxy (finding 3)
    ("data plane: replicas 3", put("dataplane", at(["spec", "replicas"], 3), "bench-dp"), A),
    ("data plane: replicas 100000", put("dataplane", at(["spec", "replicas"], 100000), "bench-dp"), D),
    # the bounds themselves (levels 1 to 100; the backend from 0): at each end and one past it
    ("data plane: replicas 100, the highest level", put("dataplane", at(["spec", "replicas"], 100), "bench-dp"), A),
    ("data plane: replicas 101", put("dataplane", at(["spec", "replicas"], 101), "bench-dp"), D),
    ("data plane: replicas 0", put("dataplane", at(["spec", "replicas"], 0), "bench-dp"), D),
    ("backend: replicas 0, a churn step's", put("backend", at(["spec", "replicas"], 0), "bench"), A),
    ("data plane: pod-template finalizers", put("dataplane", at(["spec", "template", "metadata", "finalizers"], ["x/y"]), "bench-dp"), D),
    ("NginxProxy: replicas 3", put("proxy", at(["spec", "kubernetes", "deployment", "replicas"], 3), "bench-ngf"), A),
    ("NginxProxy: replicas 100000", put("proxy", at(["spec", "kubernetes", "deployment", "replicas"], 100000), "bench-ngf"), D),
    ("NginxProxy: its finalizers", put("proxy", at(["metadata", "finalizers"], ["x/y"]), "bench-ngf"), D),
    # routes (finding 4)
    ("routes: the run's HTTPRoute", create(HTTPROUTES, route("bench-route-h-1")), A),
    ("routes: the run's Ingress", create(INGRESSES, ingress("bench-route-i-1")), A),
    ("routes: the run's Ingress to the headless backend", create(INGRESSES, ingress("bench-route-i-2", "i-2.routes.bench.local",
                                                                                   ("bench-backend-headless", 8080))), A),
    ("routes: deleting the run's HTTPRoute", delete(HTTPROUTES, route("bench-route-h-3", "h-3.routes.bench.local")), A),
    ("routes: an Ingress for login.corp.example.com to bench-grafana",
     create(INGRESSES, ingress("bench-route-i-9", "login.corp.example.com", ("bench-grafana", 80))), D),
    ("routes: an HTTPRoute on another namespace's Gateway for *.corp.example.com to Prometheus",
     create(HTTPROUTES, route("bench-route-h-9", "*.corp.example.com", ("bench-kube-prometheus-stac-prometheus", 9090),
                              parent={"name": "shared", "namespace": "infra"})), D),
    ("routes: the run's host to bench-grafana", create(HTTPROUTES, route("bench-route-h-8", backend=("bench-grafana", 80))), D),
    ("routes: an HTTPRoute with no hostnames (every host of the listener)", create(HTTPROUTES, route("bench-route-h-7", host=None)), D),
    ("routes: an HTTPRoute on the chart's Gateway, another listener",
     create(HTTPROUTES, route("bench-route-h-6", parent={"name": "bench", "namespace": "bench", "sectionName": "websecure"})), D),
    ("routes: an HTTPRoute mirroring to another Service",
     create(HTTPROUTES, with_rule(route("bench-route-h-5"), filters=[{"type": "RequestMirror", "requestMirror": {
         "backendRef": {"name": "bench-grafana", "port": 80}}}])), D),
    ("routes: an Ingress with a configuration-snippet annotation",
     create(INGRESSES, with_meta(ingress("bench-route-i-8"), annotations={"nginx.ingress.kubernetes.io/configuration-snippet": "x"})), D),
    ("routes: an Ingress of another class", create(INGRESSES, ingress("bench-route-i-7", cls=OTHER_CLASS)), D),
    ("routes: an Ingress with a default backend", create(INGRESSES, ingress("bench-route-i-6", defaultBackend={
        "service": {"name": "bench-grafana", "port": {"number": 80}}})), D),
    ("routes: an Ingress with a finalizer", create(INGRESSES, with_meta(ingress("bench-route-i-5"), finalizers=["x/y"])), D),
    ("routes: an Ingress without the run's label", create(INGRESSES, ingress("bench-route-i-4", labels={})), D),
]


# ---- the API server ----

def gateway_api_crd(work):
    """The HTTPRoute CRD of the Gateway API the chart pins, from its Go module (ci/tools/install.sh fetched it)."""
    chart = yaml.safe_load((ROOT / "charts" / "bench" / "Chart.yaml").read_text())["annotations"]
    version, channel = chart["bench.dev/gateway-api-version"], chart["bench.dev/gateway-api-channel"]
    out = subprocess.run(["go", "mod", "download", "-json", f"sigs.k8s.io/gateway-api@{version}"], cwd=work,
                         capture_output=True, text=True, check=True).stdout
    return Path(json.loads(out)["Dir"]) / "config" / "crd" / channel / "gateway.networking.k8s.io_httproutes.yaml"


def put_back(server, target, setup=None):
    """TARGET as its baseline (the admin's PUT over whatever the last row left), then setup(obj)."""
    path = PATHS[target]
    now = server.request("admin", "GET", path)
    obj = copy.deepcopy(BASELINES[target])
    obj["metadata"]["resourceVersion"] = now["metadata"]["resourceVersion"]
    if setup:
        setup(obj)
    server.request("admin", "PUT", path, obj)


def send(server, request):
    """One row's request: ("allowed", object) or ("denied", message); any other failure raises."""
    kind, path, what, release, setup = request
    user = runner(release)
    try:
        if kind == "put":
            put_back(server, path, setup)
            obj = server.request("admin", "GET", PATHS[path])
            what(obj)
            return A, server.request(user, "PUT", PATHS[path], obj)
        if kind == "create":
            try:
                return A, server.request(user, "POST", path, what)
            finally:
                try:
                    server.request("admin", "DELETE", f"{path}/{what['metadata']['name']}")
                except urllib.error.HTTPError:
                    pass
        server.request("admin", "POST", path, what)
        return A, server.request(user, "DELETE", f"{path}/{what['metadata']['name']}")
    except urllib.error.HTTPError as e:
        message = json.loads(e.read() or b"{}").get("message", str(e))
        # RBAC answers 403, a ValidatingAdmissionPolicy 422 (its validations' default reason, Invalid)
        if e.code == 403 or (e.code == 422 and "ValidatingAdmissionPolicy" in message):
            return D, message
        raise AssertionError(f"{e.code}, not an admission verdict: {message}") from None


@pytest.fixture(scope="module")
def api(helms, runner_values, work):
    ensure_kube_binaries()
    helm = helms[3]
    rendered = []
    for release, (ns, files, sets, kube) in RELEASES.items():
        args = ["-f", runner_values]
        for f in files:
            args += ["-f", helm.copy / f]
        for s in sets:
            args += ["--set", s]
        if kube:
            args += ["--kube-version", kube]
        result = helm("template", release, helm.chart, "-n", ns, *args, *POLICY_API, *ONLY)
        assert result.returncode == 0, result.stderr
        rendered.append(result.stdout)
    server = BareApiServer(work / "admission-requests-kube", {"admin": ["system:masters"], **{runner(r): [] for r in RELEASES}})
    server.start()
    try:
        for ns in ("bench", "up", "up-ctl", "dp", "ngf"):
            server.request("admin", "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for crd in (gateway_api_crd(work), NGINXPROXY_CRD):
            server.kubectl("admin", "apply", "--server-side", "-f", crd)
        server.kubectl("admin", "wait", "--for", "condition=Established", "crd/httproutes.gateway.networking.k8s.io",
                       "crd/nginxproxies.gateway.nginx.org", "--timeout", "60s")
        for text in rendered:
            server.kubectl("admin", "apply", "-f", "-", input=text)
        for target, obj in BASELINES.items():
            collection = PATHS[target].rsplit("/", 1)[0]
            server.request("admin", "POST", collection, obj)
        # a binding is enforced once the API server has compiled its policy: wait for a denial of each
        deadline = time.monotonic() + 90
        probes = [r for r in REQUESTS if r[0] in ("backend: replicas 2147483647", "upgrade: another image",
                                                   "data plane: replicas 100000", "NginxProxy: replicas 100000",
                                                   "routes: an Ingress without the run's label")]
        for what, request, _ in probes:
            while send(server, request)[0] == A:
                assert time.monotonic() < deadline, f"no policy denied {what!r} in 90 s"
                time.sleep(0.5)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def verdicts(api):
    return {what: send(api, request) for what, request, _ in REQUESTS}


def test_the_review_has_its_requests():
    assert len(REQUESTS) >= 50 and len({r[0] for r in REQUESTS}) == len(REQUESTS)


@pytest.mark.parametrize("what, request_, expected", REQUESTS, ids=[r[0] for r in REQUESTS])
def test_each_request(verdicts, what, request_, expected):
    verdict, detail = verdicts[what]
    assert verdict == expected, (what, detail)
    if verdict == D:
        assert "ValidatingAdmissionPolicy" in detail or "cannot" in detail, detail


def test_none_wrongly_allowed_none_wrongly_denied(verdicts):
    wrongly_allowed = [w for w, _, e in REQUESTS if e == D and verdicts[w][0] == A]
    wrongly_denied = [w for w, _, e in REQUESTS if e == A and verdicts[w][0] == D]
    print(f"requests: {len(REQUESTS)}, wrongly allowed: {len(wrongly_allowed)}, wrongly denied: {len(wrongly_denied)}")
    assert (wrongly_allowed, wrongly_denied) == ([], [])


def test_every_policy_compiled_without_warnings(api):
    for policy in api.request("admin", "GET", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies")["items"]:
        warnings = (policy.get("status") or {}).get("typeChecking", {}).get("expressionWarnings")
        assert warnings in (None, []), (policy["metadata"]["name"], warnings)
