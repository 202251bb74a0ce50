"""long-lived's stream backend under the runner's Role and admission policies, on a real kube-apiserver
(etcd + kube-apiserver v1.34, harness/apiserver.py; no controllers): the chart's rendered policies,
bindings and Role for loadtest.scenario long-lived with its backend disruption applied, then updates
of the Deployments made as the runner's ServiceAccount. What the backend disruption does (scale the
stream Deployment, record and drop the restore annotation, scenarios/lib/kube.js) is allowed; any
other change of the stream Deployment is denied by the stream policy, and the backend policy leaves
it alone (it would deny the replicas-and-restore changes of a Deployment not named bench-backend)."""
import re
import time
import urllib.error

import pytest

from harness.admission import RUNNER, set_at, update
from harness.apiserver import BareApiServer, ensure_kube_binaries

STREAM = "/apis/apps/v1/namespaces/bench/deployments/bench-stream"
RESTORE = "bench/churn-restore"
VALUES = ["--set", "controller=traefik,traefik.enabled=true,loadtest.target=ingress,loadtest.scenario=long-lived",
          "--set", "loadtest.longLived.image.repository=bench/stream,loadtest.longLived.disruptions={backend}",
          "--api-versions", "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
          "-s", "templates/loadtest/admission-policy.yaml", "-s", "templates/loadtest/rbac.yaml"]


def deployment(name, component):
    labels = {"app.kubernetes.io/name": "bench", "app.kubernetes.io/instance": "bench", "app.kubernetes.io/component": component}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "bench"},
            "spec": {"replicas": 3, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "stream", "image": "bench/stream:local",
                                                           "args": ["--listen", ":8080"]}]}}}}


def image(ref):
    return lambda d: d["spec"]["template"]["spec"]["containers"][0].update(image=ref)


@pytest.fixture(scope="module")
def api(helms, runner_values, work):
    ensure_kube_binaries()
    rendered = helms[3].template("-f", runner_values, *VALUES)
    assert rendered.returncode == 0, rendered.stderr
    server = BareApiServer(work / "admission-stream-kube", {"admin": ["system:masters"], RUNNER: []})
    server.start()
    try:
        server.request("admin", "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                               "metadata": {"name": "bench"}})
        server.kubectl("admin", "apply", "-f", "-", input=rendered.stdout)
        server.request("admin", "POST", "/apis/apps/v1/namespaces/bench/deployments", deployment("bench-stream", "stream"))
        # a binding is enforced once the API server has compiled its policy: wait for a denial (of an
        # image change, put back by the admin while it still passes)
        deadline = time.monotonic() + 60
        while update(server, STREAM, image("bench/stream:probe"))[0] == "allowed":
            update(server, STREAM, image("bench/stream:local"), user="admin")
            assert time.monotonic() < deadline, "the stream policy never denied a pod template change"
            time.sleep(0.5)
        yield server
    finally:
        server.stop()


def test_the_backend_disruption_is_allowed(api):
    """Scale up by 2 (loadtest.longLived.replicas 3, the chart's) with the restore record, back down, the
    record dropped: kube.js's calls in turn."""
    verdict, d = update(api, STREAM, lambda d: (d["spec"].update(replicas=5),
                                                d["metadata"].setdefault("annotations", {}).update({RESTORE: '{"replicas":3}'})))
    assert verdict == "allowed", d
    verdict, d = update(api, STREAM, lambda d: (d["spec"].update(replicas=3), d["metadata"]["annotations"].pop(RESTORE)))
    assert verdict == "allowed", d
    assert d["spec"]["replicas"] == 3 and RESTORE not in (d["metadata"].get("annotations") or {})


DENIED = [
    ("its image", image("evil:1"),
     "may not change the pod template of the stream backend's Deployment bench-stream"),
    ("its ServiceAccount", set_at(["spec", "template", "spec", "serviceAccountName"], "k6-operator"),
     "may not change the pod template of the stream backend's Deployment bench-stream"),
    ("a rollout restart", set_at(["spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt"], "now"),
     "may not change the pod template of the stream backend's Deployment bench-stream"),
    ("its selector's labels on the template", set_at(["spec", "template", "metadata", "labels", "evil"], "yes"),
     "may not change the pod template of the stream backend's Deployment bench-stream"),
    ("its strategy", set_at(["spec", "strategy"], {"type": "Recreate"}), "may not change the spec of the stream backend's Deployment bench-stream beyond replicas, template"),
    ("a label", set_at(["metadata", "labels"], {"evil": "yes"}),
     "may not change the metadata of the stream backend's Deployment bench-stream beyond annotations"),
    ("more replicas than the disruption adds", set_at(["spec", "replicas"], 6),
     "may set the stream backend's spec.replicas only from 3 to 5 (loadtest.longLived.replicas"),
    ("its finalizers", set_at(["metadata", "finalizers"], ["bench/stuck"]),
     "may not change the metadata of the stream backend's Deployment bench-stream beyond annotations"),
]


@pytest.mark.parametrize("what, change, message", DENIED, ids=[case[0] for case in DENIED])
def test_anything_else_of_the_stream_deployment_is_denied(api, what, change, message):
    verdict, text = update(api, STREAM, change)
    assert verdict == "denied" and message in text, (what, text)


def test_the_policies_compiled_without_warnings(api):
    policies = [p for p in api.request("admin", "GET", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies")["items"]
                if re.fullmatch(r".*-loadtest-[0-9a-f]{8}-(stream|backend)", p["metadata"]["name"])]
    assert len(policies) == 2, [p["metadata"]["name"] for p in policies]
    for policy in policies:
        assert (policy.get("status") or {}).get("typeChecking", {}).get("expressionWarnings") in (None, []), policy["status"]


def test_the_runner_may_not_touch_another_deployment(api):
    api.request("admin", "POST", "/apis/apps/v1/namespaces/bench/deployments", deployment("other", "other"))
    with pytest.raises(urllib.error.HTTPError) as e:
        api.request(RUNNER, "GET", "/apis/apps/v1/namespaces/bench/deployments/other")
    assert e.value.code == 403
