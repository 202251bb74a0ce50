"""Uninstall when the namespace is deleted first, as charts/bench/README.md
("When the hook cannot run", "Never kubectl delete namespace bench before helm uninstall") says:
- while the namespace is terminating and Helm still finds its record, the uninstall fails because
  the pre-delete hook cannot be created there ("being terminated"), and `--no-hooks` is the way
  out: it removes the release's cluster-scoped objects too;
- once the namespace is gone, Helm has forgotten the release, the cluster-scoped objects stay, and
  the README's listing command finds them (to delete by hand).
The namespace controller deletes every object without a finalizer in its first sweep, the release's
record (a Secret) among them, so which case a user meets is a race. The first case holds the
record with a finalizer of the test's own to make it certain; nothing else is staged. Each case
installs its own release in its own namespace (the k6-operator does not watch it: its TestRun never
starts, which the uninstall does not need)."""
import json
import re

import pytest

from cluster_lib import wait_for

HOLD = "bench.e2e/hold"
# charts/bench/README.md's command for the cluster-scoped objects a deleted namespace leaves
LISTED_KINDS = ("clusterrole,clusterrolebinding,validatingwebhookconfiguration,mutatingwebhookconfiguration,"
                "validatingadmissionpolicy,validatingadmissionpolicybinding")


def install(kube, namespace, testid):
    """The release NAMESPACE (named as its namespace) with one backend pod; its cluster-scoped objects."""
    kube.kubectl("delete", "namespace", namespace, "--ignore-not-found", "--wait=true", "--timeout=120s")
    kube.kubectl("create", "namespace", namespace)
    kube.for_release(namespace, namespace).install(testid, "--set", "backend.replicas=1", "--set", "loadtest.duration=10s")
    manifest = kube.helm("get", "manifest", namespace, "-n", namespace).stdout
    scoped = sorted(f"{o['kind'].lower()}.admissionregistration.k8s.io/{o['metadata']['name']}"
                    for o in kube.as_objects(manifest) if o["kind"].startswith("ValidatingAdmissionPolicy"))
    assert scoped, "the release has no cluster-scoped objects to lose (no ValidatingAdmissionPolicy)"
    return scoped


def listed(kube, release):
    """What the README's listing command finds for RELEASE (its names start with the namespace)."""
    names = kube.kubectl("get", LISTED_KINDS, "-o", "name").stdout.split()
    return sorted(n for n in names if re.search(rf"/{re.escape(release)}-", n))


def release_record(kube, namespace):
    out = kube.kubectl("-n", namespace, "get", "secrets", "-l", f"owner=helm,name={namespace}", "-o", "name").stdout
    return out.split()


def gone(kube, namespace):
    return kube.kubectl("get", "namespace", namespace, check=False).returncode != 0


def test_terminating_namespace_uninstall_fails_and_no_hooks_is_the_way_out(kube, testid):
    ns = "bench-terminating"
    scoped = install(kube, ns, f"{testid}-terminating")
    (record,) = release_record(kube, ns)
    kube.kubectl("-n", ns, "patch", record, "--type=merge", "-p", json.dumps({"metadata": {"finalizers": [HOLD]}}))
    try:
        kube.kubectl("delete", "namespace", ns, "--wait=false")
        wait_for(f"namespace {ns} terminating", lambda: kube.kubectl_json("get", "namespace", ns)["status"].get("phase") == "Terminating", 30)
        r = kube.helm("uninstall", ns, "-n", ns, "--timeout", "2m", check=False)
        assert r.returncode != 0 and "being terminated" in r.stderr, f"exit {r.returncode}:\n{r.stderr}"
        assert listed(kube, ns) == scoped, "the failed uninstall changed the cluster-scoped objects"
        # the way out the README gives
        r = kube.helm("uninstall", ns, "-n", ns, "--no-hooks", "--timeout", "2m", check=False)
        assert r.returncode == 0, f"helm uninstall --no-hooks exited {r.returncode}:\n{r.stderr}"
        assert listed(kube, ns) == [], f"left after --no-hooks: {listed(kube, ns)}"
    finally:
        kube.kubectl("-n", ns, "patch", record, "--type=merge", "-p", '{"metadata":{"finalizers":null}}', check=False)
    wait_for(f"namespace {ns} gone", lambda: gone(kube, ns), 120)


def test_namespace_deleted_first_leaves_what_the_readme_lists(kube, testid):
    ns = "bench-deleted"
    scoped = install(kube, ns, f"{testid}-deleted")
    kube.kubectl("delete", "namespace", ns, "--wait=true", "--timeout=120s")
    r = kube.helm("uninstall", ns, "-n", ns, check=False)
    assert r.returncode != 0 and "not found" in r.stderr, f"exit {r.returncode}:\n{r.stderr}"
    left = listed(kube, ns)
    assert left == scoped, f"the README's command lists {left}; the release had {scoped}"
    kube.kubectl("delete", *left)
    if listed(kube, ns):
        pytest.fail(f"still there after deleting them: {listed(kube, ns)}")
