"""A user's own entry script copied into scenarios/ (the guide's rate-spike example) goes through the
chart as it is: the chart takes its literal defaults (BENCH_RATE '100', BENCH_DURATION '30s') for
the VU ceiling and NOTES, and NOTES says they are the script's and that the rate is a load shape's
base. A value the user sets still wins."""
import re
import shutil

import pytest
import yaml

from conftest import ROOT, load_docs

EXAMPLE = ROOT / "scenarios" / "examples" / "rate-spike.js"


@pytest.fixture(scope="module")
def user_chart(offline_copy, tmp_path_factory):
    """The offline chart with the example copied into its scenarios folder (its import path as there)."""
    copy = tmp_path_factory.mktemp("user-script") / "bench"
    shutil.copytree(offline_copy / "charts" / "bench", copy)
    text = EXAMPLE.read_text().replace("'../lib/", "'./lib/")
    (copy / "scenarios" / "rate-spike.js").write_text(text)
    (copy / "templates" / "zz-notes.yaml").write_text('notes: {{ include "bench/templates/NOTES.txt" . | toJson }}\n')
    return copy


def env_of(rendered, name):
    for doc in load_docs(rendered):
        if doc.get("kind") == "TestRun":
            env = {e["name"]: e.get("value") for e in doc["spec"]["runner"]["env"]}
            return env[name]
    raise AssertionError("no TestRun rendered")


def test_the_scripts_defaults_size_the_run_and_notes_say_whose(helm, user_chart):
    r = helm.template("-f", helm.runner_values, "--set", "loadtest.scenario=rate-spike", chart=user_chart)
    assert r.returncode == 0, r.stderr
    # rate x timeout at the script's 100 req/s (bench's own default would give 2,000)
    assert env_of(r.stdout, "BENCH_MAX_CONNECTIONS") == "200", env_of(r.stdout, "BENCH_MAX_CONNECTIONS")
    assert env_of(r.stdout, "BENCH_RATE") == "", "the chart passes an unset rate empty: the script's default holds"
    # helm template prints no NOTES: a template of the test's own renders it (a file's template is
    # named by its path)
    notes = yaml.safe_load(helm.template("-f", helm.runner_values, "--set", "loadtest.scenario=rate-spike", "--show-only",
                                         "templates/zz-notes.yaml", chart=user_chart).stdout)["notes"]
    text = notes
    assert re.search(r"100 req/s \(the script's default\) \(the base rate of the script's own load shape\) "
                     r"for 30s \(the script's default\)", text), text[-3000:]


def test_a_value_the_user_sets_wins(helm, user_chart):
    r = helm.template("-f", helm.runner_values, "--set", "loadtest.scenario=rate-spike", "--set", "loadtest.rate=400",
                      chart=user_chart)
    assert r.returncode == 0, r.stderr
    assert env_of(r.stdout, "BENCH_MAX_CONNECTIONS") == "800"
