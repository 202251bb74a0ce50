"""What reaches k6-operator's initializer shell, secrets by reference, numbers as integers.

k6-operator v1.5.0 runs the initializer as `sh -c "... k6 archive <script> -e NAME=\"value\" ...
-O <archive> <arguments>"`, pasting each spec.initializer.env value between double quotes and
spec.arguments unquoted. The refusals are rows of charts/bench/tests/hostile-values.yaml
(test_bad_values.py); here, what the chart accepts goes through a real `sh -c` line built the same way
and must reach k6 byte for byte, with no command run.
"""
import json
import shlex
import subprocess

import pytest
import yaml

from conftest import KUBE_VERSION, NAMESPACE, ROOT, load_docs


def render(helm, tmp_path, values_text, *args):
    values = tmp_path / "values.yaml"
    values.write_text(values_text)
    result = helm.template("-f", helm.runner_values, "-f", values, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout, load_docs(result.stdout)


def the_testrun(docs):
    (run,) = [d for d in docs if d["kind"] == "TestRun"]
    return run


def env_of(pod):
    return {e["name"]: e for e in pod.get("env", [])}


# Every character the chart lets through to the initializer (templates/loadtest/_shell.tpl):
# the printable ASCII of the env class, the URL class, the argument class.
ENV_CHARS = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in "\"$';\\`")
URL_CHARS = "-._~:/?@&+,=%[]"  # and # in a URL (the schema keeps it out of loadtest.path)
ACCEPTED = f"""
loadtest:
  path: "/a{URL_CHARS}z"
  ingressUrl: "https://ingress.example:8443/b{URL_CHARS}#f"
  extraEnv:
    K6_ODD: {yaml.safe_dump(ENV_CHARS, default_style='"').strip()}
    K6_SPACES: "a  b   c"
  extraArguments: --tag odd=a_b.c/d:e=f,g@h+i%j-k --discard-response-bodies
  environment:
    node_type: c6i
    odd: {yaml.safe_dump(ENV_CHARS, default_style='"').strip()}
  settings:
    BENCH_OWN_LEVEL: a b/c:d
"""


def initializer_line(run):
    """The initializer's `sh -c` line as k6-operator v1.5.0 builds it (its -e format and argument order)."""
    env = "".join(f' -e {e["name"]}="{e["value"]}"' for e in run["spec"]["initializer"]["env"] if "value" in e)
    # -o/--out and its value are dropped from the archive's arguments
    args, skip = [], False
    for token in run["spec"]["arguments"].split(" "):
        if skip:
            skip = False
            continue
        if token in ("-o", "--out"):
            skip = True
            continue
        args.append(token)
    return f'k6 archive /bench/scenarios/x.js{env} -O /tmp/x.tar {" ".join(args)}'


def test_accepted_values_reach_k6_byte_for_byte_through_the_initializer_shell(helm, tmp_path):
    """A fake k6 on PATH records its argv; sh (dash, as in the runner image's Debian base) runs the line."""
    _, docs = render(helm, tmp_path, ACCEPTED)
    run = the_testrun(docs)
    fake = tmp_path / "bin"
    fake.mkdir()
    argv = tmp_path / "argv"
    (fake / "k6").write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\0" "$a"; done > {shlex.quote(str(argv))}\n')
    (fake / "k6").chmod(0o755)
    result = subprocess.run(["sh", "-c", initializer_line(run)], cwd=tmp_path, capture_output=True, text=True,
                            env={"PATH": f"{fake}:/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["argv", "bin", "values.yaml"]  # nothing else ran
    got = argv.read_text().split("\0")[:-1]
    received = [got[i + 1] for i, a in enumerate(got) if a == "-e"]
    # every variable the runners get by value reaches k6 archive with the runners' value, but the
    # NodePort URL (the initializer cannot expand $(NODE_IP): a fixed address there)
    runner_values = [f'{e["name"]}={e["value"]}' for e in run["spec"]["runner"]["env"]
                     if "value" in e and e["name"] != "BENCH_URL_NODEPORT"]
    assert [r for r in received if not r.startswith("BENCH_URL_NODEPORT=")] == runner_values
    (environment,) = [json.loads(r.split("=", 1)[1]) for r in received if r.startswith("BENCH_ENVIRONMENT=")]
    assert (environment["node_type"], environment["odd"]) == ("c6i", ENV_CHARS)
    assert "BENCH_OWN_LEVEL=a b/c:d" in received
    assert f"K6_ODD={ENV_CHARS}" in received and "K6_SPACES=a  b   c" in received
    assert "--tag" in got and "odd=a_b.c/d:e=f,g@h+i%j-k" in got
    # and the runners get the same values (exec form: no shell, Kubernetes expands only $(VAR), refused)
    runner = env_of(run["spec"]["runner"])
    assert runner["K6_ODD"]["value"] == ENV_CHARS
    assert runner["BENCH_PATH"]["value"] == f"/a{URL_CHARS}z"


def test_refused_characters_would_have_run_a_command(helm, tmp_path):
    """Why the allowlist: each refused character, pasted as k6-operator does, changes what sh runs."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "k6").write_text('#!/bin/sh\nexit 0\n')
    (fake / "k6").chmod(0o755)
    for value in ['$(touch ran)', '`touch ran`', '";touch ran;"', 'a\\\\"; touch ran; echo "']:
        marker = tmp_path / "ran"
        marker.unlink(missing_ok=True)
        subprocess.run(["sh", "-c", f'k6 archive x.js -e K6_X="{value}" -O /tmp/x.tar'], cwd=tmp_path,
                       capture_output=True, env={"PATH": f"{fake}:/usr/bin:/bin"})
        assert marker.exists(), value


SECRET_VALUES = """
monitoring:
  remoteWrite:
    url: https://prometheus.example/api/v1/write
loadtest:
  extraEnv:
    K6_PROMETHEUS_RW_USERNAME: bench
    K6_PROMETHEUS_RW_PASSWORD:
      valueFrom:
        secretKeyRef: {name: remote-write, key: password}
  runner:
    envFrom:
      - secretRef: {name: runner-env}
      - configMapRef: {name: runner-settings, optional: true}
        prefix: X_
"""


def test_secret_references_reach_the_runners_only(helm, tmp_path):
    out, docs = render(helm, tmp_path, SECRET_VALUES)
    run = the_testrun(docs)
    runner, initializer = run["spec"]["runner"], run["spec"]["initializer"]
    assert env_of(runner)["K6_PROMETHEUS_RW_PASSWORD"] == {
        "name": "K6_PROMETHEUS_RW_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "remote-write", "key": "password"}}}
    assert runner["envFrom"] == [{"secretRef": {"name": "runner-env"}},
                                 {"configMapRef": {"name": "runner-settings", "optional": True}, "prefix": "X_"}]
    # the initializer's env is what k6-operator pastes onto its command line: no reference there
    assert "K6_PROMETHEUS_RW_PASSWORD" not in env_of(initializer)
    assert "envFrom" not in initializer
    assert "password" not in run["spec"]["arguments"]
    # the plain value still goes to both (the initializer's k6 archive reads the script with it)
    assert env_of(initializer)["K6_PROMETHEUS_RW_USERNAME"]["value"] == "bench"


def test_a_secret_value_appears_in_no_rendered_object(helm, tmp_path):
    """The password lives in a Secret the user creates; the release renders only its name and key."""
    password = "s3cret-Pa55-never-rendered"
    out, _ = render(helm, tmp_path, SECRET_VALUES)
    assert password not in out
    assert "remote-write" in out and "secretKeyRef" in out


def test_numbers_render_as_integers(helm, tmp_path):
    """Helm reads a values file's numbers as float64; 1000000 printed with toString is 1e+06, which
    scenarios/lib/config.js refuses for BENCH_RATE."""
    _, docs = render(helm, tmp_path, """
loadtest:
  rate: 1000000
  connections: 1000
  maxConnections: 100000
  parallelism: 100
  extraEnv: {K6_BIG: 2000000, K6_HALF: 0.5}
""")
    run = the_testrun(docs)
    for pod in (run["spec"]["runner"], run["spec"]["initializer"]):
        env = env_of(pod)
        assert env["BENCH_RATE"]["value"] == "1000000"
        assert env["K6_BIG"]["value"] == "2000000"
        assert env["K6_HALF"]["value"] == "0.5"


def test_image_values_are_quoted(helm, tmp_path):
    """Every image is a quoted scalar in the rendered YAML (a value can never open a new key)."""
    out, _ = render(helm, tmp_path, """
tuning:
  sysctl: {enabled: true, nodeSelector: {bench/role: ingress}}
loadtest:
  starter: {image: "ghcr.io/grafana/k6-operator:starter-v1.5.0"}
""")
    images = [line.strip() for line in out.splitlines() if line.strip().startswith("image:")]
    assert images
    assert all(line.split(":", 1)[1].strip().startswith('"') for line in images), images


@pytest.mark.parametrize("length,ok", [(42, True), (43, False)])
def test_release_name_limit(helm, length, ok):
    """The prefix may be 42 characters: k6-operator names its Job <prefix>-loadtest-initializer (63)."""
    name = ("bench-" + "x" * 60)[:length].rstrip("-")
    assert len(name) == length
    result = helm("template", name, helm.chart, "-n", NAMESPACE, "--kube-version", KUBE_VERSION,
                  "-f", helm.runner_values)
    assert (result.returncode == 0) == ok, result.stderr
    if ok:
        for doc in load_docs(result.stdout):
            # admission policies and their bindings take DNS subdomain names (253), the rest DNS labels
            policy = doc["kind"] in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
            assert len(doc["metadata"]["name"]) <= (253 if policy else 63)
            assert len(doc["metadata"]["name"] + "-initializer") <= 63 or doc["kind"] != "TestRun"


def test_grafana_sidecar_kept_to_the_release_namespace():
    """kube-prometheus-stack 77.6.0 sets grafana.sidecar.dashboards.searchNamespace: ALL, and the
    grafana chart 9.4.4 then grants a ClusterRole reading every ConfigMap and Secret of the cluster
    (rbac.namespaced: false). bench's defaults keep both to the release namespace: a Role, and the
    sidecar's NAMESPACE = the release namespace (the grafana chart passes searchNamespace through
    tpl). The subcharts cannot be rendered offline, so this holds the values that do it."""
    values = yaml.safe_load((ROOT / "charts" / "bench" / "values.yaml").read_text())
    grafana = values["kube-prometheus-stack"]["grafana"]
    assert grafana["rbac"]["namespaced"] is True
    assert grafana["sidecar"]["dashboards"]["searchNamespace"] == "{{ .Release.Namespace }}"
    assert "searchNamespace" not in grafana["sidecar"].get("datasources", {}), "datasources must stay in the release namespace too"
