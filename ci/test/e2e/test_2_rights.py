"""Least privilege as the API server answers it (kubectl auth can-i): the runner's ServiceAccount
and the e2e Traefik's. Each case lists every answer that differs from the expected one."""


def answers_that_differ(kube, user, questions):
    wrong = []
    for want, args in questions:
        got = kube.can_i(*args, as_user=user)
        if got != want:
            wrong.append(f"can-i {' '.join(args)}: {got!r}, want {want!r}")
    return wrong


def test_runner_service_account_confined_to_its_namespace(kube, main_run, runner_sa):
    ns = kube.namespace
    backend = kube.backend_deployment()
    assert backend, f"no backend Deployment of release {kube.release}"
    questions = [
        ("yes", ("update", f"deployments.apps/{backend}", "-n", ns)),   # control: the check can say yes
        ("no", ("update", "deployments.apps", "-n", "default")),
        ("no", ("delete", "pods", "-n", "kube-system")),
        ("no", ("get", "secrets", "-n", ns)),
        ("no", ("create", "clusterroles.rbac.authorization.k8s.io", "-n", ns)),
    ]
    assert answers_that_differ(kube, f"system:serviceaccount:{ns}:{runner_sa}", questions) == []


def test_runner_role_allows_the_backend_deployment_only(kube, main_run, runner_sa):
    """Yes on the backend Deployment (get, update) and listing pods; no on the Deployments the
    subcharts create in the release namespace (names as they render for this release), on any
    Deployment without a name, on every other Deployment of the cluster, on the scale subresource,
    patch, and on pod delete (the run is dynamic: pod delete is granted for podkill only)."""
    ns, rel = kube.namespace, kube.release
    backend = kube.backend_deployment()
    assert backend, f"no backend Deployment of release {rel}"
    q = lambda want, *args: (want, (*args, "-n", ns))
    questions = [
        q("yes", "get", f"deployments.apps/{backend}"),
        q("yes", "update", f"deployments.apps/{backend}"),
        q("yes", "list", "pods"),
        q("no", "patch", f"deployments.apps/{backend}"),
        q("no", "update", f"deployments.apps/{backend}", "--subresource=scale"),
        q("no", "update", "deployments.apps"),
        q("no", "list", "deployments.apps"),
        q("no", "delete", "pods"),
        q("no", "get", "pods"),
    ]
    for d in (f"{rel}-kube-prometheus-stac-operator", f"{rel}-grafana", f"{rel}-kube-state-metrics",
              f"{rel}-traefik", f"{rel}-ingress-nginx-controller", f"{rel}-k6-operator-controller-manager"):
        questions += [q("no", "update", f"deployments.apps/{d}"), q("no", "get", f"deployments.apps/{d}")]
    questions.append(q("no", "update", f"statefulsets.apps/prometheus-{rel}-kube-prometheus-stac-prometheus"))
    # every other Deployment that exists, in any namespace
    for d in kube.kubectl_json("get", "deployments", "-A")["items"]:
        dns, name = d["metadata"]["namespace"], d["metadata"]["name"]
        if (dns, name) != (ns, backend):
            questions.append(("no", ("update", f"deployments.apps/{name}", "-n", dns)))
    assert answers_that_differ(kube, f"system:serviceaccount:{ns}:{runner_sa}", questions) == []


def test_traefik_rights_gateway_objects_of_the_release_namespace_status_only(kube):
    """Traefik's ServiceAccount (ci/e2e/manifests/traefik.yaml) reads Gateway API objects in the
    release namespace only and writes their status only, and the status of its own GatewayClass."""
    ns = kube.namespace
    questions = [
        ("yes", ("list", "httproutes.gateway.networking.k8s.io", "-n", ns)),
        ("yes", ("update", "httproutes.gateway.networking.k8s.io", "--subresource=status", "-n", ns)),
        ("yes", ("update", "gatewayclasses.gateway.networking.k8s.io/traefik", "--subresource=status")),
        ("no", ("update", "httproutes.gateway.networking.k8s.io", "-n", ns)),
        ("no", ("create", "gateways.gateway.networking.k8s.io", "-n", ns)),
        ("no", ("list", "httproutes.gateway.networking.k8s.io", "-n", "default")),
        ("no", ("update", "gatewayclasses.gateway.networking.k8s.io/other", "--subresource=status")),
        ("no", ("update", "gatewayclasses.gateway.networking.k8s.io/traefik")),
    ]
    assert answers_that_differ(kube, "system:serviceaccount:bench-traefik:traefik", questions) == []
