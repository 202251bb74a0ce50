"""The controller-upgrade admission policy and Role at admission time, on a real kube-apiserver
(etcd + kube-apiserver v1.34, harness/apiserver.py; no controllers): the chart's rendered policy,
binding and Role applied, then updates of the controller's Deployment made as the runner's
ServiceAccount (a static-token user of that name, which RBAC matches as the ServiceAccount). What
the runner does (scenarios/lib/kube.js rollWorkload, restoreImage) is allowed; anything else of
the pod template, and an image other than the two the values name (image, currentImage), is denied,
whatever the restore record says. Its CEL is compiled by the API server itself, which helm-unittest
cannot do."""
import copy
import json
import re
import time
import urllib.error

import pytest
import yaml

from harness import admission
from harness.admission import RUNNER, set_at
from harness.apiserver import BareApiServer, ensure_kube_binaries

NS_CTL = "bench-ctl"
DEPLOYMENT = f"/apis/apps/v1/namespaces/{NS_CTL}/deployments/ctl"
RESTORE = "bench/churn-restore"
VALUES = ["--set", "loadtest.scenario=controller-upgrade",
          "--set", f"loadtest.controllerUpgrade.applies=true,loadtest.controllerUpgrade.namespace={NS_CTL}",
          "--set", f"loadtest.experimentNamespaces={{{NS_CTL}}}",
          "--set", "loadtest.controllerUpgrade.name=ctl,loadtest.controllerUpgrade.container=controller",
          "--set", "loadtest.controllerUpgrade.image=ctl:v2,loadtest.controllerUpgrade.currentImage=ctl:v1",
          "--api-versions", "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
          "-s", "templates/loadtest/admission-policy.yaml", "-s", "templates/loadtest/rbac.yaml"]


def deployment():
    labels = {"app.kubernetes.io/name": "ctl"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ctl", "namespace": NS_CTL},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels, "annotations": {"keep": "me"}},
                                  "spec": {"containers": [{"name": "proxy", "image": "proxy:v1"},
                                                          {"name": "controller", "image": "ctl:v1",
                                                           "args": ["--serve"]}]}}}}


@pytest.fixture(scope="module")
def api(helms, runner_values, work):
    ensure_kube_binaries()
    rendered = helms[3].template("-f", runner_values, *VALUES)
    assert rendered.returncode == 0, rendered.stderr
    server = BareApiServer(work / "admission-kube", {"admin": ["system:masters"], RUNNER: []})
    server.start()
    try:
        for ns in ("bench", NS_CTL):
            server.request("admin", "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                                   "metadata": {"name": ns}})
        server.kubectl("admin", "apply", "-f", "-", input=rendered.stdout)
        server.request("admin", "POST", f"/apis/apps/v1/namespaces/{NS_CTL}/deployments", deployment())
        # a binding is enforced once the API server has compiled its policy: wait for a denial
        deadline = time.monotonic() + 60
        while update(server, lambda d: d["spec"].update(replicas=2))[0] == "allowed":
            update(server, lambda d: d["spec"].update(replicas=1), user="admin")
            assert time.monotonic() < deadline, "the upgrade policy never denied a replicas change"
            time.sleep(0.5)
        yield server
    finally:
        server.stop()


def update(server, change, user=RUNNER):
    return admission.update(server, DEPLOYMENT, change, user)


def container(d, name):
    return next(c for c in d["spec"]["template"]["spec"]["containers"] if c["name"] == name)


def record(frm):
    """The restore record as kube.js writes it (JSON.stringify: no spaces)."""
    return json.dumps({"image": {"container": "controller", "from": frm}, "testid": "t", "at": "now",
                       "set": {"image": "ctl:v2"}}, separators=(",", ":"))


def roll(image=None, rec=None, drop_record=False):
    """What kube.js does: a new bench/restartedAt, and the image with its record."""
    def change(d):
        d["spec"]["template"]["metadata"]["annotations"]["bench/restartedAt"] = str(time.time())
        if image:
            container(d, "controller")["image"] = image
        annotations = d["metadata"].setdefault("annotations", {})
        if rec:
            annotations[RESTORE] = rec
        if drop_record:
            annotations.pop(RESTORE, None)
    return change


def test_the_runners_roll_upgrade_and_restore_are_allowed_in_turn(api):
    assert update(api, roll())[0] == "allowed"
    verdict, d = update(api, roll(image="ctl:v2", rec=record("ctl:v1")))
    assert verdict == "allowed", d
    verdict, d = update(api, roll(image="ctl:v1", drop_record=True))
    assert verdict == "allowed", d
    assert container(d, "controller")["image"] == "ctl:v1" and RESTORE not in d["metadata"].get("annotations", {})


IMAGES = "may set container controller's image only to ctl:v2 (loadtest.controllerUpgrade.image) or ctl:v1"
DENIED = [
    ("another image", roll(image="evil:1"), IMAGES),
    ("the image a record names", roll(image="evil:1", rec=record("evil:1")), IMAGES),
    ("the other container's image", lambda d: container(d, "proxy").update(image="ctl:v2"),
     "may not change the controller's containers but container controller's image"),
    ("the container's args", lambda d: container(d, "controller").update(args=["--evil"]),
     "may not change container controller of the controller's Deployment ctl"),
    ("the ServiceAccount", set_at(["spec", "template", "spec", "serviceAccountName"], "k6-operator"),
     "may not change the pod spec of the controller's Deployment ctl"),
    ("another pod-template annotation", set_at(["spec", "template", "metadata", "annotations", "keep"], "not"),
     "may not change the pod template's annotations of the controller's Deployment ctl beyond bench/restartedAt"),
    ("pod-template finalizers", set_at(["spec", "template", "metadata", "finalizers"], ["bench/stuck"]),
     "may not change the pod template's metadata"),
    ("the replicas", set_at(["spec", "replicas"], 3), "may not change the spec of the controller's Deployment ctl beyond template"),
    ("a label", set_at(["metadata", "labels"], {"evil": "yes"}),
     "may not change the metadata of the controller's Deployment ctl beyond annotations"),
]


@pytest.mark.parametrize("what, change, message", DENIED, ids=[case[0] for case in DENIED])
def test_anything_else_is_denied_naming_what_is_allowed(api, what, change, message):
    verdict, text = update(api, change)
    assert verdict == "denied" and message in text, (what, text)


def test_going_back_only_to_the_current_image_the_values_name(api):
    assert update(api, roll(image="ctl:v2", rec=record("ctl:v1")))[0] == "allowed"
    verdict, text = update(api, roll(image="ctl:v0", drop_record=True))
    assert verdict == "denied" and IMAGES in text, text
    assert update(api, roll(image="ctl:v1", drop_record=True))[0] == "allowed"


def test_a_record_the_runner_wrote_widens_nothing(api):
    """The restore record is the runner's own writing: one naming another image (beside the current one,
    or twice under one key, as JavaScript's JSON.parse keeps the last) lets no other image in."""
    for rec in ('{"image":{"container":"controller","from":"ctl:v1"},"x":{"from":"evil:1"}}',
                '{"image":{"container":"controller","from":"ctl:v1","from":"evil:1"},"set":{"image":"ctl:v2"}}'):
        verdict, d = update(api, roll(image="ctl:v2", rec=rec))
        assert verdict == "allowed", d
        verdict, text = update(api, roll(image="evil:1"))
        assert verdict == "denied" and IMAGES in text, text
        update(api, roll(image="ctl:v1", drop_record=True), user="admin")


def test_the_policy_compiled_without_warnings(api):
    policy = next(p for p in api.request("admin", "GET", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies")["items"]
                  if re.fullmatch(r".*-loadtest-[0-9a-f]{8}-upgrade", p["metadata"]["name"]))
    assert (policy.get("status") or {}).get("typeChecking", {}).get("expressionWarnings") in (None, []), policy["status"]


def test_the_runner_may_not_touch_another_deployment(api):
    other = copy.deepcopy(deployment())
    other["metadata"]["name"] = "other"
    api.request("admin", "POST", f"/apis/apps/v1/namespaces/{NS_CTL}/deployments", other)
    with pytest.raises(urllib.error.HTTPError) as e:
        api.request(RUNNER, "GET", f"/apis/apps/v1/namespaces/{NS_CTL}/deployments/other")
    assert e.value.code == 403
