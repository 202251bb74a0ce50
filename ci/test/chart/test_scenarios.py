"""The TestRun's scripts, checked with real k6 the way the k6-operator initializer uses them.

The scenarios ConfigMap is laid out through the TestRun's volume items (the Kubernetes projection,
done here in Python), then every entry script goes through `k6 archive` with the initializer's env
as `-e` flags and its archive arguments (spec.arguments without -o, as k6-operator v1.5.0 strips
it), and `k6 inspect --execution-requirements`. This proves the lib/ imports resolve from the
mounted tree and that each entry script accepts the chart's BENCH_* values in its init context.
"""
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import CHART_SRC, Case, load_docs, output_of, run

# the traefik preset: target ingress over https, which every scenario accepts (tls-handshakes
# refuses plain http)
TRAEFIK = Case("values/traefik", ("values/traefik.yaml",))
ENTRY_SCRIPTS = sorted(p.name for p in (CHART_SRC / "scenarios").glob("*.js"))


def archive_arguments(arguments):
    """spec.arguments without the -o/--out outputs (and their values), as the initializer runs them."""
    words, skipping = [], False
    for word in arguments.split():
        if word in ("-o", "--out"):
            skipping = True
        elif skipping and not word.startswith("-"):
            continue
        else:
            skipping = False
            words.append(word)
    return words


@pytest.fixture(scope="session")
def testrun_mount(helms, work):
    """(mounted scenarios folder, k6 -e flags, archive arguments) from the traefik render's TestRun."""
    docs = load_docs(helms[3].rendered(TRAEFIK).stdout)
    configmap = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-scenarios"))
    testrun = next(d for d in docs if d["kind"] == "TestRun")
    init = testrun["spec"]["initializer"]
    volume = next(v for v in init["volumes"] if v["name"] == "scenarios")
    mount_path = next(m["mountPath"] for m in init["volumeMounts"] if m["name"] == "scenarios")
    assert testrun["spec"]["script"]["localFile"].startswith(mount_path + "/"), "localFile is not under the scenarios mount"
    mount = work / "k6mount"
    for item in volume["configMap"]["items"]:
        path = mount / item["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(configmap["data"][item["key"]])
    env_flags = [a for e in init["env"] if "value" in e for a in ("-e", f"{e['name']}={e['value']}")]
    return mount, env_flags, archive_arguments(testrun["spec"]["arguments"])


def archive_and_inspect(k6, mount, env_flags, arguments, work, script):
    """`k6 archive` then `k6 inspect --execution-requirements` of one mounted script: (None, the
    options k6 inspect printed) when both passed, else (what failed, None)."""
    if not (mount / script).is_file():
        return f"{script} is not in the TestRun's volume items", None
    archive = work / f"{script}.tar"
    archived = run([k6, "archive", mount / script, *env_flags, "-O", archive, *arguments], cwd=work)
    if archived.returncode != 0:
        return f"k6 archive:\n{output_of(archived)}", None
    inspected = run([k6, "inspect", "--execution-requirements", archive], cwd=work)
    if inspected.returncode != 0:
        return f"k6 inspect:\n{output_of(inspected)}", None
    return None, json.loads(inspected.stdout)


@pytest.fixture(scope="session")
def k6_verdicts(k6, testrun_mount, work):
    """{script: (None or what failed, options)}: the scripts through k6 two at a time (k6 v0.51 transpiles
    every module, seconds of CPU per script, and the machine has two cores)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        verdicts = pool.map(lambda script: archive_and_inspect(k6, *testrun_mount, work, script), ENTRY_SCRIPTS)
        return dict(zip(ENTRY_SCRIPTS, verdicts))


@pytest.mark.parametrize("script", ENTRY_SCRIPTS)
def test_k6_archive_and_inspect_from_the_testrun_volume(k6_verdicts, script):
    failure, _ = k6_verdicts[script]
    assert failure is None, failure


@pytest.mark.parametrize("script", ENTRY_SCRIPTS)
def test_every_sample_carries_the_experiment_through_the_testrun_command_line(k6_verdicts, testrun_mount, script):
    """With the TestRun's --tag flags (which replace the script's run tags in k6 v0.51), the run's
    tags and every scenario's still name the experiment, the script's own name."""
    _, options = k6_verdicts[script]
    assert options, k6_verdicts[script][0]
    experiment = script.removesuffix(".js")
    assert "--tag" in testrun_mount[2] and options["tags"].get("experiment") == "dynamic", options["tags"]
    wrong = {name: sc.get("tags", {}).get("experiment") for name, sc in options["scenarios"].items()
             if sc.get("tags", {}).get("experiment") != experiment}
    assert not wrong, f"scenarios of {script} not tagged experiment={experiment}: {wrong}"
