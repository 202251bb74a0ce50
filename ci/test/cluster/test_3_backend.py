"""The backend image (ci/images/build.sh backend) serving through a ClusterIP Service and a 127.0.0.1
NodePort, scaling 2 -> 4 reaching the EndpointSlice and all 4 pods, cluster DNS and the API
reachable from a pod. Skipped, with the reason, when the node is not Ready."""
import json
import time
import urllib.request

import pytest

from conftest import APP, CONFIG, NS, ROOT, kubectl, kubectl_json, must, output_of, run, wait_until

# Traffic stays on this machine: no proxy from the environment.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get(url, timeout=5):
    """(status, headers, body) of a GET on a new connection; None when it fails."""
    try:
        with HTTP.open(url, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except OSError:
        return None


def backend_objects(replicas=2):
    security = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}
    image = {"image": "bench/backend:local", "imagePullPolicy": "Never", "securityContext": security}
    labels = {"app": APP}
    ports = [{"name": "http", "port": 80, "targetPort": "http"}]
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": APP, "namespace": NS}, "spec": {
            "replicas": replicas, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "securityContext": {"runAsNonRoot": True, "runAsUser": 101, "runAsGroup": 101,
                                    "seccompProfile": {"type": "RuntimeDefault"}},
                "initContainers": [{"name": "bodies", **image, "command": ["sh", "/config/make-bodies.sh", "/bodies"],
                                    "volumeMounts": [{"name": "config", "mountPath": "/config"},
                                                     {"name": "bodies", "mountPath": "/bodies"}]}],
                "containers": [{"name": "nginx", **image, "args": ["-c", "/config/nginx.conf"],
                                "ports": [{"name": "http", "containerPort": 8080}],
                                "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 1},
                                "volumeMounts": [{"name": "config", "mountPath": "/config"},
                                                 {"name": "bodies", "mountPath": "/bodies"},
                                                 {"name": "tmp", "mountPath": "/tmp"}]}],
                "volumes": [{"name": "config", "configMap": {"name": APP}}, {"name": "bodies", "emptyDir": {}},
                            {"name": "tmp", "emptyDir": {}}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": APP, "namespace": NS},
         "spec": {"selector": labels, "ports": ports}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"{APP}-nodeport", "namespace": NS},
         "spec": {"type": "NodePort", "selector": labels, "ports": ports}},
    ]


@pytest.fixture(scope="module")
def backend_image(ready_node):
    """bench/backend:local built (a stamp check when warm) and imported into the cluster's containerd."""
    must(["bash", ROOT / "ci" / "images" / "build.sh", "backend"], "ci/images/build.sh backend")


@pytest.fixture(scope="module")
def backend(backend_image):
    """The Deployment of the backend image and its two Services applied; returns (ClusterIP, NodePort)."""
    src = ROOT / "charts" / "bench" / "files" / "backend"
    conf = (src / "nginx.conf").read_text().replace("BENCH_PORT", "8080").replace("BENCH_BODIES_DIR", "/bodies")
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": APP, "namespace": NS},
                 "data": {"nginx.conf": conf, "make-bodies.sh": (src / "make-bodies.sh").read_text()}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
    objects = {"apiVersion": "v1", "kind": "List", "items": [namespace, configmap, *backend_objects()]}
    applied = kubectl("apply", "-f", "-", input=json.dumps(objects))
    assert applied.returncode == 0, output_of(applied)
    cip = kubectl_json("-n", NS, "get", "service", APP)["spec"]["clusterIP"]
    nodeport = kubectl_json("-n", NS, "get", "service", f"{APP}-nodeport")["spec"]["ports"][0]["nodePort"]
    return cip, nodeport


def rollout(timeout="120s"):
    result = kubectl("-n", NS, "rollout", "status", f"deployment/{APP}", f"--timeout={timeout}")
    assert result.returncode == 0, output_of(result)


def ready_endpoints():
    slices = kubectl_json("-n", NS, "get", "endpointslices", "-l", f"kubernetes.io/service-name={APP}")
    return sum(1 for s in slices["items"] for e in s.get("endpoints") or [] if e.get("conditions", {}).get("ready"))


def wait_for_endpoints(want):
    assert wait_until(30, lambda: ready_endpoints() == want), f"{ready_endpoints()} ready endpoints after 30 s, want {want}"


def answering_pods(url, want, timeout=20):
    """New connections until `want` distinct X-Bench-Pod values are seen, for at most `timeout` s:
    kube-proxy programs a new endpoint shortly after the EndpointSlice lists it."""
    seen = set()
    deadline = time.monotonic() + timeout
    while len(seen) < want and time.monotonic() < deadline:
        answer = get(url, timeout=2)
        if answer and answer[1].get("X-Bench-Pod"):
            seen.add(answer[1]["X-Bench-Pod"])
    return seen


def pod_names():
    return {p["metadata"]["name"] for p in kubectl_json("-n", NS, "get", "pods", "-l", f"app={APP}")["items"]}


def in_pod(*cmd):
    return kubectl("-n", NS, "exec", f"deploy/{APP}", "-c", "nginx", "--", *cmd)


def test_backend_image_is_in_containerd(backend_image):
    images = run(["ctr", "--address", CONFIG["BENCH_CONTAINERD_SOCK"], "-n", "k8s.io", "images", "ls", "-q"])
    assert images.returncode == 0, output_of(images)
    assert "docker.io/bench/backend:local" in images.stdout.splitlines(), images.stdout


def test_deployment_becomes_ready_with_2_replicas(backend):
    rollout()


def test_endpointslice_lists_2_ready_endpoints(backend):
    wait_for_endpoints(2)


def test_clusterip_answers_with_the_published_text(backend):
    # kube-proxy programs iptables shortly after the EndpointSlice changes: allow it a few seconds.
    cip, _ = backend
    answer = wait_until(20, lambda: get(f"http://{cip}/"))
    assert answer and answer[0] == 200, f"no 200 from ClusterIP {cip}:80 within 20 s: {answer}"
    lines = answer[2].decode().splitlines()
    assert any(line.startswith("Server name: ") for line in lines) and "URI: /" in lines, lines


def test_nodeport_answers_healthz(backend):
    _, nodeport = backend
    answer = wait_until(20, lambda: get(f"http://127.0.0.1:{nodeport}/healthz"))
    assert answer and answer[0] == 200 and answer[2].rstrip(b"\n") == b"ok", answer


def test_nodeport_serves_4k_body(backend):
    _, nodeport = backend
    answer = get(f"http://127.0.0.1:{nodeport}/bytes/4k")
    assert answer and answer[0] == 200 and len(answer[2]) == 4096, answer and (answer[0], len(answer[2]))


@pytest.fixture(scope="module")
def scaled(backend):
    result = kubectl("-n", NS, "scale", f"deployment/{APP}", "--replicas=4")
    assert result.returncode == 0, output_of(result)
    return backend


def test_scaled_to_4_rollout_completes(scaled):
    rollout()


def test_scaled_to_4_endpointslice_lists_4_ready(scaled):
    wait_for_endpoints(4)


@pytest.mark.parametrize("via", ["clusterip", "nodeport"])
def test_all_4_pods_answer(scaled, via):
    cip, nodeport = scaled
    url = f"http://{cip}/" if via == "clusterip" else f"http://127.0.0.1:{nodeport}/"
    seen = answering_pods(url, 4)
    assert seen == pod_names(), f"pods answering {url}: {sorted(seen)}"


@pytest.mark.parametrize("name", ["fqdn", "short"])
def test_dns_in_a_pod_resolves_the_service(scaled, name):
    cip, _ = scaled
    host = f"{APP}.{NS}.svc.{CONFIG['BENCH_CLUSTER_DOMAIN']}" if name == "fqdn" else APP  # short: the search path
    result = in_pod("getent", "hosts", host)
    assert result.returncode == 0, output_of(result)
    assert any(line.split()[0] == cip for line in result.stdout.splitlines()), result.stdout


def test_a_pod_reaches_the_api_through_the_kubernetes_service(scaled):
    result = in_pod("bash", "-c", 'exec 3<>"/dev/tcp/$1/443"', "_", CONFIG["BENCH_API_SERVICE_IP"])
    assert result.returncode == 0, output_of(result)
