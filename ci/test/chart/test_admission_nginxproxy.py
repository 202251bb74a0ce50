"""dataplane-scale through NGINX Gateway Fabric's NginxProxy (loadtest.dataplaneScale.via nginxproxy) at
admission time, on a real kube-apiserver (etcd + kube-apiserver v1.34, harness/apiserver.py; no
controllers): the chart's rendered parameters policy, binding and Role applied, then updates of the
NginxProxy made as the runner's ServiceAccount (a static-token user of that name, which RBAC matches as
the ServiceAccount). What the runner does (scenarios/lib/kube.js scaleDeployment, restoreDeployment on
spec.kubernetes.deployment.replicas) is allowed; any other change of the object is denied, the NGINX
Deployment may only be read, and no other NginxProxy reached.

The NginxProxy CRD here is bench's own stand-in, ci/test/harness/nginxproxy-crd.yaml (the real one is
NGF's, not shipped or copied). Checked 2026-11-27 against the real CRD of nginx/nginx-gateway-fabric tag
v2.4.2 (config/crd/bases/gateway.nginx.org_nginxproxies.yaml), read with PyYAML: the same name
nginxproxies.gateway.nginx.org, group gateway.nginx.org, kind NginxProxy (list NginxProxyList, plural
nginxproxies, singular nginxproxy), scope Namespaced, one version v1alpha2 served and stored with no
subresources, and spec.kubernetes.deployment.replicas present with type integer, format int32. This
module was also run once with the real CRD in the stand-in's place: the same cases passed and the policy
compiled without warnings. test_the_stand_in_and_the_contract_agree keeps the stand-in, the contract's
dataplaneVia entry and its runnerRole rule on the same group, resource, kind, version and field."""
import json
import os
import re
import time
import urllib.error
from pathlib import Path

import pytest
import yaml

from harness import admission
from harness.admission import RUNNER, set_at
from harness.apiserver import BareApiServer, ensure_kube_binaries

ROOT = Path(__file__).resolve().parents[3]
# BENCH_TEST_NGINXPROXY_CRD: another CRD file in the stand-in's place (the real one, for the check above)
CRD = Path(os.environ.get("BENCH_TEST_NGINXPROXY_CRD") or ROOT / "ci" / "test" / "harness" / "nginxproxy-crd.yaml")
NS = "bench"
PROXIES = f"/apis/gateway.nginx.org/v1alpha2/namespaces/{NS}/nginxproxies"
PROXY = f"{PROXIES}/bench-proxy-config"
DEPLOYMENT = f"/apis/apps/v1/namespaces/{NS}/deployments/bench-nginx"
RESTORE = "bench/churn-restore"
VALUES = ["--set", "loadtest.scenario=dataplane-scale",
          "--api-versions", "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
          "--api-versions", "gateway.networking.k8s.io/v1",
          "-s", "templates/loadtest/admission-policy.yaml", "-s", "templates/loadtest/rbac.yaml"]


def nginx_proxy(name="bench-proxy-config"):
    """An NginxProxy as NGF's chart makes it, with settings besides the replicas."""
    return {"apiVersion": "gateway.nginx.org/v1alpha2", "kind": "NginxProxy",
            "metadata": {"name": name, "namespace": NS, "labels": {"app.kubernetes.io/instance": "bench"}},
            "spec": {"logging": {"errorLevel": "info"},
                     "kubernetes": {"deployment": {"replicas": 1, "container": {"image": {"repository": "nginx"}}},
                                    "service": {"type": "ClusterIP"}}}}


@pytest.fixture(scope="module")
def api(helms, runner_values, work):
    ensure_kube_binaries()
    helm = helms[3]
    rendered = helm.template("-f", runner_values, "-f", helm.copy / "values" / "nginx-gateway-fabric.yaml", *VALUES)
    assert rendered.returncode == 0, rendered.stderr
    server = BareApiServer(work / "admission-nginxproxy-kube", {"admin": ["system:masters"], RUNNER: []})
    server.start()
    try:
        server.request("admin", "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                               "metadata": {"name": NS}})
        # server-side: the real CRD is too big for client-side apply's annotation
        server.kubectl("admin", "apply", "--server-side", "-f", CRD)
        server.kubectl("admin", "wait", "--for", "condition=Established", "crd/nginxproxies.gateway.nginx.org",
                       "--timeout", "60s")
        server.kubectl("admin", "apply", "-f", "-", input=rendered.stdout)
        server.request("admin", "POST", PROXIES, nginx_proxy())
        server.request("admin", "POST", PROXIES, nginx_proxy("other"))
        labels = {"app.kubernetes.io/name": "bench-nginx"}
        server.request("admin", "POST", f"/apis/apps/v1/namespaces/{NS}/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bench-nginx", "namespace": NS},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}})
        # a binding is enforced once the API server has compiled its policy: wait for a denial
        deadline = time.monotonic() + 60
        while update(server, set_at(["spec", "logging", "errorLevel"], "debug"))[0] == "allowed":
            update(server, set_at(["spec", "logging", "errorLevel"], "info"), user="admin")
            assert time.monotonic() < deadline, "the parameters policy never denied a change of spec.logging"
            time.sleep(0.5)
        yield server
    finally:
        server.stop()


def update(server, change, user=RUNNER, path=PROXY):
    return admission.update(server, path, change, user)


def scale(replicas, record=None, drop_record=False):
    """What kube.js does: the replicas, with the restore record written or removed in the same update."""
    def change(obj):
        obj["spec"]["kubernetes"]["deployment"]["replicas"] = replicas
        annotations = obj["metadata"].setdefault("annotations", {})
        if record:
            annotations[RESTORE] = record
        if drop_record:
            annotations.pop(RESTORE, None)
    return change


def test_the_runners_scale_and_restore_are_allowed_in_turn(api):
    record = json.dumps({"replicas": 1, "restartedAt": None, "testid": "t", "at": "now",
                         "set": {"replicas": 3, "restartedAt": None}}, separators=(",", ":"))
    verdict, obj = update(api, scale(3, record=record))
    assert verdict == "allowed", obj
    verdict, obj = update(api, scale(1, drop_record=True))
    assert verdict == "allowed", obj
    assert obj["spec"]["kubernetes"]["deployment"]["replicas"] == 1 and RESTORE not in obj["metadata"].get("annotations", {})


def without(*keys):
    def change(obj):
        node = obj
        for key in keys[:-1]:
            node = node[key]
        del node[keys[-1]]
    return change


ONLY_REPLICAS = "NginxProxy bench-proxy-config beyond"
DENIED = [
    ("another top-level setting", set_at(["spec", "logging", "errorLevel"], "debug"), ONLY_REPLICAS),
    ("a new top-level setting", set_at(["spec", "disableHTTP2"], True), ONLY_REPLICAS),
    ("the Service beside the Deployment", set_at(["spec", "kubernetes", "service", "type"], "LoadBalancer"), ONLY_REPLICAS),
    ("the pod settings beside the replicas", set_at(["spec", "kubernetes", "deployment", "pod", "terminationGracePeriodSeconds"], 1),
     ONLY_REPLICAS),
    ("the NGINX image beside the replicas", set_at(["spec", "kubernetes", "deployment", "container", "image", "repository"], "evil"),
     ONLY_REPLICAS),
    ("an autoscaler beside the replicas", set_at(["spec", "kubernetes", "deployment", "autoscaling"], {"enable": True, "maxReplicas": 3}),
     ONLY_REPLICAS),
    ("the container settings removed", without("spec", "kubernetes", "deployment", "container"), ONLY_REPLICAS),
    ("a label", set_at(["metadata", "labels", "evil"], "yes"), "may not change the metadata of NginxProxy bench-proxy-config beyond annotations"),
    ("a finalizer", set_at(["metadata", "finalizers"], ["bench/stuck"]),
     "may not change the metadata of NginxProxy bench-proxy-config beyond annotations"),
    ("100000 replicas", set_at(["spec", "kubernetes", "deployment", "replicas"], 100000),
     "may set spec.kubernetes.deployment.replicas of NginxProxy bench-proxy-config only from 1 to 100"),
    ("another annotation", set_at(["metadata", "annotations", "evil"], "yes"),
     "may not change the annotations of NginxProxy bench-proxy-config beyond bench/churn-restore"),
]


@pytest.mark.parametrize("what, change, message", DENIED, ids=[case[0] for case in DENIED])
def test_anything_else_is_denied_naming_what_is_allowed(api, what, change, message):
    verdict, text = update(api, change)
    assert verdict == "denied" and message in text, (what, text)


def test_an_admin_is_not_held_by_the_policy(api):
    """The binding matches the runner alone (NGF and people manage the NginxProxy as ever)."""
    assert update(api, set_at(["spec", "logging", "errorLevel"], "warn"), user="admin")[0] == "allowed"
    assert update(api, set_at(["spec", "logging", "errorLevel"], "info"), user="admin")[0] == "allowed"


def test_the_runner_may_read_the_nginx_deployment_and_not_change_it(api):
    assert api.request(RUNNER, "GET", DEPLOYMENT)["metadata"]["name"] == "bench-nginx"
    verdict, text = update(api, set_at(["spec", "replicas"], 2), path=DEPLOYMENT)
    assert verdict == "denied" and "forbidden" in text, text


def test_the_runner_may_not_reach_another_nginxproxy(api):
    for method, body in (("GET", None), ("PUT", nginx_proxy("other"))):
        with pytest.raises(urllib.error.HTTPError) as e:
            api.request(RUNNER, method, f"{PROXIES}/other", body)
        assert e.value.code == 403, method


def test_the_policy_compiled_without_warnings(api):
    policy = next(p for p in api.request("admin", "GET", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies")["items"]
                  if re.fullmatch(r".*-loadtest-[0-9a-f]{8}-parameters", p["metadata"]["name"]))
    assert (policy.get("status") or {}).get("typeChecking", {}).get("expressionWarnings") in (None, []), policy["status"]


def test_the_stand_in_and_the_contract_agree():
    """The stand-in CRD, scenarios/contract.json's dataplaneVia.nginxproxy and its runnerRole rule name
    the same group, resource, kind and version, and the stand-in has the contract's replicas field."""
    contract = json.loads((ROOT / "scenarios" / "contract.json").read_text())
    via = contract["dataplaneVia"]["nginxproxy"]
    rule = next(r for r in contract["runnerRole"]["rules"] if r["target"] == "parameters" and r.get("via") == "nginxproxy")
    crd = yaml.safe_load((ROOT / "ci" / "test" / "harness" / "nginxproxy-crd.yaml").read_text())["spec"]
    assert (crd["group"], crd["names"]["plural"], crd["names"]["kind"], [v["name"] for v in crd["versions"]]) == (
        rule["apiGroup"], rule["resource"], via["kind"], [via["version"]])
    node = crd["versions"][0]["schema"]["openAPIV3Schema"]
    for key in via["replicas"].split("."):
        node = node["properties"][key]
    assert (node["type"], node["format"]) == ("integer", "int32")
