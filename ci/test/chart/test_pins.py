"""One pin per version (ci/tools/pins.py): the pin files' format, every reader (bash, Make, Python,
the runner Dockerfile's build arguments, the cluster's config) gets the same value, no stray copy
of a pinned version outside the allowed places, the copies tools keep in their own formats (go.mod,
requirements files) agree, and `make docs` keeps every mention in step: changing a pin turns the
docs check red, naming file, line and pin, until `make docs` runs. Each check also fails on a
planted copy."""
import os
import re
import subprocess
import sys

import pins
import pytest
import yaml

from conftest import ROOT, run

PINS = pins.read_pins()


# ---- the pin files ----

@pytest.mark.parametrize("path", pins.ENV_FILES)
def test_pin_file_format(path):
    """KEY=value lines under a `# why` comment; read alike by Python, bash and Make."""
    found = pins.read_env(path)
    assert found, f"{path} pins nothing"
    bash = run(["bash", "-c", '. "$1"; shift; for k; do printf "%s=%s\\n" "$k" "${!k}"; done', "_", ROOT / path, *found])
    assert bash.returncode == 0, bash.stderr
    assert dict(line.split("=", 1) for line in bash.stdout.splitlines()) == {k: p.value for k, p in found.items()}
    makefile = f"include {ROOT / path}\nall:\n" + "".join(f"\t@echo '{k}=$({k})'\n" for k in found)
    make = subprocess.run(["make", "-s", "-f", "-"], input=makefile, capture_output=True, text=True)
    assert make.returncode == 0, make.stderr
    assert dict(line.split("=", 1) for line in make.stdout.splitlines()) == {k: p.value for k, p in found.items()}


@pytest.mark.parametrize("text, message", [
    ("# why\nK6_VERSION=v1.0.0\nXK6_VERSION=v2.0.0\n", "XK6_VERSION has no `# why` comment"),
    ("# why\nK6_VERSION = v1.0.0\n", "is not KEY=value"),
    ('# why\nK6_VERSION="v1.0.0"\n', "one release string"),
    ("# why\nK6_VERSION=v1.0.0  # trailing\n", "one release string"),
    ("# why\nK6_VERSION=v1.0.0\n# again\nK6_VERSION=v1.0.1\n", "already pinned at x.env:2"),
], ids=["no-why", "spaces", "quoted", "trailing-comment", "twice"])
def test_pin_file_format_fails_on_a_bad_line(text, message):
    with pytest.raises(pins.PinError, match=re.escape(message)):
        pins.read_env("x.env", text)


def test_readers_get_the_pins():
    """The cluster's config, the runner image's build arguments and the chart tests' render version."""
    config = run(["bash", "-c", '. "$1/ci/cluster/config.sh"; echo "$BENCH_K8S_VERSION $BENCH_COREDNS_VERSION"', "_", ROOT])
    assert config.stdout.split() == [PINS["KUBERNETES_VERSION"].value, PINS["COREDNS_VERSION"].value], config.stderr
    for script, pin_file in (("scenarios/runner/image.sh", "scenarios/runner/versions.env"),
                             ("backends/stream/image.sh", "backends/stream/versions.env")):
        args = run(["bash", "-c", f'. "$1/{script}"; version_build_args', "_", ROOT])
        image = pins.read_env(pin_file)
        assert args.stdout.split() == [w for k, p in image.items() for w in ("--build-arg", f"{k}={p.value}")], args.stderr
    from conftest import KUBE_VERSION
    assert KUBE_VERSION == ".".join(PINS["KUBERNETES_VERSION"].value.lstrip("v").split(".")[:2]) + ".0"


def test_yaml_pins_read_as_pyyaml_reads_them():
    """pins.py walks values/traefik.yaml and Chart.yaml without a YAML library (make docs runs on any
    python3): it must find what PyYAML finds, and name the key when it is not there."""
    preset = yaml.safe_load((ROOT / pins.TRAEFIK_PRESET).read_text())
    chart = yaml.safe_load((ROOT / pins.CHART_YAML).read_text())
    assert PINS["TRAEFIK_VERSION"].value == str(preset["traefik"]["image"]["tag"])
    assert PINS["GATEWAY_API_VERSION"].value == chart["annotations"]["bench.dev/gateway-api-version"]
    for dep in chart["dependencies"]:
        key = "CHART_" + dep.get("alias", dep["name"]).upper().replace("-", "_")
        assert PINS[key].value == str(dep["version"]), key
    with pytest.raises(pins.PinError, match=r"values/traefik.yaml: no traefik.image.tag"):
        pins.block_scalar("traefik:\n  deployment: {}\nimage:\n  tag: v1.0.0\n", ("traefik", "image", "tag"), "values/traefik.yaml")


def test_make_docs_needs_no_yaml_library(tmp_path):
    """`make docs` runs on the system python3, which may lack PyYAML."""
    (tmp_path / "yaml.py").write_text("raise ImportError('no PyYAML here')\n")
    result = subprocess.run([sys.executable, ROOT / "ci" / "tools" / "doc-figures.py", "--check"], capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stdout + result.stderr


def dockerfile_problems(text, runner, pin_file="scenarios/runner/versions.env"):
    """A Dockerfile takes every version as an ARG without a default, one per pin of its pin file."""
    args = re.findall(r"^ARG ([A-Z][A-Z0-9_]*)(=.*)?$", text, re.M)
    bad = [f"ARG {name}{default}: a default copies {pin_file}" for name, default in args if default]
    names = {name for name, _ in args}
    bad += [f"{key} of {pin_file} is no ARG" for key in runner if key not in names]
    bad += [f"ARG {name} is not in {pin_file}" for name in names if name not in runner]
    return bad


def test_the_dockerfile_takes_the_runner_pins_as_build_arguments():
    text = (ROOT / "scenarios/runner/Dockerfile").read_text()
    runner = pins.read_env("scenarios/runner/versions.env")
    assert dockerfile_problems(text, runner) == []
    assert dockerfile_problems(text.replace("ARG K6_VERSION\n", "ARG K6_VERSION=v0.0.1\n"), runner) != []
    assert dockerfile_problems(text.replace("ARG ALPINE_VERSION\n", ""), runner) != []


def test_the_stream_dockerfile_takes_its_pins_as_build_arguments():
    """backends/stream/Dockerfile (`make stream-image`) the same way, from backends/stream/versions.env."""
    pin_file = "backends/stream/versions.env"
    text = (ROOT / "backends/stream/Dockerfile").read_text()
    stream = pins.read_env(pin_file)
    assert dockerfile_problems(text, stream, pin_file) == []
    assert dockerfile_problems(text.replace("ARG STREAM_GO_VERSION\n", "ARG STREAM_GO_VERSION=1.22\n"), stream, pin_file) != []
    assert dockerfile_problems(text.replace("ARG STREAM_GO_VERSION\n", ""), stream, pin_file) != []


# ---- copies in the formats of other tools, checked ----

def go_mod_k6(text):
    return re.search(r"^\s*go\.k6\.io/k6 (v\S+)", text, re.M).group(1)


def test_the_extension_requires_the_pinned_k6():
    """scenarios/runner/xk6-bench/go.mod (Go reads no pin file) requires the k6 the runner is built with."""
    text = (ROOT / "scenarios/runner/xk6-bench/go.mod").read_text()
    assert go_mod_k6(text) == PINS["K6_VERSION"].value, f"xk6-bench/go.mod requires k6 {go_mod_k6(text)}; {PINS['K6_VERSION'].source} pins {PINS['K6_VERSION'].value}"
    assert go_mod_k6(text.replace(PINS["K6_VERSION"].value, "v0.52.0")) != PINS["K6_VERSION"].value


REQUIREMENT_PINS = [("requirements.txt", "PyYAML", "PYYAML_VERSION"),
                    ("ci/tools/requirements-chart.txt", "PyYAML", "PYYAML_VERSION"),
                    ("ci/tools/requirements-chart.txt", "kubernetes-validate", "KUBERNETES_VALIDATE_VERSION"),
                    ("ci/tools/requirements-chart.txt", "yamllint", "YAMLLINT_VERSION")]


def requirement_pin(text, name):
    found = re.search(rf"^{re.escape(name)}==(\S+)", text, re.M | re.I)
    return found and found.group(1)


@pytest.mark.parametrize("path,name,key", REQUIREMENT_PINS)
def test_requirement_files_pin_the_versions_of_versions_env(path, name, key):
    """pip reads its own pin files; each of these wheels there is the version ci/versions.env pins."""
    text = (ROOT / path).read_text()
    got = requirement_pin(text, name)
    assert got == PINS[key].value, f"{path}: {name} {got}, {PINS[key].source} pins {PINS[key].value}"
    assert requirement_pin(text.replace(f"=={got}", "==0.0.1"), name) != PINS[key].value


# ---- stray copies ----

def test_no_stray_copy_of_a_pinned_version():
    assert pins.stray_literals(pins.tracked_texts(), PINS) == []


@pytest.mark.parametrize("path, line, key", [
    ("scenarios/runner/build.sh", "K6_VERSION={}", "K6_VERSION"),
    ("ci/e2e/build-binaries.sh", "go_build_tool traefik {} github.com/traefik/traefik/v3/cmd/traefik", "TRAEFIK_VERSION"),
    ("ci/test/chart/conftest.py", 'KUBE_VERSION = "{}"', "KUBE_RENDER_VERSION"),
    ("Makefile", "HELM := helm-{}", "HELM3_VERSION"),
    ("charts/bench/tests/new_test.yaml", "  loadtest.runner.image.tag: {}", "K6_VERSION"),
], ids=["runner-script", "traefik-build", "python", "makefile", "new-file"])
def test_stray_copy_check_fails_on_a_planted_copy(path, line, key):
    texts = pins.tracked_texts()
    texts[path] = texts.get(path, "") + "\n" + line.format(PINS[key].value) + "\n"
    found = pins.stray_literals(texts, PINS)
    assert any(f.startswith(f"{path}:") and f" is {key} ({PINS[key].source})" in f for f in found), found


# ---- mentions: generated by `make docs` ----

def doc_figures(root, mode):
    return subprocess.run([sys.executable, root / "ci" / "tools" / "doc-figures.py", mode], capture_output=True, text=True)


def test_every_mention_follows_its_pin():
    result = doc_figures(ROOT, "--check")
    assert result.returncode == 0, result.stdout + result.stderr


def bump(version):
    major, minor, patch = version.lstrip("v").split(".")
    return ("v" if version.startswith("v") else "") + f"{major}.{minor}.{int(patch) + 1}"


@pytest.mark.parametrize("path, key, mention, recorded", [
    ("values/traefik.yaml", "TRAEFIK_VERSION", ("README.md", "| `traefik.yaml` | Traefik {},"),
     ("ci/README.md", "| what the churn did to Traefik {} ")),
    ("scenarios/runner/versions.env", "K6_VERSION", ("scenarios/README.md", "run on k6 {} "), None),
    ("ci/versions.env", "HELM3_VERSION", ("ci/README.md", "| helm | {} and "), None),
    ("charts/bench/Chart.yaml", "CHART_TRAEFIK", ("README.md", ", chart {} | the controller"), None),
], ids=["traefik", "k6", "helm", "traefik-chart"])
def test_changing_a_pin_turns_the_docs_check_red_until_make_docs(repo_copy, path, key, mention, recorded):
    old = PINS[key].value
    new = bump(old)
    source, number = PINS[key].source.split(":")
    lines = (repo_copy / source).read_text().split("\n")
    assert old in lines[int(number) - 1]
    lines[int(number) - 1] = lines[int(number) - 1].replace(old, new)
    (repo_copy / source).write_text("\n".join(lines))
    doc, phrase = mention
    assert phrase.format(old) in (repo_copy / doc).read_text()

    red = doc_figures(repo_copy, "--check")
    assert red.returncode == 1, red.stdout + red.stderr
    assert re.search(rf"^{re.escape(doc)}:\d+: says {re.escape(old)} where {re.escape(PINS[key].source)} pins {key}={re.escape(new)}$",
                     red.stdout, re.M), red.stdout
    assert "run `make docs`" in red.stdout

    assert doc_figures(repo_copy, "--write").returncode == 0
    green = doc_figures(repo_copy, "--check")
    assert green.returncode == 0, green.stdout + green.stderr
    assert phrase.format(new) in (repo_copy / doc).read_text()
    if recorded:  # a measurement keeps the version it was made with
        assert recorded[1].format(old) in (repo_copy / recorded[0]).read_text()
