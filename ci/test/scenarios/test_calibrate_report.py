"""scenarios/calibrate/report.py's sized rates: the highest swept rate at which bench static's p99 was
within 1 ms of vegeta's at the same rate, and the rate held, in each mode (keep-alive, Connection:
close, TLS). Synthetic records in the format run.sh writes; the calibration itself is not a test
(it measures this machine)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[3] / "scenarios" / "calibrate" / "report.py"


def record(tool, mode, rate, p99, dropped=0, achieved=None):
    return {"round": 1, "tool": tool, "mode": mode, "kind": f"sweep-{rate}", "offered": rate, "duration_s": 5,
            "connections": 100, "load1": 1.0, "requests": rate * 5, "dropped": dropped, "failed": 0,
            "achieved": rate if achieved is None else achieved, "req_per_cpu_s": 1000.0, "cpu_ms_per_1000": 1.0,
            "latency_ms": {"p50": 1.0, "p90": 1.0, "p99": p99, "p99.9": p99 + 1, "max": p99 + 2},
            "runner_warned": False, "measure": {"rc": 0, "cpu_init_s": 1.0, "rss_max_kb": 100000}}


# (mode, rate, vegeta p99, bench p99, bench dropped): keep-alive holds 1000 and 2000 and adds 5 ms at
# 3000; close holds 500, drops at 1000; TLS adds 2 ms already at 100.
SWEEPS = [
    ("keepalive", 1000, 2.0, 2.5, 0), ("keepalive", 2000, 2.0, 2.9, 0), ("keepalive", 3000, 2.0, 7.0, 0),
    ("close", 500, 3.0, 3.2, 0), ("close", 1000, 3.0, 3.4, 40),
    ("tls", 100, 5.0, 7.0, 0),
]


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    path = tmp_path_factory.mktemp("calibrate") / "results.jsonl"
    lines = []
    for mode, rate, vegeta, bench, dropped in SWEEPS:
        lines.append(record("vegeta", mode, rate, vegeta))
        lines.append(record("static", mode, rate, bench, dropped))
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    result = subprocess.run([sys.executable, REPORT, "summary", path], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("mode_name, sized", [
    ("keep-alive", "2000 req/s"),
    ("Connection: close", "500 req/s"),
    ("TLS, a handshake per request", "none of the swept rates"),
])
def test_sized_rate_per_mode(summary, mode_name, sized):
    line = f"sized rate per runner core, {mode_name} (highest with added p99 <= 1 ms): {sized}"
    assert line in summary, summary


def test_the_header_counts_rounds_without_the_probe(tmp_path):
    """run.sh --rounds 2 records the probe as round 0 and the measurements as rounds 1 and 2: the
    header says 2 rounds."""
    probe = dict(record("bare", "keepalive", 50000, 1.0), round=0, kind="probe")
    runs = [probe] + [dict(record("static", "keepalive", 1000, 2.0), round=r) for r in (1, 2)]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    result = subprocess.run([sys.executable, REPORT, "summary", path], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "5 s per measurement, 2 rounds;" in result.stdout, result.stdout[:600]
