"""charts/bench with the real k6-operator subchart (Chart.yaml's version), the one dependency whose source is
reachable here: it ships inside the k6-operator v1.5.0 Go module (charts/k6-operator). It checks what
the stripped copy cannot: the subchart's strict values schema accepts our values, the TestRun CRD and
the manager render with the TestRun hook, and the whole render passes kubeconform. Nothing of it is
committed. The controllers' charts cannot be downloaded: empty stand-ins with their names and pinned
versions (and an appVersion of their own) show what the TestRun records about the controller's chart,
for a plain dependency (traefik) and an aliased one (nginx-ingress as nginx-inc)."""
import json
import os
import re
import shutil
import stat

import pins
import pytest
import yaml

from conftest import CHART_SRC, RELEASE, ROOT, load_docs, output_of, run

DEPENDENCIES = {d.get("alias", d["name"]): d for d in yaml.safe_load((CHART_SRC / "Chart.yaml").read_text())["dependencies"]}
# The operator release ci/versions.env pins (the harness builds its manager and reads its CRDs) and
# the chart version Chart.yaml pins: the module of that release must ship that chart.
K6_OPERATOR_VERSION = pins.value("K6_OPERATOR_VERSION")
K6_OPERATOR_MODULE = f"github.com/grafana/k6-operator@{K6_OPERATOR_VERSION}"
K6_OPERATOR_CHART = DEPENDENCIES["k6-operator"]["version"]
MANAGER_IMAGE = re.compile(r'image: "?ghcr.io/grafana/k6-operator:controller-' + re.escape(K6_OPERATOR_VERSION))


def go_module_dir(module):
    cache = os.environ.get("BENCH_CACHE", os.path.expanduser("~/.cache/bench"))
    result = run(["go", "mod", "download", "-json", module], cwd=cache)
    assert result.returncode == 0, output_of(result)
    return json.loads(result.stdout)["Dir"]


@pytest.fixture(scope="session")
def with_operator(chart, work):
    """charts/bench with charts/k6-operator from the module and the controllers' stand-ins."""
    bench = work / "with-k6-operator" / "bench"
    shutil.copytree(chart, bench)
    shutil.copytree(f"{go_module_dir(K6_OPERATOR_MODULE)}/charts/k6-operator", bench / "charts" / "k6-operator")
    for path in bench.rglob("*"):  # the module cache is read-only
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    chart_yaml = yaml.safe_load((CHART_SRC / "Chart.yaml").read_text())
    chart_yaml["dependencies"] = [d for d in chart_yaml["dependencies"] if d["name"] in ("k6-operator", "traefik", "nginx-ingress")]
    (bench / "Chart.yaml").write_text(yaml.safe_dump(chart_yaml, sort_keys=False))
    for name in ("traefik", "nginx-ingress"):
        version = next(d["version"] for d in chart_yaml["dependencies"] if d["name"] == name)
        (bench / "charts" / name).mkdir()
        (bench / "charts" / name / "Chart.yaml").write_text(
            yaml.safe_dump({"apiVersion": "v2", "name": name, "version": version, "appVersion": "stand-in-app"}))
    return bench


@pytest.fixture
def operator_render(helm, with_operator):
    """render(preset, namespace): the chart with the subchart, the runner image and a preset."""
    def render(preset="traefik", namespace="bench", *args):
        return helm.template("-f", helm.runner_values, "-f", helm.copy / "values" / f"{preset}.yaml", *args,
                             chart=with_operator, namespace=namespace)
    return render


def runners_environment(render):
    runs = [d for d in load_docs(render) if d["kind"] == "TestRun"]
    assert runs, "no TestRun"
    env = {e["name"]: e.get("value") for e in runs[0]["spec"]["runner"]["env"]}
    return json.loads(env["BENCH_ENVIRONMENT"])


def test_the_module_ships_the_chart_yaml_version(with_operator):
    """ci/versions.env's K6_OPERATOR_VERSION and Chart.yaml's k6-operator chart are one release."""
    assert yaml.safe_load((with_operator / "charts" / "k6-operator" / "Chart.yaml").read_text())["version"] == K6_OPERATOR_CHART


def test_renders_the_crd_the_manager_and_the_testrun_hook(operator_render):
    result = operator_render()
    assert result.returncode == 0, result.stderr
    assert re.search(r"(?m)^  name: testruns.k6.io$", result.stdout), "no testruns.k6.io CRD"
    assert MANAGER_IMAGE.search(result.stdout), f"no k6-operator {K6_OPERATOR_VERSION} manager"
    assert re.search(r"(?m)^kind: TestRun$", result.stdout), "no TestRun"


def test_kubeconform(operator_render, kubeconform, work, helm_major):
    path = work / f"with-k6-operator-v{helm_major}.yaml"
    path.write_text(operator_render().stdout)
    result = kubeconform(path)
    assert result.returncode == 0, output_of(result)


def test_runners_record_the_controller_chart_and_the_preset_image_tag(operator_render):
    info = runners_environment(operator_render().stdout)
    tag = yaml.safe_load((ROOT / "values" / "traefik.yaml").read_text())["traefik"]["image"]["tag"]
    assert (info["controller_chart"], info["controller_version"]) == (f"traefik-{DEPENDENCIES['traefik']['version']}", tag), info
    assert info["backend_replicas"] == 5, info


def test_an_aliased_controller_is_recorded_by_its_chart_name(operator_render):
    """nginx-ingress, not the alias nginx-inc, and the stand-in chart's appVersion."""
    info = runners_environment(operator_render("nginx-inc").stdout)
    assert info["controller_chart"] == f"nginx-ingress-{DEPENDENCIES['nginx-inc']['version']}", info
    assert info["controller_version"] == "stand-in-app", info


def test_no_namespace_object_with_a_release_namespace(operator_render):
    """With -n bench the k6-operator renders no Namespace (helm --create-namespace owns it)."""
    namespaces = [d["metadata"]["name"] for d in load_docs(operator_render().stdout) if d["kind"] == "Namespace"]
    assert namespaces == []


def test_in_namespace_default_the_operator_goes_to_release_system(operator_render):
    """bench-system, created once by this chart (default only when asked for: validate.yaml)."""
    refused = operator_render("traefik", "default")
    assert refused.returncode != 0 and "allowDefaultNamespace" in refused.stderr, refused.stderr
    result = operator_render("traefik", "default", "--set", "allowDefaultNamespace=true",
                             "--set", "k6-operator.rbac.namespaced=false")
    assert result.returncode == 0, result.stderr
    docs = load_docs(result.stdout)
    assert [d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"] == [f"{RELEASE}-system"]
    managers = [d for d in docs if d["kind"] == "Deployment" and "k6-operator" in d["metadata"]["name"]]
    assert managers and managers[0]["metadata"]["namespace"] == f"{RELEASE}-system", [m["metadata"] for m in managers]


def test_the_subchart_schema_refuses_k6_operator_enabled(helm, with_operator):
    """Why the switch is loadtest.operator.enabled."""
    result = helm.template("-f", helm.runner_values, "--set", "k6-operator.enabled=true", chart=with_operator)
    assert result.returncode != 0, "accepted k6-operator.enabled"
    assert "additional properties 'enabled' not allowed" in result.stderr, result.stderr


def test_install_crds_false_keeps_the_crds_outside_the_release(helm, with_operator):
    """Uninstall then keeps the cluster's TestRuns; without the TestRun API the install is refused."""
    args = ["-f", helm.runner_values, "--set", "k6-operator.installCRDs=false"]
    refused = helm.template(*args, chart=with_operator)
    assert refused.returncode != 0, "rendered without the TestRun API"
    assert "k6-operator.installCRDs=false: this release installs no k6 CRDs and the cluster has none" in refused.stderr, refused.stderr
    result = helm.template(*args, "--api-versions", "k6.io/v1alpha1/TestRun", chart=with_operator)
    assert result.returncode == 0, result.stderr
    assert not re.search(r"(?m)^kind: CustomResourceDefinition$", result.stdout), "a CRD was rendered"
    assert MANAGER_IMAGE.search(result.stdout), "no k6-operator manager"
    assert re.search(r"(?m)^kind: TestRun$", result.stdout), "no TestRun"


def test_the_readme_command_for_the_crds_alone(helm, with_operator, kubeconform, work):
    """charts/bench/README.md, "Keeping the TestRun CRD": both CRDs, valid, no release annotations."""
    result = helm("template", "k6-crds", with_operator / "charts" / "k6-operator",
                  "--show-only", "templates/crds/testrun.yaml", "--show-only", "templates/crds/plz.yaml")
    assert result.returncode == 0, result.stderr
    assert sorted(d["metadata"]["name"] for d in load_docs(result.stdout)) == ["privateloadzones.k6.io", "testruns.k6.io"]
    assert "meta.helm.sh/release" not in result.stdout, "release annotations in the CRDs"
    path = work / f"k6-crds-v{helm.major}.yaml"
    path.write_text(result.stdout)
    assert kubeconform(path).returncode == 0, output_of(kubeconform(path))


def test_the_operator_holds_no_cluster_wide_right(operator_render):
    """k6-operator.rbac.namespaced (bench's default): the manager's rules are Roles in the release
    namespace and it watches that namespace only (WATCH_NAMESPACE), so no ClusterRole or
    ClusterRoleBinding of the subchart exists (none to orphan on `kubectl delete namespace`, none that
    reads every Secret of the cluster); the chart's own default, false, renders them (control)."""
    def cluster_rbac(docs):
        return sorted(d["metadata"]["name"] for d in docs if d["kind"] in ("ClusterRole", "ClusterRoleBinding")
                      and ("k6-operator" in d["metadata"]["name"] or d["metadata"]["name"].startswith("privateloadzone")))
    docs = load_docs(operator_render().stdout)
    assert cluster_rbac(docs) == []
    roles = [d for d in docs if d["kind"] == "Role" and d["metadata"]["name"].endswith("k6-operator-manager-role")]
    assert roles and roles[0]["metadata"]["namespace"] == "bench", [r["metadata"] for r in roles]
    (manager,) = [d for d in docs if d["kind"] == "Deployment" and "k6-operator" in d["metadata"]["name"]]
    env = {e["name"]: e.get("value") for c in manager["spec"]["template"]["spec"]["containers"] for e in c.get("env") or []}
    assert env.get("WATCH_NAMESPACE") == "bench", env
    control = load_docs(operator_render("traefik", "bench", "--set", "k6-operator.rbac.namespaced=false").stdout)
    assert "bench-k6-operator-manager-rolebinding" in cluster_rbac(control)
