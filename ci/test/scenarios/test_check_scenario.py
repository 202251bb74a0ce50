"""scenarios/check.sh (`make check-scenario FILE=...`): a user's entry script checked offline, as the
chart's TestRun takes it (plan, start-up, warm-up, archive, memory at the VU ceiling); each check
shown passing on a shipped script and failing on the input it exists for."""
import pytest

from conftest import ROOT, run

CHECK = ROOT / "scenarios" / "check.sh"


def check(script, *env):
    args = [a for kv in env for a in ("-e", kv)]
    return run(["bash", CHECK, script, *args])


def line(result, name):
    return next((l for l in result.stdout.splitlines() if l.split()[1:2] == [name]), "")


@pytest.mark.parametrize("script", ["static.js", "spike.js", "max-rps.js"])
def test_a_shipped_script_passes_every_check(script):
    result = check(ROOT / "scenarios" / script)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("5 checks passed"), result.stdout


def test_a_bad_setting_fails_the_plan_naming_the_value():
    result = check(ROOT / "scenarios" / "spike.js", "BENCH_SPIKE_HOLD=20x")
    assert result.returncode == 1, result.stdout
    assert line(result, "plan").startswith("FAIL") and 'invalid BENCH_SPIKE_HOLD=\\"20x\\"' in result.stdout, result.stdout


def test_a_vu_ceiling_the_default_runner_cannot_hold_fails_memory():
    result = check(ROOT / "scenarios" / "static.js", "BENCH_MAX_CONNECTIONS=20000")
    assert result.returncode == 1, result.stdout
    memory = line(result, "memory")
    assert memory.startswith("FAIL") and "20032 VUs" in memory and "loadtest.parallelism" in memory, result.stdout


def test_a_deprecated_module_and_no_warm_up_plan_fail(tmp_path):
    """A plain k6 script: it warns at start (a module k6 will remove) and ignores BENCH_WARMUP, so
    its warm-up requests would be measured."""
    script = tmp_path / "plain.js"
    script.write_text("import ws from 'k6/experimental/websockets';\n"
                      "export const options = { vus: 1, duration: '10s' };\n"
                      "export default function () {}\n")
    result = check(script)
    assert result.returncode == 1, result.stdout
    assert line(result, "start-up").startswith("FAIL") and "deprecated" in line(result, "start-up"), result.stdout
    assert line(result, "warm-up").startswith("FAIL") and "planned no 'warmup' scenario" in result.stdout, result.stdout
    assert line(result, "plan").startswith("ok") and line(result, "archive").startswith("ok"), result.stdout


def test_usage_errors_name_the_input():
    result = run(["bash", CHECK, ROOT / "scenarios" / "nope.js"])
    assert result.returncode != 0 and "no such script" in result.stderr, result.stderr
    result = run(["bash", CHECK, ROOT / "scenarios" / "static.js", "-e", "not-a-pair"])
    assert result.returncode != 0 and "expected -e KEY=VALUE" in result.stderr, result.stderr
