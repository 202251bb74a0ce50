"""nginx-inc without GitHub (charts/bench/README.md, "Air-gapped: the nginx-inc preset"): Helm loads
the nginx-ingress chart's schema `$ref`s from raw.githubusercontent.com when it validates values. The
real chart cannot be downloaded here (the README has the run with it), so a stand-in nginx-ingress
chart holds one such `$ref`, and every request goes to a proxy that is not there (the same outcome
with or without internet). The plain render fails naming the host; the README's two steps work:
bench's own schema checks the values with the controller off, then --skip-schema-validation renders
the release."""
import json
import os
import re
import shutil
import socket

import pytest
import yaml

from conftest import CHART_SRC

CONTROLLER_OFF = ["--set", "nginx-inc.enabled=false,controller=none,loadtest.target=clusterip"]
SCHEMA_REF = ("https://raw.githubusercontent.com/nginxinc/kubernetes-json-schema/master/v1.36.1/_definitions.json"
              "#/definitions/io.k8s.api.core.v1.ResourceRequirements")


@pytest.fixture(scope="session")
def air_gapped_chart(chart, work):
    bench = work / "air-gapped" / "bench"
    shutil.copytree(chart, bench)
    deps = [d for d in yaml.safe_load((CHART_SRC / "Chart.yaml").read_text())["dependencies"] if d["name"] == "nginx-ingress"]
    chart_yaml = yaml.safe_load((bench / "Chart.yaml").read_text())
    chart_yaml["dependencies"] = deps
    (bench / "Chart.yaml").write_text(yaml.safe_dump(chart_yaml, sort_keys=False))
    stand_in = bench / "charts" / "nginx-ingress"
    stand_in.mkdir(parents=True)
    (stand_in / "Chart.yaml").write_text(yaml.safe_dump({"apiVersion": "v2", "name": "nginx-ingress", "version": deps[0]["version"]}))
    schema = {"type": "object", "properties": {"controller": {"type": "object", "properties": {"resources": {"$ref": SCHEMA_REF}}}}}
    (stand_in / "values.schema.json").write_text(json.dumps(schema))
    return bench


def without_network():
    """The environment with HTTP(S) proxies on a free port of 127.0.0.1 where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        proxy = f"http://127.0.0.1:{s.getsockname()[1]}"
    return {**os.environ, "HTTPS_PROXY": proxy, "https_proxy": proxy, "HTTP_PROXY": proxy, "http_proxy": proxy,
            "NO_PROXY": "", "no_proxy": ""}


@pytest.fixture
def render_nginx_inc(helm, air_gapped_chart):
    def render(*args):
        return helm.template("-f", helm.runner_values, "-f", helm.copy / "values" / "nginx-inc.yaml", *args,
                             chart=air_gapped_chart, env=without_network())
    return render


def test_the_plain_render_fails_naming_github(render_nginx_inc):
    result = render_nginx_inc()
    assert result.returncode != 0, "rendered"
    assert 'failing loading "https://raw.githubusercontent.com/' in result.stderr, result.stderr


def test_step_1_bench_schema_with_the_controller_off(render_nginx_inc):
    """Accepts the preset, refuses loadtest.rate=0."""
    accepted = render_nginx_inc(*CONTROLLER_OFF)
    assert accepted.returncode == 0, accepted.stderr
    assert re.search(r"(?m)^kind: TestRun$", accepted.stdout)
    refused = render_nginx_inc(*CONTROLLER_OFF, "--set", "loadtest.rate=0")
    assert refused.returncode != 0, "accepted loadtest.rate=0"
    assert "at '/loadtest/rate': minimum: got 0, want 1" in refused.stderr, refused.stderr


def test_step_2_skip_schema_validation_renders_the_release(render_nginx_inc):
    result = render_nginx_inc("--skip-schema-validation")
    assert result.returncode == 0, result.stderr
    assert re.search(r"(?m)^kind: TestRun$", result.stdout), "no TestRun"
