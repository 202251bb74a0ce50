"""The shared facts (scenarios/contract.json): every copy equals it (the k6 modules as a real k6
loads them, the chart, the READMEs, the dashboards' metric fixture); every summary this part wrote
or read validates against its bench.summary/v1 schema, and crafted bad ones do not. ci/test/contract.py
runs in the project's venv (it needs jsonschema): exit 1, printing each difference."""
import subprocess

import pytest

from conftest import ROOT, TESTDATA, output_of, run

import contract  # ci/test/contract.py (pytest.ini's pythonpath): its list of schema mutations only; the checks run in the venv as a subprocess

CONTRACT = ROOT / "ci/test/contract.py"


def contract_check(report, *args):
    r = report.script(CONTRACT, *map(str, args))
    assert r.returncode == 0, output_of(r)


@pytest.fixture(scope="session")
def dump(runtime_tools, work):
    """scenarios/tests/contract-dump.js: what the k6 modules export, as a real k6 loads them."""
    path = work / "contract-dump.json"
    with open(path, "w") as out:
        r = subprocess.run(["k6", "run", "--quiet", "--no-color", str(ROOT / "scenarios/tests/contract-dump.js")],
                           stdout=out, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, f"scenarios/tests/contract-dump.js failed (exit {r.returncode}):\n{r.stderr}"
    return path


@pytest.mark.parametrize("check, what", [
    ("k6-errors", "scenarios/lib/errors.js ERROR_CLASSES and ERROR_CAUSES equal it"),
    ("k6-percentiles", "scenarios/lib/summary-writer.js percentiles (keys, k6 stats) equal it"),
    ("k6-metrics", "the metrics of scenarios/lib/metrics.js and route-metrics.js (names, k6 types) equal it"),
    ("k6-variables", "scenarios/lib/config.js DEFAULTS (every BENCH_* and its default) equal it"),
    ("k6-variable-types", "config.js accepts and refuses each BENCH_* type's examples and a count's max and max + 1"),
    ("k6-warmup", "scenarios/lib/load.js WARMUP (the warm-up's scenario name and role) equals it"),
    ("k6-verdicts", "scenarios/lib/verdicts.js and lag.js hold the contract's verdict limits"),
    ("k6-runner-memory", "scenarios/lib/memory-plan.js RUNNER_MEMORY equals the contract's runnerMemory"),
], ids=["k6-errors", "k6-percentiles", "k6-metrics", "k6-variables", "k6-variable-types", "k6-warmup", "k6-verdicts",
        "k6-runner-memory"])
def test_k6_copies(report, dump, check, what):
    contract_check(report, check, dump)


@pytest.mark.parametrize("args", [
    ["self"], ["chart-variables"], ["readme-variables"], ["dashboards-fixture"], ["readme-metrics", "scenarios/interfaces.md"],
    ["readme-metrics", "scenarios/README.md"], ["readme-errors"], ["readme-summary"],
], ids=lambda a: " ".join(a))
def test_copies(report, args):
    """self: schema, classes, causes, percentiles, Prometheus names consistent; the chart's TestRun
    sets its BENCH_* and values.yaml has their keys with their defaults; the READMEs' tables, error
    classes and summary example; the dashboards' metric fixture."""
    contract_check(report, *args)


def test_chart_variable_types(report, tmp_path):
    """helm template accepts and refuses the same examples through the variables' values keys."""
    r = run(["bash", "-c", '. "$0/ci/lib/common.sh" && { command -v helm > /dev/null || bash "$0/ci/tools/install.sh" helm >&2; } '
             '&& offline_chart_copy "$1" > /dev/null && command -v helm', ROOT, tmp_path])
    assert r.returncode == 0, output_of(r)
    contract_check(report, "chart-variable-types", r.stdout.strip().splitlines()[-1], tmp_path / "bench")


RUNTIME_SUMMARIES = (
    [f"runs/report-{x}/summary.json" for x in ("a", "b", "c", "churn")]
    + [f"runs/report-merge/runner-{i}/summary.json" for i in (1, 2, 3)]
    + [f"runs/report-{k}/runner-{i}/summary.json" for k in ("paths", "knee", "ceiling") for i in (1, 2)]
    + [f"out/{d}/summary.json" for d in ("merged", "merged-flags", "merged-paths", "merged-knee",
                                          "merged-ceiling", "churn-merged")])
TESTDATA_SUMMARIES = sorted(p.name for p in TESTDATA.glob("*.json"))


@pytest.mark.parametrize("name", TESTDATA_SUMMARIES)
def test_testdata_valid(report, name):
    contract_check(report, "valid", TESTDATA / name)


@pytest.mark.parametrize("path", RUNTIME_SUMMARIES)
def test_written_summary_valid(report, work, merged_parts, churn_merged, merged_flags, path):
    """Every summary the runs and `results` wrote is a valid bench.summary/v1."""
    f = work / path
    assert f.is_file(), f"{path} was not written"
    contract_check(report, "valid", f)


@pytest.mark.parametrize("mutation", list(contract.MUTATIONS))
def test_schema_rejects(report, real_runs, mutation):
    """The schema rejects a real summary with each crafted mutation."""
    contract_check(report, "rejects", real_runs["a"].summary_path, mutation)


def test_values_comments_are_read_per_key():
    """What chart-variables reads to find each empty key's stated default (empty = `<default>`)."""
    text = "a:\n  # -- x; empty = `1`.\n  b: ''\n  c:\n    # -- y\n    # more\n    d: 1\ne: 2\n"
    assert contract.values_comments(text) == {"a": "", "a.b": "-- x; empty = `1`.", "a.c": "", "a.c.d": "-- y more",
                                              "e": ""}
