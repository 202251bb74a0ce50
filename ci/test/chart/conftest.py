"""Fixtures of the chart tests: the pinned tools, an offline copy of the chart, helm v3 and v4, renders.

The dependency charts (controllers, kube-prometheus-stack, k6-operator) cannot be downloaded here.
Most tests use a copy of charts/bench whose Chart.yaml drops the dependency list, so only this
chart's own templates render (the subcharts are absent, as if all were disabled; a preset's
subchart values are then plain data). The copy keeps the repository layout (values/, symlinks
resolved) so presets and test suites find each other by relative path. test_k6_operator.py renders
the one real subchart reachable here.

Every test that runs helm takes the `helm_major` parameter and runs once per major (ids v3, v4).
"""
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pins
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
CHART_SRC = ROOT / "charts" / "bench"
TOOLS = Path(os.environ.get("BENCH_TOOLS", ROOT / ".tools"))
# The Kubernetes the chart is rendered for: the local cluster's minor, patch 0 (ci/versions.env).
KUBE_VERSION = pins.value("KUBE_RENDER_VERSION")
RELEASE = "bench"
NAMESPACE = "bench"
HELM_BINARIES = {3: "helm", 4: "helm4"}

# What ci/lib/common.sh sets for every script: the tools on PATH, k6 never phoning home.
os.environ["PATH"] = f"{TOOLS / 'bin'}{os.pathsep}{os.environ['PATH']}"
os.environ.update(K6_NO_USAGE_REPORT="true", K6_AUTO_EXTENSION_RESOLUTION="false")

# The image `make runner-image IMAGE=registry.example/bench/k6:<the k6 version>` would push: the chart
# has no default runner image and refuses to render without one (test_runner_image.py checks that refusal).
RUNNER_VALUES = {"loadtest": {"runner": {"image": {"repository": "registry.example/bench/k6", "tag": pins.value("K6_VERSION")}}}}


@pytest.fixture()
def repo_copy(tmp_path):
    """The tracked files in a folder outside git (symlinks kept as links): where a test may change a
    source and run the repository's own tools (`make docs`) on it."""
    names = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, text=True, check=True).stdout
    for name in filter(None, names.split("\0")):
        source, target = ROOT / name, tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(source.readlink())
        elif source.is_file():
            shutil.copy2(source, target)
    return tmp_path


def run(cmd, **kwargs):
    """Runs cmd, output captured as text; never raises on a non-zero exit (the test asserts it)."""
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)


def output_of(result):
    return (result.stdout + result.stderr).strip()


# libyaml's loader when the wheel has it: twenty times faster on renders of a few hundred KB.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_docs(text):
    return [d for d in yaml.load_all(text, Loader=SafeLoader) if d]


def kinds_and_names(text):
    return sorted(f"{d['kind']} {d['metadata']['name']}" for d in load_docs(text))


# ---- what to render: defaults, every preset and every CI overlay (collection time) ----

@dataclass(frozen=True)
class Case:
    """One render: a name for the test id and values files relative to the repository root."""
    name: str
    files: tuple = ()

    def api_versions(self):
        """The API versions the files' "# api-versions: ..." lines ask for (CRDs a cluster has)."""
        versions = []
        for f in self.files:
            for line in (ROOT / f).read_text().splitlines():
                if line.startswith("# api-versions: "):
                    versions += line.split(": ", 1)[1].split()
        return versions

    def loadtest_enabled(self):
        """False when the last file that sets loadtest.enabled sets it false."""
        enabled = True
        for f in self.files:
            loadtest = (yaml.safe_load((ROOT / f).read_text()) or {}).get("loadtest") or {}
            enabled = loadtest.get("enabled", enabled)
        return enabled


def render_cases():
    """Defaults, every preset and CI overlay. Experiment presets (no `controller:` key) are rendered
    on top of the traefik preset, and alone unless they send load through an ingress or a Gateway
    (both need a controller)."""
    presets = sorted((ROOT / "values").glob("*.yaml"))
    # The presets are the product: their absence is an error, never a quiet skip of their checks.
    assert presets, f"no presets in {ROOT / 'values'}"
    cases = [Case("defaults")]
    for path in presets:
        values = yaml.safe_load(path.read_text()) or {}
        name, rel = path.stem, f"values/{path.name}"
        has_controller = "controller" in values
        needs_controller = ((values.get("loadtest") or {}).get("target")) in ("ingress", "gateway")
        if has_controller or not needs_controller:
            cases.append(Case(f"values/{name}", (rel,)))
        if not has_controller:
            cases.append(Case(f"values/traefik+{name}", ("values/traefik.yaml", rel)))
    overlays = sorted((CHART_SRC / "ci").glob("*-values.yaml"))
    assert overlays, f"no CI overlays in {CHART_SRC / 'ci'}"
    cases += [Case(f"ci/{p.name}", (f"charts/bench/ci/{p.name}",)) for p in overlays]
    return cases


def pytest_generate_tests(metafunc):
    if "helm_major" in metafunc.fixturenames:
        metafunc.parametrize("helm_major", sorted(HELM_BINARIES), ids=lambda m: f"v{m}")


# ---- tools and the offline copy (session) ----

def pytest_sessionstart(session):
    # helm v3/v4, helm-unittest, kubeconform, yamllint and the schemas; a warm run checks stamps.
    result = run(["bash", ROOT / "ci" / "tools" / "install.sh"])
    if result.returncode != 0:
        pytest.exit(f"ci/tools/install.sh failed:\n{output_of(result)}", returncode=1)


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("chart")


@pytest.fixture(scope="session")
def offline_copy(work):
    """Repository-shaped copy: Chart.yaml (the root wrapper), charts/bench without its dependency
    list, values/ (symlinks resolved, so charts/bench/scenarios and dashboards are real folders)."""
    copy = work / "repo"
    shutil.copytree(CHART_SRC, copy / "charts" / "bench", symlinks=False)
    shutil.rmtree(copy / "charts" / "bench" / "charts", ignore_errors=True)
    (copy / "charts" / "bench" / "Chart.lock").unlink(missing_ok=True)
    chart_yaml = copy / "charts" / "bench" / "Chart.yaml"
    chart = yaml.safe_load(chart_yaml.read_text())
    chart.pop("dependencies", None)
    chart_yaml.write_text(yaml.safe_dump(chart, sort_keys=False))
    shutil.copy(ROOT / "Chart.yaml", copy / "Chart.yaml")
    if (ROOT / ".helmignore").exists():
        shutil.copy(ROOT / ".helmignore", copy / ".helmignore")
    (copy / "values").mkdir()
    for preset in (ROOT / "values").glob("*.yaml"):
        shutil.copy(preset, copy / "values" / preset.name)
    return copy


@pytest.fixture(scope="session")
def chart(offline_copy):
    return offline_copy / "charts" / "bench"


@pytest.fixture(scope="session")
def runner_values(work):
    path = work / "runner-image-values.yaml"
    path.write_text(yaml.safe_dump(RUNNER_VALUES))
    return path


class Helm:
    """One helm major. `render(case)` renders a Case of the offline copy once per session."""

    def __init__(self, major, copy, runner_values, work):
        self.major, self.binary = major, HELM_BINARIES[major]
        self.copy, self.chart, self.runner_values, self.work = copy, copy / "charts" / "bench", runner_values, work
        self._renders = {}

    def __call__(self, *args, env=None):
        return run([self.binary, *args], env=env)

    def template(self, *args, chart=None, namespace=NAMESPACE, env=None):
        """`helm template bench CHART -n NAMESPACE --kube-version 1.34.0 ARGS` (the offline chart by default)."""
        return self("template", RELEASE, chart or self.chart, "-n", namespace, "--kube-version", KUBE_VERSION,
                    *args, env=env)

    def values_args(self, case):
        args = ["-f", self.runner_values]
        for f in case.files:
            args += ["-f", self.copy / f]
        return args

    def render(self, case):
        """The case rendered (cached); the result's `path` holds the output for kubeconform."""
        if case not in self._renders:
            api = [a for v in case.api_versions() for a in ("--api-versions", v)]
            result = self.template(*self.values_args(case), *api)
            result.path = self.work / f"render-v{self.major}-{re.sub(r'[^A-Za-z0-9.-]', '_', case.name)}.yaml"
            result.path.write_text(result.stdout)
            self._renders[case] = result
        return self._renders[case]

    def rendered(self, case):
        """The case's render, which must have succeeded (test_template reports why it did not)."""
        result = self.render(case)
        assert result.returncode == 0, f"{self.binary} template {case.name} failed:\n{result.stderr}"
        return result


@pytest.fixture(scope="session")
def helms(offline_copy, runner_values, work):
    return {major: Helm(major, offline_copy, runner_values, work) for major in HELM_BINARIES}


@pytest.fixture
def helm(helms, helm_major):
    return helms[helm_major]


def kubeconform_command(*paths, json_output=False):
    """kubeconform strict against Kubernetes 1.34 and the CRD schemas (.tools/schemas), offline."""
    schemas = TOOLS / "schemas"
    return ["kubeconform", "-strict", "-kubernetes-version", KUBE_VERSION,
            *(["-output", "json", "-verbose"] if json_output else ["-summary"]),
            "-schema-location",
            f"{schemas}/kubernetes/{{{{ .NormalizedKubernetesVersion }}}}-standalone{{{{ .StrictSuffix }}}}/"
            "{{ .ResourceKind }}{{ .KindSuffix }}.json",
            "-schema-location",
            f"{schemas}/crds/{{{{ .Group }}}}/{{{{ .ResourceKind }}}}_{{{{ .ResourceAPIVersion }}}}.json",
            *paths]


@pytest.fixture(scope="session")
def kubeconform():
    """validate(path): one file through kubeconform (the result, exit code and output)."""
    return lambda path: run(kubeconform_command(path))


@pytest.fixture(scope="session")
def k6():
    """The runner's k6 (k6 v1.8.1 + xk6-kubernetes + bench's extension), built once and cached."""
    result = run(["bash", ROOT / "scenarios" / "runner" / "build.sh"])
    assert result.returncode == 0, f"scenarios/runner/build.sh failed:\n{output_of(result)}"
    return Path(result.stdout.strip())


def pytest_collection_modifyitems(items):
    """The cases on a real kube-apiserver (test_admission*.py) run last: on a new machine the
    Kubernetes binaries they need are built by the cluster lane (ci/test/all.sh) meanwhile, so the
    part's other cases do not wait for that build (stable sort: the order is otherwise kept)."""
    items.sort(key=lambda item: item.path.name.startswith("test_admission"))


def with_moved_pin(chart_yaml, dependency, version="9.9.9"):
    """A copy of Chart.yaml (as read) whose DEPENDENCY is pinned to another VERSION: what a test of a
    "checked against the pinned chart" table feeds it to see the table refused."""
    return {**chart_yaml, "dependencies": [{**d, "version": version} if d["name"] == dependency else d
                                           for d in chart_yaml["dependencies"]]}
