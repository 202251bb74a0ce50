"""The chart has no default runner image (no public image has k6 v1.8.1 + xk6-kubernetes v0.9.0):
the defaults and every controller preset alone are refused with a message naming the key and the
command that builds one, and render once loadtest is off (the stack without a run). `make
runner-image` and `make stream-image` (long-lived's stream backend, which no registry has either) are
driven with stand-in docker and kind that record their calls."""
import os
import re

import pins
import pytest

from conftest import ROOT, output_of, run

CONTROLLER_PRESETS = [None, "traefik", "ingress-nginx", "nginx-inc", "haproxy"]


@pytest.mark.parametrize("preset", CONTROLLER_PRESETS, ids=lambda p: f"values/{p}" if p else "defaults")
def test_refused_without_a_runner_image(helm, preset):
    args = ["-f", helm.copy / "values" / f"{preset}.yaml"] if preset else []
    result = helm.template(*args)
    assert result.returncode != 0, "rendered without a runner image"
    assert "loadtest.runner.image.repository is empty" in result.stderr, result.stderr
    assert "make runner-image IMAGE=<registry/repo:tag>" in result.stderr, result.stderr


def test_renders_without_a_runner_image_when_loadtest_is_off(helm):
    result = helm.template("--set", "loadtest.enabled=false")
    assert result.returncode == 0, result.stderr
    assert not re.search(r"(?m)^kind: TestRun$", result.stdout)


# target, its script, the values key of the image, its pin file, a repository
IMAGE_TARGETS = [
    ("runner-image", "scenarios/runner/image.sh", "loadtest.runner.image", "scenarios/runner/versions.env", "bench/k6"),
    ("stream-image", "backends/stream/image.sh", "loadtest.longLived.image", "backends/stream/versions.env", "bench/stream"),
]


@pytest.mark.parametrize("target,script,key,pin_file,repo", IMAGE_TARGETS, ids=[t[0] for t in IMAGE_TARGETS])
def test_make_image_target(work, target, script, key, pin_file, repo):
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(rf"(?m)^{target}:.*##", makefile), f"no documented {target} target in the Makefile"
    script = ROOT / script
    # without IMAGE it stops with the usage line, before looking for a builder
    result = run(["bash", script, "", ""])
    assert result.returncode != 0, "accepted an empty IMAGE"
    assert f"usage: make {target} IMAGE=" in output_of(result)
    # stand-in docker and kind on PATH record their calls
    fake = work / f"fake-builders-{target}"
    fake.mkdir()
    calls = fake / "calls"
    for tool in ("docker", "kind"):
        (fake / tool).write_text(f'#!/bin/sh\necho "$(basename "$0") $*" >> "{calls}"\n')
        (fake / tool).chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "BENCH_IMAGE_BUILDER": "docker"}
    pushed = run(["bash", script, f"reg.example:5000/{repo}:v1", ""], env=env)
    assert pushed.returncode == 0, output_of(pushed)
    # the --set flags it prints are the chart's two keys
    assert re.search(rf"--set {re.escape(key)}.repository=reg.example:5000/{repo},{re.escape(key)}.tag=v1$",
                     pushed.stdout, re.M), pushed.stdout
    loaded = run(["bash", script, f"{repo}:v1", "kind"], env=env)
    assert loaded.returncode == 0, output_of(loaded)
    lines = calls.read_text().splitlines()
    builds = [re.fullmatch(r"docker build ((?:--build-arg \S+ )*)-t (\S+) -f (\S+) (\S+)", line) for line in lines[0::2]]
    assert all(builds) and len(lines) == 4, lines
    # every version as a build argument, from the pin file (the Dockerfile's ARGs have no defaults)
    pinned = [f"--build-arg {name}={pin.value}" for name, pin in pins.read_env(pin_file).items()]
    for build in builds:
        dockerfile = build.group(3)
        assert re.findall(r"--build-arg \S+", build.group(1)) == pinned, lines
        assert build.group(4) == str(ROOT) and dockerfile.startswith(f"{ROOT}/") and os.path.isfile(dockerfile), lines
    assert [b.group(2) for b in builds] == [f"reg.example:5000/{repo}:v1", f"{repo}:v1"], lines
    assert all(b.group(3) == str(ROOT / pin_file).replace("versions.env", "Dockerfile") for b in builds), lines
    assert lines[1] == f"docker push reg.example:5000/{repo}:v1", lines
    assert lines[3] == f"kind load docker-image {repo}:v1 --name kind", lines
