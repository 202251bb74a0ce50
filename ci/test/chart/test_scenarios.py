"""The TestRun's scripts, checked with real k6 the way the k6-operator initializer uses them.

The scenarios ConfigMap is laid out through the TestRun's volume items (the Kubernetes projection,
done here in Python), then every entry script goes through `k6 archive` with the initializer's env
as `-e` flags and its archive arguments (spec.arguments without -o, as k6-operator v1.5.0 strips
it), and `k6 inspect --execution-requirements`. This proves the lib/ imports resolve from the
mounted tree and that each entry script accepts the chart's BENCH_* values in its init context.
"""
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import CHART_SRC, Case, load_docs, output_of, run

# the traefik preset: target ingress over https, which every scenario accepts (tls-handshakes
# refuses plain http)
TRAEFIK = Case("values/traefik", ("values/traefik.yaml",))
ENTRY_SCRIPTS = sorted(p.name for p in (CHART_SRC / "scenarios").glob("*.js"))


def initializer_env_flags(env):
    """The -e flags as k6 gets them from k6-operator v1.5.0's initializer: its `sh -c` line carries
    each env value as -e NAME="value" (the shell undoes the chart's \\" escapes)."""
    line = "printf '%s\\0'" + "".join(f' -e {e["name"]}="{e["value"]}"' for e in env if "value" in e)
    return subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True).stdout.split("\0")[:-1]


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
    return mount, initializer_env_flags(init["env"]), archive_arguments(testrun["spec"]["arguments"])


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
    """{script: (None or what failed, options)}: the scripts through k6 two at a time (the machine
    has two cores)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        verdicts = pool.map(lambda script: archive_and_inspect(k6, *testrun_mount, work, script), ENTRY_SCRIPTS)
        return dict(zip(ENTRY_SCRIPTS, verdicts))


@pytest.mark.parametrize("script", ENTRY_SCRIPTS)
def test_k6_archive_and_inspect_from_the_testrun_volume(k6_verdicts, script):
    failure, _ = k6_verdicts[script]
    assert failure is None, failure


@pytest.mark.parametrize("script", ENTRY_SCRIPTS)
def test_every_sample_carries_the_experiment_through_the_testrun_command_line(k6_verdicts, testrun_mount, script):
    """With the TestRun's --tag flags (which replace the script's run tags), the run's
    tags and every scenario's still name the experiment, the script's own name."""
    _, options = k6_verdicts[script]
    assert options, k6_verdicts[script][0]
    experiment = script.removesuffix(".js")
    assert "--tag" in testrun_mount[2] and options["tags"].get("experiment") == "dynamic", options["tags"]
    wrong = {name: sc.get("tags", {}).get("experiment") for name, sc in options["scenarios"].items()
             if sc.get("tags", {}).get("experiment") != experiment}
    assert not wrong, f"scenarios of {script} not tagged experiment={experiment}: {wrong}"


# ---- the chart passes what the user set, and a script's own defaults hold otherwise ----

CONTRACT = json.loads((CHART_SRC / "scenarios" / "contract.json").read_text())
# Every variable the user sets through a values key: (the script's own default, unlike bench's; the
# config field it lands in; that default parsed; a user's value; parsed).
SCRIPT_DEFAULTS = {
    "BENCH_PATH": ("/bytes/4k", "cfg.path", "/bytes/4k", "/bytes/1k", "/bytes/1k"),
    "BENCH_RATE": ("7", "cfg.rate", 7, 11, 11),
    "BENCH_DURATION": ("9s", "cfg.durationMs", 9000, "13s", 13000),
    "BENCH_WARMUP": ("2s", "cfg.warmupMs", 2000, "3s", 3000),
    "BENCH_CONNECTIONS": ("3", "cfg.connections", 3, 5, 5),
    "BENCH_TIMEOUT": ("1500ms", "cfg.timeoutMs", 1500, "3s", 3000),
    "BENCH_KEEPALIVE": ("false", "cfg.keepalive", False, True, True),
    "BENCH_INSECURE_TLS": ("false", "cfg.insecureTls", False, True, True),
    "BENCH_CHURN_PATTERN": ("3:1s", "cfg.churnPatternText", "3:1s", "4:2s,6:2s", "4:2s,6:2s"),
    "BENCH_PODKILL_INTERVAL": ("4s", "cfg.podkillIntervalMs", 4000, "6s", 6000),
    "BENCH_ROLL_INTERVAL": ("5s", "cfg.rollIntervalMs", 5000, "7s", 7000),
    "BENCH_ROUTE_KIND": ("ingress", "cfg.routes.kindText", "ingress", "httproute", "httproute"),
    "BENCH_ROUTE_COUNT": ("4", "cfg.routes.count", 4, 6, 6),
    "BENCH_ROUTE_INTERVAL": ("3s", "cfg.routes.intervalMs", 3000, "4s", 4000),
    "BENCH_ROUTE_TIMEOUT": ("30s", "cfg.routes.timeoutMs", 30000, "40s", 40000),
    "BENCH_ROUTE_DOMAIN": ("own.example", "cfg.routes.domain", "own.example", "user.example", "user.example"),
}
# Values the chart derives when the key is empty, from the release (the scenarios' defaults cannot
# know its names) or for the runner's sizing: documented in values.yaml, not the script's to choose.
CHART_DERIVED = {"BENCH_MAX_CONNECTIONS", "BENCH_ROUTE_BACKENDS"}


def test_every_values_key_of_a_scenario_setting_is_covered():
    keyed = {v["name"] for v in CONTRACT["variables"]["list"] if v["valuesKey"] and v["chartSets"]}
    assert sorted(keyed - CHART_DERIVED) == sorted(SCRIPT_DEFAULTS)


def script_with_own_defaults():
    """An entry script whose defaults differ from bench's for every key above, plus a setting of its
    own; it prints what its configuration resolved to."""
    defaults = {name: d[0] for name, d in SCRIPT_DEFAULTS.items()}
    fields = ", ".join(f"{name}: {d[1]}" for name, d in SCRIPT_DEFAULTS.items())
    return f"""import {{ runConfig }} from './lib/run-config.js';
const cfg = runConfig(__ENV, {json.dumps(defaults)}, {{ BENCH_OWN_LEVEL: {{ type: 'count', default: 2 }} }});
console.log(`SCRIPT_CONFIG ${{JSON.stringify({{ {fields}, BENCH_OWN_LEVEL: cfg.settings.BENCH_OWN_LEVEL }})}}`);
export const options = {{ vus: 1, iterations: 1 }};
export default function () {{}}
"""


def resolved(result):
    lines = [l for l in (result.stdout + result.stderr).splitlines() if l.startswith("SCRIPT_CONFIG ")]
    assert result.returncode == 0 and lines, output_of(result)
    return json.loads(lines[-1].split(" ", 1)[1])


def through_the_testrun(helms, k6, work, name, values):
    """(what the initializer's `k6 archive` resolved, what a runner's `k6 run` resolved) for the
    script above mounted as the TestRun mounts scenarios/, with the env the chart gives each."""
    path = work / f"{name}-values.yaml"
    path.write_text(json.dumps(values))
    helm = helms[3]
    result = helm.template(*helm.values_args(TRAEFIK), "-f", path)
    assert result.returncode == 0, output_of(result)
    testrun = next(d for d in load_docs(result.stdout) if d["kind"] == "TestRun")
    mount = work / "k6mount"  # testrun_mount's tree: the same lib/ the TestRun mounts
    script = mount / f"{name}.js"
    script.write_text(script_with_own_defaults())
    init_env = initializer_env_flags(testrun["spec"]["initializer"]["env"])
    archived = run([k6, "archive", "--log-format", "raw", script, *init_env, "-O", work / f"{name}.tar",
                    *archive_arguments(testrun["spec"]["arguments"])], cwd=work)
    # a runner's k6 reads its pod's environment; a clean one, as in the runner image
    pod_env = {e["name"]: e["value"] for e in testrun["spec"]["runner"]["env"] if "value" in e}
    ran = run([k6, "run", "--quiet", "--log-format", "raw", "--no-summary", script], cwd=work,
              env=dict(pod_env, PATH="/usr/bin:/bin", HOME=str(work)))
    return resolved(archived), resolved(ran)


def test_a_scripts_own_defaults_hold_when_the_user_sets_nothing(helms, k6, testrun_mount, work):
    """The chart passes every scenario setting empty unless its key is set: the script's defaults hold
    in the initializer (k6 archive, -e flags) and in the runners (the pod's environment) alike."""
    want = {name: d[2] for name, d in SCRIPT_DEFAULTS.items()} | {"BENCH_OWN_LEVEL": 2}
    initializer, runner = through_the_testrun(helms, k6, work, "own-defaults", {})
    assert (initializer, runner) == (want, want)


def test_what_the_user_sets_wins_over_the_scripts_defaults(helms, k6, testrun_mount, work):
    values = {"loadtest": {"settings": {"BENCH_OWN_LEVEL": 9}, "routes": {}, "churn": {}}}
    for name, d in SCRIPT_DEFAULTS.items():
        key = next(v["valuesKey"] for v in CONTRACT["variables"]["list"] if v["name"] == name).split(".")[1:]
        node = values["loadtest"]
        for k in key[:-1]:
            node = node.setdefault(k, {})
        node[key[-1]] = d[3]
    want = {name: d[4] for name, d in SCRIPT_DEFAULTS.items()} | {"BENCH_OWN_LEVEL": 9}
    initializer, runner = through_the_testrun(helms, k6, work, "user-set", values)
    assert (initializer, runner) == (want, want)
