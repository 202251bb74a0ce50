"""What the chart's subcharts would bring, on the local cluster: the k6-operator (CRDs + manager),
the Gateway API CRDs, Prometheus and Traefik configured from its preset (ci/e2e/manifests, README)."""
import json
import re

from .kube import CommandError, wait_for
from .settings import E2E_DIR, TRAEFIK_PRESET

MONITORING, TRAEFIK = "bench-monitoring", "bench-traefik"


def traefik_preset(path=TRAEFIK_PRESET):
    # imported here: the installer (ci/e2e/install-variant) runs on the system Python, where PyYAML
    # is there once build-binaries.sh (run by deploy) has installed python3-yaml
    import yaml
    return yaml.safe_load(open(path, encoding="utf-8"))["traefik"]


def traefik_metrics_port(path=TRAEFIK_PRESET):
    return int(traefik_preset(path)["ports"]["metrics"]["port"])


def preset_arguments(traefik):
    """The preset's global settings and additionalArguments, in its order, as Traefik arguments."""
    args = [f"--global.{key}={str(value).lower()}" for key, value in (traefik.get("global") or {}).items()]
    return args + list(traefik.get("additionalArguments") or [])


def fill_traefik(text, traefik):
    """A manifest with its Traefik placeholders filled from the preset: BENCH_TRAEFIK_METRICS_PORT,
    BENCH_TRAEFIK_VERSION (the image tag) and a `- BENCH_TRAEFIK_PRESET_ARGUMENTS` list item (one
    item per argument, at its indent)."""
    args = preset_arguments(traefik)
    text = re.sub(r"^( *)- BENCH_TRAEFIK_PRESET_ARGUMENTS *$",
                  lambda m: "\n".join(f"{m.group(1)}- {json.dumps(a)}" for a in args), text, flags=re.M)
    return (text.replace("BENCH_TRAEFIK_METRICS_PORT", str(traefik["ports"]["metrics"]["port"]))
            .replace("BENCH_TRAEFIK_VERSION", str(traefik["image"]["tag"])))


def render_manifest(path, settings, traefik=None):
    """A manifest of ci/e2e/manifests with this cluster's values in its BENCH_* placeholders."""
    shell = settings.shell
    text = path.read_text()
    for name, value in (("BENCH_NAMESPACE", settings.namespace), ("BENCH_K6_OPERATOR_VERSION", shell["K6_OPERATOR_VERSION"]),
                        ("BENCH_GATEWAY_IP", shell["BENCH_GATEWAY_IP"]), ("BENCH_KUBELET_PORT", shell["BENCH_KUBELET_PORT"]),
                        ("BENCH_NODE_NAME", shell["BENCH_NODE_NAME"])):
        text = text.replace(name, value)
    return fill_traefik(text, traefik or traefik_preset())


def build_output(kube, what):
    """A path ci/e2e/build-binaries.sh prints (it builds or downloads once, then reads a stamp)."""
    result = kube.run(["bash", E2E_DIR / "build-binaries.sh", what], check=True)
    return result.stdout.strip().splitlines()[-1]


def wait_crd_established(kube, name, timeout_s=60):
    """Right after apply a CRD has no status yet, which `kubectl wait` reports as an error."""
    def established():
        crd = kube.kubectl_json("get", "crd", name)
        return any(c["type"] == "Established" and c["status"] == "True" for c in (crd.get("status") or {}).get("conditions") or [])
    wait_for(f"CRD {name} Established", established, timeout_s)


def wait_rollout(kube, namespace, deployment):
    """The Deployment's pods ready within 180 s, or an error describing its pods and the node's taints
    (a scheduling event counts them but does not name them)."""
    if kube.kubectl("-n", namespace, "rollout", "status", f"deployment/{deployment}", "--timeout=180s",
                    check=False).returncode == 0:
        return
    pods = kube.kubectl("-n", namespace, "describe", "pods", check=False).stdout
    taints = kube.kubectl("get", "nodes", "-o", "jsonpath={range .items[*]}{.metadata.name}: "
                          "{range .spec.taints[*]}{.key}={.effect} {end}{\"\\n\"}{end}", check=False).stdout
    raise CommandError(f"deployment {namespace}/{deployment} did not become ready in 180 s (node taints: "
                       f"{taints.strip() or 'none'}; disk-pressure means the node's filesystem is nearly "
                       f"full: df /var/lib); its pods:\n{pods[-4000:]}")


def apply_crds(kube):
    """k6-operator's TestRun and PrivateLoadZone CRDs (server-side: the testruns CRD is 281 KB, over
    the client-side annotation limit) and the Gateway API's (the chart's pin): Traefik's Gateway
    provider waits for an informer on each kind."""
    crd_dir = build_output(kube, "crd-path").rsplit("/", 1)[0]
    kube.kubectl("apply", "--server-side", "--force-conflicts", "-f", f"{crd_dir}/k6.io_testruns.yaml",
                 "-f", f"{crd_dir}/k6.io_privateloadzones.yaml")
    for name in ("testruns.k6.io", "privateloadzones.k6.io"):
        wait_crd_established(kube, name)
    gateway_crds = build_output(kube, "gateway-api-crds")
    kube.kubectl("apply", "--server-side", "--force-conflicts", "-f", gateway_crds)
    for line in kube.kubectl("get", "-f", gateway_crds, "-o", "name").stdout.split():
        wait_crd_established(kube, line.split("/", 1)[1])


def deploy(kube):
    """The release's namespace, the CRDs, the k6-operator manager, Prometheus and Traefik, each
    ready; returns the Prometheus URL as the host reaches it."""
    namespace = kube.kubectl("create", "namespace", kube.namespace, "--dry-run=client", "-o", "yaml").stdout
    kube.kubectl("apply", "-f", "-", input=namespace)
    apply_crds(kube)
    traefik = traefik_preset()
    for manifest in ("k6-operator", "prometheus", "traefik"):
        kube.kubectl("apply", "-f", "-", input=render_manifest(E2E_DIR / "manifests" / f"{manifest}.yaml",
                                                                kube.settings, traefik))
    wait_rollout(kube, "k6-operator-system", "k6-operator-controller-manager")
    wait_rollout(kube, MONITORING, "prometheus")
    wait_rollout(kube, TRAEFIK, "traefik")
    return prometheus_url(kube)


def prometheus_url(kube):
    """The e2e Prometheus Service as the host reaches it (its ClusterIP)."""
    ip = kube.kubectl("-n", MONITORING, "get", "service", "prometheus", "-o", "jsonpath={.spec.clusterIP}").stdout.strip()
    if not ip:
        raise CommandError(f"Service {MONITORING}/prometheus has no ClusterIP")
    return f"http://{ip}:9090"


def traefik_metrics(kube):
    """The e2e Traefik's /metrics page, through the API server's Service proxy."""
    port = traefik_metrics_port()
    return kube.kubectl("get", "--raw", f"/api/v1/namespaces/{TRAEFIK}/services/traefik-metrics:{port}/proxy/metrics").stdout

