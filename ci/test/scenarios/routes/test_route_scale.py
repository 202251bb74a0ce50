"""100 HTTPRoutes at once under load: all must serve, with the times of the milestones, and the
controller's CPU and memory recorded over the run (in a cluster Prometheus has them; see
scenarios/README.md)."""
import os
import threading
import time

import pytest

from .conftest import why_not_zero


def traefik_usage(pid):
    """(user+system CPU in clock ticks, resident memory in kB) of the process, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    ticks = int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat(5)
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return ticks, rss


class Sampler(threading.Thread):
    """Traefik's CPU and memory every 0.5 s until stopped."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.samples, self.done = pid, [], threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                self.samples.append((time.time(), *traefik_usage(self.pid)))
            except (OSError, StopIteration):
                return  # the process is gone: the check below sees the missing samples
            self.done.wait(0.5)

    def stop(self):
        self.done.set()
        self.join()


@pytest.fixture(scope="module")
def scale(gateway, request):
    sampler = Sampler(gateway.traefik.pid)
    sampler.start()
    try:
        run = gateway.run_k6("scale", "route-scale.js", BENCH_ROUTE_COUNT=100, BENCH_DURATION="60s",
                             BENCH_ROUTE_TIMEOUT="50s")
    finally:
        sampler.stop()
    samples = sampler.samples
    hz = os.sysconf("SC_CLK_TCK")
    run.usage = {"samples": len(samples),
                 "cpu_s": (samples[-1][1] - samples[0][1]) / hz if samples else 0,
                 "rss_start_mib": samples[0][2] // 1024 if samples else 0,
                 "rss_peak_mib": max(s[2] for s in samples) // 1024 if samples else 0}
    # Shown whatever the outcome (pytest shows a fixture's captured print only on failure).
    with request.config.pluginmanager.get_plugin("capturemanager").global_and_fixture_disabled():
        print(f"\nTraefik over the route-scale run: {run.usage}")
    run.left = gateway.routes_left()
    return run


def test_exit_0_all_100_routes_served(scale):
    assert scale.rc == 0, why_not_zero(scale)
    r = scale.summary["routes"]["by_kind"]["httproute"]
    assert (r["created"], r["serving"], r["unconverged"]) == (100, 100, 0), r
    assert r["propagation_ms"]["count"] == 100, r["propagation_ms"]


def test_milestones_in_order(scale):
    m = scale.summary["routes"]["by_kind"]["httproute"]["scale_ms"]
    assert 0 < m["applied"] <= m["all_serving"], m
    assert 0 < m["after_last_apply"] <= m["all_serving"], m


def test_base_route_kept_answering(scale):
    s = scale.summary
    errors = {k: v for k, v in s["errors"].items() if v > 0}
    assert s["routes"]["by_kind"]["httproute"]["load_non_2xx"] == 0, errors
    assert s["by_path"]["httproute"]["requests"]["total"] >= 2900, s["by_path"]["httproute"]["requests"]


def test_traefik_cpu_and_memory_recorded(scale):
    u = scale.usage
    assert u["samples"] >= 60 and u["cpu_s"] > 0 and u["rss_peak_mib"] > 0, u


def test_routes_deleted_after_run(scale):
    assert scale.left == 0
