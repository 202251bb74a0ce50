"""helm uninstall leaves nothing the chart created, in the cases a user meets: after a finished run,
during a run, and with a runner image that cannot be pulled (the pre-delete hook runs a curl image,
not the runner). The release is gone afterwards: a later case that needs it puts it back
(conftest.py's main_release)."""
import time

import pytest

from cluster_lib import wait_for


def uninstall_leftovers(kube):
    """Uninstalls the release and returns what is left of it: every object of its manifest and
    hooks, and any TestRun, Job or pod in the namespace."""
    manifest = kube.helm("get", "manifest", kube.release, "-n", kube.namespace).stdout
    hooks = kube.helm("get", "hooks", kube.release, "-n", kube.namespace).stdout
    objects = sorted({(o["kind"], o["metadata"]["name"]) for o in kube.as_objects(f"{manifest}\n---\n{hooks}")})
    assert objects, "the release has no objects"
    kube.helm("uninstall", kube.release, "-n", kube.namespace, "--wait", "--timeout", "3m")
    # the pods of the release end on their own schedule: wait for them (not a failure by itself,
    # what is left is listed below)
    kube.kubectl("-n", kube.namespace, "wait", "--for=delete", "pod", "-l",
                 f"app.kubernetes.io/instance={kube.release}", "--timeout=60s", check=False)
    left = [f"{kind}/{name}" for kind, name in objects
            if kube.kubectl("-n", kube.namespace, "get", kind, name, check=False).returncode == 0]
    for resource in ("testruns.k6.io", "jobs", "pods"):
        left += kube.kubectl("-n", kube.namespace, "get", resource, "-o", "name").stdout.split()
    return left


def wait_for_pod(kube, selector, what, predicate, timeout_s):
    def probe():
        pods = kube.kubectl_json("-n", kube.namespace, "get", "pods", "-l", selector)["items"]
        return any(predicate(p) for p in pods)
    try:
        wait_for(what, probe, timeout_s)
    except AssertionError as e:
        pytest.fail(f"{e}\n{kube.kubectl('-n', kube.namespace, 'get', 'pods', '-o', 'wide', check=False).stdout}")


def statuses(pod, *keys):
    return [s for k in keys for s in pod.get("status", {}).get(k) or []]


def test_uninstall_removes_everything(kube, main_release):
    assert uninstall_leftovers(kube) == []


def test_uninstall_during_a_run_removes_everything(kube):
    kube.install("e2e-uninstall-mid-run")
    wait_for_pod(kube, "app=k6,runner=true", "a runner container running",
                 lambda p: any(s.get("state", {}).get("running") for s in statuses(p, "containerStatuses")), 180)
    assert uninstall_leftovers(kube) == []


def test_uninstall_with_an_unpullable_runner_image_removes_everything(kube):
    """Pull policy Never and an image that was never built, as a registry's missing image would be:
    the TestRun never starts, and uninstall still works."""
    kube.install("e2e-uninstall-no-image", "--set", "loadtest.runner.image.repository=bench/never-built",
                 "--set", "loadtest.runner.image.tag=none")
    wait_for_pod(kube, "app=k6", "a k6 pod waiting with ErrImageNeverPull",
                 lambda p: any(s.get("state", {}).get("waiting", {}).get("reason") == "ErrImageNeverPull"
                               for s in statuses(p, "containerStatuses", "initContainerStatuses")), 120)
    assert_helm_test_names_the_image(kube, "bench/never-built:none")
    assert uninstall_leftovers(kube) == []


def assert_helm_test_names_the_image(kube, image):
    """The TestRun never starts, and Helm does not wait for it (a hook): `helm test` with the
    TestRun check fails at once (well inside tests.testRun.startSeconds, 180 s), naming the pull
    failure, the image and the key to change."""
    name = f"{kube.release}-test-testrun"
    start = time.monotonic()
    r = kube.helm("test", kube.release, "-n", kube.namespace, "--filter", f"name={name}", "--logs",
                  "--timeout", "5m", check=False)
    took = time.monotonic() - start
    log = kube.kubectl("-n", kube.namespace, "logs", name, check=False).stdout
    assert r.returncode != 0, f"helm test passed although the TestRun cannot start:\n{r.stdout}"
    assert "ErrImageNeverPull" in log and f'"{image}"' in log, log
    assert "set loadtest.runner.image" in log, log
    assert took < 180, f"helm test took {took:.0f} s"
